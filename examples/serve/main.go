// Command serve is a small scoring service for a saved fair model: it
// keeps a graph in memory, adds the nodes each request brings, and
// answers their probabilities and decisions, with every accepted request
// logged and fsynced before it is answered. See README.md.
package main

import "os"

func main() { os.Exit(2) }
