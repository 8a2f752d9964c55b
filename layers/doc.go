// Package layers provides graph neural network layers as gorgonia graph
// nodes, the sparse propagation op they share, and the trainer used for
// every fairmp model.
//
// # Errors
//
// Constructors and forward functions validate their inputs (shapes,
// dtypes, options) and return errors that name the node and what was
// expected; custom ops never panic inside a gorgonia VM on anything a user
// can cause.
package layers
