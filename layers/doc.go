// Package layers provides graph neural network models as gorgonia graph
// nodes and the custom ops they are built from (sparse propagation,
// dropout, activations, cross-entropy, GAT attention).
//
// Its sub-packages hold what is done with a model: layers/train trains
// and evaluates any Model (Task, Fit, Predict, Adam), layers/modelio saves
// and loads models, layers/fair adds fairness-training strategies to
// training, and layers/blas selects the BLAS that gorgonia's dense
// products run on. Importing layers imports layers/blas, which replaces
// gorgonia's process-wide BLAS at program start (see that package).
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
//   - GAT, GAT: PyG's GATConv (per-head attention over each node's
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
// # Errors
//
// Constructors and Forward functions validate their inputs (shapes, dtypes, options, indices) and return errors that
// name the option, node or parameter and what was expected. Custom ops
// never panic inside a gorgonia VM on anything a user can cause: they
// check their inputs when they are added to the graph and return errors
// from Do otherwise. Nothing in this package panics except on programmer
// errors inside the package itself.
package layers
