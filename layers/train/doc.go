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
// pass. [Trainer] exposes the single steps. [Predict] returns class
// probabilities and labels in evaluation mode; [Logits] the raw logits.
//
// # The training loop and model selection
//
// Every trainer of the library runs its epochs in one [Loop]: Fit,
// mini-batch training (layers/minibatch) and the fairness methods with
// steps of their own (FairVGNN in layers/fairtrain). The loop keeps the
// parameters of the best epoch and of the last ([Result].BestParams and
// LastParams), leaves the selected ones in the model, stops early
// (Patience epochs without a better epoch, counted from SelectAfter),
// prints a progress line every LogEvery epochs and calls OnEpoch, the one
// per-epoch hook (it may stop training with [ErrStop]).
//
// Config.Select is the selection criterion, and it changes results: on an
// imbalanced set the epoch with the best validation accuracy can be one
// that predicts the larger class for every node (selection by accuracy
// kept such epochs of a GCN on a held-out set); the AUC judges how the
// scores rank the nodes, not the decisions at one threshold, and the loss
// how confident the scores are.
//
//   - [SelectBestVal] (the default, "acc"): the highest validation
//     accuracy.
//   - [SelectValAUC] ("auc"): the highest validation ROC AUC,
//     [EpochStats].ValAUC, from the logits (class 1's for two classes; for
//     more, the macro one-vs-rest AUC, sklearn's multi_class="ovr"). It is
//     refused ([ErrUndefinedSelection]) when a class has no validation
//     node. The trainers compute the AUC only for this selection and
//     SelectCustom ([Selection.NeedsAUC]): it sorts the validation nodes
//     every epoch.
//   - [SelectValLoss] ("loss"): the lowest validation cross-entropy.
//   - [SelectLast] ("last"): the last epoch; the best epoch reported and
//     counted from by Patience is then the highest validation accuracy's.
//   - [SelectCustom]: the highest value of Config.Criterion, a method's
//     own rule.
//
// The first best epoch wins ties; without validation nodes every epoch
// after SelectAfter is the best. [ParseSelection] reads the words in
// parentheses, as the commands' -select flag does.
//
//	task := &train.Task{Graph: g, X: x, Labels: ds.Labels, Train: ds.Split.Train,
//		Val: ds.Split.Val, Classes: 2, Phase: phase}
//	res, err := train.Fit(ctx, model, task, train.DefaultConfig())
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
