// Package layers provides graph neural network models as gorgonia graph
// nodes, the custom ops they are built from (sparse propagation, dropout,
// activations, cross-entropy, GAT attention), and the registry of model
// kinds through which everything else builds, trains, saves and loads
// them by name.
//
// Its sub-packages hold what is done with a model:
//
//   - layers/train: full-batch training and evaluation of any [Model]
//     (Task, Fit, Predict, Adam);
//   - layers/minibatch: training on sampled neighbourhoods and whole-graph
//     inference layer by layer, for graphs larger than memory;
//   - fmp/modelio: model files (Save, Load);
//   - layers/fairtrain: fairness-aware training (a demographic parity
//     regulariser, an adversary, fair mixup, FairGNN, NIFTY);
//   - layers/perturb: counterfactual unfairness and instability of any
//     trained model;
//   - layers/postprocess: post-processing of a trained model's
//     probabilities (per-group thresholds).
//
// FMP itself, the fair message-passing layer, is package fmp; the
// criteria (accuracy, ΔDP, ΔEO) are package metrics. Importing layers
// changes no process-wide state: the training and prediction entry points
// install fairmp's BLAS the first time they run, unless the program chose
// one (gorgonia.Use).
//
// # Models
//
// Every model implements [Model]: Learnables returns its parameters, in a
// fixed order, and Forward builds the n × classes logits from an n × d
// feature node. Each model and each layer has a plain configuration
// struct that embeds [Base] (Name, the widths In and Out, Dtype, Seed;
// a model's Out is its number of classes), with a DefaultXxxConfig constructor
// holding the documented defaults (PyTorch Geometric's, under Go names)
// and a Validate method; zero values are taken literally. As in PyG,
// XConv is a layer and X the model built from such layers.
//
//   - [Linear], [MLP]: x·W + b; stacks with ReLU, ELU or LeakyReLU and
//     dropout.
//   - [GCN]: a stack of PyG's GCNConv (linear, propagation with Ã,
//     bias; Kipf & Welling); [Propagation] selects improved, self-loops
//     and normalisation as PyG's gcn_norm, and, for every propagating
//     kind but GAT, RawlsGCN's doubly stochastic rescaling.
//   - [SGC]: (Ã^K X)·W + b; Ã^K X is computed once, when the gorgonia
//     graph is built (see [Forward]).
//   - [APPNP]: an MLP followed by K steps Z ← (1−α)ÃZ + αH, with optional
//     edge dropout ([EdgeDropoutSpMM]).
//   - [JKNet]: stacked GCN convolutions with jumping-knowledge aggregation
//     (concatenation or element-wise max) and a linear output layer.
//   - [GATConv], [GAT]: PyG's GATConv (per-head attention over each node's
//     in-edges and itself, softmax per destination with the maximum
//     subtracted, heads concatenated or averaged, attention dropout),
//     computed per edge in memory O(edges × heads), never n × n; and the
//     two-layer GAT of Veličković et al. (Heads × Hidden with ELU, then
//     one head). [GATConv.Attention] exposes the coefficients.
//   - [SAGE]: PyG's SAGEConv stacked (Hamilton et al.): W_l·agg(h) + b +
//     W_r·h, agg the mean (PyG's default) or the maximum over each node's
//     in-neighbours ([Hop].Aggr), without self-loops.
//   - [GIN]: PyG's GINConv with train_eps stacked (Xu et al.):
//     MLP((1+ε)·h + Σ_j h_j), ε learnable per layer ([Flow].Scale).
//
// Every model and layer is built with one signature, NewX(g, gr, cfg,
// phase): the gorgonia graph it is built in, the graph it propagates over
// (nil for the MLP and Linear, which ignore it), its configuration, and
// the phase that switches its dropout (nil for evaluation; unused by
// those without dropout): NewMLP(g, nil, cfg, phase), NewGCN(g, gr, cfg,
// phase), NewSGC(g, gr, cfg, nil). It is the signature of KindSpec.New,
// so a kind declares its constructor as it is. Package fmp follows the
// same order (fmp.On(backbone, gr, sens, cfg, phase)).
//
// The propagation matrix Ã is built once, when a model is constructed,
// from a [*graph.Graph] ([graph.GCNNorm]); nothing is cached behind the
// user's back. Edges are undirected, so Ã is symmetric.
//
// Weights are initialised Glorot-uniform ([GlorotUniform]) from
// math/rand seeded with the configuration's Seed, biases with zeros; the
// same seed draws the dropout masks. gorgonia's initialisers and its
// Dropout (clock-seeded) are never used. Two models in one gorgonia graph
// need distinct Names: gorgonia merges input nodes of equal name and
// shape, so constructors refuse a name already in use.
//
// # One declaration, every execution path
//
// A model is declared once, as a composition of primitives: its Compute
// method ([BlockModel]) writes the path from features to logits in the
// primitives of a [Flow] (dense layers, propagation with its bias and
// activation, activation, dropout, APPNP's combination, jumping-knowledge
// aggregation, GAT attention). Every way of running it executes that one
// declaration: [Forward] in a gorgonia graph on the whole graph (what
// each model's Forward method returns, and what trains it),
// [ForwardBlocks] on a mini-batch's sampled blocks, [LayerwiseLogits] in
// plain Go over any graph with the same feature schema, and package
// fmp/fmpbeam as Apache Beam transforms. [Hops] reads the number of hops
// from the same declaration. A user's model written this way runs on
// every path with no other code; the test kind_toy_test.go is one (a
// GraphSAGE-like layer in 20 lines):
//
//	func (m *Toy) Compute(f layers.Flow, x layers.Value) (layers.Value, error) {
//		ax, err := f.Propagate(x, layers.Hop{}) // Ã·X
//		if err != nil {
//			return layers.Value{}, err
//		}
//		self, err := f.Dense(x, m.Self, nil, layers.Activation{}) // X·Ws
//		if err != nil {
//			return layers.Value{}, err
//		}
//		nbr, err := f.Dense(ax, m.Nbr, nil, layers.Activation{}) // (ÃX)·Wn
//		if err != nil {
//			return layers.Value{}, err
//		}
//		return f.Combine([]float64{1, 1}, self, nbr)
//	}
//
//	func (m *Toy) Forward(x *G.Node) (*G.Node, error) { return layers.Forward(m, x) }
//
// Each primitive's implementations live together, in a file of its own
// (prim_dense.go, prim_propagate.go, ...): its gorgonia one, built from the
// custom ops the models were built from (so training is unchanged to the
// bit), and its plain-Go one. The Beam ones are in package fmp/fmpbeam (a
// module of its own, so that this one does not depend on Beam).
//
// # Kinds
//
// A model kind is declared once, in the file that defines the model, with
// [MustDeclare]: its name ("gcn"), its configuration type, its
// constructor, its hidden width, its propagation matrix, and, read from
// the model type, whether it is declared in a Flow's primitives
// ([BlockModel]: then it runs on sampled blocks, layer by layer and on
// Beam). Model files, mini-batch
// training and the commands go through the declaration, so a model of the
// user's own is declared the same way, in one file, and is then trained
// in mini-batches, saved and loaded, and built by name like the
// library's:
//
//	var kindMine = layers.MustDeclare(layers.KindSpec[MineConfig, *Mine]{
//		Name: "mine", Default: DefaultMineConfig, New: NewMine, Config: (*Mine).Config,
//		Params: func(c MineConfig) []layers.Param { // names and shapes, in Learnables order
//			return []layers.Param{{Name: c.Name + ".W", Shape: []int{c.In, c.Out}}}
//		},
//	})
//
// [LookupKind] finds a kind by name, [KindOf] and [KindOfConfig] by a
// model or a configuration; [Kind.Configure] gives a kind's default
// configuration with the settings every kind takes ([Options]: hidden
// width, dtype, seed), [Kind.Override] sets other fields by their JSON
// names, and [Kind.Build] builds the model. A wrapper kind, a model built
// on a backbone (fmp.Model), is declared with [MustDeclareWrapper].
//
// # Phase
//
// A [*Phase] switches dropout, edge dropout and other training-only
// computations between training and evaluation. A model's layers share
// the Phase given to its constructor; the trainer sets it. nil and the
// zero value mean evaluation.
//
// # Errors
//
// Constructors and Forward functions validate their inputs (shapes,
// dtypes, options, indices) and return errors that name the option, node
// or parameter and what was expected. Custom ops never panic inside a
// gorgonia VM on anything a user can cause: they check their inputs when
// they are added to the graph and return errors from Do otherwise.
// Nothing in this package panics except on programmer errors: inside the
// package itself, and [MustDeclare] and [MustDeclareWrapper] on a
// declaration that [Declare] would refuse (found when the program
// starts).
package layers
