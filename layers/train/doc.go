// Package train trains and evaluates any layers.Model: full-batch
// node classification with Adam and mean cross-entropy.
//
// # Tasks
//
// A Task is one problem in one gorgonia graph: the feature node
// (FeatureNode), one label per node, the training and validation indices,
// the number of classes and the *layers.Phase the model was built with.
// Task.Validate checks the fields against each other.
//
// # Training
//
// Fit runs full-batch training of any Model on a Task with Adam
// (PyTorch's update rule and weight decay, see Adam) and mean
// cross-entropy over the training nodes, plus an optional ExtraLoss term
// (the hook for fairness regularisers, see layers/fair). It compiles a
// pruned tape: only the cost, its gradients with respect to the
// learnables, and the values read. Each epoch is one training step and
// one evaluation pass; the parameters of the epoch with the best
// validation accuracy and of the last epoch are both kept
// (Result.BestParams, Result.LastParams), and Config.Select chooses which
// the model keeps. Patience enables early stopping; LogEvery prints a
// progress line and OnEpoch is the one per-epoch hook (it may stop
// training with ErrStop). Trainer exposes the single steps. Predict
// returns class probabilities and labels in evaluation mode.
//
// Results are deterministic: the same model seeds give bit-identical
// parameters after training (all reductions run in a fixed order).
//
// # Errors
//
// Fit, NewTrainer, Predict and SetParams validate the task, the
// configuration and the model's output shape and return errors that name
// the field, node or parameter and what was expected; errors from the
// model and from hooks are wrapped with %w.
package train
