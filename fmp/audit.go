package fmp

import (
	"fmt"
	"math"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/blas"
	"github.com/fairmp/fairmp/internal/opkit"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// auditNodes holds the nodes of an auditing forward pass built by
// Layer.forwardAudit: the layer's output, the output of the same K steps
// with the sensitive-attribute steps removed (u ≡ 0), and the final dual.
// The sensitive attribute enters FMP only through steps 2–5, so the
// difference of the two outputs is exactly its influence on each node. Run
// the graph once (any VM), then call Report.
type auditNodes struct {
	// Output is F^K (n × c).
	Output *G.Node
	// Baseline is F^K with u ≡ 0: propagation only (n × c).
	Baseline *G.Node
	// Dual is the final dual u^K (R × c): the direction in probability
	// space along which the fairness steps pushed each group. It is nil
	// for λf = 0, where the dual is zero and no fairness step is built.
	Dual *G.Node

	outV, baseV, dualV G.Value
	ds                 *deltaS
	sens               []int
}

// forwardAudit builds the layer on x like Forward and returns the auditing
// nodes. Output is the node Forward would return. The baseline costs K
// more sparse products.
func (l *Layer) forwardAudit(x *G.Node) (*auditNodes, error) {
	out, op, err := l.forward(x)
	if err != nil {
		return nil, err
	}
	a := &auditNodes{Output: out, Baseline: out, ds: l.ds, sens: l.sens}
	if op != nil {
		if a.Baseline, err = l.propagation(x); err != nil {
			return nil, fmt.Errorf("fmp: Explain: %w", err)
		}
		if a.Dual, err = opkit.Apply(dualSpec, op.P, out); err != nil {
			return nil, fmt.Errorf("fmp: Explain: %w", err)
		}
	}
	// Read the values into our own registers: a TapeMachine reuses the
	// registers of intermediate nodes.
	G.Read(a.Output, &a.outV)
	G.Read(a.Baseline, &a.baseV)
	if a.Dual != nil {
		G.Read(a.Dual, &a.dualV)
	}
	return a, nil
}

// dualSpec reads the final dual u^K of its input's fused op (the *steps
// of the op that computed the input) from the run that computed that
// input: the loop's trace of the dual, as a node. It is never
// differentiated.
var dualSpec = &opkit.Spec[*steps]{
	ID:   "fairmp.fmp.Dual",
	Name: func(p *steps) string { return "Dual" + p.String() },
	Sig:  func(*steps) opkit.Sig { return opkit.Mats(1) },
	Shape: func(p *steps, in []tensor.Shape) (tensor.Shape, error) {
		return tensor.Shape{p.ds.Rows(), in[0][1]}, nil
	},
	Hash: (*steps).hash,
	F32:  func(p *steps, a opkit.Args[float32]) error { return lastDual(p.s32, a.Out) },
	F64:  func(p *steps, a opkit.Args[float64]) error { return lastDual(p.s64, a.Out) },
}

// lastDual copies the last dual of a completed run into out.
func lastDual[T float32 | float64](s *fusedState[T], out []T) error {
	if s == nil || !s.ok {
		return fmt.Errorf("fmp: the audit's dual: the FMP op has not run")
	}
	u := s.u[len(s.u)-1]
	if len(u) != len(out) {
		return fmt.Errorf("fmp: the audit's dual: the FMP op's last run has %d dual entries, want %d", len(u), len(out))
	}
	copy(out, u)
	return nil
}

// AuditReport is the outcome of an audit, in float64.
type AuditReport struct {
	// N and C are the numbers of nodes and classes.
	N, C int
	// Output and Baseline are the n × c logits with and without the
	// sensitive-attribute steps (row-major).
	Output, Baseline []float64
	// Influence = Output − Baseline: the per-node effect of the
	// sensitive attribute on the logits.
	Influence []float64
	// Dual is the final dual u^K (DualRows × C, row-major).
	Dual     []float64
	DualRows int
	// GroupMean[g][j] and GroupMeanBaseline[g][j] are group g's mean
	// predicted probability of class j (softmax of the logits) with and
	// without the sensitive-attribute steps; GroupShift is their
	// difference. Nodes with an unknown group are left out.
	GroupMean, GroupMeanBaseline, GroupShift [][]float64
	// MaxGap[j] and MaxGapBaseline[j] are the largest pairwise difference
	// of the groups' mean probability of class j, with and without.
	MaxGap, MaxGapBaseline []float64
	// MaxAbsInfluence is the largest |Influence| entry.
	MaxAbsInfluence float64
}

// NodeInfluence returns node i's row of Influence.
func (r *AuditReport) NodeInfluence(i int) []float64 { return r.Influence[i*r.C : (i+1)*r.C] }

// Report computes the audit from the values of the last run. It returns
// an error if the graph has not been run.
func (a *auditNodes) Report() (*AuditReport, error) {
	if a.outV == nil || a.baseV == nil || (a.Dual != nil && a.dualV == nil) {
		return nil, fmt.Errorf("fmp: Explain: no values; run the graph first")
	}
	out, err := toF64(a.outV)
	if err != nil {
		return nil, fmt.Errorf("fmp: Explain: output: %w", err)
	}
	base, err := toF64(a.baseV)
	if err != nil {
		return nil, fmt.Errorf("fmp: Explain: baseline: %w", err)
	}
	n := a.ds.N()
	c := len(out) / n
	dual := make([]float64, a.ds.Rows()*c) // λf = 0: u ≡ 0, no dual node
	if a.Dual != nil {
		if dual, err = toF64(a.dualV); err != nil {
			return nil, fmt.Errorf("fmp: Explain: dual: %w", err)
		}
	}
	r := &AuditReport{N: n, C: c, Output: out, Baseline: base, Dual: dual, DualRows: a.ds.Rows(),
		Influence: make([]float64, n*c)}
	for i := range out {
		r.Influence[i] = out[i] - base[i]
		r.MaxAbsInfluence = math.Max(r.MaxAbsInfluence, math.Abs(r.Influence[i]))
	}
	r.GroupMean = groupMeanProb(out, n, c, a.sens, a.ds.Groups())
	r.GroupMeanBaseline = groupMeanProb(base, n, c, a.sens, a.ds.Groups())
	r.GroupShift = make([][]float64, len(r.GroupMean))
	for g := range r.GroupMean {
		r.GroupShift[g] = make([]float64, c)
		for j := range r.GroupShift[g] {
			r.GroupShift[g][j] = r.GroupMean[g][j] - r.GroupMeanBaseline[g][j]
		}
	}
	r.MaxGap, r.MaxGapBaseline = maxGap(r.GroupMean), maxGap(r.GroupMeanBaseline)
	return r, nil
}

func toF64(v G.Value) ([]float64, error) {
	d, err := opkit.Dense(v)
	if err != nil {
		return nil, err
	}
	switch s := d.Data().(type) {
	case []float64:
		return append([]float64(nil), s...), nil
	case []float32:
		out := make([]float64, len(s))
		for i, x := range s {
			out[i] = float64(x)
		}
		return out, nil
	}
	return nil, fmt.Errorf("dtype %v, want float32 or float64", d.Dtype())
}

func groupMeanProb(f []float64, n, c int, sens []int, groups int) [][]float64 {
	m := make([][]float64, groups)
	for g := range m {
		m[g] = make([]float64, c)
	}
	cnt := make([]float64, groups)
	s := make([]float64, c)
	for i := 0; i < n; i++ {
		g := sens[i]
		if g < 0 {
			continue
		}
		opkit.SoftmaxRow(f[i*c:(i+1)*c], s, 1)
		cnt[g]++
		for j := range s {
			m[g][j] += s[j]
		}
	}
	for g := range m {
		for j := range m[g] {
			m[g][j] /= cnt[g]
		}
	}
	return m
}

func maxGap(m [][]float64) []float64 {
	c := len(m[0])
	out := make([]float64, c)
	for j := 0; j < c; j++ {
		lo, hi := math.Inf(1), math.Inf(-1)
		for g := range m {
			lo, hi = math.Min(lo, m[g][j]), math.Max(hi, m[g][j])
		}
		out[j] = hi - lo
	}
	return out
}

// Explain runs FMP once on fixed logits xTrans (n × c, float32 or
// float64) and returns the audit report: no training, no model needed.
// It is the quickest way to see what the sensitive attribute does to a
// trained backbone's predictions under a configuration.
//
// Explain returns the errors of New and Forward, and an error if xTrans is
// nil or not a matrix.
func Explain(xTrans *tensor.Dense, adj *graph.Matrix, sens []int, cfg Config) (*AuditReport, error) {
	if xTrans == nil || len(xTrans.Shape()) != 2 {
		return nil, fmt.Errorf("fmp: Explain: X_trans must be a non-nil matrix")
	}
	l, err := New(adj, sens, cfg)
	if err != nil {
		return nil, err
	}
	l.SetPhase(nil)
	g := G.NewGraph()
	x := G.NewMatrix(g, xTrans.Dtype(), G.WithShape(xTrans.Shape()...), G.WithName("X_trans"), G.WithValue(xTrans))
	a, err := l.forwardAudit(x)
	if err != nil {
		return nil, err
	}
	blas.Default() // fairmp's BLAS unless the program chose one
	m := G.NewTapeMachine(g)
	defer m.Close()
	if err := m.RunAll(); err != nil {
		return nil, fmt.Errorf("fmp: Explain: %w", err)
	}
	return a.Report()
}
