package main

// paperRow is one cell group of the FMP paper's Table 1: test accuracy,
// ΔDP and ΔEO in percent, mean±std over 5 runs, as printed in the paper.
type paperRow struct{ Acc, DP, EO string }

// paperTable1 holds Table 1 of "Chasing Fairness in Graphs: A GNN
// Architecture Perspective" (Jiang et al., AAAI 2024) for the data sets it
// covers. JKNet is not in the table.
var paperTable1 = map[string]map[string]paperRow{
	"pokec_z": {
		"mlp":   {"70.48±0.77", "1.61±1.29", "2.22±1.01"},
		"gat":   {"69.76±1.30", "2.39±0.62", "2.91±0.97"},
		"gcn":   {"71.78±0.37", "3.25±2.35", "2.36±2.09"},
		"sgc":   {"71.24±0.46", "4.81±0.30", "4.79±2.27"},
		"appnp": {"66.91±1.46", "3.90±0.69", "5.71±1.29"},
		"fmp":   {"70.50±0.50", "0.81±0.40", "1.73±1.03"},
	},
	"pokec_n": {
		"mlp":   {"72.48±0.26", "1.53±0.89", "3.39±2.37"},
		"gat":   {"71.00±0.48", "3.71±2.15", "7.50±2.88"},
		"gcn":   {"73.09±0.28", "3.48±0.47", "5.16±1.38"},
		"sgc":   {"71.46±0.41", "2.22±0.29", "3.85±1.63"},
		"appnp": {"69.80±0.89", "1.98±1.30", "4.01±2.36"},
		"fmp":   {"72.16±0.33", "0.66±0.40", "1.47±0.87"},
	},
	"nba": {
		"mlp":   {"65.56±1.62", "22.37±1.87", "18.00±3.52"},
		"gat":   {"57.78±10.65", "20.12±16.18", "13.00±13.37"},
		"gcn":   {"61.90±1.00", "23.70±2.74", "17.50±2.63"},
		"sgc":   {"63.17±0.63", "22.56±3.94", "14.33±2.16"},
		"appnp": {"63.80±1.19", "26.51±3.33", "20.00±4.56"},
		"fmp":   {"73.33±1.85", "18.92±2.28", "13.33±5.89"},
	},
}
