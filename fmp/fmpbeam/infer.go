package fmpbeam

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/fairmp/fairmp/layers"
)

// Layer-wise inference: each layer of a model is a ParDo over blocks
// (its dense transform, with the weights from the model side input)
// and, for the graph models, a sparse product (Propagate) or a GAT
// layer's exchange of messages. The arithmetic is
// layers.BlockModel.LayerwiseLogits's in float64, up to the order of the
// sums.

// apply writes x·W (+ b) for the n rows of x into a new slice.
func (d dense) apply(x []float64, n int, bias bool) []float64 {
	y := make([]float64, n*d.out)
	for i := 0; i < n; i++ {
		yi := y[i*d.out : (i+1)*d.out]
		for k, xv := range x[i*d.in : (i+1)*d.in] {
			for j, w := range d.w[k*d.out : (k+1)*d.out] {
				yi[j] += xv * w
			}
		}
		if bias && d.b != nil {
			for j, b := range d.b {
				yi[j] += b
			}
		}
	}
	return y
}

func activate(y []float64, act layers.Activation) {
	for i, v := range y {
		y[i] = act.Apply(v)
	}
}

// stackFn runs the model's linear maps From..To−1 on a block's rows, with
// their biases and Act between them (and after the last with ActLast).
type stackFn struct {
	From, To int
	Bias     bool
	Act      layers.Activation
	ActLast  bool
	Check    bool // the first layer: check the width of the input
}

func (f *stackFn) ProcessElement(b int64, x Rows, model []byte) (int64, Rows, error) {
	m, err := modelOf(model)
	if err != nil {
		return 0, Rows{}, err
	}
	if f.Check && int(x.C) != m.dense[f.From].in {
		return 0, Rows{}, fmt.Errorf("fmpbeam: the features have %d columns, the %s model takes %d", x.C, m.Kind, m.dense[f.From].in)
	}
	h, n := x.V, int(x.N)
	for l := f.From; l < f.To; l++ {
		h = m.dense[l].apply(h, n, f.Bias)
		if l < f.To-1 || f.ActLast {
			activate(h, f.Act)
		}
	}
	return b, Rows{Lo: x.Lo, N: x.N, C: int32(m.dense[f.To-1].out), V: h}, nil
}

// biasActFn adds layer Layer's bias to a block's rows and applies Act
// when Apply is set.
type biasActFn struct {
	Layer int
	Act   layers.Activation
	Apply bool
}

func (f *biasActFn) ProcessElement(b int64, x Rows, model []byte) (int64, Rows, error) {
	m, err := modelOf(model)
	if err != nil {
		return 0, Rows{}, err
	}
	if d := m.dense[f.Layer]; d.b != nil {
		c := int(x.C)
		for i := range x.V {
			x.V[i] += d.b[i%c]
		}
	}
	if f.Apply {
		activate(x.V, f.Act)
	}
	return b, x, nil
}

// appnpFn is one personalised-PageRank step: z = (1−α)·Ãz + α·h, from
// Ãz and h (tags 0 and 1).
type appnpFn struct{ Alpha float64 }

func (f *appnpFn) ProcessElement(b int64, az func(*Rows) bool, h func(*Rows) bool) (int64, Rows, error) {
	var z, hb Rows
	if !az(&z) || !h(&hb) {
		return 0, Rows{}, fmt.Errorf("fmpbeam: APPNP: block %d lacks a term", b)
	}
	a0, a1 := 1-f.Alpha, f.Alpha
	for i, v := range z.V {
		z.V[i] = a0*v + a1*hb.V[i]
	}
	return b, z, nil
}

// tagFn sets a block's Tag.
type tagFn struct{ Tag int32 }

func (f *tagFn) ProcessElement(b int64, x Rows) (int64, Rows) {
	x.Tag = f.Tag
	return b, x
}

// jkFn aggregates a JKNet's layer outputs (tags 0..Layers−1): their
// concatenation or element-wise maximum, then the output layer.
type jkFn struct {
	Layers int
	Max    bool
}

func (f *jkFn) ProcessElement(ctx context.Context, b int64, parts func(*Rows) bool, model []byte) (int64, Rows, error) {
	m, err := modelOf(model)
	if err != nil {
		return 0, Rows{}, err
	}
	hs := make([]Rows, f.Layers)
	var x Rows
	bytes := 0
	for parts(&x) {
		bytes += keyed(b, encodedSize(&x))
		hs[x.Tag] = x
	}
	counter(ctx, "infer.jknet.layers", bytes)
	n, w := int(hs[0].N), int(hs[0].C)
	var jk []float64
	switch {
	case f.Layers == 1:
		jk = hs[0].V
	case f.Max:
		jk = append([]float64(nil), hs[0].V...)
		for _, h := range hs[1:] {
			for k, v := range h.V {
				jk[k] = max(jk[k], v)
			}
		}
	default:
		jk = make([]float64, n*w*f.Layers)
		for i := 0; i < n; i++ {
			for l, h := range hs {
				copy(jk[(i*f.Layers+l)*w:], h.V[i*w:(i+1)*w])
			}
		}
	}
	out := m.dense[f.Layers]
	return b, Rows{Lo: hs[0].Lo, N: hs[0].N, C: int32(out.out), V: out.apply(jk, n, true)}, nil
}

// tagged returns the rows of several inputs grouped by block, each input
// with its index as Tag.
func tagged(s beam.Scope, cols ...beam.PCollection) beam.PCollection {
	var ts []beam.PCollection
	for k, c := range cols {
		ts = append(ts, beam.ParDo(s, &tagFn{Tag: int32(k)}, c))
	}
	return beam.GroupByKey(s, beam.Flatten(s, ts...))
}

// Infer returns the logits (KV<int64, Rows>, Classes columns) of model m
// on the rows x (its input features) over the matrix adj (BuildMatrix
// with m.Norm(); unused by an MLP), layer by layer. model is ReadModel's
// side input of the same file. Each layer's byte counters are named
// "infer.<kind>.<layer>".
func Infer(s beam.Scope, lay Layout, m *Model, model, adj, x beam.PCollection) beam.PCollection {
	s = s.Scope("Infer " + m.Kind)
	side := beam.SideInput{Input: model}
	name := func(l int) string { return fmt.Sprintf("infer.%s.%d", m.Kind, l) }
	// layer runs a GCN convolution l: act(Ã·h·W + b), propagating the
	// narrower of h and h·W.
	// propagate is a product in the chain of the model's hops: each takes
	// the matrix from the one before (PropagateChain).
	propagate := func(l int, x beam.PCollection) beam.PCollection {
		var ax beam.PCollection
		ax, adj = PropagateChain(s, lay, name(l), adj, x)
		return ax
	}
	layer := func(l int, h beam.PCollection, act layers.Activation, apply bool) beam.PCollection {
		d := m.dense[l]
		if d.in <= d.out {
			p := propagate(l, h)
			return beam.ParDo(s, &stackFn{From: l, To: l + 1, Bias: true, Act: act, ActLast: apply, Check: l == 0}, p, side)
		}
		t := beam.ParDo(s, &stackFn{From: l, To: l + 1, Check: l == 0}, h, side)
		return beam.ParDo(s, &biasActFn{Layer: l, Act: act, Apply: apply}, propagate(l, t), side)
	}
	switch c := m.Config.(type) {
	case layers.MLPConfig:
		return beam.ParDo(s, &stackFn{From: 0, To: len(m.dense), Bias: true, Act: c.Activation, Check: true}, x, side)
	case layers.GCNConfig:
		h := x
		for l := range m.dense {
			h = layer(l, h, c.Activation, l < len(m.dense)-1)
		}
		return h
	case layers.SGCConfig:
		h := x
		for k := 0; k < c.K; k++ {
			h = propagate(k, h)
		}
		return beam.ParDo(s, &stackFn{From: 0, To: 1, Bias: true, Check: true}, h, side)
	case layers.APPNPConfig:
		h := beam.ParDo(s, &stackFn{From: 0, To: len(m.dense), Bias: true, Act: c.Activation, Check: true}, x, side)
		z := h
		for k := 0; k < c.K; k++ {
			az := propagate(k, z)
			z = beam.ParDo(s, &appnpFn{Alpha: c.Alpha}, beam.CoGroupByKey(s, az, h))
		}
		return z
	case layers.JKNetConfig:
		hs := make([]beam.PCollection, c.Layers)
		h := x
		for l := 0; l < c.Layers; l++ {
			h = layer(l, h, c.Activation, true)
			hs[l] = h
		}
		return beam.ParDo(s, &jkFn{Layers: c.Layers, Max: c.Mode == layers.JKMax}, tagged(s, hs...), side)
	case layers.GATConfig:
		h := x
		for l := range m.gat {
			pre := beam.ParDo(s, &gatPrepFn{Layer: l}, h, side)
			var msgs beam.PCollection
			msgs, adj = beam.ParDo2(s, &gatSendFn{Size: lay.Size, Name: name(l), Heads: m.gat[l].heads}, beam.CoGroupByKey(s, adj, pre))
			h = beam.ParDo(s, &gatAttendFn{Layer: l, Size: lay.Size, Slope: c.NegativeSlope, ELU: l == 0, Name: name(l)}, beam.GroupByKey(s, msgs), side)
		}
		return h
	}
	panic(fmt.Sprintf("fmpbeam: Infer: a %T model passed ReadModelFile", m.Config)) // ReadModelFile refused it
}

// gatPrepFn computes a GAT layer's per-node values: h = x·W and, per
// head, the source and destination scores a_src·h and a_dst·h. Its rows
// are [scores_src (heads), h (heads·f), scores_dst (heads)].
type gatPrepFn struct{ Layer int }

func (f *gatPrepFn) ProcessElement(b int64, x Rows, model []byte) (int64, Rows, error) {
	m, err := modelOf(model)
	if err != nil {
		return 0, Rows{}, err
	}
	g := m.gat[f.Layer]
	if int(x.C) != g.in {
		return 0, Rows{}, fmt.Errorf("fmpbeam: the features have %d columns, the %s model takes %d", x.C, m.Kind, g.in)
	}
	n, hf := int(x.N), g.heads*g.f
	h := g.apply(x.V, n, false)
	w := hf + 2*g.heads
	out := Rows{Lo: x.Lo, N: x.N, C: int32(w), V: make([]float64, n*w)}
	for i := 0; i < n; i++ {
		hi, o := h[i*hf:(i+1)*hf], out.V[i*w:(i+1)*w]
		copy(o[g.heads:], hi)
		for k := 0; k < g.heads; k++ {
			for q := k * g.f; q < (k+1)*g.f; q++ {
				o[k] += hi[q] * g.src[q]
				o[g.heads+hf+k] += hi[q] * g.dst[q]
			}
		}
	}
	return b, out, nil
}

// gatSendFn sends a block's sources to the blocks they point to: for
// each destination block, the distinct sources with an edge into it
// (their source scores and h) and the edges.
type gatSendFn struct {
	Size  int64
	Name  string
	Heads int
}

func (f *gatSendFn) ProcessElement(ctx context.Context, b int64, adj func(*AdjBlock) bool, rows func(*Rows) bool, emit func(int64, Messages), pass func(int64, AdjBlock)) error {
	var a AdjBlock
	var x Rows
	if !adj(&a) || !rows(&x) || a.N != x.N {
		return fmt.Errorf("fmpbeam: %s: block %d: the matrix and the rows come from different graphs", f.Name, b)
	}
	counter(ctx, f.Name+".join", keyed(b, encodedSize(&a))+keyed(b, encodedSize(&x)))
	pass(b, a) // the next layer's matrix (see PropagateChain)
	heads := f.Heads
	w := int(x.C) - heads // sent: scores_src and h
	self := false
	for r := 0; r < len(a.Row); {
		dest := a.Row[r] / f.Size
		end := r
		for end < len(a.Row) && a.Row[end]/f.Size == dest {
			end++
		}
		msg := Messages{From: b, W: int32(w)}
		used := map[int32]int32{}
		for k := r; k < end; k++ {
			for q := a.Ptr[k]; q < a.Ptr[k+1]; q++ {
				if _, ok := used[a.Col[q]]; !ok {
					used[a.Col[q]] = 0
					msg.Src = append(msg.Src, a.Col[q])
				}
			}
		}
		sort.Slice(msg.Src, func(i, j int) bool { return msg.Src[i] < msg.Src[j] })
		msg.V = make([]float64, 0, len(msg.Src)*w)
		for k, j := range msg.Src {
			used[j] = int32(k)
			msg.V = append(msg.V, x.V[int(j)*int(x.C):int(j)*int(x.C)+w]...)
		}
		for k := r; k < end; k++ {
			for q := a.Ptr[k]; q < a.Ptr[k+1]; q++ {
				msg.Dst = append(msg.Dst, int32(a.Row[k]-dest*f.Size))
				msg.Ref = append(msg.Ref, used[a.Col[q]])
			}
		}
		if dest == b {
			self = true
			msg.N, msg.Own = x.N, ownScores(x, heads, w)
		}
		emit(dest, msg)
		r = end
	}
	if !self {
		emit(b, Messages{From: b, N: x.N, W: int32(w), Own: ownScores(x, heads, w)})
	}
	return nil
}

// ownScores returns the destination scores of a prepared block's rows.
func ownScores(x Rows, heads, w int) []float64 {
	c := int(x.C)
	out := make([]float64, int(x.N)*heads)
	for i := 0; i < int(x.N); i++ {
		copy(out[i*heads:], x.V[i*c+w:(i+1)*c])
	}
	return out
}

// gatAttendFn is a GAT layer at a destination block: for each node, the
// softmax of its in-edges' scores LeakyReLU(s_src_j + s_dst_i) per head
// (the largest subtracted first), the sum of its sources' h weighted by
// it, in the order of the sources, the heads concatenated (averaged in
// the output layer), the bias, and ELU after the hidden layer.
type gatAttendFn struct {
	Layer int
	Size  int64
	Slope float64
	ELU   bool
	Name  string
}

func (f *gatAttendFn) ProcessElement(ctx context.Context, b int64, msgs func(*Messages) bool, model []byte, emit func(int64, Rows)) error {
	m, err := modelOf(model)
	if err != nil {
		return err
	}
	g := m.gat[f.Layer]
	var all []Messages
	var msg Messages
	bytes := 0
	for msgs(&msg) {
		bytes += keyed(b, encodedSize(&msg))
		all = append(all, msg)
	}
	counter(ctx, f.Name+".sum", bytes)
	sort.Slice(all, func(i, j int) bool { return all[i].From < all[j].From })
	var own *Messages
	for k := range all {
		if all[k].From == b {
			own = &all[k]
		}
	}
	if own == nil {
		return fmt.Errorf("fmpbeam: %s: block %d received messages but has no rows", f.Name, b)
	}
	heads, fw, n := g.heads, g.f, int(own.N)
	hf := heads * fw
	ow := hf
	if g.mean {
		ow = fw
	}
	out := Rows{Lo: b * f.Size, N: own.N, C: int32(ow), V: make([]float64, n*ow)}
	pos := make([]int, len(all)) // each message's next edge
	type in struct{ v []float64 }
	var edges []in
	mx := make([]float64, heads)
	sum := make([]float64, heads)
	var alpha []float64
	for i := 0; i < n; i++ {
		edges = edges[:0]
		for k := range all {
			ms := &all[k]
			for pos[k] < len(ms.Dst) && ms.Dst[pos[k]] == int32(i) {
				r := int(ms.Ref[pos[k]])
				edges = append(edges, in{ms.V[r*int(ms.W) : (r+1)*int(ms.W)]})
				pos[k]++
			}
		}
		o := out.V[i*ow : (i+1)*ow]
		if len(edges) > 0 {
			di := own.Own[i*heads : (i+1)*heads]
			alpha = append(alpha[:0], make([]float64, len(edges)*heads)...)
			for k := range mx {
				mx[k], sum[k] = math.Inf(-1), 0
			}
			for p, e := range edges {
				for k := 0; k < heads; k++ {
					z := e.v[k] + di[k]
					if z <= 0 {
						z *= f.Slope
					}
					alpha[p*heads+k] = z
					mx[k] = max(mx[k], z)
				}
			}
			for p := range edges {
				for k := 0; k < heads; k++ {
					e := math.Exp(alpha[p*heads+k] - mx[k])
					alpha[p*heads+k] = e
					sum[k] += e
				}
			}
			for k := range sum {
				sum[k] = 1 / sum[k]
			}
			for p, e := range edges {
				h := e.v[heads:]
				for k := 0; k < heads; k++ {
					a := alpha[p*heads+k] * sum[k]
					dst := o[k*fw : (k+1)*fw]
					if g.mean {
						dst = o[:fw]
					}
					for q, v := range h[k*fw : (k+1)*fw] {
						dst[q] += a * v
					}
				}
			}
			if g.mean && heads > 1 {
				for q := range o {
					o[q] *= 1 / float64(heads)
				}
			}
		}
		for q := range o {
			o[q] += g.b[q]
		}
		if f.ELU {
			activate(o, layers.ELU(1))
		}
	}
	emit(b, out)
	return nil
}

func init() {
	register.DoFn3x3[int64, Rows, []byte, int64, Rows, error](&stackFn{})
	register.DoFn3x3[int64, Rows, []byte, int64, Rows, error](&biasActFn{})
	register.DoFn3x3[int64, func(*Rows) bool, func(*Rows) bool, int64, Rows, error](&appnpFn{})
	register.DoFn2x2[int64, Rows, int64, Rows](&tagFn{})
	register.DoFn4x3[context.Context, int64, func(*Rows) bool, []byte, int64, Rows, error](&jkFn{})
	register.DoFn3x3[int64, Rows, []byte, int64, Rows, error](&gatPrepFn{})
	register.DoFn6x1[context.Context, int64, func(*AdjBlock) bool, func(*Rows) bool, func(int64, Messages), func(int64, AdjBlock), error](&gatSendFn{})
	register.DoFn5x1[context.Context, int64, func(*Messages) bool, []byte, func(int64, Rows), error](&gatAttendFn{})
	register.Emitter2[int64, Messages]()
	register.Iter1[Messages]()
}
