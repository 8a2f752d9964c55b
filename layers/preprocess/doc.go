// Package preprocess debiases a graph and its node features before any
// model is trained on them: the pre-processing fairness methods, beside
// the in-training ones of package layers/fairtrain, the post-processing
// per-group thresholds of package layers/postprocess and FMP (package fmp),
// which changes a trained model's propagation.
//
// A pre-processing method takes the graph, the feature matrix and the
// sensitive groups, and returns new ones (a [Debiased]); whatever model
// is then built and trained on them (any backbone, plain or with a
// fairtrain method) is unchanged. The package is its own home, not a
// part of layers/fairtrain, because its methods train no model and fit
// none of the contract of fairtrain's Method (a fairness weight on a
// backbone's training); and not of graph, because they learn (a critic,
// gradient steps, a seed) while graph only holds and transforms data.
//
// # Methods by name
//
// Every method is a [Method]: a plain configuration struct with a
// DefaultXxxConfig constructor, Validate and a seed (WithSeed). [Lookup]
// gives one by name and [Names] lists them ("edits"); commands list the
// pre-processing methods through them, as they list fairtrain's.
//
//	m, err := preprocess.Lookup("edits")
//	out, err := m.WithSeed(seed).Debias(ds.Graph, ds.Features, ds.NumFeatures, sens)
//	// train any model on out.Graph and out.Features
//
// # EDITS
//
// [EDITSConfig] is EDITS (Dong, Liu, Jalaian & Li, WWW 2022): it learns
// a weight per feature column and a weight per edge that shrink the
// Wasserstein distance, estimated by a clipped linear critic, between the
// two groups' distributions of the features and of the features
// propagated one to H hops; then it zeroes the columns with the smallest
// weights and flips the edges whose weights moved most. Unlike the
// authors' dense n × n adjacency (356 million entries on Bail), it learns
// weights only on the graph's edges and on a bounded sample of candidate
// edges between nodes two hops apart, so that its memory is
// O(edges + n·features); [EDITSConfig] lists every difference from the
// paper and the authors' code.
//
// # Data bias
//
// [Bias] measures what EDITS minimises, as the paper defines it: the
// attribute bias b_attr, the mean over feature columns of the
// 1-Wasserstein distance between the two groups' values of the column
// (after scaling each column to unit L2 norm), and the structural bias
// b_stru, the same on the features propagated by M_H = Σ_h β_h P^h,
// with P = α·D^-1/2 (A + I) D^-1/2 + (1 − α)·I. They live here, not in
// package metrics, because they measure data on a graph (metrics judges
// predictions and does not depend on package graph); [Wasserstein1] is
// the exact distance between two samples they are built on.
package preprocess
