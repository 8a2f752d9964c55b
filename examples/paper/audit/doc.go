// Command audit is the FMP paper's transparency probe. It trains
// MLP → FMP (default: the generated biased graph of datasets.Synthetic;
// -data/-dataset for a real one), then, from ONE forward pass of the
// trained model's backbone and fmp.Explain on its logits (which also runs
// the same K steps with the sensitive-attribute steps removed, u ≡ 0),
// prints:
//
//   - test accuracy, ΔDP and ΔEO without and with the sensitive steps
//     (through the metrics package),
//   - per-group influence of the sensitive attribute: each group's mean
//     P(ŷ=1) without and with, the shift, the mean logit change,
//   - the final dual direction u,
//   - the nodes whose predicted label the debiasing flipped,
//
// and writes audit.svg: the logit-layer representation (z₀, z₁) of every
// node without and with the sensitive steps, coloured by group.
//
// Run it from the repository root:
//
//	go run ./audit -out /tmp
//	go run ./audit -data $FAIRMP_DATA -dataset nba -out /tmp
//
// No retraining is needed to see what the sensitive attribute did: it
// enters FMP only through the fairness steps.
package main
