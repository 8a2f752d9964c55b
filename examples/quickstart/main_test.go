package main

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/stretchr/testify/require"
)

// tinyConfig is the quickstart on a 200-node graph for 5 epochs.
func tinyConfig() config {
	c := defaultConfig()
	c.Data.N, c.Data.MeanDegree = 200, 6
	c.Train.Epochs = 5
	return c
}

func TestQuickstartSmoke(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := quickstart(context.Background(), tinyConfig(), &out, &errOut); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	if !strings.Contains(text, "sensitive homophily") || !strings.Contains(text, "label homophily") {
		t.Errorf("output lacks the homophily line:\n%s", text)
	}
	rows := 0
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) != 5 || (f[0] != "mlp" && f[0] != "gcn" && f[0] != "fmp") {
			continue
		}
		rows++
		for _, s := range f[1:4] {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || v < 0 || v > 100 {
				t.Errorf("row %q: %q is not a percentage", line, s)
			}
		}
	}
	if rows != 3 {
		t.Errorf("got %d model rows, want 3 (mlp, gcn, fmp):\n%s", rows, text)
	}
}

func TestQuickstartRejectsArguments(t *testing.T) {
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"-epochs", "3"}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "takes no arguments") {
		t.Fatalf("run with arguments: err = %v, want 'takes no arguments'", err)
	}
}

// The quickstart's graph must be the biased one the README describes:
// high sensitive homophily, from the library's defaults.
func TestQuickstartGraphIsBiased(t *testing.T) {
	ds, err := datasets.Synthetic(defaultConfig().Data)
	require.NoError(t, err)
	h, err := ds.Graph.Homophily(ds.Sens)
	require.NoError(t, err)
	if h < 0.85 {
		t.Errorf("sensitive homophily %.3f, want ≥ 0.85", h)
	}
}
