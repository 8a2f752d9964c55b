// Command reproduce runs the FMP paper's Table 1 protocol on a real data
// set (or the generated one) and prints a markdown table of test accuracy,
// ΔDP and ΔEO, mean ± population std over seeds, for each model; for NBA
// and Pokec the paper's values stand beside ours. Every number goes
// through the metrics package (metrics.Evaluate, metrics.Summarize).
//
// Protocol (the defaults): model seeds 1..5 on the data set's fixed split
// (split.json), full-batch Adam with lr 1e-3 and weight decay 1e-5, 300
// epochs, hidden width 64 (GAT: 4 heads × 16), each model with the
// library's defaults, and the parameters of the last epoch, as the paper's
// code (-select val: those of the best validation epoch; on NBA the
// validation split is the test split).
//
// Usage, from the repository root:
//
//	go run ./reproduce -data $FAIRMP_DATA -dataset nba
//	go run ./reproduce -dataset bail -models mlp,gcn,fmp -seeds 5 -json
//	go run ./reproduce -dataset synthetic -lambda-f 3
//
// Flags: -data DIR (default $FAIRMP_DATA), -dataset
// nba|pokec_z|pokec_n|bail|credit|german|synthetic, -models (any of
// mlp,gcn,sgc,appnp,gat,jknet,fmp), -seeds, -epochs, -select last|val,
// -lr, -wd, -hidden, FMP's -lambda-s, -lambda-f, -k, -scaling, -rho,
// -train-mode, -per-group, and -json for machine-readable output. Progress
// (one line per model and seed, with an ETA) goes to stderr. A missing
// data directory or file is an error naming the files expected.
//
// results/ holds the outputs for NBA, Bail and Credit with the exact
// command lines.
package main
