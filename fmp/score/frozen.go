package score

import (
	"context"
	"fmt"
	"sync"

	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/features"
	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/layers"
)

// Frozen keeps the scores of a graph's nodes fixed while new nodes join
// it, and scores each new node at the cost of its own neighbourhood: the
// service's semantics of FMP.
//
// Freeze runs the model once over a base graph, FMP with its fitted
// duals, and keeps every node's probabilities and FMP's K intermediate
// states F⁰..F^{K−1}. Add then scores the nodes a grown graph adds: the
// backbone exactly on their receptive field (the backbone's hops), and
// FMP's K steps for the new nodes alone, reading the frozen states of
// their old neighbours (a new node's neighbours' states are what they
// were before it came; the new nodes' own are computed together). The
// cost of Add is the new nodes' backbone ball plus K times their edges,
// whatever the graph's size; nothing already scored moves.
//
// It differs from Fitted semantics only through the new nodes' echo on
// the old ones: under Fitted an old neighbour's state, and so the new
// node's score, would include the new node's own influence a few steps
// back. With λs = 0 (no propagation in FMP) the two are equal. The study
// in examples/paper/deploy measures the difference.
//
// A Frozen is safe for concurrent use: Add takes a write lock, Score a
// read lock.
type Frozen struct {
	s       *Scorer
	mu      sync.RWMutex
	n       int
	c       int
	probs   []float64   // n × c
	states  [][]float64 // K × (n × c), FMP only
	steps   *fmp.Steps  // FMP only
	fmpProp layers.Propagation
}

// Freeze scores every node of the base graph g (features x, groups sens,
// as Score takes them) with the fitted duals, over the whole graph, and
// keeps what Add needs. Its cost is the whole graph's, once; its memory
// K + 1 values of n × c (n × c alone without FMP). It returns Score's
// errors, and ErrNotFitted for an fmp model file without fitted duals.
//
// Cancelling ctx stops it with an error wrapping ctx.Err().
func (s *Scorer) Freeze(ctx context.Context, g *graph.Graph, x features.Source, sens []int) (*Frozen, error) {
	if err := s.check(g, x, sens, "Freeze"); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("score: Freeze: %w", err)
	}
	if s.on != nil && s.fitted == nil {
		return nil, fmt.Errorf("%w: Freeze keeps FMP's fitted states (call fmp.Model.Record before saving)", ErrNotFitted)
	}
	all := make([]int, g.N())
	for i := range all {
		all[i] = i
	}
	z, a, err := s.backbone(g, x, nil, all)
	if err != nil {
		return nil, fmt.Errorf("score: Freeze: %w", err)
	}
	fz := &Frozen{s: s, n: g.N(), c: s.out}
	if s.on != nil {
		fz.fmpProp = s.on.Propagation
		if fz.steps, err = fmp.NewSteps(s.fitted.Config, s.fitted.Counts); err != nil {
			return nil, fmt.Errorf("score: Freeze: %w", err)
		}
		if fz.states, z, err = s.fitted.Trace(a, sens, z); err != nil {
			return nil, fmt.Errorf("score: Freeze: FMP: %w", err)
		}
	}
	fz.probs = softmaxAll(z)
	return fz, nil
}

// N returns the number of nodes scored so far: the base graph's and the
// ones Add added.
func (fz *Frozen) N() int {
	fz.mu.RLock()
	defer fz.mu.RUnlock()
	return fz.n
}

// Add scores the nodes of grown beyond N(): grown must hold the nodes
// already scored first, in their order (graph.Graph.Grow keeps them so),
// with their features and groups in x and sens (grown.N() rows each; the
// old rows are not read again). It returns the number of nodes it
// computed on for the backbone (the new nodes' receptive field), and an
// error for sizes that do not match or a group FMP's fit did not see; on
// error nothing is added.
//
// Cancelling ctx stops it with an error wrapping ctx.Err(), adding nothing.
func (fz *Frozen) Add(ctx context.Context, grown *graph.Graph, x features.Source, sens []int) (field int, err error) {
	s := fz.s
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("score: Frozen.Add: %w", err)
	}
	if err := s.check(grown, x, sens, "Frozen.Add"); err != nil {
		return 0, err
	}
	fz.mu.Lock()
	defer fz.mu.Unlock()
	n0, n := fz.n, grown.N()
	if n < n0 {
		return 0, fmt.Errorf("score: Frozen.Add: the graph has %d nodes, fewer than the %d already scored", n, n0)
	}
	if n == n0 {
		return 0, nil
	}
	fresh := make([]int, n-n0)
	for k := range fresh {
		fresh[k] = n0 + k
	}
	ball, err := grown.Ball(fresh, s.hops)
	if err != nil {
		return 0, fmt.Errorf("score: Frozen.Add: %w", err)
	}
	z, _, err := s.backbone(grown, x, fresh, ball)
	if err != nil {
		return 0, fmt.Errorf("score: Frozen.Add: %w", err)
	}
	var states [][]float64
	if s.on != nil {
		for _, i := range fresh {
			if g := sens[i]; g < -1 || g >= len(s.fitted.Counts) {
				return 0, fmt.Errorf("score: Frozen.Add: node %d is in group %d; the fit saw groups 0..%d (−1: unknown)", i, g, len(s.fitted.Counts)-1)
			}
		}
		if states, z, err = fz.steps1(grown, sens, fresh, z); err != nil {
			return 0, fmt.Errorf("score: Frozen.Add: FMP: %w", err)
		}
	}
	for k := range states {
		fz.states[k] = append(fz.states[k], states[k]...)
	}
	fz.probs = append(fz.probs, softmaxAll(z)...)
	fz.n = n
	return len(ball), nil
}

// steps1 runs FMP's K steps for the fresh nodes (the last ones of
// grown) from their backbone logits z, reading the frozen states of
// their old neighbours. It returns the fresh nodes' states F⁰..F^{K−1}
// and F^K.
func (fz *Frozen) steps1(grown *graph.Graph, sens, fresh []int, z *tensor.Dense) ([][]float64, *tensor.Dense, error) {
	c, n0 := fz.c, fz.n
	// Ã's rows of the fresh nodes, whole: the fresh nodes and their
	// neighbours as the node set.
	set, err := grown.Ball(fresh, 1)
	if err != nil {
		return nil, nil, err
	}
	a, err := fz.fmpProp.MatrixOf(grown, set)
	if err != nil {
		return nil, nil, err
	}
	x := toF64(z)
	cur := append([]float64(nil), x...)
	next := make([]float64, len(cur))
	af := make([]float64, c)
	xagg := make([]float64, c)
	fit := fz.s.fitted
	var states [][]float64
	indptr, indices, val := a.Indptr(), a.Indices(), a.Values64()
	first := len(set) - len(fresh) // the fresh nodes are the set's last rows
	for k := 0; k < fit.Config.K; k++ {
		states = append(states, append([]float64(nil), cur...))
		u := fit.Dual(k)
		for r, i := range fresh {
			row := first + r
			clear(af)
			for p := indptr[row]; p < indptr[row+1]; p++ {
				j := set[indices[p]]
				var fj []float64
				if j < n0 {
					fj = fz.states[k][j*c : (j+1)*c]
				} else {
					fj = cur[(j-n0)*c : (j-n0+1)*c]
				}
				for q := range af {
					af[q] += val[p] * fj[q]
				}
			}
			fz.steps.Aggregate(xagg, x[r*c:(r+1)*c], af)
			fz.steps.Descend(next[r*c:(r+1)*c], xagg, cur[r*c:(r+1)*c], sens[i], u)
		}
		cur, next = next, cur
	}
	return states, tensor.New(tensor.WithShape(len(fresh), c), tensor.WithBacking(cur)), nil
}

// Score returns the probabilities of nodes (each < N()): the base
// graph's as Freeze computed them, the added ones' as Add did.
func (fz *Frozen) Score(nodes []int) (*Scores, error) {
	fz.mu.RLock()
	defer fz.mu.RUnlock()
	c := fz.c
	out := &Scores{Nodes: append([]int(nil), nodes...), Probs: make([]float64, 0, len(nodes)*c), Classes: c}
	for k, i := range nodes {
		if i < 0 || i >= fz.n {
			return nil, fmt.Errorf("score: Frozen.Score: nodes[%d] = %d, want a node scored so far, 0..%d", k, i, fz.n-1)
		}
		out.Probs = append(out.Probs, fz.probs[i*c:(i+1)*c]...)
	}
	return out, nil
}

// softmaxAll returns the row softmax of logits z.
func softmaxAll(z *tensor.Dense) []float64 {
	n, c := z.Shape()[0], z.Shape()[1]
	p := make([]float64, n*c)
	for r := 0; r < n; r++ {
		switch d := z.Data().(type) {
		case []float64:
			opkit.SoftmaxRow(d[r*c:(r+1)*c], p[r*c:(r+1)*c], 1)
		case []float32:
			opkit.SoftmaxRow(d[r*c:(r+1)*c], p[r*c:(r+1)*c], 1)
		}
	}
	return p
}

func toF64(z *tensor.Dense) []float64 {
	switch d := z.Data().(type) {
	case []float64:
		return append([]float64(nil), d...)
	case []float32:
		out := make([]float64, len(d))
		for i, v := range d {
			out[i] = float64(v)
		}
		return out
	}
	return nil
}
