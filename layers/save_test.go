package layers

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/fairmp/fairmp/internal/testutil"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// builders for every model kind, for the round-trip test.
var roundTripModels = map[string]func(g *G.ExprGraph, p *problem, dt tensor.Dtype, ph *Phase) (Model, error){
	KindMLP: func(g *G.ExprGraph, p *problem, dt tensor.Dtype, ph *Phase) (Model, error) {
		c := DefaultMLPConfig(p.d, p.c)
		c.Hidden, c.Dtype, c.Activation = 8, dt, ELU(0.5)
		return NewMLP(g, c, ph)
	},
	KindGCN: func(g *G.ExprGraph, p *problem, dt tensor.Dtype, ph *Phase) (Model, error) {
		c := DefaultGCNConfig(p.d, p.c)
		c.Hidden, c.Dtype, c.Propagation.Improved = 8, dt, true
		return NewGCN(g, c, p.gr, ph)
	},
	KindSGC: func(g *G.ExprGraph, p *problem, dt tensor.Dtype, ph *Phase) (Model, error) {
		c := DefaultSGCConfig(p.d, p.c)
		c.K, c.Dtype = 2, dt
		return NewSGC(g, c, p.gr)
	},
	KindAPPNP: func(g *G.ExprGraph, p *problem, dt tensor.Dtype, ph *Phase) (Model, error) {
		c := DefaultAPPNPConfig(p.d, p.c)
		c.Hidden, c.K, c.EdgeDropout, c.Dtype = 8, 4, 0.2, dt
		return NewAPPNP(g, c, p.gr, ph)
	},
	KindJKNet: func(g *G.ExprGraph, p *problem, dt tensor.Dtype, ph *Phase) (Model, error) {
		c := DefaultJKNetConfig(p.d, p.c)
		c.Hidden, c.Layers, c.Mode, c.Dtype = 8, 3, JKMax, dt
		return NewJKNet(g, c, p.gr, ph)
	},
	KindGCNConv: func(g *G.ExprGraph, p *problem, dt tensor.Dtype, ph *Phase) (Model, error) {
		c := DefaultGCNConvConfig(p.d, p.c)
		c.Dtype = dt
		return NewGCNConv(g, c, p.gr)
	},
	KindLinear: func(g *G.ExprGraph, p *problem, dt tensor.Dtype, ph *Phase) (Model, error) {
		c := DefaultLinearConfig(p.d, p.c)
		c.Dtype, c.Bias = dt, false
		return NewLinear(g, c)
	},
}

func TestSaveLoadRoundTrip(t *testing.T) {
	p := newProblem(t, 21, 60, 5, 2, 120, 0.7)
	for kind, build := range roundTripModels {
		for _, dt := range testutil.Dtypes {
			task := p.task(t, dt, NewPhase())
			m, err := build(task.Graph, p, dt, task.Phase)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Train(m, task, fastTrain(15)); err != nil {
				t.Fatal(err)
			}
			want, err := Predict(m, task, nil)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := Save(&buf, m); err != nil {
				t.Fatalf("%s: %v", kind, err)
			}
			task2 := p.task(t, dt, NewPhase())
			m2, err := Load(bytes.NewReader(buf.Bytes()), task2.Graph, BuildEnv{Graph: p.gr, Phase: task2.Phase})
			if err != nil {
				t.Fatalf("%s %v: %v", kind, dt, err)
			}
			got, err := Predict(m2, task2, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i := range want.Probs {
				if got.Probs[i] != want.Probs[i] {
					t.Fatalf("%s %v: probability %d after load %v, before %v", kind, dt, i, got.Probs[i], want.Probs[i])
				}
			}
			if m2.(Savable).Kind() != kind {
				t.Errorf("loaded kind %q, want %q", m2.(Savable).Kind(), kind)
			}
			// A second copy with another name in the same graph.
			if _, err := Load(bytes.NewReader(buf.Bytes()), task2.Graph, BuildEnv{Graph: p.gr, Phase: task2.Phase}); err == nil {
				t.Errorf("%s: loading twice under one name into one graph succeeded", kind)
			}
			if _, err := Load(bytes.NewReader(buf.Bytes()), task2.Graph, BuildEnv{Graph: p.gr, Phase: task2.Phase, Name: "copy"}); err != nil {
				t.Errorf("%s: loading a renamed copy: %v", kind, err)
			}
		}
	}
}

func TestLoadErrors(t *testing.T) {
	p := newProblem(t, 22, 30, 4, 2, 50, 0.5)
	task := p.task(t, tensor.Float32, nil)
	c := DefaultGCNConfig(p.d, p.c)
	c.Hidden, c.Dtype = 6, tensor.Float32
	m, err := NewGCN(task.Graph, c, p.gr, nil)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Save(&buf, m); err != nil {
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
	other := newProblem(t, 23, 31, 4, 2, 50, 0.5)
	cases := map[string]struct {
		data []byte
		env  BuildEnv
		want string
	}{
		"version":     {withHeader(func(h map[string]any) { h["version"] = 2 }), BuildEnv{Graph: p.gr}, "version 2"},
		"format":      {withHeader(func(h map[string]any) { h["format"] = "onnx" }), BuildEnv{Graph: p.gr}, "format"},
		"kind":        {withHeader(func(h map[string]any) { h["kind"] = "transformer" }), BuildEnv{Graph: p.gr}, "not registered"},
		"dtype":       {withHeader(func(h map[string]any) { h["dtype"] = "int" }), BuildEnv{Graph: p.gr}, "dtype"},
		"hidden":      {withHeader(func(h map[string]any) { h["config"].(map[string]any)["hidden"] = 7 }), BuildEnv{Graph: p.gr}, "shape"},
		"field":       {withHeader(func(h map[string]any) { h["config"].(map[string]any)["heads"] = 7 }), BuildEnv{Graph: p.gr}, "unknown field"},
		"bad config":  {withHeader(func(h map[string]any) { h["config"].(map[string]any)["dropout"] = 2 }), BuildEnv{Graph: p.gr}, "Dropout"},
		"graph size":  {data, BuildEnv{Graph: other.gr}, "31"},
		"no graph":    {data, BuildEnv{}, "nil"},
		"truncated":   {data[:len(data)-3], BuildEnv{Graph: p.gr}, "unexpected EOF"},
		"trailing":    {append(append([]byte(nil), data...), 0), BuildEnv{Graph: p.gr}, "continues"},
		"no header":   {[]byte("garbage"), BuildEnv{Graph: p.gr}, "newline"},
		"not json":    {[]byte("garbage\n"), BuildEnv{Graph: p.gr}, "JSON"},
		"param count": {withHeader(func(h map[string]any) { h["params"] = h["params"].([]any)[:1] }), BuildEnv{Graph: p.gr}, "saved parameters"},
	}
	for name, c := range cases {
		_, err := Load(bytes.NewReader(c.data), G.NewGraph(), c.env)
		if err == nil {
			t.Errorf("%s: Load succeeded", name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q does not mention %q", name, err, c.want)
		}
	}
	if err := RegisterKind(KindGCN, func(*G.ExprGraph, json.RawMessage, tensor.Dtype, BuildEnv) (Model, error) { return nil, nil }); err == nil {
		t.Error("registering gcn twice succeeded")
	}
	type plain struct{ Model }
	if err := Save(&buf, plain{m}); err == nil {
		t.Error("saving a non-Savable model succeeded")
	}
}
