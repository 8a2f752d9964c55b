package modelio_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/modelio"
	"github.com/fairmp/fairmp/layers/train"

	"github.com/fairmp/fairmp/internal/problem"
	"github.com/fairmp/fairmp/internal/testutil"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// builders for every model kind, for the round-trip test.
var roundTripModels = map[string]func(g *G.ExprGraph, p *problem.Problem, dt tensor.Dtype, ph *layers.Phase) (layers.Model, error){
	layers.KindGAT: func(g *G.ExprGraph, p *problem.Problem, dt tensor.Dtype, ph *layers.Phase) (layers.Model, error) {
		c := layers.DefaultGATConfig(p.D, p.C)
		c.Heads, c.Concat, c.Dropout, c.Dtype = 2, false, 0.2, dt
		return layers.NewGAT(g, c, p.Graph, ph)
	},
	layers.KindGATModel: func(g *G.ExprGraph, p *problem.Problem, dt tensor.Dtype, ph *layers.Phase) (layers.Model, error) {
		c := layers.DefaultGATModelConfig(p.D, p.C)
		c.Heads, c.Hidden, c.InputDropout, c.AttentionDropout, c.Dtype = 2, 4, 0.1, 0.2, dt
		return layers.NewGATModel(g, c, p.Graph, ph)
	},
	layers.KindMLP: func(g *G.ExprGraph, p *problem.Problem, dt tensor.Dtype, ph *layers.Phase) (layers.Model, error) {
		c := layers.DefaultMLPConfig(p.D, p.C)
		c.Hidden, c.Dtype, c.Activation = 8, dt, layers.ELU(0.5)
		return layers.NewMLP(g, c, ph)
	},
	layers.KindGCN: func(g *G.ExprGraph, p *problem.Problem, dt tensor.Dtype, ph *layers.Phase) (layers.Model, error) {
		c := layers.DefaultGCNConfig(p.D, p.C)
		c.Hidden, c.Dtype, c.Propagation.Improved = 8, dt, true
		return layers.NewGCN(g, c, p.Graph, ph)
	},
	layers.KindSGC: func(g *G.ExprGraph, p *problem.Problem, dt tensor.Dtype, ph *layers.Phase) (layers.Model, error) {
		c := layers.DefaultSGCConfig(p.D, p.C)
		c.K, c.Dtype = 2, dt
		return layers.NewSGC(g, c, p.Graph)
	},
	layers.KindAPPNP: func(g *G.ExprGraph, p *problem.Problem, dt tensor.Dtype, ph *layers.Phase) (layers.Model, error) {
		c := layers.DefaultAPPNPConfig(p.D, p.C)
		c.Hidden, c.K, c.EdgeDropout, c.Dtype = 8, 4, 0.2, dt
		return layers.NewAPPNP(g, c, p.Graph, ph)
	},
	layers.KindJKNet: func(g *G.ExprGraph, p *problem.Problem, dt tensor.Dtype, ph *layers.Phase) (layers.Model, error) {
		c := layers.DefaultJKNetConfig(p.D, p.C)
		c.Hidden, c.Layers, c.Mode, c.Dtype = 8, 3, layers.JKMax, dt
		return layers.NewJKNet(g, c, p.Graph, ph)
	},
	layers.KindGCNConv: func(g *G.ExprGraph, p *problem.Problem, dt tensor.Dtype, ph *layers.Phase) (layers.Model, error) {
		c := layers.DefaultGCNConvConfig(p.D, p.C)
		c.Dtype = dt
		return layers.NewGCNConv(g, c, p.Graph)
	},
	layers.KindLinear: func(g *G.ExprGraph, p *problem.Problem, dt tensor.Dtype, ph *layers.Phase) (layers.Model, error) {
		c := layers.DefaultLinearConfig(p.D, p.C)
		c.Dtype, c.Bias = dt, false
		return layers.NewLinear(g, c)
	},
}

func TestSaveLoadRoundTrip(t *testing.T) {
	p := problem.New(t, 21, 60, 5, 2, 120, 0.7)
	for kind, build := range roundTripModels {
		for _, dt := range testutil.Dtypes {
			task := newTask(t, p, dt, layers.NewPhase())
			m, err := build(task.Graph, p, dt, task.Phase)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := train.Fit(m, task, fastTrain(15)); err != nil {
				t.Fatal(err)
			}
			want, err := train.Predict(m, task, nil)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := modelio.Save(&buf, m); err != nil {
				t.Fatalf("%s: %v", kind, err)
			}
			task2 := newTask(t, p, dt, layers.NewPhase())
			m2, err := modelio.Load(bytes.NewReader(buf.Bytes()), task2.Graph, modelio.Env{Graph: p.Graph, Phase: task2.Phase})
			if err != nil {
				t.Fatalf("%s %v: %v", kind, dt, err)
			}
			got, err := train.Predict(m2, task2, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i := range want.Probs {
				if got.Probs[i] != want.Probs[i] {
					t.Fatalf("%s %v: probability %d after load %v, before %v", kind, dt, i, got.Probs[i], want.Probs[i])
				}
			}
			if m2.(modelio.Savable).Kind() != kind {
				t.Errorf("loaded kind %q, want %q", m2.(modelio.Savable).Kind(), kind)
			}
			// A second copy with another name in the same graph.
			if _, err := modelio.Load(bytes.NewReader(buf.Bytes()), task2.Graph, modelio.Env{Graph: p.Graph, Phase: task2.Phase}); err == nil {
				t.Errorf("%s: loading twice under one name into one graph succeeded", kind)
			}
			if _, err := modelio.Load(bytes.NewReader(buf.Bytes()), task2.Graph, modelio.Env{Graph: p.Graph, Phase: task2.Phase, Name: "copy"}); err != nil {
				t.Errorf("%s: loading a renamed copy: %v", kind, err)
			}
		}
	}
}

func TestLoadErrors(t *testing.T) {
	p := problem.New(t, 22, 30, 4, 2, 50, 0.5)
	task := newTask(t, p, tensor.Float32, nil)
	c := layers.DefaultGCNConfig(p.D, p.C)
	c.Hidden, c.Dtype = 6, tensor.Float32
	m, err := layers.NewGCN(task.Graph, c, p.Graph, nil)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := modelio.Save(&buf, m); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	nl := bytes.IndexByte(data, '\n')
	var h map[string]any
	if err := json.Unmarshal(data[:nl], &h); err != nil {
		t.Fatal(err)
	}
	withHeader := func(mut func(h map[string]any)) []byte {
		var hh map[string]any
		json.Unmarshal(data[:nl], &hh)
		mut(hh)
		b, _ := json.Marshal(hh)
		return append(append(b, '\n'), data[nl+1:]...)
	}
	other := problem.New(t, 23, 31, 4, 2, 50, 0.5)
	cases := map[string]struct {
		data []byte
		env  modelio.Env
		want string
	}{
		"version":     {withHeader(func(h map[string]any) { h["version"] = 2 }), modelio.Env{Graph: p.Graph}, "version 2"},
		"format":      {withHeader(func(h map[string]any) { h["format"] = "onnx" }), modelio.Env{Graph: p.Graph}, "format"},
		"kind":        {withHeader(func(h map[string]any) { h["kind"] = "transformer" }), modelio.Env{Graph: p.Graph}, "unknown kind"},
		"dtype":       {withHeader(func(h map[string]any) { h["dtype"] = "int" }), modelio.Env{Graph: p.Graph}, "dtype"},
		"hidden":      {withHeader(func(h map[string]any) { h["config"].(map[string]any)["hidden"] = 7 }), modelio.Env{Graph: p.Graph}, "shape"},
		"field":       {withHeader(func(h map[string]any) { h["config"].(map[string]any)["heads"] = 7 }), modelio.Env{Graph: p.Graph}, "unknown field"},
		"bad config":  {withHeader(func(h map[string]any) { h["config"].(map[string]any)["dropout"] = 2 }), modelio.Env{Graph: p.Graph}, "Dropout"},
		"graph size":  {data, modelio.Env{Graph: other.Graph}, "31"},
		"no graph":    {data, modelio.Env{}, "nil"},
		"truncated":   {data[:len(data)-3], modelio.Env{Graph: p.Graph}, "unexpected EOF"},
		"trailing":    {append(append([]byte(nil), data...), 0), modelio.Env{Graph: p.Graph}, "continues"},
		"no header":   {[]byte("garbage"), modelio.Env{Graph: p.Graph}, "newline"},
		"not json":    {[]byte("garbage\n"), modelio.Env{Graph: p.Graph}, "JSON"},
		"param count": {withHeader(func(h map[string]any) { h["params"] = h["params"].([]any)[:1] }), modelio.Env{Graph: p.Graph}, "saved parameters"},
	}
	for name, c := range cases {
		_, err := modelio.Load(bytes.NewReader(c.data), G.NewGraph(), c.env)
		if err == nil {
			t.Errorf("%s: Load succeeded", name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q does not mention %q", name, err, c.want)
		}
	}
	if err := modelio.Register(layers.KindGCN, func(*G.ExprGraph, json.RawMessage, tensor.Dtype, modelio.Env) (layers.Model, error) { return nil, nil }); err == nil {
		t.Error("registering the library's own kind gcn succeeded")
	}
	type plain struct{ layers.Model }
	if err := modelio.Save(&buf, plain{m}); err == nil {
		t.Error("saving a non-modelio.Savable model succeeded")
	}
}

func newTask(t testing.TB, p *problem.Problem, dt tensor.Dtype, phase *layers.Phase) *train.Task {
	t.Helper()
	g := G.NewGraph()
	x, err := train.FeatureNode(g, dt, p.X, p.N, p.D, "x")
	if err != nil {
		t.Fatal(err)
	}
	return &train.Task{Graph: g, X: x, Labels: p.Labels, Train: p.Train, Val: p.Val, Classes: p.C, Phase: phase}
}

func fastTrain(epochs int) train.Config {
	c := train.DefaultConfig()
	c.Epochs = epochs
	c.Adam.LR = 0.01
	return c
}
