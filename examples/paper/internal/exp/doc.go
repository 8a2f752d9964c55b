// Package exp is the small experiment harness shared by fairmp's examples:
// it builds any of the library's models by name with the library's
// defaults (MLP, GCN, SGC, APPNP, GAT, JKNet, and fmp.Model: MLP → FMP),
// trains it with the library's trainer under the FMP paper's protocol
// (train.Fit, or train.Trainer's steps alone when the last epoch is
// kept) and evaluates the test split through the metrics package.
//
// It holds no algorithm of its own: every number it produces comes from
// layers (training, prediction), fmp (the FMP layer) and metrics
// (accuracy, ΔDP, ΔEO).
//
// # Errors
//
// Every function returns an error naming the model and the step that
// failed (building, training, evaluating); nothing panics on user input.
package exp
