package layers

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
)

// The library's kinds are declared, each once, with the properties the
// commands and mini-batch training rely on.
func TestLibraryKinds(t *testing.T) {
	want := map[string]struct {
		title          string
		blocks, hidden bool
	}{
		"mlp": {"MLP", true, true}, "gcn": {"GCN", true, true}, "sgc": {"SGC", true, false},
		"appnp": {"APPNP", true, true}, "gat": {"GAT", true, true}, "jknet": {"JKNet", true, true},
		"sage": {"GraphSAGE", true, true}, "gin": {"GIN", true, true},
	}
	for name, w := range want {
		k, err := LookupKind(name)
		require.NoError(t, err, name)
		assert.Equal(t, w.title, k.Title(), name)
		assert.Equal(t, w.blocks, k.Blocks(), "%s: Blocks", name)
		assert.Equal(t, w.hidden, k.HasHidden(), "%s: HasHidden", name)
		assert.False(t, k.Wraps(), name)
		assert.NotEmpty(t, k.Summary(), name)
		cfg, err := k.Default(5, 2)
		require.NoError(t, err)
		require.NoError(t, cfg.Validate(), name)
		kc, err := KindOfConfig(cfg)
		require.NoError(t, err)
		assert.Same(t, k, kc, "%s: the configuration's kind", name)
		b := BaseOf(cfg)
		assert.Equal(t, name, b.Name, "the default name is the kind's")
		assert.Equal(t, Base{Name: name, In: 5, Out: 2, Dtype: tensor.Float64, Seed: 1}, b, name)

		// Built from its configuration, the model knows its kind and
		// gives the configuration back.
		gr, err := graph.FromEdges(3, [][2]int{{0, 1}, {1, 2}})
		require.NoError(t, err)
		m, err := k.Build(G.NewGraph(), gr, cfg, nil)
		require.NoError(t, err, name)
		km, err := KindOf(m)
		require.NoError(t, err)
		assert.Same(t, k, km)
		back, err := k.ConfigOf(m)
		require.NoError(t, err)
		assert.Equal(t, cfg, back, name)
		bm, isBlock := m.(BlockModel)
		assert.Equal(t, w.blocks, isBlock, name)

		// The declared propagation builds the model's own matrix (and is
		// declared exactly when the model propagates).
		hops, err := Hops(bm)
		require.NoError(t, err)
		p, ok, err := k.Propagation(cfg)
		require.NoError(t, err)
		assert.Equal(t, hops > 0, ok, "%s: Propagation declared iff the model propagates", name)
		if ok {
			a, err := p.Matrix(gr)
			require.NoError(t, err)
			assert.Equal(t, bm.Matrix().Indptr(), a.Indptr(), name)
			assert.Equal(t, bm.Matrix().Indices(), a.Indices(), name)
			assert.Equal(t, bm.Matrix().Values64(), a.Values64(), name)
		}
	}
	// Every kind's Params, which model files check before building, is
	// what its constructor builds: defaults and variants.
	for name := range want {
		k, err := LookupKind(name)
		require.NoError(t, err)
		gr, err := graph.FromEdges(3, [][2]int{{0, 1}, {1, 2}})
		require.NoError(t, err)
		for _, set := range []map[string]any{nil, {"hidden": 5}, {"layers": 3}, {"bias": false}, {"heads": 3}, {"mode": "max"}, {"aggr": "max"}} {
			cfg, err := k.Configure(7, 3, DefaultOptions())
			require.NoError(t, err)
			if set != nil {
				if cfg, err = k.Override(cfg, set); err != nil {
					continue // a field this kind does not have
				}
			}
			m, err := k.Build(G.NewGraph(), gr, cfg, nil)
			require.NoError(t, err, "%s %v", name, set)
			ps, err := k.Params(cfg)
			require.NoError(t, err)
			var got []Param
			for _, p := range m.Learnables() {
				got = append(got, Param{Name: p.Name(), Shape: append([]int(nil), p.Shape()...)})
			}
			assert.Equal(t, got, ps, "%s %v: Params and the built model's learnables", name, set)
		}
	}
	names := kindNames()
	assert.IsIncreasing(t, names, "sorted")
	for name := range want {
		assert.Contains(t, names, name)
	}
}

func TestLookupKindUnknown(t *testing.T) {
	_, err := LookupKind("transformer")
	assert.ErrorIs(t, err, ErrUnknownKind)
	assert.ErrorContains(t, err, `"transformer" (known: appnp, `)
	_, err = KindOf(struct{ Model }{})
	assert.ErrorIs(t, err, ErrUnknownKind)
	_, err = KindOfConfig(Base{Name: "x", In: 1, Out: 2, Dtype: tensor.Float64})
	assert.ErrorIs(t, err, ErrUnknownKind)
	_, err = Build(G.NewGraph(), nil, nil, nil)
	assert.ErrorContains(t, err, "nil configuration")
}

type noBase struct{ X int }

func (noBase) Validate() error { return nil }
func (noBase) base() Base      { return Base{} }

type dupConfig struct{ Base }

type dupModel struct{ Model }

func TestDeclareErrors(t *testing.T) {
	newDup := func(*G.ExprGraph, *graph.Graph, dupConfig, *Phase) (*dupModel, error) { return nil, nil }
	cfgOf := func(*dupModel) dupConfig { return dupConfig{} }
	ps := func(dupConfig) []Param { return nil }
	def := func(in, c int) dupConfig { return dupConfig{DefaultBase("dup", in, c)} }
	cases := []struct {
		name string
		spec KindSpec[dupConfig, *dupModel]
		want string
	}{
		{"taken name", KindSpec[dupConfig, *dupModel]{Name: "gcn", Default: def, New: newDup, Config: cfgOf, Params: ps}, `kind "gcn" is already declared`},
		{"bad name", KindSpec[dupConfig, *dupModel]{Name: "Dup Kind", Default: def, New: newDup, Config: cfgOf, Params: ps}, "want lower-case letters"},
		{"empty name", KindSpec[dupConfig, *dupModel]{Default: def, New: newDup, Config: cfgOf, Params: ps}, "want lower-case letters"},
		{"no constructor", KindSpec[dupConfig, *dupModel]{Name: "dup", Default: def, Config: cfgOf, Params: ps}, "Default, New, Config and Params must all be set"},
	}
	for _, c := range cases {
		_, err := Declare(c.spec)
		assert.ErrorContains(t, err, c.want, c.name)
	}
	_, err := Declare(KindSpec[noBase, *dupModel]{Name: "nobase",
		Default: func(int, int) noBase { return noBase{} },
		New:     func(*G.ExprGraph, *graph.Graph, noBase, *Phase) (*dupModel, error) { return nil, nil },
		Config:  func(*dupModel) noBase { return noBase{} },
		Params:  func(noBase) []Param { return nil }})
	assert.ErrorContains(t, err, "does not embed layers.Base")
	// The model type of another kind.
	_, err = Declare(KindSpec[dupConfig, *MLP]{Name: "dup2", Default: def,
		New:    func(*G.ExprGraph, *graph.Graph, dupConfig, *Phase) (*MLP, error) { return nil, nil },
		Config: func(*MLP) dupConfig { return dupConfig{} },
		Params: ps})
	assert.ErrorContains(t, err, `already the "mlp" kind's`)
	assert.Panics(t, func() { MustDeclare(cases[0].spec) })
	_, err = LookupKind("dup")
	assert.ErrorIs(t, err, ErrUnknownKind, "nothing was declared by the failed calls")
}

func TestConfigure(t *testing.T) {
	k, err := LookupKind("gcn")
	require.NoError(t, err)
	cfg, err := k.Configure(7, 3, Options{Hidden: 32, Dtype: tensor.Float32, Seed: 9})
	require.NoError(t, err)
	g := cfg.(GCNConfig)
	assert.Equal(t, 32, g.Hidden)
	assert.Equal(t, Base{Name: "gcn", In: 7, Out: 3, Dtype: tensor.Float32, Seed: 9}, g.Base)

	// 0 keeps the kind's width; GAT's is heads × per-head.
	gat, err := LookupKind("gat")
	require.NoError(t, err)
	cfg, err = gat.Configure(7, 3, DefaultOptions())
	require.NoError(t, err)
	assert.Equal(t, 16, cfg.(GATConfig).Hidden)
	cfg, err = gat.Configure(7, 3, Options{Hidden: 64, Dtype: tensor.Float64, Seed: 1})
	require.NoError(t, err)
	assert.Equal(t, 16, cfg.(GATConfig).Hidden, "64 = 4 heads × 16")
	_, err = gat.Configure(7, 3, Options{Hidden: 30, Dtype: tensor.Float64, Seed: 1})
	assert.ErrorContains(t, err, "30 is not a multiple of its 4 heads")

	sgc, err := LookupKind("sgc")
	require.NoError(t, err)
	_, err = sgc.Configure(7, 3, Options{Hidden: 64, Dtype: tensor.Float64})
	assert.ErrorContains(t, err, "the sgc model has no hidden width")
	_, err = k.Configure(7, 3, Options{Dtype: tensor.Int})
	assert.ErrorContains(t, err, "Dtype")
	_, err = k.Configure(0, 3, DefaultOptions())
	assert.ErrorContains(t, err, "In = 0")
}

func TestOverride(t *testing.T) {
	k, err := LookupKind("appnp")
	require.NoError(t, err)
	cfg, err := k.Configure(4, 2, Options{Dtype: tensor.Float32, Seed: 3})
	require.NoError(t, err)
	out, err := k.Override(cfg, map[string]any{"k": 3, "dropout": 0, "alpha": 0.2})
	require.NoError(t, err)
	a := out.(APPNPConfig)
	assert.Equal(t, 3, a.K)
	assert.Equal(t, 0.0, a.Dropout)
	assert.Equal(t, 0.2, a.Alpha)
	assert.Equal(t, tensor.Float32, a.Dtype, "the dtype, not in the JSON, is kept")
	assert.Equal(t, int64(3), a.Seed)

	_, err = k.Override(cfg, map[string]any{"heads": 2})
	assert.ErrorContains(t, err, `has no field "heads" (it has activation, alpha, bias`)
	_, err = k.Override(cfg, map[string]any{"k": "ten"})
	assert.ErrorContains(t, err, "cannot unmarshal")
	_, err = k.Override(cfg, map[string]any{"alpha": 2})
	assert.ErrorContains(t, err, "Alpha = 2")
	_, err = k.Override(cfg, map[string]any{"k": MaxSteps + 1})
	assert.ErrorContains(t, err, "K = 1001, want 0 ≤ K ≤ 1000 (MaxSteps)")
	_, err = k.Override(cfg, map[string]any{"layers": MaxSteps + 1})
	assert.ErrorContains(t, err, "Layers = 1001, want at most 1000 (MaxSteps)")
	_, err = k.Override(DefaultGCNConfig(4, 2), map[string]any{"k": 1})
	assert.ErrorContains(t, err, "is not a configuration of the appnp kind")
}

func TestDecodeConfig(t *testing.T) {
	k, err := LookupKind("mlp")
	require.NoError(t, err)
	raw, err := json.Marshal(DefaultMLPConfig(3, 2))
	require.NoError(t, err)
	cfg, err := k.DecodeConfig(raw, tensor.Float32)
	require.NoError(t, err)
	want := DefaultMLPConfig(3, 2)
	want.Dtype = tensor.Float32
	assert.Equal(t, want, cfg)

	for name, c := range map[string]struct{ raw, want string }{
		"miscased key":    {`{"name":"mlp","In":3,"classes":2,"seed":1,"hidden":4,"layers":2,"activation":{"kind":"relu"},"dropout":0,"input_dropout":0,"bias":true}`, `key "In", want "in"`},
		"miscased nested": {`{"name":"mlp","in":3,"classes":2,"seed":1,"hidden":4,"layers":2,"activation":{"Kind":"relu"},"dropout":0,"input_dropout":0,"bias":true}`, `activation: key "Kind", want "kind"`},
		"unknown key":     {`{"name":"mlp","in":3,"classes":2,"heads":2}`, `unknown field "heads"`},
		"trailing data":   {`{"name":"mlp","in":3,"classes":2} {}`, "data after the configuration"},
		"invalid":         {`{"name":"mlp","in":3,"classes":2,"seed":1,"hidden":0,"layers":2,"activation":{"kind":"relu","alpha":0},"dropout":0,"input_dropout":0,"bias":true}`, "Hidden = 0"},
		"missing key":     {`{"name":"mlp","in":3,"classes":2,"seed":1,"layers":2,"activation":{"kind":"relu","alpha":0},"dropout":0,"input_dropout":0,"bias":true}`, `no key "hidden"`},
		"missing nested":  {`{"name":"mlp","in":3,"classes":2,"seed":1,"hidden":4,"layers":2,"activation":{"kind":"relu"},"dropout":0,"input_dropout":0,"bias":true}`, `no key "alpha" in activation`},
	} {
		_, err := k.DecodeConfig(json.RawMessage(c.raw), tensor.Float64)
		assert.ErrorContains(t, err, c.want, name)
	}
}

func TestWithBase(t *testing.T) {
	cfg := Config(DefaultGCNConfig(3, 2))
	b := BaseOf(cfg)
	b.Name, b.Seed = "other", 42
	out := WithBase(cfg, b)
	assert.Equal(t, "other", out.(GCNConfig).Name)
	assert.Equal(t, int64(42), out.(GCNConfig).Seed)
	assert.Equal(t, "gcn", cfg.(GCNConfig).Name, "the original is not changed")
}
