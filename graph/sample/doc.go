// Package sample draws seeded neighbour-sampled mini-batches of a graph for
// training and evaluating graph neural networks on graphs too large for
// full-batch propagation, with the semantics of PyTorch Geometric's
// NeighborLoader (disjoint = false, sampling without replacement), and
// hands each batch to a model as one sparse "block" per layer.
//
// # Batches and hop order
//
// A [Sampler] is built once from the n × n propagation matrix a of the whole
// graph (for example graph.GCNNorm of it: the diagonal holds the self-loop
// weights, the off-diagonal entries of row v are v's neighbours) and a
// [Config] whose Fanouts has one entry per model layer, L = len(Fanouts).
//
// A batch starts from its target nodes (the nodes whose outputs the loss
// or the evaluation needs). Hop by hop, every node first reached at hop
// h < L (h = 0 for the targets) draws min(Fanouts[h], deg(v)) distinct
// neighbours uniformly without replacement, where deg(v) is the number of
// off-diagonal entries of row v of a (all of them when Fanouts[h] is -1 or
// deg(v) <= Fanouts[h]). The neighbours not yet in the batch become hop h+1
// nodes. Nodes first reached at hop L are not expanded: they only supply
// input features. Each node's draw is made once per batch and is used in
// every block where the node is a row.
//
// [Batch].Nodes lists the global ids of every node the batch needs, in hop
// order, without repeats:
//
//	Nodes[:Sizes[0]]         the targets, in batch order
//	Nodes[Sizes[0]:Sizes[1]] the nodes first reached at hop 1
//	...
//	Nodes[Sizes[L-1]:Sizes[L]] the nodes first reached at hop L
//
// so Sizes[h] is the number of nodes within h hops and Sizes[L] ==
// len(Nodes). The new neighbours of a node are appended in ascending global
// id, nodes in the order they are expanded: the order is deterministic.
//
// # Blocks and how a model uses them
//
// Blocks[l], l = 0..L-1, is the propagation matrix of model layer l+1
// (Blocks[0] is the input-side layer). It is a Sizes[L-1-l] × Sizes[L-l]
// *graph.Matrix whose row i is node Nodes[i] and whose column j is node
// Nodes[j]: because of the hop order, the rows of every block are a prefix
// of Nodes and its columns a longer prefix. With H_0 the Sizes[L] × F
// input features of Nodes (row j = features of Nodes[j]), an L-layer GCN
// computes
//
//	H_{l+1} = act(Blocks[l] · H_l · W_l),   l = 0..L-1,
//
// where H_{l+1} has Blocks[l]'s Sizes[L-1-l] rows, the nodes whose layer
// l+1 representation the later layers need, and H_L has Sizes[0] rows: the
// outputs of the targets, in batch order. (Multiplying H_l · W_l first and
// then by the block is the same product.) A layer with a separate root
// weight (GraphSAGE's W_self·h_v) takes h_v from the first rows of H_l:
// row i of H_l is node Nodes[i] in every layer.
//
// # Weights
//
// Row i of a block (node v = Nodes[i]) holds the diagonal entry a[v,v] at
// column i when a stores it and, for each sampled neighbour u of v,
//
//	a[v,u] · deg(v)/k(v)
//
// at u's column, where k(v) is the number of neighbours drawn. Each
// neighbour is drawn with probability k(v)/deg(v), so the neighbour sum of
// a row is an unbiased estimate of the full one: E[(Block·x)_i] = (a·x)_v
// for fixed x. When every fan-out covers every neighbour (-1, or at least
// the largest degree), every block row equals the corresponding row of a
// exactly (the scale is 1), and the mini-batch forward of a GNN equals the
// full-batch forward on the targets (up to the rounding of a different
// summation order).
//
// This is the one difference from PyG: PyG recomputes the GCN
// normalisation on the sampled subgraph (the degrees become the sampled
// degrees), whereas here the whole graph's normalisation is kept and only
// the sampled neighbours are rescaled by deg(v)/k(v). That is what makes
// full fan-out exact and the sampled sums unbiased estimates of the
// full-batch ones.
//
// # Epochs and determinism
//
// Sampler.Batch(targets, epoch, i) returns batch i of an epoch: the targets
// are permuted (when Config.Shuffle) by a pseudo-random permutation keyed by
// (Seed, epoch), cut into BatchSize chunks (the last one shorter), and
// chunk i is sampled with randomness seeded by (Seed, epoch, i) only. The
// batches of an epoch partition the targets; any batch can be produced
// alone, in any order or in parallel, and is bit-identical for the same
// inputs (the generators are the package's own, so also across Go
// versions). Sampler.Sample samples a given list of targets with a given
// seed. A Sampler is safe for concurrent use.
//
// # Cost
//
// A batch costs time and memory in proportion to its sampled nodes and
// edges, never O(n): the Sampler keeps an n-entry int32 table per
// concurrent caller and resets only the entries a batch used. On a graph of
// 10 million nodes this is 40 MB per concurrent caller. Its blocks share
// one compressed-row copy of the batch's entries (graph.NewMatrixCSR): 11
// allocations a batch. On a random graph of 200,000 nodes and mean degree
// 20, a batch of 1024 targets with fan-outs {10, 10} (about 82,000 nodes
// and 132,000 block entries) takes about 24 ms on one core of a shared
// machine (BenchmarkBatch), most of it in the random reads of the rows.
package sample
