package fmpbeam

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/fairmp/fairmp/layers"
)

// Norm is how BuildMatrix weighs the graph's edges: graph.GCNNorm's
// options (layers.Propagation gives them for a model).
type Norm struct {
	// Loops adds a self-loop of weight Weight to every node.
	Loops  bool
	Weight float64
	// Normalize applies D̂^-½ Â D̂^-½.
	Normalize bool
}

// NormOf returns the normalisation of a model's propagation (PyG's
// GCNConv defaults: self-loops of weight 1, or 2 when Improved, and the
// symmetric normalisation).
func NormOf(p layers.Propagation) Norm {
	w := 1.0
	if p.Improved {
		w = 2
	}
	return Norm{Loops: p.AddSelfLoops, Weight: w, Normalize: p.Normalize}
}

// Name returns a short name for the normalisation (stage names).
func (n Norm) Name() string {
	s := "A"
	if n.Loops {
		s = fmt.Sprintf("A+%gI", n.Weight)
	}
	if n.Normalize {
		s = "norm(" + s + ")"
	}
	return s
}

// neighboursFn groups a block's edge ends into its nodes' neighbour
// lists (sorted, without repeats or self-loops, as graph.FromEdges), and
// sends every neighbour's block the node's degree: what the neighbour's
// column of Ã needs. This is where the degrees are counted: grouping the
// ends by node, after the repeats are dropped (a combine over the ends
// would count a repeated edge twice).
type neighboursFn struct {
	Size int64
	Norm Norm
}

func (f *neighboursFn) ProcessElement(ctx context.Context, b int64, nodes func(*Nodes) bool, ends func(*Edges) bool, stIt func(*Stats) bool, emitScale func(int64, Scale), emitStats func(Stats)) error {
	st, ok := side(stIt)
	if !ok {
		return nil // the node files' check failed (see side)
	}
	var nb Nodes
	if !nodes(&nb) {
		var e Edges
		ends(&e)
		return fmt.Errorf("fmpbeam: an edge names node %d, which no node file lists (the node files give nodes 0..%d)", b*f.Size+int64(e.Local[0]), st.Nodes-1)
	}
	n := int(nb.N)
	bytes := keyed(b, encodedSize(&nb))
	type end struct {
		local int32
		other int64
	}
	var all []end
	var e Edges
	for ends(&e) {
		bytes += keyed(b, encodedSize(&e))
		for k, l := range e.Local {
			if int(l) >= n {
				return fmt.Errorf("fmpbeam: an edge names node %d, which no node file lists (the node files give nodes 0..%d)", nb.Lo+int64(l), st.Nodes-1)
			}
			if o := e.Other[k]; o >= st.Nodes {
				return fmt.Errorf("fmpbeam: an edge names node %d, which no node file lists (the node files give nodes 0..%d)", o, st.Nodes-1)
			}
			all = append(all, end{l, e.Other[k]})
		}
	}
	counter(ctx, "graph.edges", bytes)
	sort.Slice(all, func(i, j int) bool {
		if all[i].local != all[j].local {
			return all[i].local < all[j].local
		}
		return all[i].other < all[j].other
	})
	part := emptyStats()
	ptr := make([]int, n+1)
	nbr := make([]int64, 0, len(all))
	for k, x := range all {
		switch {
		case nb.Lo+int64(x.local) == x.other:
			part.SelfLoops++
		case k > 0 && all[k-1] == x:
			part.Duplicates++
		default:
			nbr = append(nbr, x.other)
			ptr[x.local+1]++
		}
	}
	for i := 0; i < n; i++ {
		ptr[i+1] += ptr[i]
	}
	own := Scale{From: b, N: nb.N, Deg: make([]int32, n)}
	for i := 0; i < n; i++ {
		deg := ptr[i+1] - ptr[i]
		own.Deg[i] = int32(deg)
		part.Edges += int64(deg)
		if deg == 0 {
			part.Isolated++
		}
	}
	out := map[int64]*Scale{b: &own}
	for i := 0; i < n; i++ {
		for _, j := range nbr[ptr[i]:ptr[i+1]] {
			k := j / f.Size
			m := out[k]
			if m == nil {
				m = &Scale{From: b}
				out[k] = m
			}
			m.Dst = append(m.Dst, int32(j-k*f.Size))
			m.Src = append(m.Src, nb.Lo+int64(i))
			m.SrcDeg = append(m.SrcDeg, own.Deg[i])
		}
	}
	for _, k := range sortedKeys(out) {
		emitScale(k, *out[k])
	}
	emitStats(part) // Edges, SelfLoops and Duplicates count ends: halved once summed
	return nil
}

// halveFn turns the summed edge ends into edges: every edge was seen from
// its two ends.
func halveFn(s Stats) Stats {
	s.Edges /= 2
	s.SelfLoops /= 2
	s.Duplicates /= 2
	return s
}

// scale returns 1/√d̂ for a node of degree deg: d̂ is the degree, plus
// the self-loop weight with Loops (0 for d̂ = 0), as graph.GCNNorm.
func (n Norm) scale(deg int32) float64 { return degScale(deg, n.shift()) }

// shift is what the self-loops add to every degree: Weight with Loops,
// else 0 (AdjBlock.ScaleShift).
func (n Norm) shift() float64 {
	if n.Loops {
		return n.Weight
	}
	return 0
}

// columnsFn builds a block's columns of Ã from the degrees its
// neighbours sent: entry (i, j) is 1·(1/√d̂_i · 1/√d̂_j) (1 without
// Normalize), the self-loop (j, j) Weight·(1/√d̂_j)², as graph.GCNNorm
// computes them.
type columnsFn struct {
	Size int64
	Norm Norm
	Name string
}

func (f *columnsFn) ProcessElement(ctx context.Context, b int64, msgs func(*Scale) bool, emit func(int64, AdjBlock)) error {
	var own *Scale
	type entry struct {
		i       int64
		j       int32
		val, rs float64 // rs: row i's scale (AdjBlock.RowScale)
	}
	var all []entry
	var got []Scale
	bytes := 0
	var m Scale
	for msgs(&m) {
		bytes += keyed(b, encodedSize(&m))
		got = append(got, m)
		if m.From == b {
			own = &got[len(got)-1]
		}
	}
	counter(ctx, "graph.scales", bytes)
	if own == nil {
		return fmt.Errorf("fmpbeam: block %d received scales but has no nodes", b)
	}
	lo := b * f.Size
	inv := make([]float64, own.N)
	for j, d := range own.Deg {
		inv[j] = f.Norm.scale(d)
	}
	// The row and column scales of the factored encoding (AdjBlock): a
	// normalised entry is exactly 1/√d̂_i · 1/√d̂_j; an entry without
	// normalisation 1·1 (the encoder sends the values whenever a product
	// differs, e.g. a self-loop weight other than 1).
	cs := inv
	if !f.Norm.Normalize {
		cs = make([]float64, own.N)
		for j := range cs {
			cs[j] = 1
		}
	}
	for _, m := range got {
		for k, j := range m.Dst {
			v, rs := 1.0, 1.0
			if f.Norm.Normalize {
				rs = f.Norm.scale(m.SrcDeg[k])
				v *= rs * inv[j]
			}
			all = append(all, entry{m.Src[k], j, v, rs})
		}
	}
	if f.Norm.Loops {
		for j := range inv {
			v := f.Norm.Weight
			if f.Norm.Normalize {
				v *= inv[j] * inv[j]
			}
			all = append(all, entry{lo + int64(j), int32(j), v, cs[j]})
		}
	}
	slices.SortFunc(all, func(x, y entry) int {
		if c := cmp.Compare(x.i, y.i); c != 0 {
			return c
		}
		return cmp.Compare(x.j, y.j)
	})
	a := AdjBlock{Lo: lo, N: own.N, Ptr: []int32{0}, Col: make([]int32, len(all)), Val: make([]float64, len(all)), ColScale: cs, ScaleShift: f.Norm.shift()}
	for k, x := range all {
		if k == 0 || x.i != all[k-1].i {
			if k > 0 {
				a.Ptr = append(a.Ptr, int32(k))
			}
			a.Row = append(a.Row, x.i)
			a.RowScale = append(a.RowScale, x.rs)
		}
		a.Col[k], a.Val[k] = x.j, x.val
	}
	if len(all) > 0 {
		a.Ptr = append(a.Ptr, int32(len(all)))
	}
	emit(b, a)
	return nil
}

// BuildMatrix builds a propagation matrix from the node blocks and the
// edge ends (ReadNodes, ReadEdges), keyed by block: graph.GCNNorm's
// matrix of the graph graph.FromEdges would build from the same edges,
// entry for entry (the same values, bit for bit), held by the columns of
// each block (KV<int64, AdjBlock>). stats is NodeStats's output. It also
// returns the edges' statistics (a singleton Stats: Edges, SelfLoops,
// Duplicates, Isolated).
//
// Two shuffles: the edge ends grouped by block (the degrees are the
// lengths of the de-duplicated neighbour lists), then every node's degree
// sent to its neighbours' blocks, which weigh their columns with it.
func BuildMatrix(s beam.Scope, lay Layout, norm Norm, nodes, edges, stats beam.PCollection) (adj, edgeStats beam.PCollection) {
	s = s.Scope("BuildMatrix " + norm.Name())
	scales, parts := beam.ParDo2(s, &neighboursFn{Size: lay.Size, Norm: norm}, beam.CoGroupByKey(s, nodes, edges), beam.SideInput{Input: stats})
	adj = beam.ParDo(s, &columnsFn{Size: lay.Size, Norm: norm}, beam.GroupByKey(s, scales))
	return adj, beam.ParDo(s, halveFn, beam.Combine(s, &statsFn{}, parts))
}

func init() {
	register.DoFn7x1[context.Context, int64, func(*Nodes) bool, func(*Edges) bool, func(*Stats) bool, func(int64, Scale), func(Stats), error](&neighboursFn{})
	register.DoFn4x1[context.Context, int64, func(*Scale) bool, func(int64, AdjBlock), error](&columnsFn{})
	register.Function1x1(halveFn)
	register.Emitter2[int64, Scale]()
	register.Emitter2[int64, AdjBlock]()
	register.Emitter1[Stats]()
	register.Iter1[Edges]()
	register.Iter1[Scale]()
}
