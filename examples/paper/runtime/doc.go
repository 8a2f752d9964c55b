// Command runtime measures the running time of fairmp's models, the FMP
// paper's running-time comparison: milliseconds per training epoch of
// MLP, GCN, GAT, SGC, APPNP, JKNet and FMP (MLP → fair message passing),
// timed with the library's trainer (train.Trainer: a training step is
// forward, backward and one Adam update; an epoch adds an evaluation
// pass). It prints a markdown table of medians, and FMP's (and every
// model's) time relative to the MLP.
//
// By default it generates a graph of Pokec-z's shape (67,796 nodes, 276
// features, 617,958 edges; datasets.PokecZShape) — Pokec's files are not
// needed. Run it from the repository root:
//
//	go run ./runtime
//	go run ./runtime -dataset bail -data $FAIRMP_DATA -epochs 10
//	go run ./runtime -dataset synthetic -dtype float32
//
// Timings depend on the machine and its load; the pure-Go BLAS is used.
package main
