package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fairmp/fairmp/internal/paired"
	"github.com/fairmp/fairmp/internal/protocol"
	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The regulariser at weight 0 trains exactly as the plain backbone
// (fairtrain.RegularizerConfig's doc): its effect is 0 on every measure,
// with the interval [0, 0], and resolved on none. The table has its
// columns, a row for every method but plain and FMP's decomposition,
// and -out writes the same rows to the effects CSV.
func TestEffectTable(t *testing.T) {
	dir := t.TempDir()
	var out, log bytes.Buffer
	require.NoError(t, run([]string{"-n", "300", "-seeds", "2", "-epochs", "20", "-methods", "fmp,thresholds,regularizer", "-method-weights", "regularizer=0", "-out", dir}, &out, &log))
	got := out.String()
	assert.Contains(t, got, "| plain |", "plain runs though -methods leaves it out: it is every method's backbone")
	_, table, ok := strings.Cut(got, "Effect net of the backbone")
	require.True(t, ok, got)
	lines := strings.Split(table, "\n")
	var rows []string
	for _, l := range lines {
		if strings.HasPrefix(l, "| ") {
			rows = append(rows, l)
		}
	}
	require.Len(t, rows, 6, table) // header, fmp, its two parts, thresholds, regularizer
	assert.Equal(t, "| method | against | accuracy | AUC | ΔDP | ΔEO | resolved |", rows[0])
	for _, r := range rows {
		assert.Len(t, strings.Split(r, " | "), 7, r)
	}
	assert.True(t, strings.HasPrefix(rows[1], "| fmp | plain | "), rows[1])
	assert.True(t, strings.HasPrefix(rows[2], "| "+paired.RowPropagation+" | plain | "), rows[2])
	assert.True(t, strings.HasPrefix(rows[3], "| "+paired.RowFairStep+" | "+paired.RowPropagation+" | "), rows[3])
	assert.True(t, strings.HasPrefix(rows[4], "| thresholds | plain | "), rows[4])
	zero := "+0.00 [+0.00, +0.00]"
	assert.Equal(t, "| regularizer | plain | "+strings.Repeat(zero+" | ", 4)+"none |", rows[5])

	b, err := os.ReadFile(filepath.Join(dir, "synthetic_gcn_effects.csv"))
	require.NoError(t, err)
	csv := strings.Split(strings.TrimSpace(string(b)), "\n")
	require.Len(t, csv, 1+5*paired.NumMeasures)
	assert.Equal(t, paired.CSVHeader, csv[0])
	assert.Equal(t, `"regularizer","plain",dp,0.0000,0.0000,0.0000,false,1000,2`, csv[1+4*paired.NumMeasures+paired.DP])
}

// A merged FMP run saved before FMP kept propagation alone has no
// decomposition: the rows are left out and the note says why.
func TestEffectsWithoutPropagationRun(t *testing.T) {
	p, err := load(&options{dataset: "synthetic", synthN: 200})
	require.NoError(t, err)
	n := p.ds.N()
	p1 := make([]float64, n)
	for i := range p1 {
		p1[i] = 0.2 + 0.6*float64(p.ds.Labels[i])
	}
	pr := testutil.BinaryProbs(p1)
	o := &options{methods: []string{"plain", "fmp"}, st: protocol.Settings{Backbone: "gcn"}, seeds: 1}
	rows, note, err := effects(o, p, [][]outcome{{{method: "plain", probs: pr}, {method: "fmp", probs: pr}}})
	require.NoError(t, err)
	require.Len(t, rows, 1)
	assert.Equal(t, "fmp", rows[0].Method)
	assert.Contains(t, note, "run FMP again")
	var w bytes.Buffer
	effectTable(&w, o, rows, note)
	assert.Contains(t, w.String(), "FMP's decomposition is left out")
}

func TestMethodWeightsFlag(t *testing.T) {
	var out, log bytes.Buffer
	for args, want := range map[string]string{
		"regularizer":                 "want NAME=W",
		"regularizer=x":               `the weight "x" is not a number`,
		"nifty=1":                     "nifty is not among -methods",
		"regularizer=-1":              "regularizer=-1",
		"regularizer=1,regularizer=2": "regularizer given twice",
		"fairgnn=1":                   "-fairgnn-beta",
		"thresholds=1":                "has no weight",
	} {
		err := run([]string{"-methods", "regularizer,fairgnn,thresholds", "-method-weights", args}, &out, &log)
		assert.ErrorContains(t, err, want, args)
	}
	o, err := parseFlags([]string{"-methods", "regularizer", "-method-weights", "regularizer=0.5"}, &log)
	require.NoError(t, err)
	assert.Equal(t, []string{"plain", "regularizer"}, o.methods)
	assert.Contains(t, runProtocol(o), "-method-weights regularizer=0.5")
	o, err = parseFlags(nil, &log)
	require.NoError(t, err)
	assert.NotContains(t, runProtocol(o), "-method-weights", "runs saved before the flag still merge")
}

// TestSelectFlag: -select chooses the epoch every training keeps, is part
// of the saved runs' protocol when not the default (so -merge refuses to
// mix selections), and names the choices when wrong.
func TestSelectFlag(t *testing.T) {
	var log bytes.Buffer
	o, err := parseFlags([]string{"-select", "auc"}, &log)
	require.NoError(t, err)
	assert.Equal(t, train.SelectValAUC, trainConfig(o).Select)
	assert.Contains(t, runProtocol(o), "-select auc")
	o, err = parseFlags(nil, &log)
	require.NoError(t, err)
	assert.Equal(t, train.SelectBestVal, trainConfig(o).Select)
	assert.NotContains(t, runProtocol(o), "-select", "runs saved before the flag still merge")
	_, err = parseFlags([]string{"-select", "f1"}, &log)
	assert.ErrorContains(t, err, `-select: selection "f1", want one of acc, auc, loss, last`)
}
