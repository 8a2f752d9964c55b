package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

func TestReproduceSyntheticSmoke(t *testing.T) {
	var out, errOut bytes.Buffer
	err := run([]string{"-dataset", "synthetic", "-models", "mlp,gcn,sgc,appnp,gat,jknet,fmp", "-seeds", "2", "-epochs", "3"}, &out, &errOut)
	if err != nil {
		t.Fatalf("%v\nstderr:\n%s", err, errOut.String())
	}
	for _, m := range []string{"| MLP |", "| GCN |", "| SGC |", "| APPNP |", "| GAT |", "| JKNet |", "| FMP |"} {
		if !strings.Contains(out.String(), m) {
			t.Errorf("table lacks the row %q:\n%s", m, out.String())
		}
	}
	if strings.Contains(out.String(), "paper") {
		t.Errorf("synthetic has no paper values, but the table mentions them:\n%s", out.String())
	}
	// One progress line per model and seed, each with an ETA.
	if n := strings.Count(errOut.String(), "ETA"); n != 14 {
		t.Errorf("%d progress lines with ETA, want 14:\n%s", n, errOut.String())
	}
}

func TestReproduceJSON(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := run([]string{"-dataset", "synthetic", "-models", "mlp,fmp", "-seeds", "2", "-epochs", "2", "-json"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	var o output
	if err := json.Unmarshal(out.Bytes(), &o); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out.String())
	}
	if len(o.Results) != 2 || o.Results[0].Model != "mlp" || o.Results[1].Model != "fmp" {
		t.Fatalf("results %+v, want mlp then fmp", o.Results)
	}
	for _, r := range o.Results {
		if r.Summary.Runs != 2 || len(r.Runs) != 2 {
			t.Errorf("%s: %d runs summarised, %d reports, want 2", r.Model, r.Summary.Runs, len(r.Runs))
		}
		if a := r.Summary.Accuracy.Mean; a <= 0 || a > 1 {
			t.Errorf("%s: mean accuracy %v, want a fraction in (0, 1]", r.Model, a)
		}
	}
}

func TestReproduceNBA(t *testing.T) {
	dir := os.Getenv("FAIRMP_DATA")
	if dir == "" {
		t.Skip("FAIRMP_DATA is not set: skipping the NBA run (point it at the folder holding nba/, bail/ and credit/)")
	}
	var out, errOut bytes.Buffer
	if err := run([]string{"-data", dir, "-dataset", "nba", "-models", "mlp,fmp", "-seeds", "1", "-epochs", "3"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "| FMP |") || !strings.Contains(out.String(), "73.33±1.85") {
		t.Errorf("NBA table lacks FMP's row with the paper's accuracy beside it:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "63 test nodes") {
		t.Errorf("NBA header should state the 63-node test split:\n%s", out.String())
	}
}

func TestReproduceFlagErrors(t *testing.T) {
	empty := t.TempDir()
	t.Setenv("FAIRMP_DATA", "")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-dataset", "nba"}, "pass -data DIR or set $FAIRMP_DATA"},
		{[]string{"-data", empty, "-dataset", "nba"}, "nba/nba.csv and nba/nba_relationship.txt"},
		{[]string{"-data", empty, "-dataset", "pokec_z"}, "region_job.csv"},
		{[]string{"-data", empty, "-dataset", "credit"}, "credit/credit.csv"},
		{[]string{"-dataset", "cora"}, `-dataset "cora"`},
		{[]string{"-dataset", "synthetic", "-models", "mlp,gcnn"}, `unknown model "gcnn"`},
		{[]string{"-dataset", "synthetic", "-models", "mlp,mlp"}, "listed twice"},
		{[]string{"-dataset", "synthetic", "-seeds", "0"}, "-seeds 0"},
		{[]string{"-dataset", "synthetic", "-epochs", "0"}, "-epochs"},
		{[]string{"-dataset", "synthetic", "-select", "best"}, `-select "best"`},
		{[]string{"-dataset", "synthetic", "-lambda-f", "-1"}, "LambdaF"},
		{[]string{"-dataset", "synthetic", "-k", "0"}, "K"},
		{[]string{"-dataset", "synthetic", "-tau", "0"}, "Temperature"},
		{[]string{"-dataset", "synthetic", "-scaling", "auto"}, `-scaling "auto"`},
		{[]string{"-dataset", "synthetic", "-train-mode", "x"}, `-train-mode "x"`},
		{[]string{"-dataset", "synthetic", "extra"}, "unexpected arguments"},
	} {
		var out, errOut bytes.Buffer
		err := run(c.args, &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("run(%q): err = %v, want it to contain %q", c.args, err, c.want)
		}
	}
}
