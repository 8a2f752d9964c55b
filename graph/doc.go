// Package graph holds fairmp's graph data: undirected graphs in compressed
// sparse row form and sparse matrices (the normalised adjacency GCN and
// FMP propagate with). The data set loaders and the generators of biased
// graphs are in graph/datasets.
//
// # Graphs and matrices
//
// A [Graph] is built once by [FromEdges], which symmetrises the edge list
// and drops self-loops and duplicates ([Cleanup] says how many), or, for
// graphs too large for an edge list, by [FromCSR], which takes ready CSR
// arrays without copying them and only checks them. Propagation matrices
// are built from it explicitly, once, by [NormalizedAdjacency] or
// [GCNNorm] (and rescaled to be doubly stochastic, as RawlsGCN
// propagates, by [DoublyStochastic]): nothing in fairmp caches a
// normalisation behind the user's back. A [Matrix] stores its values in float64 and float32, so models of
// either precision share it.
//
// Edge direction: a Matrix row i lists the sources j whose features are
// aggregated into node i (y_i = Σ_j A_ij x_j). For the undirected graphs
// of this package the matrices are symmetric.
//
// The products ([Matrix.MulDense64] and its variants) run on assembly
// kernels that do no bounds checking. A Matrix's column ids are checked
// once, when it is built, and each kernel call then checks only its row
// and the lengths of x and out, in constant time; the arrays that
// [Matrix.Indptr] and [Matrix.Indices] return are shared with the
// kernels, which is why they must never be modified.
//
// # Errors and panics
//
// This is fairmp's policy, as gonum's: anything a caller's data can cause
// (bad sizes, ids out of range, malformed files, non-finite values) is
// reported as an error naming what was wrong and where, never a panic.
// Functions panic only on programmer errors, with a message naming the
// sizes involved: an index out of range passed to an accessor (as a
// slice would), or a buffer the caller allocated with the wrong length
// ([Matrix.MulDense64] and MulDense32 panic if out or x is shorter than the
// matrix and cols require, like gonum's BLAS). Custom gorgonia ops never
// panic inside a machine: they check their inputs when added to a graph.
package graph
