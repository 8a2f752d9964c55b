// Command synthetic is the FMP paper's synthetic study: it sweeps the
// sensitive homophily of generated graphs (datasets.Synthetic, the
// fraction of edges joining two nodes of the same sensitive group; every
// other knob at its default) and measures ΔDP of each model on each graph,
// showing that message passing (GCN) amplifies the bias an MLP has when
// edges stay inside groups, and what FMP does to it.
//
// It writes synthetic.csv (one row per homophily value and model: mean
// and std over seeds of accuracy, ΔDP and ΔEO, in percent, through the
// metrics package) and synthetic.svg (ΔDP against the measured sensitive
// homophily, one line per model, ±1 std error bars), and prints a table.
//
// Usage, from the repository root:
//
//	go run ./synthetic -out /tmp
//	go run ./synthetic -models mlp,gcn,sgc,appnp,fmp -seeds 5 -out /tmp
//
// results/ holds the committed CSV and SVG and the command that made them.
package main
