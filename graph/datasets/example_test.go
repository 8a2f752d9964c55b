package datasets_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fairmp/fairmp/graph/datasets"
)

func ExampleSynthetic() {
	cfg := datasets.DefaultSyntheticConfig()
	cfg.N = 5000
	ds, err := datasets.Synthetic(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	hy, _ := ds.Graph.Homophily(ds.Labels)
	hs, _ := ds.Graph.Homophily(ds.Sens)
	fmt.Printf("%d nodes, %d edges, %d features\n", ds.N(), ds.Graph.NumEdges(), ds.NumFeatures)
	fmt.Printf("label homophily %.2f, sensitive homophily %.2f\n", hy, hs)
	fmt.Printf("split %d/%d/%d\n", len(ds.Split.Train), len(ds.Split.Val), len(ds.Split.Test))
	// Output:
	// 5000 nodes, 25000 edges, 16 features
	// label homophily 0.70, sensitive homophily 0.90
	// split 2500/1250/1250
}

// ExampleLoad loads NBA from $FAIRMP_DATA when it is set.
func ExampleLoad() {
	dir := os.Getenv("FAIRMP_DATA")
	if dir == "" {
		return
	}
	ds, err := datasets.Load(dir, "nba", datasets.DefaultOptions())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ds.N(), ds.NumFeatures, ds.Graph.NumEdges(), len(ds.Split.Train))
}

// ExampleLoadNIFTY loads a NIFTY-format file with custom columns; without
// an edges file the graph is built from feature similarity.
func ExampleLoadNIFTY() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "toy.csv"), []byte("y,group,x\n1,a,0\n0,b,1\n1,a,3\n0,b,3.5\n"), 0o644)
	cfg := datasets.NIFTYConfig{
		Name: "toy", File: "toy", LabelColumn: "y", SensColumn: "group",
		SensMap: map[string]int{"a": 0, "b": 1}, Threshold: 0.7,
		Options: datasets.DefaultOptions(),
	}
	ds, err := datasets.LoadNIFTY(dir, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ds.Labels, ds.Sens, ds.FeatureNames, ds.Features)
	fmt.Println(ds.Graph.Edges())

	// A bad cell is reported with file, line and column.
	os.WriteFile(filepath.Join(dir, "toy.csv"), []byte("y,group,x\n1,a,0\n0,c,1\n"), 0o644)
	_, err = datasets.LoadNIFTY(dir, cfg)
	var fe *datasets.FileError
	if errors.As(err, &fe) {
		fmt.Println(filepath.Base(fe.File), fe.Line, fe.Column, fe.Msg)
	}
	// Output:
	// [1 0 1 0] [0 1 0 1] [x] [0 1 3 3.5]
	// [[0 1] [1 2] [2 3]]
	// toy.csv 3 3 column "group": "c" is not a number nor one of the mapped values "a", "b"
}

// LoadFiles reads a graph of your own: a node table with an id column,
// text labels and groups, and an edge list by id.
func ExampleLoadFiles() {
	dir, err := os.MkdirTemp("", "fairmp-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	nodes := "name,age,income,approved,region\n" +
		"ann,34,52,yes,north\nbob,51,38,no,south\ncid,29,,,east\n" +
		"dan,45,61,yes,north\neve,38,44,no,south\nfay,60,30,yes,east\n"
	edges := "source,target\nann,bob\nbob,cid\ncid,dan\ndan,eve\neve,fay\nfay,ann\n"
	os.WriteFile(filepath.Join(dir, "people.csv"), []byte(nodes), 0o644)
	os.WriteFile(filepath.Join(dir, "links.csv"), []byte(edges), 0o644)

	c := datasets.DefaultFilesConfig()
	c.Nodes, c.Edges = filepath.Join(dir, "people.csv"), filepath.Join(dir, "links.csv")
	c.IDColumn, c.LabelColumn, c.SensColumn = "name", "approved", "region"
	c.PositiveLabel = "yes"
	_, err = datasets.LoadFiles(c)
	var fe *datasets.FileError
	if errors.As(err, &fe) {
		// cid's income is empty: features must be numbers.
		fmt.Printf("line %d, column %d: %s\n", fe.Line, fe.Column, fe.Msg)
	}
	c.Drop = []string{"income"}
	ds, err := datasets.LoadFiles(c)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("classes", ds.ClassNames, "groups", ds.GroupNames)
	fmt.Println("labels", ds.Labels, "groups", ds.Sens)
	fmt.Println("features", ds.FeatureNames, ds.N(), "nodes,", ds.Graph.NumEdges(), "edges")
	// Output:
	// line 4, column 8: column "income": empty cell, want a number
	// classes [no yes] groups [east north south]
	// labels [1 0 -1 1 0 1] groups [1 2 0 1 2 0]
	// features [age] 6 nodes, 6 edges
}
