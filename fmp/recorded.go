package fmp

import (
	"fmt"
	"math"

	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/opkit"
)

// Recorded is an FMP layer's state after a run on a graph: the dual of each
// of its K steps and the sizes of the groups it was computed with. It is
// what FMP keeps of the training graph for nodes that arrive later, as
// per-group thresholds keep their thresholds.
//
// FMP couples every node to every other through the groups' mean
// probabilities, which set the dual at each step. Scoring new nodes of a
// grown graph has therefore two meanings:
//
//   - recompute: run the layer over the whole grown graph (Layer.Apply);
//     the duals follow the grown graph, and the old nodes' scores move;
//   - fitted: keep the duals of the training graph (Layer.Record) and run
//     the K steps with them (Recorded.Apply): a node's output depends only
//     on the backbone's logits within K hops of it, so a new node costs
//     its receptive field, and an old node whose K-hop neighbourhood did
//     not change keeps its score.
//
// Model files record a Model's Recorded (Model.Record); package fmp/score
// applies it to new nodes.
type Recorded struct {
	// Config is the layer's configuration.
	Config Config `json:"config"`
	// Counts are the known members of each group 0..G−1 on the graph
	// the duals were computed on.
	Counts []int `json:"counts"`
	// Classes is c, the width of the logits.
	Classes int `json:"classes"`
	// Duals[k] is the dual u after step k+1 (R × c, row-major; R is 1
	// for two groups with the paper's contrast, else G). Empty when
	// every dual is zero (λf = 0).
	Duals [][]float64 `json:"duals"`
}

// Validate checks the configuration, the groups and the duals' shapes
// and values (Recorded comes from model files).
func (f *Recorded) Validate() error {
	if err := f.Config.Validate(); err != nil {
		return fmt.Errorf("fmp: Recorded: %w", err)
	}
	if f.Classes < 2 {
		return fmt.Errorf("fmp: Recorded: %d classes, want ≥ 2", f.Classes)
	}
	if _, err := NewSteps(f.Config, f.Counts); err != nil {
		return fmt.Errorf("fmp: Recorded: %w", err)
	}
	rows, _ := contrast(f.Counts, f.Config.PerGroupRows)
	if len(f.Duals) != 0 && len(f.Duals) != f.Config.K {
		return fmt.Errorf("fmp: Recorded: %d duals for K = %d steps, want K (or none: every dual zero)", len(f.Duals), f.Config.K)
	}
	for k, u := range f.Duals {
		if len(u) != rows*f.Classes {
			return fmt.Errorf("fmp: Recorded: dual %d has %d values, want %d × %d", k, len(u), rows, f.Classes)
		}
		for _, v := range u {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("fmp: Recorded: dual %d holds %v, want finite values", k, v)
			}
		}
	}
	return nil
}

// Record runs the layer's K steps on x as Apply does and returns F^K and the
// duals it took (the layer's state on its graph; see Recorded).
func (l *Layer) Record(x *tensor.Dense) (*tensor.Dense, *Recorded, error) {
	out, duals, err := l.apply(x, "Record")
	if err != nil {
		return nil, nil, err
	}
	return out, &Recorded{Config: l.cfg, Counts: append([]int(nil), l.ds.Counts()...), Classes: x.Shape()[1], Duals: duals}, nil
}

// Apply runs the K steps with the fitted duals on the graph of adj (the
// normalised propagation matrix of a graph, n × n, or rows and columns
// of one: graph.GCNNormOf of a ball around the nodes to score; Apply
// cannot tell a truncated row from another normalisation, so it takes
// adj as given), for the n nodes' backbone logits x (n × c,
// float32 or float64) and groups sens (−1: unknown, which the fairness
// steps leave alone, as on the training graph). It computes in float64
// and returns float64 logits.
//
// Row i of the result depends only on the rows of x within K hops of
// node i: on a ball of radius K around some nodes, their rows are what
// Apply gives on the whole graph. On the graph the duals were fitted on,
// it is Layer.Apply's output up to rounding.
//
// It returns an error for shapes that do not match or a group id the fit
// did not see.
func (f *Recorded) Apply(adj *graph.Matrix, sens []int, x *tensor.Dense) (*tensor.Dense, error) {
	_, out, err := f.apply(adj, sens, x, false)
	return out, err
}

// Trace is Apply that also returns each step's input: states[k] is F^k
// (n × c, row-major; states[0] is x in float64), for k = 0..K−1. A
// program that keeps a graph's FMP fixed while nodes join it (package
// fmp/score's Frozen) runs the new nodes' steps against these.
func (f *Recorded) Trace(adj *graph.Matrix, sens []int, x *tensor.Dense) (states [][]float64, out *tensor.Dense, err error) {
	return f.apply(adj, sens, x, true)
}

// Dual returns the dual of step k (R × c, row-major), zeros when every
// dual is zero.
func (f *Recorded) Dual(k int) []float64 {
	if len(f.Duals) == 0 {
		rows, _ := contrast(f.Counts, f.Config.PerGroupRows)
		return make([]float64, rows*f.Classes)
	}
	return f.Duals[k]
}

func (f *Recorded) apply(adj *graph.Matrix, sens []int, x *tensor.Dense, trace bool) ([][]float64, *tensor.Dense, error) {
	if err := f.Validate(); err != nil {
		return nil, nil, err
	}
	if adj == nil || x == nil {
		return nil, nil, fmt.Errorf("fmp: Recorded.Apply: nil matrix or logits")
	}
	if err := opkit.CheckFloat(x.Dtype()); err != nil {
		return nil, nil, fmt.Errorf("fmp: Recorded.Apply: %w", err)
	}
	r, cc := adj.Dims()
	s := x.Shape()
	if r != cc || len(s) != 2 || s[0] != r || s[1] != f.Classes || len(sens) != r {
		return nil, nil, fmt.Errorf("fmp: Recorded.Apply: matrix %d × %d, logits %v, %d groups given, want n × n, (n, %d) and n", r, cc, s, len(sens), f.Classes)
	}
	for i, g := range sens {
		if g < -1 || g >= len(f.Counts) {
			return nil, nil, fmt.Errorf("fmp: Recorded.Apply: node %d is in group %d; the fit saw groups 0..%d (−1: unknown)", i, g, len(f.Counts)-1)
		}
	}
	rows, coef := contrast(f.Counts, f.Config.PerGroupRows)
	n, c := s[0], s[1]
	// Δs of the n nodes with the fit's group sizes: node i of group g
	// takes coef[r, g] in row r (0 when its group is unknown).
	ds := make([]float64, rows*n)
	for i, g := range sens {
		if g >= 0 {
			for r := 0; r < rows; r++ {
				ds[r*n+i] = coef[r*len(f.Counts)+g]
			}
		}
	}
	xs := make([]float64, n*c)
	switch d := x.Data().(type) {
	case []float64:
		copy(xs, d)
	case []float32:
		for i, v := range d {
			xs[i] = float64(v)
		}
	}
	p := &loop{adj: adj, ds: ds, rows: rows, n: n, k: f.Config.K, gamma: f.Config.Gamma(), temp: f.Config.Temperature,
		fixed: f.Duals, zero: len(f.Duals) == 0}
	var st fusedState[float64]
	st.reset(n, c, p.k, rows, 1)
	var states [][]float64
	var step func(int, []float64)
	if trace {
		step = func(_ int, fk []float64) { states = append(states, append([]float64(nil), fk...)) }
	}
	out := make([]float64, n*c)
	runSteps(p, &st, xs, out, c, false, step)
	return states, tensor.New(tensor.WithShape(n, c), tensor.WithBacking(out)), nil
}
