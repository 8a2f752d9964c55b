package protocol

import (
	"math"
	"os"
	"testing"

	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLookup(t *testing.T) {
	assert.Equal(t, []string{"nifty", "fairgnn", "fairvgnn", "edits", "fmp"}, Names())
	_, err := Lookup("pyg")
	assert.EqualError(t, err, `protocol "pyg", want one of nifty, fairgnn, fairvgnn, edits, fmp`)
	p, err := Lookup("nifty")
	require.NoError(t, err)
	bail := p.For("bail")
	assert.Equal(t, 100, bail.TrainLabels)
	assert.Equal(t, 6000, p.For("credit").TrainLabels)
	assert.Equal(t, 0, p.For("synthetic").TrainLabels)
	assert.True(t, bail.IncludeSens)
	assert.False(t, bail.NoScale)
	assert.Equal(t, train.SelectValLoss, bail.Select)
	g, err := Lookup("fairgnn")
	require.NoError(t, err)
	assert.True(t, g.For("pokec_z").NoScale)
	assert.False(t, g.For("nba").NoScale)
}

// The flags given win; the others take the preset's values; the
// backbone's overrides come with the preset's backbone alone.
func TestApply(t *testing.T) {
	p, err := Lookup("nifty")
	require.NoError(t, err)
	s := Settings{Backbone: "gcn", Hidden: 64, Epochs: 50, LR: 0.01, Dropout: math.NaN()}
	Apply(&s, p.For("bail"), map[string]bool{"epochs": true, "lr": true})
	assert.Equal(t, "jknet", s.Backbone)
	assert.Equal(t, 1, s.Overrides["layers"])
	assert.Equal(t, 16, s.Hidden)
	assert.Equal(t, 50, s.Epochs, "-epochs given")
	assert.Equal(t, 0.01, s.LR, "-lr given")
	assert.Equal(t, 1e-5, s.WeightDecay)
	assert.Equal(t, 0.0, s.Dropout)
	assert.Equal(t, 100, s.TrainLabels)
	s = Settings{Backbone: "gcn", Dropout: math.NaN()}
	Apply(&s, p.For("bail"), map[string]bool{"backbone": true})
	assert.Equal(t, "gcn", s.Backbone)
	assert.Nil(t, s.Overrides)
	assert.True(t, math.IsNaN(s.Dropout), "the preset's dropout is its model's")
	assert.Contains(t, s.Flags(), "-backbone gcn -hidden 16 -epochs 300 -lr 0.001 -weight-decay 1e-05 -dropout the backbone's own -select loss -include-sens -train-labels 100")
}

// NIFTY's backbone is one GCN convolution and a linear head with the
// identity between them: its output is Ã X W1 W2 + biases, checked
// against a dense computation on a path graph.
func TestNIFTYBackboneIsOneConvAndALinearHead(t *testing.T) {
	p, err := Lookup("nifty")
	require.NoError(t, err)
	cfg, err := p.For("bail").Configure(5, 2, layers.DefaultOptions())
	require.NoError(t, err)
	jk, ok := cfg.(layers.JKNetConfig)
	require.True(t, ok, "%T", cfg)
	assert.Equal(t, 1, jk.Layers)
	assert.Equal(t, 16, jk.Hidden)
	assert.Equal(t, 0.0, jk.Dropout)
	assert.Equal(t, layers.LeakyReLU(1), jk.Activation)
	for _, v := range []float64{-3, -0.5, 0, 2} {
		assert.Equal(t, v, jk.Activation.Apply(v), "the identity")
	}
	s := p.For("bail")
	s.Backbone, s.Overrides = "sgc", nil
	_, err = s.Configure(5, 2, layers.DefaultOptions())
	assert.ErrorContains(t, err, "-dropout 0: the sgc backbone has no dropout")
	s.Dropout = math.NaN()
	_, err = s.Configure(5, 2, layers.DefaultOptions())
	assert.NoError(t, err)
}

func TestHelpListsEveryPreset(t *testing.T) {
	h := Help()
	for _, n := range Names() {
		assert.Contains(t, h, "  "+n+" (")
	}
	assert.Contains(t, h, "-train-labels 100 on bail")
	assert.Contains(t, h, "-no-scale on pokec_n")
}

func TestCapTrain(t *testing.T) {
	labels := []int{0, 1, 0, 1, 0, 0, 0, 1, -1, 0}
	train := []int{0, 1, 2, 3, 4, 5, 6, 7}
	got := CapTrain(train, labels, 4)
	require.Len(t, got, 4)
	per := map[int]int{}
	for _, i := range got {
		assert.Contains(t, train, i)
		per[labels[i]]++
	}
	assert.Equal(t, map[int]int{0: 2, 1: 2}, per, "half of each class")
	assert.Equal(t, got, CapTrain(train, labels, 4), "the same nodes on every call")
	// A class with fewer than n/2 nodes gives all it has.
	got = CapTrain(train, labels, 10)
	assert.Len(t, got, 8)
}

// LoadPreset scales as datasets.Load does, or not: NBA's features lie in
// [−1, 1] scaled and beyond unscaled.
func TestLoadPresetScaling(t *testing.T) {
	dir := os.Getenv("FAIRMP_DATA")
	if dir == "" {
		t.Skip("FAIRMP_DATA is not set")
	}
	maxAbs := func(scale bool) float64 {
		ds, err := LoadPreset(dir, "nba", datasets.DefaultOptions(), scale)
		require.NoError(t, err)
		m := 0.0
		for _, v := range ds.Features {
			m = max(m, math.Abs(v))
		}
		return m
	}
	assert.LessOrEqual(t, maxAbs(true), 1.0)
	assert.Greater(t, maxAbs(false), 1.0)
	want, err := datasets.Load(dir, "nba", datasets.DefaultOptions())
	require.NoError(t, err)
	got, err := LoadPreset(dir, "nba", datasets.DefaultOptions(), true)
	require.NoError(t, err)
	assert.Equal(t, want.Features, got.Features, "scaled is datasets.Load's")
}
