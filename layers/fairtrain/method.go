package fairtrain

import (
	"errors"
	"fmt"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/named"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/train"
)

// Method is a fairness-training method, whatever its form: a [Strategy]
// that adds a term to the training of an unchanged backbone (regulariser,
// adversary, mixup), or a method that trains an [Encoder] on the backbone
// with parts of its own ([FairGNNConfig], [NIFTYConfig]). [Fit] trains a
// model with any Method; [Lookup] gives one by name.
type Method interface {
	// Name is the method's short name, as Lookup and the commands take
	// it.
	Name() string
	// Weight is the method's fairness weight (its α; for FairGNN the
	// adversary's weight β, for NIFTY the similarity coefficient λ).
	Weight() float64
	// WithWeight returns a copy with the fairness weight set.
	WithWeight(w float64) Method
	// WithSeed returns a copy whose random choices (initialisation of
	// its own parts, samples, views) are seeded by seed; a method that
	// draws nothing returns itself.
	WithSeed(seed int64) Method
	// Validate checks every field of the configuration.
	Validate() error
}

var (
	_ Method = RegularizerConfig{}
	_ Method = AdversaryConfig{}
	_ Method = MixupConfig{}
	_ Method = FairGNNConfig{}
	_ Method = NIFTYConfig{}
)

// methods is the one list of the package's methods: Lookup, Names and
// Methods read it, and through them the commands and the lab.
func methods() []Method {
	return []Method{DefaultRegularizerConfig(), DefaultAdversaryConfig(), DefaultMixupConfig(), DefaultFairGNNConfig(), DefaultNIFTYConfig(), DefaultFairVGNNConfig(), DefaultRawlsGCNConfig(), DefaultREDRESSConfig()}
}

// Methods returns every method at its defaults, in a fixed order.
func Methods() []Method { return methods() }

// Names returns the methods' names, in Methods' order.
func Names() []string { return named.Names(methods()) }

// ErrUnknownMethod is returned by Lookup for a name no method has.
var ErrUnknownMethod = errors.New("fairtrain: unknown method")

// Lookup returns the method named name at its defaults, or an error
// wrapping ErrUnknownMethod that lists the names.
func Lookup(name string) (Method, error) { return named.Lookup(methods(), name, ErrUnknownMethod) }

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
	// Model is the trained model: the backbone itself for a Strategy, an
	// *Encoder for FairGNN and NIFTY, a *MaskedEncoder for FairVGNN
	// (whose Folded encoder is the one to save). Every one but the
	// MaskedEncoder is of a declared kind, which layers/modelio saves.
	Model layers.Model
	// Result is train.Fit's report.
	Result *train.Result
	// SensScore is, for FairGNN, the score each node's group entered the
	// covariance and the adversary with: the group where it is known,
	// the estimator's P(s = 1) (or its rounding, HardEstimates)
	// elsewhere. nil for the other methods.
	SensScore []float64
}

// Fit builds a model on the backbone configuration (any declared kind)
// in s.Task's graph with s.Task's phase, and trains it with m for one
// train.Fit call with tc (epochs, optimiser, selection). For a Strategy
// the model is the backbone itself and tc gets the strategy's terms
// (Strategy.Apply); FairGNN and NIFTY build an Encoder whose body is the
// backbone with its Out set to the method's representation width,
// and train it with their parts (see their configurations).
// RawlsGCN trains the backbone on its doubly stochastic matrix
// (RawlsGCNConfig.Backbone). A nil m trains the plain backbone.
//
// Fit returns the errors of the method's Validate and Apply, of building
// the model, and of train.Fit.
func Fit(m Method, backbone layers.Config, s Setup, tc train.Config) (*Fitted, error) {
	if s.Task == nil {
		return nil, fmt.Errorf("fairtrain: Fit: nil Setup.Task")
	}
	if backbone == nil {
		return nil, fmt.Errorf("fairtrain: Fit: nil backbone configuration")
	}
	if m != nil {
		if err := m.Validate(); err != nil {
			return nil, fmt.Errorf("fairtrain: %s: %w", m.Name(), err)
		}
	}
	switch mm := m.(type) {
	case FairGNNConfig:
		return mm.fit(backbone, s, tc)
	case NIFTYConfig:
		return mm.fit(backbone, s, tc)
	case FairVGNNConfig:
		return mm.fit(backbone, s, tc)
	case RawlsGCNConfig:
		return mm.fit(backbone, s, tc)
	}
	model, err := layers.Build(s.Task.Graph, s.Graph, backbone, s.Task.Phase)
	if err != nil {
		return nil, fmt.Errorf("fairtrain: Fit: %w", err)
	}
	if m != nil {
		st, ok := m.(Strategy)
		if !ok {
			return nil, fmt.Errorf("fairtrain: Fit: method %q (%T) is neither a Strategy nor one of the package's own", m.Name(), m)
		}
		if tc, err = st.Apply(tc, s.Task, s.Sens); err != nil {
			return nil, err
		}
	}
	res, err := train.Fit(model, s.Task, tc)
	if err != nil {
		return nil, err
	}
	return &Fitted{Model: model, Result: res}, nil
}

// bodyConfig returns backbone with Out set to width: the body of an
// Encoder.
func bodyConfig(backbone layers.Config, width int) layers.Config {
	b := layers.BaseOf(backbone)
	b.Out = width
	return layers.WithBase(backbone, b)
}

// WithWeight returns c with Alpha = w.
func (c RegularizerConfig) WithWeight(w float64) Method { c.Alpha = w; return c }

// WithSeed returns c: the regulariser draws nothing.
func (c RegularizerConfig) WithSeed(int64) Method { return c }

// WithWeight returns c with Alpha = w.
func (c AdversaryConfig) WithWeight(w float64) Method { c.Alpha = w; return c }

// WithSeed returns c with Seed = seed.
func (c AdversaryConfig) WithSeed(seed int64) Method { c.Seed = seed; return c }

// WithWeight returns c with Alpha = w.
func (c MixupConfig) WithWeight(w float64) Method { c.Alpha = w; return c }

// WithSeed returns c with Seed = seed.
func (c MixupConfig) WithSeed(seed int64) Method { c.Seed = seed; return c }
