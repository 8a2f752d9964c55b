// Command loadonly loads a model file with package modelio alone (no
// import of package fmp or of any kind's package) and prints the loaded
// model's kind: TestLoadNeedsNoOtherImport runs it on an fmp model file.
package main

import (
	"fmt"
	"os"

	"github.com/fairmp/fairmp/fmp/modelio"
	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/layers"
	G "gorgonia.org/gorgonia"
)

func main() {
	if err := run(os.Args[1], os.Args[2:]); err != nil {
		fmt.Fprintln(os.Stderr, "loadonly:", err)
		os.Exit(1)
	}
}

// run loads path onto a ring of as many nodes as the groups given (one
// per argument: "0" or "1").
func run(path string, groups []string) error {
	n := len(groups)
	sens := make([]int, n)
	edges := make([][2]int, n)
	for i, s := range groups {
		if s == "1" {
			sens[i] = 1
		}
		edges[i] = [2]int{i, (i + 1) % n}
	}
	gr, err := graph.FromEdges(n, edges)
	if err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	m, err := modelio.Load(f, G.NewGraph(), modelio.Env{Graph: gr, Sens: sens})
	if err != nil {
		return err
	}
	k, err := layers.KindOf(m)
	if err != nil {
		return err
	}
	fmt.Println(k.Name())
	return nil
}
