package layers

import (
	"fmt"
	"math/rand"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/features"
)

// GCNConfig configures a GCN node classifier (Kipf & Welling): Layers
// graph convolutions with activation and dropout between them.
type GCNConfig struct {
	StackConfig
	// Bias adds biases to every convolution. Default true.
	Bias bool `json:"bias"`
}

// DefaultGCNConfig returns the 2-layer GCN in → 64 → classes with ReLU,
// dropout 0.5, PyG's propagation, biases, float64, seed 1, named "gcn".
func DefaultGCNConfig(in, classes int) GCNConfig {
	return GCNConfig{StackConfig: defaultStack("gcn", in, classes), Bias: true}
}

// Validate checks every field.
func (c GCNConfig) Validate() error { return c.StackConfig.Validate() }

// kindGCN declares the GCN to the registry of kinds (see Declare).
var kindGCN = MustDeclare(KindSpec[GCNConfig, *GCN]{
	Name:    "gcn",
	Title:   "GCN",
	Summary: "graph convolutional network (Kipf & Welling): PyG's GCNConv stacked",
	Default: DefaultGCNConfig,
	New:     NewGCN,
	Config:  (*GCN).Config,
	Params: func(c GCNConfig) []Param {
		return stackParams(c.Name, c.In, c.Hidden, c.Classes, c.Layers, c.Bias)
	},
	Hidden: func(c *GCNConfig, w int) error { c.Hidden = w; return nil },
})

// GCN is a stack of GCNConv layers sharing one propagation matrix.
type GCN struct {
	cfg   GCNConfig
	phase *Phase
	gr    *graph.Graph
	convs []*GCNConv
	seeds []int64
}

var (
	_ BlockModel = (*GCN)(nil)
	_ GraphModel = (*GCN)(nil)
	_ Phased     = (*GCN)(nil)
)

// NewGCN builds Ã from gr once and adds the model's parameters to g.
// phase switches its dropout (nil: always evaluation). It returns an error
// for an invalid configuration, a nil graph or a name already used in g.
func NewGCN(g *G.ExprGraph, gr *graph.Graph, cfg GCNConfig, phase *Phase) (*GCN, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("layers: NewGCN %q: %w", cfg.Name, err)
	}
	a, err := cfg.Propagation.Matrix(gr)
	if err != nil {
		return nil, fmt.Errorf("layers: NewGCN %q: %w", cfg.Name, err)
	}
	rng := rand.New(rand.NewSource(cfg.Seed))
	convs, err := gcnStack(g, cfg.Name, cfg.In, cfg.Hidden, cfg.Classes, cfg.Layers, cfg.Bias, cfg.Dtype, a, rng)
	if err != nil {
		return nil, err
	}
	return &GCN{cfg: cfg, phase: phase, gr: gr, convs: convs, seeds: dropoutSeeds(rng, cfg.Layers)}, nil
}

// gcnStack builds depth convolutions in → hidden → … → out.
func gcnStack(g *G.ExprGraph, name string, in, hidden, out, depth int, bias bool, dt tensor.Dtype, a *graph.Matrix, rng *rand.Rand) ([]*GCNConv, error) {
	convs := make([]*GCNConv, depth)
	for l := range convs {
		i, o := hidden, hidden
		if l == 0 {
			i = in
		}
		if l == depth-1 {
			o = out
		}
		cc := GCNConvConfig{Name: fmt.Sprintf("%s.%d", name, l), In: i, Out: o, Bias: bias, Dtype: dt}
		var err error
		if convs[l], err = newGCNConv(g, cc, a, rng); err != nil {
			return nil, err
		}
	}
	return convs, nil
}

// Config returns the model's configuration.
func (m *GCN) Config() GCNConfig { return m.cfg }

// Matrix returns the propagation matrix Ã.
func (m *GCN) Matrix() *graph.Matrix { return m.convs[0].a }

// Learnables returns W and b of each convolution, in order.
func (m *GCN) Learnables() G.Nodes {
	var ns G.Nodes
	for _, c := range m.convs {
		ns = append(ns, c.Learnables()...)
	}
	return ns
}

// Forward returns the n × Classes logits for the n × In features x.
func (m *GCN) Forward(x *G.Node) (*G.Node, error) { return m.forward(x, nil) }

// forward runs the layers, layer l propagating with blocks[l] when blocks
// is not nil (ForwardBlocks) and with the whole graph's Ã otherwise.
func (m *GCN) forward(x *G.Node, blocks []*graph.Matrix) (*G.Node, error) {
	if err := checkInput(x, m.convs[0].lin.W, "GCN "+m.cfg.Name); err != nil {
		return nil, err
	}
	h, err := Dropout(x, m.cfg.InputDropout, m.seeds[0], m.phase)
	if err != nil {
		return nil, err
	}
	for l, c := range m.convs {
		a := c.a
		if blocks != nil {
			a = blocks[l]
		}
		last := l == len(m.convs)-1
		relu := !last && m.cfg.Activation == ReLU()
		if h, err = c.forwardAct(a, h, relu); err != nil {
			return nil, err
		}
		if last {
			break
		}
		if !relu {
			if h, err = Activate(h, m.cfg.Activation); err != nil {
				return nil, err
			}
		}
		if h, err = Dropout(h, m.cfg.Dropout, m.seeds[l+1], m.phase); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// Graph returns the graph the model was built on.
func (m *GCN) Graph() *graph.Graph { return m.gr }

// Phase returns the phase the model was built with.
func (m *GCN) Phase() *Phase { return m.phase }

// Hops returns the number of layers.
func (m *GCN) Hops() int { return m.cfg.Layers }

// ForwardBlocks is Forward with layer l propagating with blocks[l].
func (m *GCN) ForwardBlocks(x *G.Node, blocks []*graph.Matrix) (*G.Node, error) {
	where := "GCN " + m.cfg.Name
	if err := checkInput(x, m.convs[0].lin.W, where); err != nil {
		return nil, err
	}
	if err := checkBlocks(x, blocks, m.Hops(), where); err != nil {
		return nil, err
	}
	return m.forward(x, blocks) // Hops ≥ 1, so blocks is not nil
}

// LayerwiseLogits returns every node's logits with the current
// parameters in evaluation mode (see BlockModel). Memory besides adj and
// x: one n × Hidden buffer when the features are one slice of the
// model's dtype (a memory-mapped file for float32, a features.Dense for
// float64), else two, and two n × Hidden for the later layers.
func (m *GCN) LayerwiseLogits(adj *graph.Matrix, x features.Source) (*tensor.Dense, error) {
	return layerwise("GCN "+m.cfg.Name, m.cfg.Base, m.Hops(), m.Learnables(), adj, x,
		func(n int) ([]float32, error) { return gcnLayerwise[float32](m, adj, x, n) },
		func(n int) ([]float64, error) { return gcnLayerwise[float64](m, adj, x, n) })
}

func gcnLayerwise[T float32 | float64](m *GCN, adj *graph.Matrix, x features.Source, n int) ([]T, error) {
	return gcnRows[T](m.convs, m.cfg.Activation, false, adj, x, n, nil)
}

// gcnRows runs the convolutions over the whole graph, layer by layer, with
// act after every layer but the last (after the last too when actLast),
// and returns the last layer's n × out output. keep, if not nil, receives
// every layer's output, which is then never reused as a buffer.
func gcnRows[T float32 | float64](convs []*GCNConv, act Activation, actLast bool, adj *graph.Matrix, x features.Source, n int, keep func(l int, h []T)) ([]T, error) {
	ls := make([]dense[T], len(convs))
	for l, c := range convs {
		ls[l] = denseOf[T]([]*Linear{c.lin})[0]
		if c.B != nil {
			ls[l].b = c.B.Value().Data().([]T)
		}
	}
	h, err := gcnFirst(ls[0], adj, x, n, len(ls) == 1 && !actLast, act)
	if err != nil {
		return nil, err
	}
	if keep != nil {
		keep(0, h)
	}
	var t []T
	for l := 1; l < len(ls); l++ {
		d := ls[l]
		if cap(t) < n*d.out {
			t = make([]T, n*d.out)
		}
		t = t[:n*d.out]
		d.apply(h, t, n, false)
		if keep != nil || l == len(ls)-1 || len(h) < n*d.out {
			h = make([]T, n*d.out)
		}
		h = h[:n*d.out]
		mul(adj, h, t, d.out)
		if d.b != nil {
			addRows(h, d.b, d.out)
		}
		if l < len(ls)-1 || actLast {
			activateRows(h, act)
		}
		if keep != nil {
			keep(l, h)
		}
	}
	return h, nil
}

// gcnFirst returns the first GCN layer's output over the whole graph,
// act(Ã·X·W₁ + b₁) (no activation when it is the last layer). When the
// features are one slice of T it works one block of rows at a time,
// (Ã·X)[rows]·W₁, and holds only the n × out result; otherwise it gathers
// X·W₁ in chunks and multiplies it by Ã (two n × out buffers).
func gcnFirst[T float32 | float64](d dense[T], adj *graph.Matrix, x features.Source, n int, last bool, act Activation) ([]T, error) {
	in := x.Cols()
	h := make([]T, n*d.out)
	if xs, ok := direct[T](x); ok {
		buf := make([]T, chunkRows*in)
		for lo := 0; lo < n; lo += chunkRows {
			hi := min(lo+chunkRows, n)
			ax := buf[:(hi-lo)*in]
			switch a := any(ax).(type) {
			case []float32:
				adj.MulDenseRows32(a, any(xs).([]float32), in, lo, hi)
			case []float64:
				adj.MulDenseRows64(a, any(xs).([]float64), in, lo, hi)
			}
			y := h[lo*d.out : hi*d.out]
			d.apply(ax, y, hi-lo, true)
			if !last {
				activateRows(y, act)
			}
		}
		return h, nil
	}
	t := make([]T, n*d.out)
	buf := make([]T, chunkRows*in)
	rows := make([]int, 0, chunkRows)
	for lo := 0; lo < n; lo += chunkRows {
		hi := min(lo+chunkRows, n)
		if err := readRows(x, lo, hi, buf[:(hi-lo)*in], rows); err != nil {
			return nil, fmt.Errorf("features: %w", err)
		}
		d.apply(buf[:(hi-lo)*in], t[lo*d.out:hi*d.out], hi-lo, false)
	}
	mul(adj, h, t, d.out)
	if d.b != nil {
		addRows(h, d.b, d.out)
	}
	if !last {
		activateRows(h, act)
	}
	return h, nil
}
