package fmpbeam

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/fmp/modelio"
	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/layers"
)

// Model is a model file as the pipeline runs it: a model of any kind
// declared in a Flow's primitives (layers.BlockModel: every library kind,
// and a user's), alone or under FMP (an fmp model file, whose FMP
// settings and propagation then become the job's defaults). The driver
// reads it to lay the pipeline out from the kind's Compute (Infer); the
// workers read the same file as a side input for the weights, by name.
// Every computation is in float64: a float32 model's weights are widened
// (exactly), so its logits match the in-memory float32 path to float32
// rounding.
type Model struct {
	// Kind is the backbone's kind, Config its configuration.
	Kind   string
	Config layers.Config
	// On is an fmp model file's FMP settings and propagation (what
	// fmp.On was given), nil for a backbone's file.
	On *fmp.OnConfig
	// Graph is what the file records of the graph it was saved for.
	Graph *modelio.GraphInfo

	kind   *layers.Kind
	net    layers.BlockModel // built on a one-node graph: its Compute and parameter names
	params map[string]param  // the file's parameters, by name
}

// param is a parameter's values, widened to float64, and its shape.
type param struct {
	v          []float64
	rows, cols int
}

// dense is a linear map y = x·W (+ b).
type dense struct {
	w       []float64 // in × out
	b       []float64 // nil without bias
	in, out int
}

// gatLayer is a GAT layer's weights.
type gatLayer struct {
	dense
	src, dst []float64 // attention vectors, heads·f each
	heads, f int
	mean     bool
}

// dense returns the linear map of the weight and bias named w and b (b
// empty: none).
func (m *Model) dense(w, b string) (dense, error) {
	pw, ok := m.params[w]
	if !ok {
		return dense{}, fmt.Errorf("fmpbeam: the %s model has no parameter %q", m.Kind, w)
	}
	d := dense{w: pw.v, in: pw.rows, out: pw.cols}
	if b != "" {
		pb, ok := m.params[b]
		if !ok || pb.rows != 1 || pb.cols != d.out {
			return dense{}, fmt.Errorf("fmpbeam: the %s model has no 1 × %d parameter %q", m.Kind, d.out, b)
		}
		d.b = pb.v
	}
	return d, nil
}

// vector returns the values of the parameter named name.
func (m *Model) vector(name string) ([]float64, error) {
	p, ok := m.params[name]
	if !ok {
		return nil, fmt.Errorf("fmpbeam: the %s model has no parameter %q", m.Kind, name)
	}
	return p.v, nil
}

// ReadModelFile decodes a model file's bytes (modelio's format, checked
// by its checksum, its parameters' names and shapes checked against its
// kind's) into a Model. The kind must be declared in a Flow's primitives
// (layers.BlockModel) and, when it propagates, declare its Propagation.
func ReadModelFile(b []byte) (*Model, error) {
	f, err := modelio.Read(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	m := &Model{Kind: f.Kind.Name(), Config: f.Config, Graph: f.Graph, kind: f.Kind}
	if f.Wrapper != nil {
		if f.Wrapper.Name() != "fmp" {
			return nil, fmt.Errorf("fmpbeam: a %s model on a %s backbone: the pipeline runs FMP's wrapper and no other", f.Wrapper.Name(), m.Kind)
		}
		m.On = new(fmp.OnConfig)
		if err := json.Unmarshal(f.WrapperConfig, m.On); err != nil {
			return nil, fmt.Errorf("fmpbeam: the fmp model's configuration: %w", err)
		}
	}
	one, err := graph.FromEdges(1, nil)
	if err != nil {
		return nil, err
	}
	built, err := f.Kind.Build(G.NewGraph(), one, f.Config, nil)
	if err != nil {
		return nil, fmt.Errorf("fmpbeam: the %s model: %w", m.Kind, err)
	}
	net, ok := built.(layers.BlockModel)
	if !ok {
		return nil, fmt.Errorf("fmpbeam: the %s kind is not declared in a Flow's primitives (layers.BlockModel: a Compute method), so the pipeline cannot lay it out: compute its logits elsewhere and give them as rows", m.Kind)
	}
	m.net = net
	hops, err := layers.Hops(net)
	if err != nil {
		return nil, fmt.Errorf("fmpbeam: the %s model: %w", m.Kind, err)
	}
	if p, ok, err := f.Kind.Propagation(f.Config); err != nil {
		return nil, fmt.Errorf("fmpbeam: the %s model: %w", m.Kind, err)
	} else if hops > 0 && !ok {
		return nil, fmt.Errorf("fmpbeam: the %s kind propagates (%d hops) but declares no Propagation: set KindSpec.Propagation", m.Kind, hops)
	} else if ok && p.DoublyStochastic {
		return nil, fmt.Errorf("fmpbeam: the %s model propagates over a doubly stochastic matrix (Propagation.DoublyStochastic, RawlsGCN), whose every entry depends on the whole graph: the pipeline builds D̂^-½(A + wI)D̂^-½ only; score this model with package fmp/score, or give its logits as rows", m.Kind)
	}
	m.params = make(map[string]param, len(f.Params))
	for _, p := range f.Params {
		shape := p.Value.Shape()
		if len(shape) != 2 {
			return nil, fmt.Errorf("fmpbeam: the %s model's parameter %q has shape %v, want a matrix", m.Kind, p.Name, shape)
		}
		q := param{rows: shape[0], cols: shape[1]}
		switch d := p.Value.Data().(type) {
		case []float64:
			q.v = d
		case []float32:
			q.v = make([]float64, len(d))
			for k, v := range d {
				q.v[k] = float64(v)
			}
		}
		m.params[p.Name] = q
	}
	for _, n := range net.Learnables() {
		if _, ok := m.params[n.Name()]; !ok {
			return nil, fmt.Errorf("fmpbeam: the %s model file has no parameter %q", m.Kind, n.Name())
		}
	}
	return m, nil
}

// In and Classes return the model's input and output widths.
func (m *Model) In() int      { return layers.BaseOf(m.Config).In }
func (m *Model) Classes() int { return layers.BaseOf(m.Config).Out }

// Dtype returns the dtype the model was saved in.
func (m *Model) Dtype() tensor.Dtype { return layers.BaseOf(m.Config).Dtype }

// Norm returns the normalisation of the matrix the model propagates over,
// as its kind declares it (the zero Norm and false for a model that does
// not propagate, such as an MLP).
func (m *Model) Norm() (Norm, bool) {
	p, ok, err := m.kind.Propagation(m.Config)
	if err != nil || !ok {
		return Norm{}, false // ReadModelFile checked the declaration
	}
	return NormOf(p), true
}

// The workers decode the model side input once per process.
var (
	modelMu    sync.Mutex
	modelCache = map[string]*Model{}
)

// modelOf returns the decoded model of a side input's bytes.
func modelOf(b []byte) (*Model, error) {
	// A model file ends with the SHA-256 of the rest: the key of its content.
	key := string(b[max(0, len(b)-32):])
	modelMu.Lock()
	defer modelMu.Unlock()
	if m, ok := modelCache[key]; ok {
		return m, nil
	}
	m, err := ReadModelFile(b)
	if err != nil {
		return nil, err
	}
	modelCache[key] = m
	return m, nil
}
