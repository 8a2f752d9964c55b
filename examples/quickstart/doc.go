// Command quickstart is fairmp's first run: with no flags, no files and no
// cgo it generates a biased graph (datasets.Synthetic with its defaults:
// 2,000 nodes whose edges mostly join members of the same sensitive
// group, seeded), trains an MLP, a GCN and FMP (MLP → fair message
// passing) with the library's defaults, and prints one table of test
// accuracy, ΔDP and ΔEO (through the metrics package) and training time,
// after the graph's label and sensitive homophily.
//
// Run it from the repository root:
//
//	go run ./examples/quickstart
//
// Progress goes to stderr, the table to stdout. It takes well under a
// minute on two cores. It uses the public API alone (datasets, layers,
// fmp, layers/train, metrics): copy it into a program of your own. For
// your own data and every knob as a flag, see examples/debias.
package main
