package fmpbeam

import (
	"fmt"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/fmp"
)

// Job is the whole job of the command: a model file and sharded data in,
// predictions and metrics out. Build lays its pipeline out: the
// propagation matrix, the model's logits layer by layer, FMP for one
// setting or a frontier's grid, the metrics and the rule's choice, the
// predictions. A job can also run stage by stage, one pipeline each,
// keeping each stage's blocks in Work.
type Job struct {
	// Nodes and Edges are globs of the node and edge files.
	Nodes, Edges string
	// Features is a feature file of package graph/features, or
	// FeatureRows a glob of feature rows; with Model.
	Features, FeatureRows string
	// Model is the model file (fmp/modelio's format). Without it,
	// Logits is a glob of logits rows computed elsewhere.
	Model  string
	Logits string
	// Out is the output folder: predictions-*.txt, metrics.json,
	// duals.json.
	Out string
	// Layout cuts the nodes into blocks.
	Layout Layout
	// Shards is the number of prediction files.
	Shards int
	// On is FMP's base setting and the propagation its matrix is built
	// with (an fmp model file's, or fmp.DefaultOnConfig); Frontier, if
	// not nil, the grid and the rule chosen by on the validation nodes
	// (nil: On.FMP alone).
	On       fmp.OnConfig
	Frontier *fmp.FrontierConfig
	// Stage is "" for the whole job in one pipeline, or one of Stages, run
	// alone with Work holding the stages' blocks.
	Stage string
	Work  string
	// SameGraph makes the job refuse node and edge files whose node or
	// edge count differs from the graph the model was saved for (as
	// modelio.Env.SameGraph), and a graph model's file that records no
	// graph (an MLP's records none and is accepted). Without it a model
	// scores any graph whose nodes have its features: a grown graph,
	// another region's.
	SameGraph bool
}

// Stages are the stages of a job run stage by stage, in order.
var Stages = []string{"graph", "infer", "fmp", "evaluate"}

// Validate checks the job's settings against the model (nil without
// one).
func (j *Job) Validate(m *Model) error {
	switch {
	case j.Nodes == "" || j.Edges == "":
		return fmt.Errorf("fmpbeam: the job needs the node files and the edge files")
	case j.Out == "":
		return fmt.Errorf("fmpbeam: the job needs an output folder")
	case j.Shards < 1:
		return fmt.Errorf("fmpbeam: %d prediction shards, want ≥ 1", j.Shards)
	}
	if err := j.Layout.Validate(); err != nil {
		return err
	}
	if m == nil && j.Logits == "" {
		return fmt.Errorf("fmpbeam: the job needs a model file (with features) or logits rows")
	}
	if m != nil && j.Logits != "" {
		return fmt.Errorf("fmpbeam: the job takes a model file or logits rows, not both")
	}
	if m != nil && (j.Features == "") == (j.FeatureRows == "") {
		return fmt.Errorf("fmpbeam: a model needs its features: a feature file or feature rows (one of them)")
	}
	if j.SameGraph && m != nil && m.Graph == nil {
		// (As modelio.Env.SameGraph: a file records the graph of every
		// model built on one; an MLP backbone's file records none, and
		// any graph's nodes are its input.)
		if _, graphModel := m.Norm(); graphModel || m.On != nil {
			what := "the " + m.Kind + " model"
			if m.On != nil {
				what = "the fmp model (on a " + m.Kind + " backbone)"
			}
			return fmt.Errorf("fmpbeam: %s is built on a graph, but its file records no graph (no fingerprint: an older or edited file), so the node and edge files cannot be checked to be the graph it was saved for (the same graph was asked for: -same-graph, Job.SameGraph)", what)
		}
	}
	if !j.On.Propagation.Normalize {
		return fmt.Errorf("fmpbeam: FMP's propagation must be normalised (Normalize): FMP's step sizes assume Ã = D̂^-½(A + wI)D̂^-½")
	}
	if err := j.On.Propagation.Validate(); err != nil {
		return fmt.Errorf("fmpbeam: FMP's %w", err)
	}
	if j.On.Propagation.DoublyStochastic {
		return fmt.Errorf("fmpbeam: FMP's propagation must not be doubly stochastic (DoublyStochastic): FMP's step sizes assume Ã = D̂^-½(A + wI)D̂^-½")
	}
	if j.Stage != "" {
		ok := false
		for _, s := range Stages {
			ok = ok || s == j.Stage
		}
		if !ok {
			return fmt.Errorf("fmpbeam: stage %q, want one of %s", j.Stage, strings.Join(Stages, ", "))
		}
		if j.Work == "" {
			return fmt.Errorf("fmpbeam: a job run stage by stage needs a work folder")
		}
	}
	_, err := NewPlan(j.On.FMP, j.Frontier)
	return err
}

// mergeStatsFn completes the node statistics with the edges', and checks
// them against the model file's graph.
type mergeStatsFn struct {
	Nodes, Edges int64 // the model's graph, with Job.SameGraph (0: any graph)
}

// ProcessElement takes the edges' statistics as an iterable: they are
// missing only when the stage that builds the matrix failed, and that
// stage's error is the job's. Prism, after a failed bundle, may still run
// this one on the empty output; failing here too would let a message
// about a missing side input race the real one to be the job's error.
func (f *mergeStatsFn) ProcessElement(st Stats, edges func(*Stats) bool, emit func(Stats)) error {
	var e Stats
	if !edges(&e) {
		return nil // the matrix stage failed: its error is reported
	}
	st.Edges, st.SelfLoops, st.Duplicates, st.Isolated = e.Edges, e.SelfLoops, e.Duplicates, e.Isolated
	if f.Nodes > 0 && (st.Nodes != f.Nodes || st.Edges != f.Edges) {
		return fmt.Errorf("fmpbeam: the model was saved for a graph of %d nodes and %d edges; the node and edge files hold %d nodes and %d edges (the same graph was asked for: -same-graph, Job.SameGraph)", f.Nodes, f.Edges, st.Nodes, st.Edges)
	}
	emit(st)
	return nil
}

// Build lays the job's pipeline (or its stage's) out in s, for the model
// m (nil with Logits). Call Validate first.
func (j *Job) Build(s beam.Scope, m *Model) error {
	if err := j.Validate(m); err != nil {
		return err
	}
	plan, err := NewPlan(j.On.FMP, j.Frontier)
	if err != nil {
		return err
	}
	lay := j.Layout
	work := func(name string) string { return strings.TrimSuffix(j.Work, "/") + "/" + name }
	out := func(name string) string { return strings.TrimSuffix(j.Out, "/") + "/" + name }
	fmpNorm := NormOf(j.On.Propagation)
	var modelNorm Norm
	graphModel := false
	if m != nil {
		modelNorm, graphModel = m.Norm()
	}
	norms := []Norm{fmpNorm}
	if graphModel && modelNorm != fmpNorm {
		norms = append(norms, modelNorm)
	}
	adjName := func(n Norm) string {
		if n == fmpNorm {
			return "adj-fmp"
		}
		return "adj-model"
	}
	all := j.Stage == ""
	var nodes, stats beam.PCollection
	adj := map[Norm]beam.PCollection{}
	if all || j.Stage == "graph" {
		nodes = ReadNodes(s, lay, j.Nodes)
		nstats := NodeStats(s, lay, nodes)
		edges := ReadEdges(s, lay, j.Edges)
		var estats beam.PCollection
		for k, n := range norms {
			var est beam.PCollection
			adj[n], est = BuildMatrix(s, lay, n, nodes, edges, nstats)
			if k == 0 {
				estats = est
			}
		}
		check := &mergeStatsFn{}
		if m != nil && m.Graph != nil && j.SameGraph {
			check.Nodes, check.Edges = int64(m.Graph.Nodes), int64(m.Graph.Edges)
		}
		stats = beam.ParDo(s, check, nstats, beam.SideInput{Input: estats})
		if !all {
			WriteBlocks(s, work("nodes"), "nodes", nodes)
			for _, n := range norms {
				WriteBlocks(s, work(adjName(n)), "adj", adj[n])
			}
			WriteStats(s, work("stats.json"), stats)
			return nil
		}
	} else {
		nodes = ReadBlocks(s, work("nodes-*.blk"), "nodes")
		stats = ReadStats(s, work("stats.json"))
		need := map[string][]Norm{"infer": {modelNorm}, "fmp": {fmpNorm}}[j.Stage]
		for _, n := range need {
			if j.Stage == "infer" && !graphModel {
				continue
			}
			adj[n] = ReadBlocks(s, work(adjName(n)+"-*.blk"), "adj")
		}
	}

	var z beam.PCollection
	switch {
	case all || j.Stage == "infer":
		if m == nil {
			z = ReadRows(s, lay, j.Logits, "logits", nodes)
		} else {
			var x beam.PCollection
			if j.Features != "" {
				x = ReadFeatureFile(s, lay, j.Features, stats)
			} else {
				x = ReadRows(s, lay, j.FeatureRows, "features", nodes)
			}
			var a beam.PCollection
			if graphModel {
				a = adj[modelNorm]
			}
			if z, err = Infer(s, lay, m, ReadModel(s, j.Model), a, x); err != nil {
				return err
			}
		}
		if !all {
			WriteBlocks(s, work("logits"), "rows", z)
			return nil
		}
	default:
		z = ReadBlocks(s, work("logits-*.blk"), "rows")
	}

	var fout beam.PCollection
	switch {
	case all || j.Stage == "fmp":
		var duals beam.PCollection
		o := DefaultFMPOptions()
		// A float32 model's logits carry float32 precision: its products
		// travel as float32 too (FMPOptions.Float32Products).
		o.Float32Products = m != nil && m.Dtype() == tensor.Float32
		fout, duals = FMPWith(s, lay, o, plan.Settings, adj[fmpNorm], nodes, z, stats)
		WriteDuals(s, out("duals.json"), plan.Settings, duals)
		if !all {
			WriteBlocks(s, work("fmp"), "rows", fout)
			return nil
		}
	default:
		fout = ReadBlocks(s, work("fmp-*.blk"), "rows")
	}

	result := Evaluate(s, plan, nodes, z, fout)
	desc := "logits rows " + j.Logits
	if m != nil {
		desc = fmt.Sprintf("%s (%s, %d → %d)", j.Model, m.Kind, m.In(), m.Classes())
	}
	WriteReport(s, out("metrics.json"), desc, result, stats)
	WritePredictions(s, j.Out, j.Shards, len(plan.Settings), fout, result)
	return nil
}

// OutFiles returns the names of the files the job (or its stage) writes
// in Out: with the whole job or the evaluate stage the prediction shards
// and metrics.json, with the whole job or the fmp stage duals.json; the
// other stages write none there.
func (j *Job) OutFiles() []string {
	var names []string
	if j.Stage == "" || j.Stage == "fmp" {
		names = append(names, "duals.json")
	}
	if j.Stage == "" || j.Stage == "evaluate" {
		names = append(names, "metrics.json")
		for k := 0; k < j.Shards; k++ {
			names = append(names, shardName("predictions", k, j.Shards, ".txt"))
		}
	}
	return names
}

// OutKind reports whether a file name in Out is of a kind the job (or
// its stage) writes there, whatever run wrote it: the prediction shards
// (any count), metrics.json, duals.json, as OutFiles.
func (j *Job) OutKind(name string) bool {
	preds := strings.HasPrefix(name, "predictions-") && strings.HasSuffix(name, ".txt")
	return (j.Stage == "" || j.Stage == "fmp") && name == "duals.json" ||
		(j.Stage == "" || j.Stage == "evaluate") && (name == "metrics.json" || preds)
}

// StaleWork reports whether a file name in Work is made stale by running
// the job's stage: its own blocks and every later stage's (graph: nodes-,
// adj-, stats.json, and the rest; infer: logits-, fmp-; fmp: fmp-).
func (j *Job) StaleWork(name string) bool {
	later := map[string][]string{
		"graph": {"nodes-", "adj-", "logits-", "fmp-"},
		"infer": {"logits-", "fmp-"},
		"fmp":   {"fmp-"},
	}[j.Stage]
	if j.Stage == "graph" && name == "stats.json" {
		return true
	}
	for _, p := range later {
		if strings.HasPrefix(name, p) && strings.HasSuffix(name, ".blk") {
			return true
		}
	}
	return false
}

// CounterStage returns the stage a byte counter of a job belongs to.
func CounterStage(name string) string {
	switch {
	case name == "read.logits", name == "read.features":
		return "infer" // the logits or feature rows the infer stage reads
	case strings.HasPrefix(name, "read."), strings.HasPrefix(name, "graph."):
		return "graph"
	case strings.HasPrefix(name, "infer."):
		return "infer"
	case strings.HasPrefix(name, "fmp."):
		return "fmp"
	}
	return "evaluate"
}

func init() {
	register.DoFn3x1[Stats, func(*Stats) bool, func(Stats), error](&mergeStatsFn{})
	register.Iter1[Stats]()
}
