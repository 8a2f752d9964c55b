// Package graph holds fairmp's graph data: undirected graphs in compressed
// sparse row form, sparse matrices (the normalised adjacency GCN and FMP
// propagate with), dataset loaders and generators of biased graphs.
//
// # Graphs and matrices
//
// A Graph is built once by FromEdges, which symmetrises the edge list and
// drops self-loops and duplicates (Cleanup says how many). Propagation
// matrices are built from it explicitly, once, by NormalizedAdjacency or
// GCNNorm: nothing in fairmp caches a normalisation behind the user's
// back. A Matrix stores its values in float64 and float32, so models of
// either precision share it.
//
// Edge direction: a Matrix row i lists the sources j whose features are
// aggregated into node i (y_i = Σ_j A_ij x_j). For the undirected graphs
// of this package the matrices are symmetric.
//
// # Errors
//
// Anything a caller's data can cause (bad sizes, ids out of range,
// malformed files) is reported as an error naming what was wrong and where.
// Functions panic only on programmer errors, such as a node index out of
// range passed to an accessor, as a slice would.
package graph
