package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fairmp/fairmp/graph/datasets"
)

// The conversion writes Parquet files the loader reads as the same data
// set as the text files.
func TestConvert(t *testing.T) {
	dir := t.TempDir()
	nodes := "a,b,y,s\n1,0.5,0,1\n2,1.5,1,0\n3,2.5,0,1\n4,3.5,1,0\n"
	edges := "0 1\n1 2\n2 3\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "n.csv"), []byte(nodes), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "e.txt"), []byte(edges), 0o644))
	out := filepath.Join(dir, "pq")
	require.NoError(t, run([]string{"-convert", "-nodes", filepath.Join(dir, "n.csv"), "-edges", filepath.Join(dir, "e.txt"), "-out", out}, io.Discard))
	load := func(n, e string) *datasets.Dataset {
		c := datasets.DefaultFilesConfig()
		c.Nodes, c.Edges, c.LabelColumn, c.SensColumn = n, e, "y", "s"
		ds, err := datasets.LoadFiles(c)
		require.NoError(t, err)
		return ds
	}
	a := load(filepath.Join(dir, "n.csv"), filepath.Join(dir, "e.txt"))
	b := load(filepath.Join(out, "n.parquet"), filepath.Join(out, "e.parquet"))
	assert.Equal(t, a.Features, b.Features)
	assert.Equal(t, a.Labels, b.Labels)
	assert.Equal(t, a.Graph.Edges(), b.Graph.Edges())
	require.NoError(t, run([]string{"-nodes", filepath.Join(out, "n.parquet"), "-edges", filepath.Join(out, "e.parquet"), "-label", "y", "-sens", "s", "-repeat", "1"}, io.Discard))
}

// TestRealBail converts Bail and loads both forms; it needs $FAIRMP_DATA.
func TestRealBail(t *testing.T) {
	data := os.Getenv("FAIRMP_DATA")
	if data == "" {
		t.Skip("FAIRMP_DATA is not set: the folder holding bail/")
	}
	dir := t.TempDir()
	b := filepath.Join(data, "bail")
	require.NoError(t, run([]string{"-convert", "-nodes", filepath.Join(b, "bail.csv"), "-edges", filepath.Join(b, "bail_edges.txt"), "-out", dir}, io.Discard))
	require.NoError(t, run([]string{"-nodes", filepath.Join(dir, "bail.parquet"), "-edges", filepath.Join(dir, "bail_edges.parquet"), "-label", "RECID", "-sens", "WHITE", "-repeat", "1"}, io.Discard))
}
