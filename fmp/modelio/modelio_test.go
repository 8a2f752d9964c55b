package modelio_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand"
	"testing"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/fmp/modelio"
	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/fairtrain"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fairmp/fairmp/graph/features"
	"github.com/fairmp/fairmp/internal/problem"
	"github.com/fairmp/fairmp/internal/testutil"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// builders for every model kind, for the round-trip test, by kind name.
var roundTripModels = map[string]func(g *G.ExprGraph, p *problem.Problem, dt tensor.Dtype, ph *layers.Phase) (layers.Model, error){
	"gat": func(g *G.ExprGraph, p *problem.Problem, dt tensor.Dtype, ph *layers.Phase) (layers.Model, error) {
		c := layers.DefaultGATConfig(p.D, p.C)
		c.Heads, c.Hidden, c.InputDropout, c.AttentionDropout, c.Dtype = 2, 4, 0.1, 0.2, dt
		return layers.NewGAT(g, p.Graph, c, ph)
	},
	"mlp": func(g *G.ExprGraph, p *problem.Problem, dt tensor.Dtype, ph *layers.Phase) (layers.Model, error) {
		c := layers.DefaultMLPConfig(p.D, p.C)
		c.Hidden, c.Dtype, c.Activation = 8, dt, layers.ELU(0.5)
		return layers.NewMLP(g, nil, c, ph)
	},
	"gcn": func(g *G.ExprGraph, p *problem.Problem, dt tensor.Dtype, ph *layers.Phase) (layers.Model, error) {
		c := layers.DefaultGCNConfig(p.D, p.C)
		c.Hidden, c.Dtype, c.Propagation.Improved = 8, dt, true
		return layers.NewGCN(g, p.Graph, c, ph)
	},
	"sgc": func(g *G.ExprGraph, p *problem.Problem, dt tensor.Dtype, ph *layers.Phase) (layers.Model, error) {
		c := layers.DefaultSGCConfig(p.D, p.C)
		c.K, c.Dtype = 2, dt
		return layers.NewSGC(g, p.Graph, c, nil)
	},
	"appnp": func(g *G.ExprGraph, p *problem.Problem, dt tensor.Dtype, ph *layers.Phase) (layers.Model, error) {
		c := layers.DefaultAPPNPConfig(p.D, p.C)
		c.Hidden, c.K, c.EdgeDropout, c.Dtype = 8, 4, 0.2, dt
		return layers.NewAPPNP(g, p.Graph, c, ph)
	},
	"jknet": func(g *G.ExprGraph, p *problem.Problem, dt tensor.Dtype, ph *layers.Phase) (layers.Model, error) {
		c := layers.DefaultJKNetConfig(p.D, p.C)
		c.Hidden, c.Layers, c.Mode, c.Dtype = 8, 3, layers.JKMax, dt
		return layers.NewJKNet(g, p.Graph, c, ph)
	},
	"sage": func(g *G.ExprGraph, p *problem.Problem, dt tensor.Dtype, ph *layers.Phase) (layers.Model, error) {
		c := layers.DefaultSAGEConfig(p.D, p.C)
		c.Hidden, c.Aggr, c.Dtype = 8, "max", dt
		return layers.NewSAGE(g, p.Graph, c, ph)
	},
	"gin": func(g *G.ExprGraph, p *problem.Problem, dt tensor.Dtype, ph *layers.Phase) (layers.Model, error) {
		c := layers.DefaultGINConfig(p.D, p.C)
		c.Hidden, c.Layers, c.Dtype = 8, 3, dt
		return layers.NewGIN(g, p.Graph, c, ph)
	},
	"encoder": func(g *G.ExprGraph, p *problem.Problem, dt tensor.Dtype, ph *layers.Phase) (layers.Model, error) {
		c := layers.DefaultAPPNPConfig(p.D, 6)
		c.Name, c.Hidden, c.K, c.Dtype, c.Seed = "enc", 8, 2, dt, 4
		return fairtrain.NewEncoder(g, p.Graph, c, p.C, ph)
	},
	"fmp": func(g *G.ExprGraph, p *problem.Problem, dt tensor.Dtype, ph *layers.Phase) (layers.Model, error) {
		c := layers.DefaultGCNConfig(p.D, p.C)
		c.Hidden, c.Dtype = 8, dt
		gcn, err := layers.NewGCN(g, p.Graph, c, ph)
		if err != nil {
			return nil, err
		}
		fc := fmp.DefaultOnConfig()
		fc.FMP.K, fc.FMP.LambdaF = 3, 1
		m, err := fmp.On(gcn, p.Graph, alternating(p.N), fc, ph)
		if err != nil {
			return nil, err
		}
		return m, recordFMP(m, p)
	},
}

// recordFMP records an fmp model's duals on p's features (a model file
// needs them: fmp.ErrNotRecorded); other models pass.
func recordFMP(m layers.Model, p *problem.Problem) error {
	fm, ok := m.(*fmp.Model)
	if !ok {
		return nil
	}
	x, err := features.NewDense(p.X, p.N, p.D)
	if err != nil {
		return err
	}
	return fm.Record(x)
}

// alternating returns a sensitive attribute of n nodes in groups 0, 1, 0, ...
func alternating(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i % 2
	}
	return s
}

// TestEveryKindRoundTrips: every kind of the registry is in
// roundTripModels.
func TestEveryKindRoundTrips(t *testing.T) {
	for _, k := range layers.Kinds() {
		assert.Contains(t, roundTripModels, k.Name(), "kind %s has no round-trip builder", k.Name())
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	p := problem.New(t, 21, 60, 5, 2, 120, 0.7)
	for kind, build := range roundTripModels {
		for _, dt := range testutil.Dtypes {
			task := newTask(t, p, dt, layers.NewPhase())
			m, err := build(task.Graph, p, dt, task.Phase)
			require.NoError(t, err)
			if _, err := train.Fit(context.Background(), m, task, fastTrain(15)); err != nil {
				t.Fatal(err)
			}
			require.NoError(t, recordFMP(m, p), "the trained model's duals")
			want, err := train.Predict(m, task, nil)
			require.NoError(t, err)
			var buf bytes.Buffer
			if err := modelio.Save(&buf, m, modelio.DefaultSaveConfig()); err != nil {
				t.Fatalf("%s: %v", kind, err)
			}
			task2 := newTask(t, p, dt, layers.NewPhase())
			env := modelio.Env{Graph: p.Graph, Phase: task2.Phase, Sens: alternating(p.N)}
			m2, err := modelio.Load(bytes.NewReader(buf.Bytes()), task2.Graph, env)
			require.NoError(t, err, "%s %v", kind, dt)
			got, err := train.Predict(m2, task2, nil)
			require.NoError(t, err)
			for i := range want.Probs {
				if got.Probs[i] != want.Probs[i] {
					t.Fatalf("%s %v: probability %d after load %v, before %v", kind, dt, i, got.Probs[i], want.Probs[i])
				}
			}
			k, err := layers.KindOf(m2)
			require.NoError(t, err)
			assert.Equal(t, kind, k.Name(), "the loaded model's kind")
			// A second copy with another name in the same graph.
			if _, err := modelio.Load(bytes.NewReader(buf.Bytes()), task2.Graph, env); err == nil {
				t.Errorf("%s: loading twice under one name into one graph succeeded", kind)
			}
			env.Name = "copy"
			if _, err := modelio.Load(bytes.NewReader(buf.Bytes()), task2.Graph, env); err != nil {
				t.Errorf("%s: loading a renamed copy: %v", kind, err)
			}
		}
	}
}

// savedGCN saves a small float32 GCN and returns the file, the problem
// and the model.
func savedGCN(t testing.TB) ([]byte, *problem.Problem) {
	t.Helper()
	p := problem.New(t, 22, 30, 4, 2, 50, 0.5)
	task := newTask(t, p, tensor.Float32, nil)
	c := layers.DefaultGCNConfig(p.D, p.C)
	c.Hidden, c.Dtype = 6, tensor.Float32
	m, err := layers.NewGCN(task.Graph, p.Graph, c, nil)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, saveUntrained(&buf, m))
	return buf.Bytes(), p
}

// split returns a file's header line, parameters and checksum.
func split(t testing.TB, data []byte) (hdr, params, sum []byte) {
	t.Helper()
	nl := bytes.IndexByte(data, '\n')
	require.Positive(t, nl)
	return data[:nl], data[nl+1 : len(data)-sha256.Size], data[len(data)-sha256.Size:]
}

// seal assembles a file from a header and parameters with a valid
// checksum: what a buggy or hostile writer, not corruption, would produce.
func seal(hdr, params []byte) []byte {
	out := append(append(append([]byte(nil), hdr...), '\n'), params...)
	sum := sha256.Sum256(out)
	return append(out, sum[:]...)
}

// withHeader returns data with its header changed by mut and resealed.
func withHeader(t testing.TB, data []byte, mut func(h map[string]any)) []byte {
	t.Helper()
	hdr, params, _ := split(t, data)
	var h map[string]any
	require.NoError(t, json.Unmarshal(hdr, &h))
	mut(h)
	b, err := json.Marshal(h)
	require.NoError(t, err)
	return seal(b, params)
}

func TestLoadErrors(t *testing.T) {
	data, p := savedGCN(t)
	hdr, params, _ := split(t, data)
	other := problem.New(t, 23, 31, 4, 2, 50, 0.5)
	// The same node count and edge count, one edge moved.
	edges := p.Graph.Edges()
	edges[0][1] = (edges[0][1] + 1) % p.N
	if edges[0][1] == edges[0][0] {
		edges[0][1] = (edges[0][1] + 1) % p.N
	}
	moved, err := graph.FromEdges(p.N, edges)
	require.NoError(t, err)
	nan := append([]byte(nil), params...)
	binary.LittleEndian.PutUint32(nan[4:], math.Float32bits(float32(math.NaN())))
	env := modelio.Env{Graph: p.Graph}
	cases := []struct {
		name string
		data []byte
		env  modelio.Env
		is   error
		want string
	}{
		{"version 1", withHeader(t, data, func(h map[string]any) { h["version"] = 1 }), env, modelio.ErrVersion, "version 1"},
		{"format", withHeader(t, data, func(h map[string]any) { h["format"] = "onnx" }), env, modelio.ErrFormat, "format"},
		{"kind", withHeader(t, data, func(h map[string]any) { h["kind"] = "transformer" }), env, modelio.ErrUnknownKind, "transformer"},
		{"dtype", withHeader(t, data, func(h map[string]any) { h["dtype"] = "int" }), env, modelio.ErrFormat, "dtype"},
		{"miscased key", withHeader(t, data, func(h map[string]any) { h["Graph"] = h["graph"]; delete(h, "graph") }), env, modelio.ErrFormat, `"Graph"`},
		{"unknown key", withHeader(t, data, func(h map[string]any) { h["extra"] = 1 }), env, modelio.ErrFormat, `"extra"`},
		{"graph key", withHeader(t, data, func(h map[string]any) { h["graph"].(map[string]any)["Nodes"] = 3 }), env, modelio.ErrFormat, "graph"},
		{"param name", withHeader(t, data, func(h map[string]any) { h["params"].([]any)[0].(map[string]any)["name"] = "gcn.9.W" }), env, modelio.ErrMismatch, "gcn.9.W"},
		{"hidden", withHeader(t, data, func(h map[string]any) { h["config"].(map[string]any)["hidden"] = 7 }), env, nil, "shape"},
		{"field", withHeader(t, data, func(h map[string]any) { h["config"].(map[string]any)["heads"] = 7 }), env, modelio.ErrFormat, "unknown field"},
		{"miscased field", withHeader(t, data, func(h map[string]any) {
			c := h["config"].(map[string]any)
			c["Hidden"] = c["hidden"]
			delete(c, "hidden")
		}), env, modelio.ErrFormat, `"Hidden"`},
		{"backbone on a plain kind", withHeader(t, data, func(h map[string]any) {
			h["backbone"] = map[string]any{"kind": "mlp", "config": h["config"]}
		}), env, modelio.ErrFormat, "has no backbone"},
		{"version 2", withHeader(t, data, func(h map[string]any) { h["version"] = 2 }), env, modelio.ErrVersion, "version 2"},
		{"bad config", withHeader(t, data, func(h map[string]any) { h["config"].(map[string]any)["dropout"] = 2 }), env, nil, "Dropout"},
		{"graph size", data, modelio.Env{Graph: other.Graph, SameGraph: true}, modelio.ErrMismatch, "31"},
		{"graph structure", data, modelio.Env{Graph: moved, SameGraph: true}, modelio.ErrMismatch, "another graph with the same 30 nodes"},
		{"no graph", data, modelio.Env{}, modelio.ErrMismatch, "nil"},
		{"truncated", data[:len(data)-3], env, modelio.ErrCorrupt, "truncated"},
		{"trailing", append(append([]byte(nil), data...), 0), env, modelio.ErrCorrupt, "continues"},
		{"no header", []byte("garbage"), env, modelio.ErrFormat, "newline"},
		{"not json", []byte("garbage\n"), env, modelio.ErrFormat, "JSON"},
		{"NaN", seal(hdr, nan), env, modelio.ErrCorrupt, "NaN"},
		// An intact (resealed) file whose header lists fewer parameters
		// than its configuration builds: the lists are compared before a
		// byte of parameters is read.
		{"param count", withHeader(t, data, func(h map[string]any) { h["params"] = h["params"].([]any)[:1] }), env, modelio.ErrMismatch, "the file holds 1 parameters, its gcn configuration builds 4"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := modelio.Load(bytes.NewReader(c.data), G.NewGraph(), c.env)
			require.Error(t, err)
			if c.is != nil {
				assert.ErrorIs(t, err, c.is)
			}
			assert.ErrorContains(t, err, c.want)
		})
	}
	type plain struct{ layers.Model }
	var buf bytes.Buffer
	assert.ErrorIs(t, modelio.Save(&buf, plain{nil}, modelio.DefaultSaveConfig()), modelio.ErrUnknownKind, "saving a model of no declared kind")
	assert.Zero(t, buf.Len(), "nothing written")
}

// TestLoadDetectsBitFlips flips single bits at random places of a saved
// file (header, parameters and checksum): every flip must be detected.
func TestLoadDetectsBitFlips(t *testing.T) {
	data, p := savedGCN(t)
	rng := rand.New(rand.NewSource(5))
	const flips = 300
	detected := 0
	for k := 0; k < flips; k++ {
		bad := append([]byte(nil), data...)
		i := rng.Intn(len(bad))
		bad[i] ^= 1 << rng.Intn(8)
		if _, err := modelio.Load(bytes.NewReader(bad), G.NewGraph(), modelio.Env{Graph: p.Graph}); err != nil {
			detected++
		} else {
			t.Errorf("flip at byte %d of %d loaded without error", i, len(bad))
		}
	}
	t.Logf("%d of %d single-bit flips detected", detected, flips)
	assert.Equal(t, flips, detected)
}

// TestSaveRefusesNonFinite: a NaN parameter is refused at saving.
func TestSaveRefusesNonFinite(t *testing.T) {
	p := problem.New(t, 24, 20, 3, 2, 30, 0.5)
	g, _ := p.Features(t, tensor.Float64)
	m, err := layers.NewMLP(g, nil, layers.DefaultMLPConfig(p.D, p.C), nil)
	require.NoError(t, err)
	m.Learnables()[0].Value().Data().([]float64)[3] = math.Inf(1)
	var buf bytes.Buffer
	assert.ErrorContains(t, saveUntrained(&buf, m), "+Inf")
}

func newTask(t testing.TB, p *problem.Problem, dt tensor.Dtype, phase *layers.Phase) *train.Task {
	t.Helper()
	g := G.NewGraph()
	x, err := train.FeatureNode(g, dt, p.X, p.N, p.D, "x")
	require.NoError(t, err)
	return &train.Task{Graph: g, X: x, Labels: p.Labels, Train: p.Train, Val: p.Val, Classes: p.C, Phase: phase}
}

func fastTrain(epochs int) train.Config {
	c := train.DefaultConfig()
	c.Epochs = epochs
	c.Adam.LR = 0.01
	return c
}

// TestLoadSensitiveAttribute: an fmp model file records its sensitive
// attribute; Load with Env.Sens refuses another one.
func TestLoadSensitiveAttribute(t *testing.T) {
	p := problem.New(t, 25, 40, 4, 2, 80, 0.6)
	sens := make([]int, p.N)
	for i := range sens {
		sens[i] = i % 2
	}
	g, _ := p.Features(t, tensor.Float64)
	cfg := fmp.DefaultModelConfig(p.D, p.C)
	m, err := fmp.NewModel(g, p.Graph, sens, cfg, nil)
	require.NoError(t, err)
	require.NoError(t, recordFMP(m, p))
	var buf bytes.Buffer
	require.NoError(t, saveUntrained(&buf, m))
	data := buf.Bytes()
	_, err = modelio.Load(bytes.NewReader(data), G.NewGraph(), modelio.Env{Graph: p.Graph, Sens: sens})
	require.NoError(t, err)
	flipped := append([]int(nil), sens...)
	flipped[7] = 1 - flipped[7]
	_, err = modelio.Load(bytes.NewReader(data), G.NewGraph(), modelio.Env{Graph: p.Graph, Sens: flipped})
	assert.ErrorIs(t, err, modelio.ErrMismatch)
	assert.ErrorContains(t, err, "another sensitive attribute")
	_, err = modelio.Load(bytes.NewReader(data), G.NewGraph(), modelio.Env{Graph: p.Graph, Sens: sens[:10]})
	assert.ErrorContains(t, err, "of 40 nodes, Env.Sens has 10")
	_, err = modelio.Load(bytes.NewReader(data), G.NewGraph(), modelio.Env{Graph: p.Graph})
	assert.ErrorIs(t, err, modelio.ErrMismatch)
	assert.ErrorContains(t, err, "the file keeps only its fingerprint: give it as Env.Sens")

	// The file holds no copy of the attribute that a resealed file could
	// change behind the fingerprint's back (the audit's shuffled copy
	// changed 14 of 300 decisions): the model uses Env.Sens, which is
	// what the fingerprint checks.
	assert.NotContains(t, string(data[:bytes.IndexByte(data, '\n')]), `"sens":[`)
	forged := withHeader(t, data, func(h map[string]any) {
		h["config"].(map[string]any)["sens"] = []int{1, 0, 1}
	})
	_, err = modelio.Load(bytes.NewReader(forged), G.NewGraph(), modelio.Env{Graph: p.Graph, Sens: sens})
	assert.ErrorIs(t, err, modelio.ErrFormat)
	assert.ErrorContains(t, err, `unknown field "sens"`)
}

// saveUntrained saves a model that was never trained: the format tests
// need files, not trained models.
func saveUntrained(w io.Writer, m layers.Model) error {
	return modelio.Save(w, m, modelio.SaveConfig{Untrained: true})
}

// TestSaveRefusesUntrained: saving a model whose parameters are its
// initialisation is refused unless asked for (df69dad saved it without a
// word); a trained model saves.
func TestSaveRefusesUntrained(t *testing.T) {
	p := problem.New(t, 27, 40, 4, 2, 80, 0.6)
	task := newTask(t, p, tensor.Float64, layers.NewPhase())
	m, err := layers.NewMLP(task.Graph, nil, layers.DefaultMLPConfig(p.D, p.C), task.Phase)
	require.NoError(t, err)
	err = modelio.Save(io.Discard, m, modelio.DefaultSaveConfig())
	assert.ErrorIs(t, err, train.ErrUntrained)
	assert.ErrorContains(t, err, "SaveConfig.Untrained")
	_, err = train.Fit(context.Background(), m, task, fastTrain(2))
	require.NoError(t, err)
	assert.NoError(t, modelio.Save(io.Discard, m, modelio.DefaultSaveConfig()))
}

// TestRead: Read gives every kind's configuration and parameters as Save
// wrote them, without a graph, and refuses what Load refuses before
// building.
func TestRead(t *testing.T) {
	p := problem.New(t, 21, 60, 5, 2, 120, 0.7)
	for kind, build := range roundTripModels {
		for _, dt := range testutil.Dtypes {
			task := newTask(t, p, dt, layers.NewPhase())
			m, err := build(task.Graph, p, dt, task.Phase)
			require.NoError(t, err)
			var buf bytes.Buffer
			require.NoError(t, saveUntrained(&buf, m))
			f, err := modelio.Read(bytes.NewReader(buf.Bytes()))
			require.NoError(t, err, kind)
			backbone := m
			if kind == "fmp" {
				require.NotNil(t, f.Wrapper)
				assert.Equal(t, "fmp", f.Wrapper.Name())
				var saved struct {
					FMP fmp.Config `json:"fmp"`
				}
				require.NoError(t, json.Unmarshal(f.WrapperConfig, &saved))
				assert.Equal(t, 3, saved.FMP.K)
				backbone = m.(layers.Wrapper).Backbone()
			} else {
				assert.Nil(t, f.Wrapper, kind)
			}
			k, err := layers.KindOf(backbone)
			require.NoError(t, err)
			assert.Same(t, k, f.Kind, kind)
			assert.Equal(t, kind, f.Header.Kind)
			want, err := k.ConfigOf(backbone)
			require.NoError(t, err)
			assert.Equal(t, want, f.Config, kind)
			assert.Equal(t, dt, layers.BaseOf(f.Config).Dtype)
			if kind != "mlp" {
				require.NotNil(t, f.Graph, kind)
				assert.Equal(t, modelio.GraphInfo{Nodes: p.Graph.N(), Edges: p.Graph.NumEdges(), Fingerprint: fmt.Sprintf("%016x", p.Graph.Fingerprint())}, *f.Graph)
			} else {
				assert.Nil(t, f.Graph)
			}
			ls := m.Learnables()
			require.Len(t, f.Params, len(ls), kind)
			for i, l := range ls {
				assert.Equal(t, l.Name(), f.Params[i].Name)
				assert.Equal(t, l.Value().Data(), f.Params[i].Value.Data(), "%s %s", kind, l.Name())
			}
			// A flipped bit is refused, as by Load.
			bad := append([]byte(nil), buf.Bytes()...)
			bad[len(bad)-40] ^= 1
			_, err = modelio.Read(bytes.NewReader(bad))
			assert.ErrorIs(t, err, modelio.ErrCorrupt, kind)
			// With trusted keys, an unsigned file is refused, as by Load.
			pub, _, err := ed25519.GenerateKey(rand.New(rand.NewSource(1)))
			require.NoError(t, err)
			_, err = modelio.Read(bytes.NewReader(buf.Bytes()), pub)
			assert.ErrorIs(t, err, modelio.ErrSignature, kind)
		}
	}
}
