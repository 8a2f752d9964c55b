package train

import (
	"fmt"
	"math"
	"reflect"
	"sync"

	"github.com/fairmp/fairmp/internal/blas"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/metrics"

	"github.com/fairmp/fairmp/internal/opkit"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Prediction holds class probabilities and predicted labels for a set of
// nodes.
type Prediction struct {
	// Nodes are the node ids predicted, in order.
	Nodes []int
	// Classes is the number of classes.
	Classes int
	// Probs holds the softmax of the logits, len(Nodes) × Classes,
	// row-major, computed in float64.
	Probs []float64
	// Labels holds the most probable class of each node (the lowest class
	// on ties).
	Labels []int
}

// Prob returns the probability of class c for the k-th predicted node.
func (p *Prediction) Prob(k, c int) float64 { return p.Probs[k*p.Classes+c] }

// Column returns a new slice of P(class c) for every predicted node, in
// Nodes order: for a binary task, Column(1) is the P(y = 1) that
// per-group thresholds (layers/postprocess) decide on.
func (p *Prediction) Column(c int) []float64 {
	out := make([]float64, len(p.Nodes))
	for k := range out {
		out[k] = p.Probs[k*p.Classes+c]
	}
	return out
}

// Accuracy returns the fraction of predicted nodes whose label equals
// labels[node] (labels indexed by node id). It returns NaN when no node is
// predicted.
func (p *Prediction) Accuracy(labels []int) float64 {
	if len(p.Nodes) == 0 {
		return math.NaN()
	}
	c := 0
	for k, i := range p.Nodes {
		if p.Labels[k] == labels[i] {
			c++
		}
	}
	return float64(c) / float64(len(p.Nodes))
}

// Predict evaluates model on task.X in evaluation mode (task.Phase is
// switched to evaluation and restored afterwards) and returns the
// probabilities and labels of the nodes idx, or of every node when idx is
// nil. It returns an error for an invalid task, an index out of range, or
// a failing run.
//
// Predict is for serving too: the first call for a model compiles its
// evaluation program in the task and later calls reuse it, so repeated
// calls add nothing to the graph and keep the heap flat; and it is safe
// for concurrent use, calls on one Task running one at a time (the
// program's buffers and the gorgonia graph's nodes are shared). For
// throughput from several goroutines give each its own model and Task
// (modelio.Load into a new gorgonia graph). Do not call it while Fit or a
// Trainer runs on the same model, nor on two Task values that share one
// gorgonia graph from different goroutines.
func Predict(model layers.Model, task *Task, idx []int) (*Prediction, error) {
	blas.Default() // fairmp's BLAS unless the program chose one
	if task == nil || task.X == nil {
		return nil, fmt.Errorf("train: Predict: task without X")
	}
	n, c := task.X.Shape()[0], task.Classes
	if idx == nil {
		idx = make([]int, n)
		for i := range idx {
			idx[i] = i
		}
	}
	for k, i := range idx {
		if i < 0 || i >= n {
			return nil, fmt.Errorf("train: Predict: idx[%d] = %d, want a node in [0, %d)", k, i, n)
		}
	}
	z, err := Logits(model, task)
	if err != nil {
		return nil, fmt.Errorf("train: Predict: %w", err)
	}
	p := &Prediction{Nodes: append([]int(nil), idx...), Classes: c, Probs: make([]float64, len(idx)*c), Labels: make([]int, len(idx))}
	switch s := z.Data().(type) {
	case []float64:
		softmaxRows(p, s)
	case []float32:
		softmaxRows(p, s)
	}
	return p, nil
}

// Report returns the metrics of the predicted nodes (metrics.Evaluate on
// p.Nodes), whether p holds every node or a subset: labels and sens are
// indexed by node id, as Predict's idx.
func (p *Prediction) Report(labels, sens []int, opt metrics.Options) (metrics.Report, error) {
	ls, ss := make([]int, len(p.Nodes)), make([]int, len(p.Nodes))
	idx := make([]int, len(p.Nodes))
	for k, i := range p.Nodes {
		if i < 0 || i >= len(labels) || i >= len(sens) {
			return metrics.Report{}, fmt.Errorf("train: Prediction.Report: node %d, with %d labels and %d groups: %w", i, len(labels), len(sens), metrics.ErrLength)
		}
		ls[k], ss[k], idx[k] = labels[i], sens[i], k
	}
	return metrics.Evaluate(p.Probs, p.Classes, ls, ss, idx, opt)
}

func softmaxRows[T float32 | float64](p *Prediction, z []T) {
	c := p.Classes
	for k, i := range p.Nodes {
		row := z[i*c : (i+1)*c]
		out := p.Probs[k*c : (k+1)*c]
		opkit.SoftmaxRow(row, out, 1)
		p.Labels[k] = opkit.Argmax(row)
	}
}

// Logits evaluates model on task.X in evaluation mode (task.Phase is
// switched to evaluation and restored afterwards) and returns a copy of
// its n × task.Classes logits. Like Predict, it compiles the model's
// evaluation program once per Task and is safe for concurrent use. It
// returns an error for a task without Graph or X, a model of another
// phase (ErrPhaseMismatch), an output of another shape, or a failing run.
func Logits(model layers.Model, task *Task) (*tensor.Dense, error) {
	if task == nil || task.Graph == nil || task.X == nil {
		return nil, fmt.Errorf("task without Graph or X")
	}
	if task.Classes < 1 {
		return nil, fmt.Errorf("Classes = %d, want > 0", task.Classes)
	}
	if err := checkPhase(model, task); err != nil {
		return nil, err
	}
	ev := task.evaluators()
	ev.mu.Lock()
	defer ev.mu.Unlock()
	e, cached, err := ev.get(model, task)
	if err != nil {
		return nil, err
	}
	if !cached {
		defer e.m.Close()
	}
	if task.Phase != nil {
		was := task.Phase.Training()
		task.Phase.SetTraining(false)
		defer task.Phase.SetTraining(was)
	}
	defer e.m.Reset()
	if err := e.m.RunAll(); err != nil {
		return nil, err
	}
	z, err := opkit.Dense(*e.out)
	if err != nil {
		return nil, err
	}
	return z.Clone().(*tensor.Dense), nil
}

// evaluators are a Task's compiled evaluation programs, by model.
type evaluators struct {
	mu      sync.Mutex
	byModel map[layers.Model]*evaluator
}

// evaluator is one model's evaluation program: the machine that computes
// its logits on X in graph g, and the value the machine reads them into.
type evaluator struct {
	g   *G.ExprGraph
	x   *G.Node
	out *G.Value
	m   G.VM
}

// evalsInit guards the lazy creation of a Task's evaluators.
var evalsInit sync.Mutex

func (t *Task) evaluators() *evaluators {
	evalsInit.Lock()
	defer evalsInit.Unlock()
	if t.evals == nil {
		t.evals = &evaluators{byModel: map[layers.Model]*evaluator{}}
	}
	return t.evals
}

// get returns model's program on task, compiling it on first use (or
// when the task's graph or X changed), and whether it is kept. A model
// whose type cannot be a map key gets a fresh program each call, which
// the caller closes.
func (ev *evaluators) get(model layers.Model, task *Task) (*evaluator, bool, error) {
	cache := reflect.TypeOf(model).Comparable()
	if cache {
		if e, ok := ev.byModel[model]; ok && e.g == task.Graph && e.x == task.X {
			return e, true, nil
		}
	}
	logits, err := forwardLogits(model, task)
	if err != nil {
		return nil, false, err
	}
	opkit.FollowBuffers(task.Graph) // a new forward's ops reuse buffers as the graph's do
	e := &evaluator{g: task.Graph, x: task.X, out: new(G.Value)}
	e.m = G.NewTapeMachine(task.Graph.SubgraphRoots(G.Read(logits, e.out)))
	if cache {
		if old, ok := ev.byModel[model]; ok {
			old.m.Close()
		}
		ev.byModel[model] = e
	}
	return e, cache, nil
}
