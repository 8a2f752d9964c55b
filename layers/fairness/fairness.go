// Package fairness is the one registry of fairmp's fairness methods and
// the contract of each stage a method can act at. A method's stage is
// the interface it implements, and the package that holds it says so:
//
//	stage          interface       library methods, in
//	pre            [Pre]           layers/preprocess (EDITS)
//	in-training    [Loss]          layers/fairtrain (regularizer, adversary, mixup, REDRESS)
//	architecture   [Architecture]  layers/fairtrain (FairGNN, NIFTY, FairVGNN, RawlsGCN), fmp (FMP)
//	post           [Post]          layers/postprocess (thresholds, class offsets)
//
// Each of those packages registers its methods once, with [MustRegister],
// in a package-level variable, as model kinds are declared to package
// layers: importing a package registers its methods. A method of the
// user's own, of any stage, is one type implementing its stage's
// interface and one MustRegister line; [Lookup], [Methods] and [Names]
// then list it with the library's, and [Fit] trains it.
//
// Which entry point:
//
//	list the methods (a command's -h)       Names, Methods
//	a method by name (a command's -method)  Lookup, then StageOf
//	train a backbone with a method          Fit (Loss and Architecture; nil: plain)
//
// Every entry point that trains takes a context.Context first:
// cancelling it stops the work with an error wrapping ctx.Err().
//
//	debias a graph before training          Pre.Debias
//	post-process a trained model's scores   Post.Post, then Decider.Decide
package fairness

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/train"
)

// Stage is where in the pipeline a method acts.
type Stage int

const (
	// StagePre methods debias the graph and the features before any
	// training ([Pre]).
	StagePre Stage = iota
	// StageLoss methods add a term to the training of an unchanged
	// backbone ([Loss]).
	StageLoss
	// StageArchitecture methods train a model of their own on the
	// backbone ([Architecture]).
	StageArchitecture
	// StagePost methods change a trained model's decisions from its
	// scores ([Post]).
	StagePost
)

// String returns the stage's name in listings: "pre", "in-training",
// "architecture", "post".
func (s Stage) String() string {
	switch s {
	case StagePre:
		return "pre"
	case StageLoss:
		return "in-training"
	case StageArchitecture:
		return "architecture"
	case StagePost:
		return "post"
	}
	return fmt.Sprintf("Stage(%d)", int(s))
}

// Method is what every fairness method has, whatever its stage. A method
// is its configuration: a plain struct value with a Default constructor,
// as model configurations are.
type Method interface {
	// Name is the method's short name, as Lookup and the commands take
	// it: lower-case letters, digits, '-' and '_'.
	Name() string
	// Validate checks every field of the configuration.
	Validate() error
}

// Seeded is a method that draws at random (initialisation of its own
// parts, samples, views): WithSeed returns a copy seeded by seed.
type Seeded interface {
	WithSeed(seed int64) Method
}

// Weighted is a method with one fairness weight the commands set
// (-method-weight): the regulariser's α, FairGNN's adversary weight β,
// NIFTY's similarity coefficient λ.
type Weighted interface {
	Weight() float64
	WithWeight(w float64) Method
}

// WithSeed returns m seeded by seed when it draws at random ([Seeded]),
// and m itself otherwise.
func WithSeed(m Method, seed int64) Method {
	if s, ok := m.(Seeded); ok {
		return s.WithSeed(seed)
	}
	return m
}

// Pre is a pre-processing method: it debiases a graph and its features
// before any model is trained on them.
type Pre interface {
	Method
	// Debias returns a debiased copy of the graph g and of the n × d
	// row-major feature matrix x, given each node's sensitive group
	// (sens, −1 unknown). It never modifies its inputs.
	// Cancelling ctx stops a method that learns (EDITS) with an error
	// wrapping ctx.Err().
	Debias(ctx context.Context, g *graph.Graph, x []float64, d int, sens []int) (*Debiased, error)
}

// Debiased is what a pre-processing method returns: a new graph and a new
// feature matrix of the same shape (same nodes, same columns, so that a
// model's input width and the data set's column names still hold), and
// what changed.
type Debiased struct {
	// Graph is the debiased graph on the same nodes.
	Graph *graph.Graph
	// Features is the debiased n × d feature matrix, row-major.
	Features []float64
	// Added and Removed count the undirected edges added to and removed
	// from the input graph.
	Added, Removed int
	// Masked lists the feature columns set to zero, ascending.
	Masked []int
	// Weights is, for EDITS, the learned weight of each feature column
	// (in [0, 1]; the smallest are Masked); nil for a method without.
	Weights []float64
	// Trace is, for EDITS, the critic's distance D between the groups
	// after each epoch (up to the clip bound, the Wasserstein distance
	// EDITS minimises), to see the debiasing converge; nil for a method
	// without.
	Trace []float64
}

// Loss is an in-training method: it adds a term to the loss (and, for an
// adversary, a step of its own after each update) of an unchanged
// backbone. Its model is the backbone, of a declared kind, which model
// files save. Package layers/minibatch trains the methods that also
// implement its BatchMethod.
type Loss interface {
	Method
	// Apply returns a copy of tc that trains with the method on task,
	// with each node's sensitive group sens (−1 unknown).
	Apply(tc train.Config, task *train.Task, sens []int) (train.Config, error)
}

// Architecture is a method that trains a model of its own on the
// backbone: an encoder with parts only training uses (FairGNN, NIFTY,
// FairVGNN), a backbone on another propagation matrix (RawlsGCN), or a
// layer on top (FMP).
type Architecture interface {
	Method
	// Fit builds the method's model on the backbone configuration (any
	// declared kind) in s.Task's graph with s.Task's phase, and trains
	// it with tc (epochs, optimiser, selection). It validates the
	// method's configuration first. Cancelling ctx stops the training
	// with an error wrapping ctx.Err().
	Fit(ctx context.Context, backbone layers.Config, s Setup, tc train.Config) (*Fitted, error)
}

// Post is a post-processing method: from a trained model's scores on the
// validation nodes it fits a rule that decides every node's class.
type Post interface {
	Method
	// Post fits the rule on s.
	Post(s Scores) (Decider, error)
}

// Scores is what a [Post] method fits on.
type Scores struct {
	// Probs is the n × Classes row-major matrix of predicted class
	// probabilities.
	Probs   []float64
	Classes int
	// Labels and Sens are each node's class and group (−1 unknown).
	Labels, Sens []int
	// Val lists the nodes the rule is fitted on.
	Val []int
}

// Decider is a fitted post-processing rule.
type Decider interface {
	// Decide returns each node's class from its n × c probabilities
	// and its group; a randomised rule draws from seed (the same seed,
	// the same decisions).
	Decide(probs []float64, sens []int, seed int64) ([]int, error)
}

// Setup is what Fit needs besides the method, the backbone and the
// trainer's configuration.
type Setup struct {
	// Graph is the data graph the backbone propagates over (nil for a
	// backbone that does not propagate; FairGNN's estimator and NIFTY's
	// edge-dropped views need it).
	Graph *graph.Graph
	// Task is the training problem; the model is built in Task.Graph
	// with Task.Phase.
	Task *train.Task
	// Sens holds each node's group (0, 1, ...; −1 unknown). FairGNN
	// trains its estimator on the known nodes and uses its estimates
	// for the others.
	Sens []int
	// SensFeature is the column of the features that holds the
	// sensitive attribute (0/1), which NIFTY's counterfactual view
	// flips; −1 when the features do not hold it (the FMP paper's
	// protocol: then the counterfactual view flips nothing, and NIFTY
	// trains for stability alone).
	SensFeature int
}

// NewSetup returns a Setup without a sensitive feature column
// (SensFeature −1).
func NewSetup(gr *graph.Graph, task *train.Task, sens []int) Setup {
	return Setup{Graph: gr, Task: task, Sens: sens, SensFeature: -1}
}

// Fitted is a model trained by Fit.
type Fitted struct {
	// Model is the trained model: the backbone itself for a Loss method
	// and RawlsGCN, the method's own model otherwise (FairGNN's and
	// NIFTY's encoder, FairVGNN's masked encoder, FMP's model).
	Model layers.Model
	// Result is train.Fit's report.
	Result *train.Result
	// SensScore is, for FairGNN, the score each node's group entered the
	// covariance and the adversary with: the group where it is known,
	// the estimator's P(s = 1) (or its rounding, HardEstimates)
	// elsewhere. nil for the other methods.
	SensScore []float64
}

// Fit trains a model on the backbone configuration (any declared kind)
// with m, for one train.Fit call with tc. A nil m trains the plain
// backbone; a [Loss] method trains the backbone with its terms
// (Loss.Apply); an [Architecture] method trains its own model
// (Architecture.Fit). Fit refuses a method of another stage, and returns
// the errors of m's Validate, of building the model and of training.
//
// Cancelling ctx stops the training with an error wrapping ctx.Err().
func Fit(ctx context.Context, m Method, backbone layers.Config, s Setup, tc train.Config) (*Fitted, error) {
	if s.Task == nil {
		return nil, fmt.Errorf("fairness: Fit: nil Setup.Task")
	}
	if backbone == nil {
		return nil, fmt.Errorf("fairness: Fit: nil backbone configuration")
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("fairness: Fit: %w", err)
	}
	if a, ok := m.(Architecture); ok {
		return a.Fit(ctx, backbone, s, tc) // which validates a
	}
	if m != nil {
		if err := m.Validate(); err != nil {
			return nil, fmt.Errorf("fairness: %s: %w", m.Name(), err)
		}
	}
	model, err := layers.Build(s.Task.Graph, s.Graph, backbone, s.Task.Phase)
	if err != nil {
		return nil, fmt.Errorf("fairness: Fit: %w", err)
	}
	if m != nil {
		l, ok := m.(Loss)
		if !ok {
			st, _ := StageOf(m)
			return nil, fmt.Errorf("fairness: Fit: %s is a %s method: Fit trains in-training and architecture methods (a pre-processing method's Debias runs before, a post-processing method's Post after)", m.Name(), st)
		}
		if tc, err = l.Apply(tc, s.Task, s.Sens); err != nil {
			return nil, err
		}
	}
	res, err := train.Fit(ctx, model, s.Task, tc)
	if err != nil {
		return nil, err
	}
	return &Fitted{Model: model, Result: res}, nil
}

// ErrUnknownMethod is wrapped by Lookup's error for a name no registered
// method has.
var ErrUnknownMethod = errors.New("fairness: unknown method")

// StageOf returns the stage of m: the one stage interface it implements.
// It returns an error for a method that implements none, or more than
// one.
func StageOf(m Method) (Stage, error) {
	var found []Stage
	if _, ok := m.(Pre); ok {
		found = append(found, StagePre)
	}
	if _, ok := m.(Loss); ok {
		found = append(found, StageLoss)
	}
	if _, ok := m.(Architecture); ok {
		found = append(found, StageArchitecture)
	}
	if _, ok := m.(Post); ok {
		found = append(found, StagePost)
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return 0, fmt.Errorf("fairness: %s (%T) implements no stage's interface: want one of Pre (Debias), Loss (Apply), Architecture (Fit) or Post (Post)", m.Name(), m)
	}
	names := make([]string, len(found))
	for i, s := range found {
		names[i] = s.String()
	}
	return 0, fmt.Errorf("fairness: %s (%T) implements the interfaces of %d stages (%s), want one", m.Name(), m, len(found), strings.Join(names, ", "))
}

var registry struct {
	sync.RWMutex
	list []entry
}

type entry struct {
	m     Method
	stage Stage
}

// Register adds m (a method at its defaults) to the registry. It returns
// an error for a nil method, an invalid name, a method of no stage or of
// several, a configuration whose Validate fails, or a name already
// registered. It is safe for concurrent use; register a method once, in a
// package-level variable (see MustRegister).
func Register(m Method) error {
	if m == nil {
		return fmt.Errorf("fairness: Register: nil method")
	}
	name := m.Name()
	if !validName(name) {
		return fmt.Errorf("fairness: Register: method name %q, want lower-case letters, digits, '-' and '_'", name)
	}
	st, err := StageOf(m)
	if err != nil {
		return err
	}
	if err := m.Validate(); err != nil {
		return fmt.Errorf("fairness: Register %s: its defaults do not validate: %w", name, err)
	}
	registry.Lock()
	defer registry.Unlock()
	for _, e := range registry.list {
		if e.m.Name() == name {
			return fmt.Errorf("fairness: Register: method %q is already registered (a %T)", name, e.m)
		}
	}
	registry.list = append(registry.list, entry{m: m, stage: st})
	return nil
}

// MustRegister registers each method and panics where Register returns
// an error: it is for package-level variables, where an error is a
// programming error found by the first test. It returns true so that it
// can initialise a variable (var _ = fairness.MustRegister(...)).
func MustRegister(ms ...Method) bool {
	for _, m := range ms {
		if err := Register(m); err != nil {
			panic(err)
		}
	}
	return true
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// Methods returns the registered methods of the given stages (every
// stage when none is given) at their defaults, ordered by stage (pre,
// in-training, architecture, post) and, within a stage, in the order
// they were registered.
func Methods(stages ...Stage) []Method {
	registry.RLock()
	defer registry.RUnlock()
	var out []entry
	for _, e := range registry.list {
		if len(stages) == 0 || contains(stages, e.stage) {
			out = append(out, e)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].stage < out[j].stage })
	ms := make([]Method, len(out))
	for i, e := range out {
		ms[i] = e.m
	}
	return ms
}

// Names returns the names of Methods(stages...), in its order.
func Names(stages ...Stage) []string {
	ms := Methods(stages...)
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Name()
	}
	return out
}

func contains(stages []Stage, s Stage) bool {
	for _, t := range stages {
		if t == s {
			return true
		}
	}
	return false
}

// Lookup returns the registered method named name at its defaults, or an
// error wrapping ErrUnknownMethod that lists the names. The library's
// methods are registered by the packages that hold them (see the package
// documentation): a program that looks one up imports its package.
func Lookup(name string) (Method, error) {
	for _, m := range Methods() {
		if m.Name() == name {
			return m, nil
		}
	}
	return nil, fmt.Errorf("%w %q, want one of %s", ErrUnknownMethod, name, strings.Join(Names(), ", "))
}
