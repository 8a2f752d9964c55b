package fmpbeam

import (
	"context"
	"fmt"
	"sort"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
)

// spreadFn sends a block's rows through its columns of Ã: for every
// destination block, the partial products Σ_j Ã[i, j]·x_j of the rows i
// there, summed over the block's columns j in ascending order. With Aggr
// "mean" it sends Σ_j x_j and the count of the entries j (one more
// column), with "max" the element-wise maximum of the x_j: the entries'
// values are then ignored (layers.Hop.Aggr).
type spreadFn struct {
	Size   int64
	Name   string
	Narrow bool   // round the partial products to float32 (Partial.Narrow)
	Aggr   string // "" (the weighted sum), "mean" or "max"
}

func (f *spreadFn) ProcessElement(ctx context.Context, b int64, adj func(*AdjBlock) bool, rows func(*Rows) bool, emit func(int64, Partial), pass func(int64, AdjBlock)) error {
	var a AdjBlock
	var x Rows
	if !adj(&a) || !rows(&x) {
		return fmt.Errorf("fmpbeam: %s: block %d has no matrix columns or no rows (the matrix and the rows come from different graphs)", f.Name, b)
	}
	if a.N != x.N {
		return fmt.Errorf("fmpbeam: %s: block %d has %d columns and %d rows", f.Name, b, a.N, x.N)
	}
	counter(ctx, f.Name+".join", keyed(b, encodedSize(&a))+keyed(b, encodedSize(&x)))
	pass(b, a)
	c := int(x.C)
	cw := c // the partials' width
	if f.Aggr == "mean" {
		cw++
	}
	self := false
	for r := 0; r < len(a.Row); {
		dest := a.Row[r] / f.Size
		end := r
		for end < len(a.Row) && a.Row[end]/f.Size == dest {
			end++
		}
		p := Partial{From: b, C: int32(cw), Idx: make([]int32, end-r), V: make([]float64, (end-r)*cw)}
		if dest == b {
			p.N, self = x.N, true
		}
		for k := r; k < end; k++ {
			p.Idx[k-r] = int32(a.Row[k] - dest*f.Size)
			v := p.V[(k-r)*cw : (k-r+1)*cw]
			for q := a.Ptr[k]; q < a.Ptr[k+1]; q++ {
				w, xj := a.Val[q], x.V[int(a.Col[q])*c:int(a.Col[q]+1)*c]
				switch {
				case f.Aggr == "mean":
					for t, y := range xj {
						v[t] += y
					}
					v[c]++
				case f.Aggr == "max" && q == a.Ptr[k]:
					copy(v, xj)
				case f.Aggr == "max":
					for t, y := range xj {
						v[t] = max(v[t], y)
					}
				default:
					for t := range v {
						v[t] += w * xj[t]
					}
				}
			}
		}
		if f.Narrow {
			p.Narrow = true
			for t, y := range p.V {
				p.V[t] = float64(float32(y))
			}
		}
		emit(dest, p)
		r = end
	}
	if !self {
		emit(b, Partial{From: b, N: x.N, C: int32(cw), Narrow: f.Narrow})
	}
	return nil
}

// gatherFn adds up a block's partial products in the order of their
// source blocks: the block's rows of Ã·x, whatever order Beam delivers
// them in. With Aggr "mean" it divides the sums by the counts (0 for a
// row without entries), with "max" it takes the maximum of the partial
// maxima (0 for a row without entries).
type gatherFn struct {
	Size int64
	Name string
	Aggr string // as spreadFn's
}

func (f *gatherFn) ProcessElement(ctx context.Context, b int64, parts func(*Partial) bool, emit func(int64, Rows)) error {
	out, bytes, err := reducePartials(b, f.Size, f.Name, f.Aggr == "max", parts)
	counter(ctx, f.Name+".sum", bytes)
	if err != nil {
		return err
	}
	if f.Aggr == "mean" {
		out = meanOfSums(out)
	}
	emit(b, out)
	return nil
}

// meanOfSums returns the rows of sums whose last column is their count
// divided by it, without that column (0 where the count is 0).
func meanOfSums(s Rows) Rows {
	c := int(s.C) - 1
	out := Rows{Lo: s.Lo, N: s.N, C: int32(c), V: make([]float64, int(s.N)*c)}
	for i := 0; i < int(s.N); i++ {
		row := s.V[i*(c+1) : (i+1)*(c+1)]
		if k := row[c]; k > 0 {
			for t, y := range row[:c] {
				out.V[i*c+t] = y / k
			}
		}
	}
	return out
}

// sumPartials adds up block b's partial products in the order of their
// source blocks, and returns the bytes they took on the wire.
func sumPartials(b, size int64, name string, parts func(*Partial) bool) (Rows, int, error) {
	return reducePartials(b, size, name, false, parts)
}

// reducePartials is sumPartials, or with takeMax the element-wise
// maximum of the partials of each row (0 for a row none of them has).
func reducePartials(b, size int64, name string, takeMax bool, parts func(*Partial) bool) (Rows, int, error) {
	var all []Partial
	var p Partial
	bytes := 0
	for parts(&p) {
		bytes += keyed(b, encodedSize(&p))
		all = append(all, p)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].From < all[j].From })
	var out Rows
	found := false
	for _, p := range all {
		if p.From == b {
			out, found = Rows{Lo: b * size, N: p.N, C: p.C, V: make([]float64, int(p.N)*int(p.C))}, true
		}
	}
	if !found {
		return out, bytes, fmt.Errorf("fmpbeam: %s: block %d received partial products but has no rows (the matrix and the rows come from different graphs)", name, b)
	}
	c := int(out.C)
	var seen []bool
	if takeMax {
		seen = make([]bool, out.N)
	}
	for _, p := range all {
		for k, i := range p.Idx {
			v, pv := out.V[int(i)*c:(int(i)+1)*c], p.V[k*c:(k+1)*c]
			switch {
			case takeMax && !seen[i]:
				copy(v, pv)
				seen[i] = true
			case takeMax:
				for t, y := range pv {
					v[t] = max(v[t], y)
				}
			default:
				for t, y := range pv {
					v[t] += y
				}
			}
		}
	}
	return out, bytes, nil
}

// Propagate returns Ã·x for the matrix adj (BuildMatrix's
// KV<int64, AdjBlock>) and the rows x (KV<int64, Rows>), keyed by block.
// Two shuffles: the matrix's columns joined with the rows of their block,
// which send one partial product per destination block; then the partial
// products grouped by destination and added up in source-block order, so
// the result does not depend on the order Beam delivers them in. name
// names its byte counters (name+".join", name+".sum").
func Propagate(s beam.Scope, lay Layout, name string, adj, x beam.PCollection) beam.PCollection {
	ax, _ := PropagateChain(s, lay, name, adj, x)
	return ax
}

// PropagateChain is Propagate that also returns the matrix, passed on by
// the join: a chain of products (K steps, a model's hops) takes each
// step's matrix from the step before, so that one copy of it is in
// flight at a time (a matrix read once and given to K joins waits in K
// joins' inputs at once, K copies in the runner's memory).
func PropagateChain(s beam.Scope, lay Layout, name string, adj, x beam.PCollection) (ax, next beam.PCollection) {
	return aggregateChain(s, lay, name, "", adj, x)
}

// aggregateChain is PropagateChain with the aggregation aggr of
// layers.Hop.Aggr ("" or "sum": the product; "mean", "max").
func aggregateChain(s beam.Scope, lay Layout, name, aggr string, adj, x beam.PCollection) (ax, next beam.PCollection) {
	if aggr == "sum" {
		aggr = ""
	}
	s = s.Scope("Propagate " + name)
	parts, next := beam.ParDo2(s, &spreadFn{Size: lay.Size, Name: name, Aggr: aggr}, beam.CoGroupByKey(s, adj, x))
	return beam.ParDo(s, &gatherFn{Size: lay.Size, Name: name, Aggr: aggr}, beam.GroupByKey(s, parts)), next
}

// spread is a product's first half: the matrix's columns joined with the
// rows of their block, and the partial products keyed by destination
// block (KV<int64, Partial>), not yet grouped; and the matrix passed on.
// narrow rounds the partial products to float32 (4 bytes a value).
func spread(s beam.Scope, lay Layout, name string, adj, x beam.PCollection, narrow bool) (parts, next beam.PCollection) {
	return beam.ParDo2(s, &spreadFn{Size: lay.Size, Name: name, Narrow: narrow}, beam.CoGroupByKey(s, adj, x))
}

func init() {
	register.DoFn6x1[context.Context, int64, func(*AdjBlock) bool, func(*Rows) bool, func(int64, Partial), func(int64, AdjBlock), error](&spreadFn{})
	register.DoFn4x1[context.Context, int64, func(*Partial) bool, func(int64, Rows), error](&gatherFn{})
	register.Emitter2[int64, Partial]()
	register.Iter1[AdjBlock]()
	register.Iter1[Partial]()
}
