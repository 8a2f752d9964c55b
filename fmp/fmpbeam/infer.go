package fmpbeam

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	G "gorgonia.org/gorgonia"

	"github.com/fairmp/fairmp/layers"
)

// Layer-wise inference: a model's computation (layers.BlockModel's
// Compute, written once in a layers.Flow's primitives) laid out as
// transforms by beamFlow, the Beam implementation of the primitives:
// Dense is a ParDo with the weights read by name from the model side
// input, Propagate a sparse product (PropagateChain; the mean and the
// maximum by the same two shuffles), Scale a ParDo, Combine and Jump a
// group by block, and Attend a GAT layer's exchange of messages. The
// arithmetic is layers.LayerwiseLogits's in float64, up to the order of
// the sums.

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
	if act == (layers.Activation{}) {
		return
	}
	for i, v := range y {
		y[i] = act.Apply(v)
	}
}

// denseFn is the Dense primitive on a block's rows: act(x·W + b), the
// weight and bias named W and B (B empty: none).
type denseFn struct {
	W, B string
	Act  layers.Activation
}

func (f *denseFn) ProcessElement(b int64, x Rows, model []byte) (int64, Rows, error) {
	m, err := modelOf(model)
	if err != nil {
		return 0, Rows{}, err
	}
	d, err := m.dense(f.W, f.B)
	if err != nil {
		return 0, Rows{}, err
	}
	if int(x.C) != d.in {
		return 0, Rows{}, fmt.Errorf("fmpbeam: the rows have %d columns, the %s model's %s takes %d", x.C, m.Kind, f.W, d.in)
	}
	h := d.apply(x.V, int(x.N), true)
	activate(h, f.Act)
	return b, Rows{Lo: x.Lo, N: x.N, C: int32(d.out), V: h}, nil
}

// biasActFn adds the bias named B (empty: none) to a block's rows and
// applies Act: a propagation's bias and activation, or Activate.
type biasActFn struct {
	B   string
	Act layers.Activation
}

func (f *biasActFn) ProcessElement(b int64, x Rows, model []byte) (int64, Rows, error) {
	if f.B != "" {
		m, err := modelOf(model)
		if err != nil {
			return 0, Rows{}, err
		}
		bias, err := m.vector(f.B)
		if err != nil {
			return 0, Rows{}, err
		}
		c := int(x.C)
		if len(bias) != c {
			return 0, Rows{}, fmt.Errorf("fmpbeam: bias %q has %d values for rows of %d columns", f.B, len(bias), c)
		}
		for i := range x.V {
			x.V[i] += bias[i%c]
		}
	}
	activate(x.V, f.Act)
	return b, x, nil
}

// combineFn is Combine on a block: Σ Coef[tag]·rows[tag], each product
// rounded, summed in tag order.
type combineFn struct{ Coef []float64 }

func (f *combineFn) ProcessElement(b int64, parts func(*Rows) bool) (int64, Rows, error) {
	terms := make([]Rows, len(f.Coef))
	got := 0
	var x Rows
	for parts(&x) {
		terms[x.Tag] = x
		got++
	}
	if got != len(f.Coef) {
		return 0, Rows{}, fmt.Errorf("fmpbeam: Combine: block %d has %d of %d terms", b, got, len(f.Coef))
	}
	z := terms[0]
	z.Tag = 0
	c0 := f.Coef[0]
	for i, v := range z.V {
		z.V[i] = float64(c0 * v)
	}
	for k, t := range terms[1:] {
		c := f.Coef[k+1]
		for i, v := range t.V {
			z.V[i] = z.V[i] + float64(c*v)
		}
	}
	return b, z, nil
}

// tagFn sets a block's Tag.
type tagFn struct{ Tag int32 }

func (f *tagFn) ProcessElement(b int64, x Rows) (int64, Rows) {
	x.Tag = f.Tag
	return b, x
}

// jumpFn is Jump on a block: the layers' rows (tags 0..Layers−1) side
// by side or their element-wise maximum.
type jumpFn struct {
	Layers int
	Max    bool
	Name   string
}

func (f *jumpFn) ProcessElement(ctx context.Context, b int64, parts func(*Rows) bool) (int64, Rows, error) {
	hs := make([]Rows, f.Layers)
	var x Rows
	bytes := 0
	for parts(&x) {
		bytes += keyed(b, encodedSize(&x))
		hs[x.Tag] = x
	}
	counter(ctx, f.Name, bytes)
	n := int(hs[0].N)
	var out Rows
	if f.Max {
		out = Rows{Lo: hs[0].Lo, N: hs[0].N, C: hs[0].C, V: append([]float64(nil), hs[0].V...)}
		for _, h := range hs[1:] {
			for k, v := range h.V {
				out.V[k] = max(out.V[k], v)
			}
		}
		return b, out, nil
	}
	w := 0
	for _, h := range hs {
		w += int(h.C)
	}
	out = Rows{Lo: hs[0].Lo, N: hs[0].N, C: int32(w), V: make([]float64, n*w)}
	for i := 0; i < n; i++ {
		at := i * w
		for _, h := range hs {
			c := int(h.C)
			copy(out.V[at:], h.V[i*c:(i+1)*c])
			at += c
		}
	}
	return b, out, nil
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
// with m.Norm(); unused by a model without hops), laid out from the
// model's Compute by beamFlow. model is ReadModel's side input of the
// same file. Each hop's byte counters are named "infer.<kind>.<hop>".
func Infer(s beam.Scope, lay Layout, m *Model, model, adj, x beam.PCollection) (beam.PCollection, error) {
	s = s.Scope("Infer " + m.Kind)
	f := &beamFlow{s: s, lay: lay, kind: m.Kind, side: beam.SideInput{Input: model}, adj: adj}
	out, err := m.net.Compute(f, layers.NewValue(x, m.In(), 0))
	if err != nil {
		return beam.PCollection{}, fmt.Errorf("fmpbeam: the %s model: %w", m.Kind, err)
	}
	return f.pcol(out), nil
}

// beamFlow lays a computation out as transforms (layers.Flow).
type beamFlow struct {
	s    beam.Scope
	lay  Layout
	kind string
	side beam.SideInput
	adj  beam.PCollection // the matrix, passed from hop to hop
	hop  int
}

// pending is a Dense without bias or activation, not laid out yet:
// Propagate takes the narrower of its input and output across the
// network, as the models' whole-graph passes do.
type pending struct {
	x       beam.PCollection
	w       string
	in, out int
}

func (f *beamFlow) pcol(v layers.Value) beam.PCollection {
	if p, ok := v.Payload().(*pending); ok {
		return beam.ParDo(f.s, &denseFn{W: p.w}, p.x, f.side)
	}
	return v.Payload().(beam.PCollection)
}

func (f *beamFlow) out(c beam.PCollection, cols, level int) layers.Value {
	return layers.NewValue(c, cols, level)
}

func name(n *G.Node) string {
	if n == nil {
		return ""
	}
	return n.Name()
}

func (f *beamFlow) Dense(h layers.Value, w, b *G.Node, act layers.Activation) (layers.Value, error) {
	if w == nil || w.Dims() != 2 || w.Shape()[0] != h.Cols() {
		return layers.Value{}, fmt.Errorf("%w: Dense: weight %q for %d columns", layers.ErrFlow, name(w), h.Cols())
	}
	in, out := w.Shape()[0], w.Shape()[1]
	if b == nil && act == (layers.Activation{}) {
		return layers.NewValue(&pending{x: f.pcol(h), w: w.Name(), in: in, out: out}, out, h.Level()), nil
	}
	return f.out(beam.ParDo(f.s, &denseFn{W: w.Name(), B: name(b), Act: act}, f.pcol(h), f.side), out, h.Level()), nil
}

// propagate is one hop over the matrix, which it passes on to the next,
// with the aggregation aggr (layers.Hop.Aggr).
func (f *beamFlow) propagate(x beam.PCollection, aggr string) beam.PCollection {
	var ax beam.PCollection
	ax, f.adj = aggregateChain(f.s, f.lay, fmt.Sprintf("infer.%s.%d", f.kind, f.hop), aggr, f.adj, x)
	f.hop++
	return ax
}

func (f *beamFlow) Propagate(h layers.Value, p layers.Hop) (layers.Value, error) {
	if !f.adj.IsValid() {
		return layers.Value{}, fmt.Errorf("%w: the %s model propagates: give its matrix (BuildMatrix with Model.Norm)", layers.ErrFlow, f.kind)
	}
	switch p.Aggr {
	case "", "sum", "mean", "max":
	default:
		return layers.Value{}, fmt.Errorf("%w: Propagate: Aggr = %q, want \"sum\" (or \"\"), \"mean\" or \"max\"", layers.ErrFlow, p.Aggr)
	}
	// The mean and the sum are linear: a pending x·W is applied after
	// the hop when it is the narrower side; the maximum is not.
	if pd, ok := h.Payload().(*pending); ok && pd.in <= pd.out && p.Aggr != "max" {
		ax := f.propagate(pd.x, p.Aggr)
		return f.out(beam.ParDo(f.s, &denseFn{W: pd.w, B: name(p.Bias), Act: p.Act}, ax, f.side), h.Cols(), h.Level()+1), nil
	}
	ax := f.propagate(f.pcol(h), p.Aggr)
	if p.Bias != nil || p.Act != (layers.Activation{}) {
		ax = beam.ParDo(f.s, &biasActFn{B: name(p.Bias), Act: p.Act}, ax, f.side)
	}
	return f.out(ax, h.Cols(), h.Level()+1), nil
}

func (f *beamFlow) Activate(h layers.Value, act layers.Activation) (layers.Value, error) {
	if act == (layers.Activation{}) {
		return h, nil
	}
	return f.out(beam.ParDo(f.s, &biasActFn{Act: act}, f.pcol(h), f.side), h.Cols(), h.Level()), nil
}

// Scale multiplies a block's rows by the 1 × 1 parameter s (scaleFn).
func (f *beamFlow) Scale(h layers.Value, s *G.Node) (layers.Value, error) {
	if s == nil || s.Dims() != 2 || s.Shape()[0] != 1 || s.Shape()[1] != 1 {
		return layers.Value{}, fmt.Errorf("%w: Scale: coefficient %q, want a 1 × 1 parameter", layers.ErrFlow, name(s))
	}
	return f.out(beam.ParDo(f.s, &scaleFn{S: s.Name()}, f.pcol(h), f.side), h.Cols(), h.Level()), nil
}

// scaleFn multiplies a block's rows by the 1 × 1 parameter named S.
type scaleFn struct{ S string }

func (f *scaleFn) ProcessElement(b int64, x Rows, model []byte) (int64, Rows, error) {
	m, err := modelOf(model)
	if err != nil {
		return 0, Rows{}, err
	}
	s, err := m.vector(f.S)
	if err != nil {
		return 0, Rows{}, err
	}
	if len(s) != 1 {
		return 0, Rows{}, fmt.Errorf("fmpbeam: coefficient %q has %d values, want 1", f.S, len(s))
	}
	y := Rows{Lo: x.Lo, N: x.N, C: x.C, V: make([]float64, len(x.V))}
	for i, v := range x.V {
		y.V[i] = s[0] * v
	}
	return b, y, nil
}

// Dropout is the identity: the pipeline evaluates.
func (f *beamFlow) Dropout(h layers.Value, _ float64, _ int64) (layers.Value, error) { return h, nil }

func (f *beamFlow) Combine(coef []float64, vs ...layers.Value) (layers.Value, error) {
	if len(vs) == 0 || len(coef) != len(vs) {
		return layers.Value{}, fmt.Errorf("%w: Combine: %d coefficients for %d values", layers.ErrFlow, len(coef), len(vs))
	}
	cols := make([]beam.PCollection, len(vs))
	level := 0
	for i, v := range vs {
		cols[i] = f.pcol(v)
		level = max(level, v.Level())
	}
	return f.out(beam.ParDo(f.s, &combineFn{Coef: coef}, tagged(f.s, cols...)), vs[0].Cols(), level), nil
}

func (f *beamFlow) Jump(mode layers.JKMode, vs ...layers.Value) (layers.Value, error) {
	if len(vs) == 0 {
		return layers.Value{}, fmt.Errorf("%w: Jump: no values", layers.ErrFlow)
	}
	if len(vs) == 1 {
		return vs[0], nil
	}
	cols := make([]beam.PCollection, len(vs))
	width, level := 0, 0
	for i, v := range vs {
		cols[i] = f.pcol(v)
		width += v.Cols()
		level = max(level, v.Level())
	}
	if mode == layers.JKMax {
		width = vs[0].Cols()
	}
	jump := &jumpFn{Layers: len(vs), Max: mode == layers.JKMax, Name: fmt.Sprintf("infer.%s.layers", f.kind)}
	return f.out(beam.ParDo(f.s, jump, tagged(f.s, cols...)), width, level), nil
}

// Attend is a GAT layer: each block computes its rows' h = x·W and
// scores (gatPrepFn), sends its sources to the blocks they point to
// (gatSendFn, which passes the matrix on), and each destination block
// attends over its in-edges (gatAttendFn).
func (f *beamFlow) Attend(h layers.Value, l *layers.GATConv) (layers.Value, error) {
	if !f.adj.IsValid() {
		return layers.Value{}, fmt.Errorf("%w: the %s model attends over edges: give its matrix (BuildMatrix with Model.Norm)", layers.ErrFlow, f.kind)
	}
	c := l.Config()
	ps := l.Learnables() // W, att_src, att_dst and the bias
	bias := ""
	if len(ps) > 3 {
		bias = ps[3].Name()
	}
	hop := fmt.Sprintf("infer.%s.%d", f.kind, f.hop)
	f.hop++
	pre := beam.ParDo(f.s, &gatPrepFn{W: ps[0].Name(), Src: ps[1].Name(), Dst: ps[2].Name(), Heads: c.Heads, F: c.Out}, f.pcol(h), f.side)
	var msgs beam.PCollection
	msgs, f.adj = beam.ParDo2(f.s, &gatSendFn{Size: f.lay.Size, Name: hop, Heads: c.Heads}, beam.CoGroupByKey(f.s, f.adj, pre))
	width := c.Heads * c.Out
	if !c.Concat {
		width = c.Out
	}
	att := &gatAttendFn{B: bias, Heads: c.Heads, F: c.Out, Mean: !c.Concat, Size: f.lay.Size, Slope: c.NegativeSlope, Name: hop}
	return f.out(beam.ParDo(f.s, att, beam.GroupByKey(f.s, msgs), f.side), width, h.Level()+1), nil
}

// gatPrepFn computes a GAT layer's per-node values: h = x·W and, per
// head, the source and destination scores a_src·h and a_dst·h. Its rows
// are [scores_src (heads), h (heads·f), scores_dst (heads)].
type gatPrepFn struct {
	W, Src, Dst string
	Heads, F    int
}

func (f *gatPrepFn) ProcessElement(b int64, x Rows, model []byte) (int64, Rows, error) {
	m, err := modelOf(model)
	if err != nil {
		return 0, Rows{}, err
	}
	g := gatLayer{heads: f.Heads, f: f.F}
	if g.dense, err = m.dense(f.W, ""); err != nil {
		return 0, Rows{}, err
	}
	if g.src, err = m.vector(f.Src); err != nil {
		return 0, Rows{}, err
	}
	if g.dst, err = m.vector(f.Dst); err != nil {
		return 0, Rows{}, err
	}
	if int(x.C) != g.in {
		return 0, Rows{}, fmt.Errorf("fmpbeam: the rows have %d columns, the %s model's %s takes %d", x.C, m.Kind, f.W, g.in)
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
	B        string // the bias's name; empty: none
	Heads, F int
	Mean     bool
	Size     int64
	Slope    float64
	Name     string
}

func (f *gatAttendFn) ProcessElement(ctx context.Context, b int64, msgs func(*Messages) bool, model []byte, emit func(int64, Rows)) error {
	m, err := modelOf(model)
	if err != nil {
		return err
	}
	g := gatLayer{heads: f.Heads, f: f.F, mean: f.Mean}
	if f.B != "" {
		if g.b, err = m.vector(f.B); err != nil {
			return err
		}
	}
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
		for q, v := range g.b {
			o[q] += v
		}
	}
	emit(b, out)
	return nil
}

func init() {
	register.DoFn3x3[int64, Rows, []byte, int64, Rows, error](&denseFn{})
	register.DoFn3x3[int64, Rows, []byte, int64, Rows, error](&biasActFn{})
	register.DoFn3x3[int64, Rows, []byte, int64, Rows, error](&scaleFn{})
	register.DoFn2x3[int64, func(*Rows) bool, int64, Rows, error](&combineFn{})
	register.DoFn2x2[int64, Rows, int64, Rows](&tagFn{})
	register.DoFn3x3[context.Context, int64, func(*Rows) bool, int64, Rows, error](&jumpFn{})
	register.DoFn3x3[int64, Rows, []byte, int64, Rows, error](&gatPrepFn{})
	register.DoFn6x1[context.Context, int64, func(*AdjBlock) bool, func(*Rows) bool, func(int64, Messages), func(int64, AdjBlock), error](&gatSendFn{})
	register.DoFn5x1[context.Context, int64, func(*Messages) bool, []byte, func(int64, Rows), error](&gatAttendFn{})
	register.Emitter2[int64, Messages]()
	register.Iter1[Messages]()
}
