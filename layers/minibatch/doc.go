// Package minibatch trains the layers' models in mini-batches with
// sampled neighbourhoods, for graphs whose full-batch training would not
// fit in memory, and computes their whole-graph logits layer by layer,
// the input of whole-graph FMP (fmp.Layer.Apply).
//
// # Training
//
// [Fit] takes a model configuration ([layers.Config] of any kind whose
// models run on sampled blocks, [layers.Kind.Blocks]: every model of the
// library (MLP, GCN, SGC, APPNP, GAT, JKNet), and a kind of the user's own
// that implements [layers.BlockModel]), a [Task] (the whole graph's propagation matrix,
// the features, the labels and the splits) and a [Config] (the
// full-batch trainer's [train.Config], the sampler's [sample.Config]). Every
// epoch visits the training nodes in batches; each batch samples its
// targets' neighbourhoods hop by hop (package graph/sample: PyG's
// NeighborLoader rule, with the whole graph's normalisation kept and the
// sampled neighbours rescaled), builds a small gorgonia graph of the
// model on the batch's blocks ([layers.ForwardBlocks]), and takes one Adam
// step (with a fairness method's term, Config.Method: see below). The
// evaluation pass runs on Val with every neighbour (exact) or
// with Config.EvalFanouts, and selection, early stopping and the OnEpoch
// hook behave as in [train.Fit].
//
// What holds, and is tested:
//   - with every neighbour sampled, a batch's logits are the full-batch
//     model's on its targets (up to summation order);
//   - with every neighbour, one batch of all the training nodes and no
//     shuffling, an epoch is one full-batch step: Fit gives train.Fit's
//     parameters;
//   - the same configuration gives bit-identical results.
//
// # Fairness methods
//
// Config.Method trains a fairness method with the model: a [BatchMethod]
// gives a [Term], whose Loss builds the method's loss term on each batch's
// logits (the batch's targets, which are training nodes, with their
// groups and labels from the [Task]) and whose AfterStep runs after each
// batch's update. Whether a method's term is exact or an estimate per
// batch (each is exact when one batch holds every training node, and
// tested to give train.Fit's run then):
//
//   - regularizer (fairtrain.RegularizerConfig): estimated; the groups'
//     mean P(positive) over the batch estimate their means over the
//     training nodes, and the gap of the estimates is biased upward;
//   - adversary (fairtrain.AdversaryConfig): estimated; the adversary's
//     mean BCE over the batch is unbiased for that adversary, and the
//     adversary trains on each batch's outputs in turn (its own Adam
//     across batches), on the full-batch schedule by epochs;
//   - mixup (fairtrain.MixupConfig): estimated, as full batch (pairs
//     drawn among the batch's nodes instead of every training node);
//   - redress (fairtrain.REDRESSConfig): estimated; each node's top-k
//     list is drawn from the batch's nodes, not from every training node,
//     at O(b²·(c + d)) per batch of b.
//
// Fit refuses, with an error wrapping [ErrNotBatched] that names the
// method and says why: FairGNN, NIFTY and FairVGNN (their models are
// Encoders whose terms read the hidden representation, with a
// whole-graph estimator, whole-graph views or a multi-phase epoch), and
// RawlsGCN (no loss term: train its Backbone with Task.Adj its Matrix
// instead), and any pre-processing method such as EDITS (it rewrites the
// whole graph before training: run it first, then train on its output).
// examples/paper/minibatch-methods measures the three main methods full
// batch against mini-batch on Bail.
//
// The features come through [features.Source]: [features.Dense] wraps an
// in-memory matrix, and [features.Matrix] (a memory-mapped float32 file)
// serves matrices that do not fit in memory. Only a batch's rows are
// read.
//
// # Whole-graph inference and FMP
//
// [Logits] computes every node's logits with the trained parameters,
// layer by layer over the whole graph (no sampling;
// [layers.LayerwiseLogits]), with a few n × width buffers and
// no expression graph. fmp.Layer.Apply then runs FMP's K
// steps on those n × c logits: K sparse products on c columns, so FMP
// over a 10-million-node graph costs about a minute and half a gigabyte
// besides the matrix.
// This is FMP in its InferenceOnly mode (the backbone never sees the
// fairness steps while training), the only mode that mini-batch training
// supports: EndToEnd and ConstantDual couple every node through the
// groups' mean predictions at every step, which a batch does not see
// (examples/paper/scale says what they would take).
//
// [NewModel] puts mini-batch-trained parameters into the full-batch
// model, for the full-batch tools ([train.Predict], fmp.On, modelio) on
// graphs that fit.
//
// GAT on blocks attends over each target's sampled in-edges (its
// attention kernels in internal/spkern run on a block's rectangular edge
// structure, reaching a source's out-edges through the block's
// transpose), as PyG's GATConv on a NeighborLoader batch; its Matrix
// gives the edges (and self-loops) blocks are sampled from. JKNet on
// blocks aggregates every layer's output on the targets, the first rows
// of each layer's block.
package minibatch
