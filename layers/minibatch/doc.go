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
// step. The evaluation pass runs on Val with every neighbour (exact) or
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
