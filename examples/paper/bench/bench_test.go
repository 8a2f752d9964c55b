package main

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunSmoke runs every model for a few epochs on a tiny graph and checks
// the report.
func TestRunSmoke(t *testing.T) {
	for _, m := range models() {
		for _, kind := range []string{"synthetic", "uniform"} {
			var out, errb bytes.Buffer
			args := []string{"-model", m, "-graph", kind, "-nodes", "300", "-features", "12", "-edges", "1500",
				"-hidden", "8", "-epochs", "3", "-warmup", "1", "-json"}
			if m == "mlp" && kind == "uniform" {
				args = append(args, "-trainer", "-dtype", "float64")
			}
			if err := run(args, &out, &errb); err != nil {
				t.Fatalf("%s on %s: %v (stderr %q)", m, kind, err, errb.String())
			}
			var r Result
			if err := json.Unmarshal(out.Bytes(), &r); err != nil {
				t.Fatalf("%s on %s: output %q: %v", m, kind, out.String(), err)
			}
			if r.Model != m || r.Nodes != 300 || r.Edges != 1500 || r.Epochs != 3 {
				t.Errorf("%s on %s: report %+v does not echo the flags", m, kind, r)
			}
			if !(r.MinMS > 0 && r.MinMS <= r.MedianMS && r.MedianMS <= r.MaxMS) || r.ForwardMS <= 0 {
				t.Errorf("%s on %s: times min %v median %v max %v forward %v", m, kind, r.MinMS, r.MedianMS, r.MaxMS, r.ForwardMS)
			}
			if math.IsNaN(r.LossFirst) || r.LossFirst <= 0 || math.IsNaN(r.LossLast) || r.LossLast <= 0 {
				t.Errorf("%s on %s: losses %v -> %v", m, kind, r.LossFirst, r.LossLast)
			}
			if r.PeakRSSMB <= 0 || r.RSSSetupMB <= 0 || r.BLAS == "" {
				t.Errorf("%s on %s: memory %v / %v MiB, BLAS %q", m, kind, r.RSSSetupMB, r.PeakRSSMB, r.BLAS)
			}
			if (m == "mlp" && kind == "uniform") != (r.TrainerEpochMS > 0) {
				t.Errorf("%s on %s: trainer epoch %v ms", m, kind, r.TrainerEpochMS)
			}
			// Training steps must change the loss.
			if r.LossFirst == r.LossLast {
				t.Errorf("%s on %s: loss %v -> %v", m, kind, r.LossFirst, r.LossLast)
			}
		}
	}
}

func TestRunText(t *testing.T) {
	var out, errb bytes.Buffer
	if err := run([]string{"-model", "gcn", "-nodes", "200", "-features", "5", "-edges", "600", "-epochs", "2", "-warmup", "0"}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"gcn  float32", "median", "forward", "backward", "optimizer", "peak"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestRunErrors(t *testing.T) {
	for _, args := range [][]string{
		{"-model", "gcnii"},
		{"-dtype", "float16"},
		{"-nodes", "2"},
		{"-edges", "-1"},
		{"-nodes", "10", "-edges", "100"},
		{"-model", "gat", "-hidden", "6"},
		{"-epochs", "0"},
		{"-graph", "grid"},
		{"extra"},
	} {
		var out, errb bytes.Buffer
		if err := run(args, &out, &errb); err == nil {
			t.Errorf("run(%q) succeeded, want an error", args)
		}
	}
}

// TestShapeFlag: -shape sets the real data sets' sizes; an unknown shape
// is an error naming the known ones.
func TestShapeFlag(t *testing.T) {
	o, err := parseFlags([]string{"-shape", "bail"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, [3]int{18876, 18, 311870}, [3]int{o.nodes, o.features, o.edges})
	_, err = parseFlags([]string{"-shape", "cora"}, io.Discard)
	assert.ErrorContains(t, err, "bail, credit, nba, pokec_z")
}
