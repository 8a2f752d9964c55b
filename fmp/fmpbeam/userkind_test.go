package fmpbeam

// This file declares a model kind of its own, as a user would, and runs
// it on Prism: the pipeline lays any kind out from its Compute, with no
// code for the kind in this package.

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/minibatch"
)

// sageConfig configures a GraphSAGE-like model:
// logits = ReLU(X·Ws + (ÃX)·Wn + b)·Wo, then half the output mixed with
// one more hop of itself.
type sageConfig struct {
	layers.Base
	Hidden      int                `json:"hidden"`
	Propagation layers.Propagation `json:"propagation"`
}

func (c sageConfig) Validate() error {
	if err := c.Base.Validate(); err != nil {
		return err
	}
	if c.Hidden < 1 {
		return fmt.Errorf("Hidden = %d, want ≥ 1", c.Hidden)
	}
	return c.Propagation.Validate()
}

type sage struct {
	cfg               sageConfig
	a                 *graph.Matrix
	self, nbr, b, out *G.Node
}

var _ = layers.MustDeclare(layers.KindSpec[sageConfig, *sage]{
	Name:    "beam-sage",
	Summary: "a GraphSAGE-like test model",
	Default: func(in, classes int) sageConfig {
		return sageConfig{Base: layers.DefaultBase("sage", in, classes), Hidden: 6, Propagation: layers.DefaultPropagation()}
	},
	New:    newSage,
	Config: func(m *sage) sageConfig { return m.cfg },
	Params: func(c sageConfig) []layers.Param {
		return []layers.Param{
			{Name: c.Name + ".self", Shape: []int{c.In, c.Hidden}}, {Name: c.Name + ".nbr", Shape: []int{c.In, c.Hidden}},
			{Name: c.Name + ".b", Shape: []int{1, c.Hidden}}, {Name: c.Name + ".out", Shape: []int{c.Hidden, c.Out}},
		}
	},
	Propagation: func(c sageConfig) layers.Propagation { return c.Propagation },
})

func newSage(g *G.ExprGraph, gr *graph.Graph, cfg sageConfig, _ *layers.Phase) (*sage, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	a, err := cfg.Propagation.Matrix(gr)
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewSource(cfg.Seed))
	w := func(name string, r, c int) *G.Node {
		return G.NewMatrix(g, cfg.Dtype, G.WithShape(r, c), G.WithName(cfg.Name+name), G.WithValue(layers.GlorotUniform(rng, cfg.Dtype, r, c)))
	}
	return &sage{cfg: cfg, a: a, self: w(".self", cfg.In, cfg.Hidden), nbr: w(".nbr", cfg.In, cfg.Hidden),
		b: w(".b", 1, cfg.Hidden), out: w(".out", cfg.Hidden, cfg.Out)}, nil
}

func (m *sage) Learnables() G.Nodes                { return G.Nodes{m.self, m.nbr, m.b, m.out} }
func (m *sage) Matrix() *graph.Matrix              { return m.a }
func (m *sage) Forward(x *G.Node) (*G.Node, error) { return layers.Forward(m, x) }

func (m *sage) Compute(f layers.Flow, x layers.Value) (layers.Value, error) {
	ax, err := f.Propagate(x, layers.Hop{})
	if err != nil {
		return layers.Value{}, err
	}
	s, err := f.Dense(x, m.self, nil, layers.Activation{})
	if err != nil {
		return layers.Value{}, err
	}
	n, err := f.Dense(ax, m.nbr, m.b, layers.Activation{})
	if err != nil {
		return layers.Value{}, err
	}
	h, err := f.Combine([]float64{1, 1}, s, n)
	if err != nil {
		return layers.Value{}, err
	}
	if h, err = f.Activate(h, layers.ReLU()); err != nil {
		return layers.Value{}, err
	}
	z, err := f.Dense(h, m.out, nil, layers.Activation{})
	if err != nil {
		return layers.Value{}, err
	}
	az, err := f.Propagate(z, layers.Hop{})
	if err != nil {
		return layers.Value{}, err
	}
	return f.Combine([]float64{0.5, 0.5}, az, z)
}

// TestUserKindOnPrism: a kind declared in this test runs on Prism, and
// its logits are layers.LayerwiseLogits's within 1e-9.
func TestUserKindOnPrism(t *testing.T) {
	ds := smallData(t)
	dir, x := writeSmall(t, ds)
	k, err := layers.LookupKind("beam-sage")
	require.NoError(t, err)
	cfg, err := k.Configure(ds.NumFeatures, 2, layers.DefaultOptions())
	require.NoError(t, err)
	file, params := initModel(t, cfg, ds)
	path := filepath.Join(dir, "sage.fmp")
	require.NoError(t, os.WriteFile(path, file, 0o644))
	adj, err := minibatch.Matrix(cfg, ds.Graph)
	require.NoError(t, err)
	want, err := minibatch.Logits(cfg, params, adj, x)
	require.NoError(t, err)

	m, err := ReadModelFile(file)
	require.NoError(t, err)
	lay := Layout{Size: 64}
	p, s := beam.NewPipelineWithRoot()
	nodes := ReadNodes(s, lay, dir+"/nodes-*.txt")
	st := NodeStats(s, lay, nodes)
	norm, ok := m.Norm()
	require.True(t, ok, "the kind declares its propagation")
	a, _ := BuildMatrix(s, lay, norm, nodes, ReadEdges(s, lay, dir+"/edges-*.txt"), st)
	z, err := Infer(s, lay, m, ReadModel(s, path), a, ReadRows(s, lay, dir+"/features-*.txt", "features", nodes))
	require.NoError(t, err)
	beam.ParDo0(s, &collectRowsFn{Key: "zsage"}, z)
	run(t, p)
	got, c := rowsOf(t, "zsage", ds.N())
	require.Equal(t, 2, c)
	testutil.AllClose(t, "sage logits", got, testutil.ToF64(want), 1e-9, 0)
}
