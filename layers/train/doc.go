// Package train trains and evaluates any [layers.Model]: full-batch node
// classification with Adam and mean cross-entropy. Mini-batch training on
// sampled neighbourhoods is package layers/minibatch; fairness-aware
// training plugs into [Config] from package layers/fairtrain.
//
// # Tasks
//
// A [Task] is one problem in one gorgonia graph: the feature node
// ([FeatureNode]), one label per node, the training and validation
// indices, the number of classes and the [*layers.Phase] the model was
// built with. [Task.Validate] checks the fields against each other.
//
// # Training
//
// [Fit] runs full-batch training of any Model on a Task with [Adam]
// (PyTorch's update rule and weight decay) and mean cross-entropy over
// the training nodes, plus an optional [Config].ExtraLoss term (the hook
// for fairness regularisers, see layers/fairtrain). It compiles a pruned
// tape: only the cost, its gradients with respect to the learnables, and
// the values read. Each epoch is one training step and one evaluation
// pass; the parameters of the epoch with the best validation accuracy and
// of the last epoch are both kept ([Result].BestParams and LastParams),
// and Config.Select chooses which the model keeps. Patience enables early
// stopping; LogEvery prints a progress line and OnEpoch is the one
// per-epoch hook (it may stop training with [ErrStop]). [Trainer]
// exposes the single steps. [Predict] returns class probabilities and
// labels in evaluation mode; [Logits] the raw logits.
//
//	task := &train.Task{Graph: g, X: x, Labels: ds.Labels, Train: ds.Split.Train,
//		Val: ds.Split.Val, Classes: 2, Phase: phase}
//	res, err := train.Fit(model, task, train.DefaultConfig())
//	...
//	pred, err := train.Predict(model, task, ds.Split.Test)
//
// Results are deterministic: the same model seeds give bit-identical
// parameters after training (all reductions run in a fixed order).
//
// # Errors
//
// Fit, NewTrainer, Predict and [SetParams] validate the task, the
// configuration and the model's output shape and return errors that name
// the field, node or parameter and what was expected; errors from the
// model and from hooks are wrapped with %w. A model built with another
// Phase than the task's is [ErrPhaseMismatch]. Nothing panics on user
// input.
package train
