// Package preprocess debiases a graph and its node features before any
// model is trained on them: the pre-processing fairness methods, beside
// the in-training ones of package layers/fairtrain, the post-processing
// per-group thresholds of package layers/postprocess and FMP (package fmp),
// which changes a trained model's propagation.
//
// A pre-processing method (stage pre of package layers/fairness, its
// interface fairness.Pre) takes the graph, the feature matrix and the
// sensitive groups, and returns new ones (a fairness.Debiased); whatever
// model is then built and trained on them (any backbone, plain or with
// an in-training method) is unchanged. The package is not a part of
// graph, because its methods learn (a critic, gradient steps, a seed)
// while graph only holds and transforms data.
//
// # Methods by name
//
// Every method is a plain configuration struct with a DefaultXxxConfig
// constructor, Validate and a seed (WithSeed), registered with package
// layers/fairness, the one registry of methods of every stage:
// fairness.Lookup gives one by name and fairness.Names(fairness.StagePre)
// lists them ("edits").
//
//	m, err := fairness.Lookup("edits")
//	out, err := fairness.WithSeed(m, seed).(fairness.Pre).Debias(ctx, ds.Graph, ds.Features, ds.NumFeatures, sens)
//	// train any model on out.Graph and out.Features
//
// A pre-processing method's model learnt the graph and features the
// method made of the training data; EDITS cannot make them for nodes it
// has not seen, so its models are not saved to score new nodes (the
// commands say so).
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
