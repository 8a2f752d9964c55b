// Package tour holds the five-minute tour of fairmp that the README
// shows, as a compiled, tested Example (example_test.go): load a data set,
// build MLP → FMP, train it, evaluate accuracy and fairness, and audit
// what the sensitive attribute changed. It has no API of its own.
//
// Run it with
//
//	go test ./examples/tour -run Example -v
package tour
