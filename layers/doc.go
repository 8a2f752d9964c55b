// Package layers provides graph neural network layers as gorgonia graph
// nodes, the custom ops they share (sparse propagation, dropout,
// activations, cross-entropy), and the one trainer used for every fairmp
// model.
//
// # Models
//
// Every model implements Model: Learnables returns its parameters, in a
// fixed order, and Forward builds the n × classes logits from an n × d
// feature node. Each has a plain configuration struct with a
// DefaultXxxConfig constructor holding the documented defaults (PyTorch
// Geometric's, under Go names) and a Validate method; zero values are
// taken literally.
//
//   - Linear, MLP: x·W + b; stacks with ReLU, ELU or LeakyReLU and dropout.
//   - GCNConv, GCN: PyG's GCNConv (linear, propagation with Ã, bias) and a
//     stack of them (Kipf & Welling); Propagation selects improved,
//     self-loops and normalisation as PyG's gcn_norm.
//   - SGC: (Ã^K X)·W + b; Ã^K X is computed once, explicitly, and is
//     visible through SGC.Propagated.
//   - APPNP: an MLP followed by K steps Z ← (1−α)ÃZ + αH, with optional
//     edge dropout (EdgeDropoutSpMM).
//   - JKNet: stacked GCN convolutions with jumping-knowledge aggregation
//     (concatenation or element-wise max) and a linear output layer.
//   - GAT, GATModel: PyG's GATConv (per-head attention over each node's
//     in-edges and itself, softmax per destination with the maximum
//     subtracted, heads concatenated or averaged, attention dropout),
//     computed per edge in memory O(edges × heads), never n × n; and the
//     two-layer GAT of Veličković et al. (Heads × Hidden with ELU, then
//     one head). GAT.Attention exposes the coefficients.
//
// The propagation matrix Ã is built once, when a model is constructed,
// from a *graph.Graph (graph.GCNNorm); nothing is cached behind the user's
// back. Edges are undirected, so Ã is symmetric.
//
// Weights are initialised Glorot-uniform from math/rand seeded with the
// configuration's Seed, biases with zeros; the same seed draws the
// dropout masks. gorgonia's initialisers and its Dropout (clock-seeded)
// are never used. Two models in one gorgonia graph need distinct Names:
// gorgonia merges input nodes of equal name and shape, so constructors
// refuse a name already in use.
//
// # Phase
//
// A *Phase switches dropout, edge dropout and other training-only
// computations between training and evaluation. A model's layers share
// the Phase given to its constructor; the trainer sets it. nil and the
// zero value mean evaluation.
//
// # Training
//
// Train runs full-batch training of any Model on a Task (graph, feature
// node, labels, train/validation indices, classes, phase) with Adam
// (PyTorch's update rule and weight decay, see Adam) and mean
// cross-entropy over the training nodes, plus an optional ExtraLoss term
// (the hook for fairness regularisers). It compiles a pruned tape: only
// the cost, its gradients with respect to the learnables, and the values
// read. Each epoch is one training step and one evaluation pass; the
// parameters of the epoch with the best validation accuracy and of the
// last epoch are both kept (Result.BestParams, Result.LastParams), and
// TrainConfig.Select chooses which the model keeps. Patience enables
// early stopping; Progress, OnEpoch and LogEvery report progress. Trainer
// exposes the single steps. Predict returns class probabilities and
// labels in evaluation mode.
//
// Results are deterministic: the same seeds give bit-identical parameters
// after training (all reductions run in a fixed order).
//
// # Saving models
//
// Save writes a model's kind, configuration and parameters (a one-line
// JSON header and little-endian binary values, format version 1, see
// FormatName) and Load rebuilds it through a registry of kinds;
// RegisterKind lets other packages make their models loadable.
//
// # Errors
//
// Constructors, Forward functions, Train, Predict, Save and Load validate
// their inputs (shapes, dtypes, options, indices) and return errors that
// name the option, node or parameter and what was expected. Custom ops
// never panic inside a gorgonia VM on anything a user can cause: they
// check their inputs when they are added to the graph and return errors
// from Do otherwise. Nothing in this package panics except on programmer
// errors inside the package itself.
package layers
