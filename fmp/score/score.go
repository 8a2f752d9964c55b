// Package score scores nodes of any graph with a saved model: the new
// nodes of a grown graph, or the nodes of another graph whose nodes have
// the model's features. It runs the model in plain Go, layer by layer
// (layers.LayerwiseLogits), on the receptive field of the nodes asked
// for, so that scoring k new nodes costs in proportion to their
// neighbourhood, not to the graph.
//
//	f, _ := os.Open("model.fmp")
//	s, err := score.Open(f, score.DefaultConfig())
//	if err != nil { ... }
//	out, err := s.Score(ctx, grown, x, sens, newNodes) // x: grown.N() rows, the model's columns
//	p := out.Probs                                // len(newNodes) × out.Classes
//
// # What FMP means for new nodes
//
// A backbone (GCN, MLP, APPNP, a kind of the user's) computes a node's
// logits from the nodes within its hops: its score on a grown graph is
// what it would have been had the node been there at training. FMP is
// different: its K steps couple every node to every other through the
// groups' mean probabilities, which set its dual at each step. Two
// meanings are offered (Config.FMP):
//
//   - Fitted (the default): the duals recorded on the training graph
//     (fmp.Model.Record, kept in the model file) are applied to the new
//     nodes, as per-group thresholds chosen on validation are applied to
//     new people. A node's score depends only on its (hops + K)-hop ball;
//     an old node whose ball did not change keeps its score.
//   - Recompute: FMP runs again over the whole graph given: the duals
//     follow the grown graph, every node's score may move, and the cost
//     is the whole graph's.
//
// Both compute a node's score from its (hops + K)-hop ball, which on a
// small-world graph is most of the graph for FMP's K = 10. A service
// that scores nodes as they arrive wants a third meaning, [Frozen]:
// Scorer.Freeze scores a base graph once and keeps FMP's K intermediate
// states; Frozen.Add then scores each new node from its own edges and
// its old neighbours' frozen states (the backbone still on its exact
// receptive field), so that a new node costs its neighbourhood and no
// score already given ever moves. It equals Fitted for λs = 0.
//
// The study in examples/paper/deploy measures both on new nodes.
//
// # Drift
//
// Scorer.Drift compares the nodes scored with the baseline the model file
// recorded, in one call: each group's decision rates and the fairness
// criteria against their validation-time intervals (the rates that need
// labels only on labelled nodes), the group mix (each group's share of
// the scored nodes, no labels needed), and each feature against its
// training range and distribution (PSI), every message naming groups and
// features by their names:
//
//	out, err := s.Score(ctx, grown, x, sens, newNodes)
//	d, err := s.Drift(out, nil, sens, x) // nil: no labels known
//	fmt.Println(d)                       // warnings, then notes
//
// The file records a baseline when it is saved with one
// (modelio.Save, SaveConfig.Baseline: metrics.NewBaseline on the
// validation nodes, its GroupNames set, Baseline.RecordFeatures on the
// training nodes); without it Drift returns ErrNoBaseline.
//
// # Cost
//
// Score computes on the ball of radius Hops() around the nodes asked for
// (graph.Graph.Ball) with the propagation matrix's rows and columns built
// from the graph's degrees (layers.Propagation.MatrixOf), so the work is
// proportional to the edges of that ball. Where the ball is the whole
// graph, it costs the whole graph: APPNP's K = 10 propagation steps, and
// FMP's K on top of the backbone's hops, reach most nodes of a
// small-world graph (see Scores.Field), and Recompute always does.
package score

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/fmp/modelio"
	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/features"
	"github.com/fairmp/fairmp/layers"
)

// Semantics says what FMP means for the nodes scored (see the package
// documentation).
type Semantics int

const (
	// Fitted applies the duals recorded on the training graph.
	Fitted Semantics = iota
	// Recompute runs FMP again over the whole graph given.
	Recompute
)

// String returns "fitted" or "recompute".
func (s Semantics) String() string {
	switch s {
	case Fitted:
		return "fitted"
	case Recompute:
		return "recompute"
	}
	return fmt.Sprintf("Semantics(%d)", int(s))
}

// ParseSemantics parses "fitted" or "recompute".
func ParseSemantics(name string) (Semantics, error) {
	for _, s := range []Semantics{Fitted, Recompute} {
		if name == s.String() {
			return s, nil
		}
	}
	return 0, fmt.Errorf("score: FMP semantics %q, want fitted or recompute", name)
}

// Config configures Open.
type Config struct {
	// FMP is what FMP means for the nodes scored, for an fmp model file.
	// Default Fitted.
	FMP Semantics
	// TrustedKeys, if not empty, makes Open accept only model files
	// signed by one of them (modelio.ErrSignature otherwise).
	TrustedKeys []ed25519.PublicKey
}

// DefaultConfig returns Fitted and no trusted keys.
func DefaultConfig() Config { return Config{FMP: Fitted} }

// Validate checks the semantics.
func (c Config) Validate() error {
	if c.FMP != Fitted && c.FMP != Recompute {
		return fmt.Errorf("score: Config.FMP = %v, want Fitted or Recompute", c.FMP)
	}
	return nil
}

// ErrNotFitted is returned by Open for an fmp model file without fitted
// duals under Fitted semantics: a file written before saving an fmp model
// required them (modelio.Save now refuses one, fmp.ErrNotRecorded).
// Record the duals (fmp.Model.Record) and save it again, or score with
// Recompute.
var ErrNotFitted = errors.New("score: the fmp model file records no fitted duals")

// Scorer scores nodes with one model file. It is immutable and safe for
// concurrent use.
type Scorer struct {
	cfg    Config
	header *modelio.Header
	kind   string
	net    layers.BlockModel
	in     int
	out    int
	hops   int // the backbone's
	prop   *layers.Propagation
	on     *fmp.OnConfig // nil without FMP
	fitted *fmp.Recorded
}

// Open reads and verifies a model file (modelio.Read: checksum, with
// trusted keys the signature, the configuration against the parameters)
// and prepares its backbone. It returns an error for a file modelio
// refuses, a kind that is not declared in a Flow's primitives
// (layers.BlockModel), a wrapper other than fmp's, and ErrNotFitted.
func Open(r io.Reader, cfg Config) (*Scorer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	f, err := modelio.Read(r, cfg.TrustedKeys...)
	if err != nil {
		return nil, fmt.Errorf("score: %w", err)
	}
	s := &Scorer{cfg: cfg, header: f.Header, kind: f.Kind.Name(), in: layers.BaseOf(f.Config).In, out: layers.BaseOf(f.Config).Out}
	one, err := graph.FromEdges(1, nil)
	if err != nil {
		return nil, err
	}
	m, err := f.Backbone(G.NewGraph(), one, nil)
	if err != nil {
		return nil, fmt.Errorf("score: %w", err)
	}
	net, ok := m.(layers.BlockModel)
	if !ok {
		return nil, fmt.Errorf("score: the %s kind has no Compute (layers.BlockModel): it cannot be run outside its gorgonia graph", s.kind)
	}
	s.net = net
	if s.hops, err = layers.Hops(net); err != nil {
		return nil, fmt.Errorf("score: %w", err)
	}
	p, ok, err := f.Kind.Propagation(f.Config)
	if err != nil {
		return nil, fmt.Errorf("score: the %s model: %w", s.kind, err)
	}
	if s.hops > 0 && !ok {
		return nil, fmt.Errorf("score: the %s kind propagates (%d hops) but declares no Propagation (layers.KindSpec.Propagation)", s.kind, s.hops)
	}
	if ok {
		s.prop = &p
	}
	if f.Wrapper != nil {
		if f.Wrapper.Name() != "fmp" {
			return nil, fmt.Errorf("score: a %s model on a %s backbone: only fmp's wrapper is known here", f.Wrapper.Name(), s.kind)
		}
		var saved fmp.Saved
		if err := json.Unmarshal(f.WrapperConfig, &saved); err != nil {
			return nil, fmt.Errorf("score: the fmp model's configuration: %w", err)
		}
		s.on, s.fitted = &saved.OnConfig, saved.Recorded
		if cfg.FMP == Fitted && s.fitted == nil {
			return nil, fmt.Errorf("%w: call fmp.Model.Record on the trained model before saving it (debias does), or score with Recompute (the whole graph's cost)", ErrNotFitted)
		}
	}
	return s, nil
}

// Header returns the file's header: kind, dtype, feature schema, drift
// baseline. Do not modify it.
func (s *Scorer) Header() *modelio.Header { return s.header }

// In returns the number of feature columns the model takes.
func (s *Scorer) In() int { return s.in }

// Classes returns the width of the model's output.
func (s *Scorer) Classes() int { return s.out }

// FMP reports whether the model is an fmp model.
func (s *Scorer) FMP() bool { return s.on != nil }

// Hops returns the radius of the receptive field Score computes on: the
// backbone's hops, plus FMP's K under Fitted when FMP propagates (λs > 0;
// with λs = 0 its steps are node-wise once the duals are fixed), or −1
// under Recompute for an fmp model (the whole graph).
func (s *Scorer) Hops() int {
	switch {
	case s.on == nil:
		return s.hops
	case s.cfg.FMP == Recompute:
		return -1
	case s.on.FMP.Gamma() == 1:
		return s.hops
	}
	return s.hops + s.on.FMP.K
}

// Scores are the probabilities of the nodes scored.
type Scores struct {
	// Nodes are the nodes scored, in the order asked for.
	Nodes []int
	// Probs holds their class probabilities, len(Nodes) × Classes,
	// row-major.
	Probs   []float64
	Classes int
	// Field is the number of nodes Score computed on: the receptive
	// field of Nodes (the whole graph under Recompute).
	Field int
}

// Score returns the probabilities of nodes on the graph g, whose nodes
// have the features x (g.N() rows of the model's columns, scaled as the
// model was trained: datasets.FilesConfig.Schema loads them so) and the
// groups sens (g.N() entries, −1 unknown; read by FMP alone). It returns
// an error for sizes that do not match, nodes out of range or repeated,
// and a group FMP's fit did not see. Cancelling ctx stops it before its
// next stage (the backbone, FMP) with an error wrapping ctx.Err().
func (s *Scorer) Score(ctx context.Context, g *graph.Graph, x features.Source, sens []int, nodes []int) (*Scores, error) {
	if err := s.check(g, x, sens, "Score"); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("score: Score: %w", err)
	}
	n := g.N()
	if len(nodes) == 0 {
		return nil, fmt.Errorf("score: Score: no nodes to score")
	}
	seen := make(map[int]int, len(nodes))
	for k, i := range nodes {
		if i < 0 || i >= n {
			return nil, fmt.Errorf("score: Score: nodes[%d] = %d, want a node of the graph, 0..%d", k, i, n-1)
		}
		if j, ok := seen[i]; ok {
			return nil, fmt.Errorf("score: Score: nodes[%d] = %d repeats nodes[%d]", k, i, j)
		}
		seen[i] = k
	}
	var ball []int
	if h := s.Hops(); h < 0 {
		ball = make([]int, n)
		for i := range ball {
			ball[i] = i
		}
	} else {
		var err error
		if ball, err = g.Ball(nodes, h); err != nil {
			return nil, fmt.Errorf("score: Score: %w", err)
		}
	}
	z, fa, err := s.backbone(g, x, nil, ball)
	if err != nil {
		return nil, fmt.Errorf("score: Score: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("score: Score: after the backbone: %w", err)
	}
	if s.on != nil {
		sb := make([]int, len(ball))
		for r, i := range ball {
			sb[r] = sens[i]
		}
		if s.cfg.FMP == Fitted {
			z, err = s.fitted.Apply(fa, sb, z)
		} else {
			var l *fmp.Layer
			if l, err = fmp.New(fa, sb, s.on.FMP); err == nil {
				z, err = l.Apply(z)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("score: Score: FMP: %w", err)
		}
	}
	p := softmaxAll(z)
	c := z.Shape()[1]
	pos := make(map[int]int, len(nodes))
	for r, i := range ball {
		if _, ok := seen[i]; ok {
			pos[i] = r
		}
	}
	out := &Scores{Nodes: append([]int(nil), nodes...), Probs: make([]float64, 0, len(nodes)*c), Classes: c, Field: len(ball)}
	for _, i := range nodes {
		r := pos[i]
		out.Probs = append(out.Probs, p[r*c:(r+1)*c]...)
	}
	return out, nil
}

// check checks a graph, its features and groups against the model.
func (s *Scorer) check(g *graph.Graph, x features.Source, sens []int, fn string) error {
	if g == nil || x == nil {
		return fmt.Errorf("score: %s: nil graph or features", fn)
	}
	n := g.N()
	if x.Rows() != n || x.Cols() != s.in {
		return fmt.Errorf("score: %s: features of %d × %d for a graph of %d nodes, want %d × %d (the model's columns)", fn, x.Rows(), x.Cols(), n, n, s.in)
	}
	if s.on != nil && len(sens) != n {
		return fmt.Errorf("score: %s: %d groups for a graph of %d nodes, want one per node (−1: unknown)", fn, len(sens), n)
	}
	return nil
}

// backbone returns the backbone's logits of nodes (nil: every node of
// ball, in ball's order), computed on ball (ascending; it must hold the
// nodes' receptive field), and, for an fmp model, FMP's matrix on ball.
func (s *Scorer) backbone(g *graph.Graph, x features.Source, nodes, ball []int) (*tensor.Dense, *graph.Matrix, error) {
	whole := len(ball) == g.N()
	matrix := func(p layers.Propagation) (*graph.Matrix, error) {
		if whole {
			return p.Matrix(g)
		}
		return p.MatrixOf(g, ball)
	}
	xb, err := gatherRows(x, ball, s.header.Dtype)
	if err != nil {
		return nil, nil, err
	}
	var adj *graph.Matrix
	if s.prop != nil && s.hops > 0 {
		if adj, err = matrix(*s.prop); err != nil {
			return nil, nil, err
		}
	}
	z, err := layers.LayerwiseLogits(s.net, adj, xb)
	if err != nil {
		return nil, nil, err
	}
	var fa *graph.Matrix
	if s.on != nil && nodes == nil {
		if fa, err = matrix(s.on.Propagation); err != nil {
			return nil, nil, err
		}
	}
	if nodes == nil {
		return z, fa, nil
	}
	c := z.Shape()[1]
	zs := toF64(z)
	pos := make(map[int]int, len(ball))
	for r, i := range ball {
		pos[i] = r
	}
	out := make([]float64, 0, len(nodes)*c)
	for _, i := range nodes {
		r, ok := pos[i]
		if !ok {
			return nil, nil, fmt.Errorf("node %d is not in the ball it is computed on", i)
		}
		out = append(out, zs[r*c:(r+1)*c]...)
	}
	return tensor.New(tensor.WithShape(len(nodes), c), tensor.WithBacking(out)), nil, nil
}

// gatherRows returns the rows of x in a Source of their own (float64 for
// a float64 model, so that no value is rounded).
func gatherRows(x features.Source, rows []int, dt tensor.Dtype) (features.Source, error) {
	d := x.Cols()
	v := make([]float64, len(rows)*d)
	var err error
	if dt == tensor.Float32 {
		tmp := make([]float32, len(v))
		if err = features.Gather(x, rows, tmp); err == nil {
			for i, f := range tmp {
				v[i] = float64(f)
			}
		}
	} else {
		err = features.Gather(x, rows, v)
	}
	if err != nil {
		return nil, fmt.Errorf("score: Score: the features: %w", err)
	}
	return features.NewDense(v, len(rows), d)
}
