package fmpbeam

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"

	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/modelio"
)

// Model is a model file as the pipeline runs it: the library's kinds
// (mlp, gcn, sgc, appnp, gat, jknet), alone or under FMP (an fmp model
// file, whose FMP settings and propagation then become the job's
// defaults). The driver reads it to lay the pipeline out; the workers
// read the same file as a side input for the weights. Every computation
// is in float64: a float32 model's weights are widened (exactly), so its
// logits match the in-memory float32 path to float32 rounding.
type Model struct {
	// Kind is the backbone's kind, Config its configuration.
	Kind   string
	Config layers.Config
	// FMP is true for an fmp model file, with its saved FMP settings and
	// propagation.
	FMP         bool
	FMPConfig   fmp.Config
	Propagation layers.Propagation
	// Graph is what the file records of the graph it was saved for.
	Graph *modelio.GraphInfo

	dense []dense // the linear maps, in the file's order
	gat   []gatLayer
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

// ReadModelFile decodes a model file's bytes (modelio's format, checked
// by its checksum) into a Model, checking that its parameters have the
// shapes its kind gives them.
func ReadModelFile(b []byte) (*Model, error) {
	f, err := modelio.Read(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	m := &Model{Kind: f.Kind.Name(), Config: f.Config, Graph: f.Graph, Propagation: layers.DefaultPropagation()}
	if f.Wrapper != nil {
		if f.Wrapper.Name() != "fmp" {
			return nil, fmt.Errorf("fmpbeam: a %s model on a %s backbone: the pipeline runs the library's kinds and fmp", f.Wrapper.Name(), m.Kind)
		}
		var saved struct {
			Propagation layers.Propagation `json:"propagation"`
			FMP         fmp.Config         `json:"fmp"`
		}
		if err := json.Unmarshal(f.WrapperConfig, &saved); err != nil {
			return nil, fmt.Errorf("fmpbeam: the fmp model's configuration: %w", err)
		}
		m.FMP, m.FMPConfig, m.Propagation = true, saved.FMP, saved.Propagation
	}
	ps := make([][]float64, len(f.Params))
	shapes := make([][]int, len(f.Params))
	for i, p := range f.Params {
		shapes[i] = p.Value.Shape()
		switch d := p.Value.Data().(type) {
		case []float64:
			ps[i] = d
		case []float32:
			ps[i] = make([]float64, len(d))
			for k, v := range d {
				ps[i][k] = float64(v)
			}
		}
	}
	take := params{vals: ps, shapes: shapes, names: make([]string, len(f.Params))}
	for i, p := range f.Params {
		take.names[i] = p.Name
	}
	if err := m.layout(&take); err != nil {
		return nil, fmt.Errorf("fmpbeam: the %s model's parameters: %w", m.Kind, err)
	}
	if take.next != len(ps) {
		return nil, fmt.Errorf("fmpbeam: the %s model has %d parameters, its configuration %d", m.Kind, len(ps), take.next)
	}
	return m, nil
}

// params hands out a file's parameters in order, checking shapes.
type params struct {
	vals   [][]float64
	shapes [][]int
	names  []string
	next   int
}

func (p *params) take(rows, cols int) ([]float64, error) {
	if p.next >= len(p.vals) {
		return nil, fmt.Errorf("%d parameters, the configuration needs more", len(p.vals))
	}
	k := p.next
	p.next++
	if s := p.shapes[k]; len(s) != 2 || s[0] != rows || s[1] != cols {
		return nil, fmt.Errorf("parameter %q has shape %v, want (%d, %d)", p.names[k], p.shapes[k], rows, cols)
	}
	return p.vals[k], nil
}

func (p *params) linear(in, out int, bias bool) (dense, error) {
	d := dense{in: in, out: out}
	var err error
	if d.w, err = p.take(in, out); err != nil {
		return d, err
	}
	if bias {
		d.b, err = p.take(1, out)
	}
	return d, err
}

// stack takes depth linear maps in → hidden → … → out.
func (p *params) stack(in, hidden, out, depth int, bias bool) ([]dense, error) {
	ds := make([]dense, depth)
	for l := range ds {
		i, o := hidden, hidden
		if l == 0 {
			i = in
		}
		if l == depth-1 {
			o = out
		}
		var err error
		if ds[l], err = p.linear(i, o, bias); err != nil {
			return nil, err
		}
	}
	return ds, nil
}

// layout assigns the parameters by the kind's order (its Learnables).
func (m *Model) layout(p *params) error {
	var err error
	switch c := m.Config.(type) {
	case layers.MLPConfig:
		m.dense, err = p.stack(c.In, c.Hidden, c.Classes, c.Layers, c.Bias)
	case layers.GCNConfig:
		m.dense, err = p.stack(c.In, c.Hidden, c.Classes, c.Layers, c.Bias)
	case layers.SGCConfig:
		m.dense, err = p.stack(c.In, 0, c.Classes, 1, c.Bias)
	case layers.APPNPConfig:
		m.dense, err = p.stack(c.In, c.Hidden, c.Classes, c.Layers, c.Bias)
	case layers.JKNetConfig:
		if m.dense, err = p.stack(c.In, c.Hidden, c.Hidden, c.Layers, c.Bias); err != nil {
			return err
		}
		width := c.Hidden
		if c.Mode == layers.JKConcat {
			width *= c.Layers
		}
		var out dense
		out, err = p.linear(width, c.Classes, c.Bias)
		m.dense = append(m.dense, out)
	case layers.GATConfig:
		for l, shape := range [][3]int{{c.In, c.Heads, c.Hidden}, {c.Heads * c.Hidden, 1, c.Classes}} {
			g := gatLayer{heads: shape[1], f: shape[2], mean: l == 1}
			hf := g.heads * g.f
			if g.dense, err = p.linear(shape[0], hf, false); err != nil {
				return err
			}
			if g.src, err = p.take(1, hf); err != nil {
				return err
			}
			if g.dst, err = p.take(1, hf); err != nil {
				return err
			}
			if g.b, err = p.take(1, hf); err != nil {
				return err
			}
			m.gat = append(m.gat, g)
		}
	default:
		return fmt.Errorf("the pipeline runs the library's kinds (mlp, gcn, sgc, appnp, gat, jknet), not %s: compute its logits elsewhere and give them as rows", m.Kind)
	}
	return err
}

// In and Classes return the model's input and output widths.
func (m *Model) In() int      { return layers.BaseOf(m.Config).In }
func (m *Model) Classes() int { return layers.BaseOf(m.Config).Classes }

// Dtype returns the dtype the model was saved in.
func (m *Model) Dtype() tensor.Dtype { return layers.BaseOf(m.Config).Dtype }

// Norm returns the normalisation of the matrix the model propagates over
// (the zero Norm and false for an MLP, which does not).
func (m *Model) Norm() (Norm, bool) {
	switch c := m.Config.(type) {
	case layers.GCNConfig:
		return NormOf(c.Propagation), true
	case layers.SGCConfig:
		return NormOf(c.Propagation), true
	case layers.APPNPConfig:
		return NormOf(c.Propagation), true
	case layers.JKNetConfig:
		return NormOf(c.Propagation), true
	case layers.GATConfig:
		// GAT attends over the edges and, with AddSelfLoops, the
		// self-loops: the pattern of its Matrix.
		return Norm{Loops: c.AddSelfLoops, Weight: 1, Normalize: true}, true
	}
	return Norm{}, false
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
