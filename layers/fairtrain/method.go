package fairtrain

import (
	"fmt"

	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/fairness"
)

// The package's methods, registered once with package layers/fairness
// (its one registry of methods of every stage): the in-training methods
// (fairness.Loss: the regulariser, the adversary, mixup, REDRESS), then
// the architectures (fairness.Architecture: FairGNN, NIFTY, FairVGNN,
// RawlsGCN). fairness.Lookup, Names and Methods list them, and through
// them the commands and the lab; fairness.Fit trains with any of them.
var _ = fairness.MustRegister(DefaultRegularizerConfig(), DefaultAdversaryConfig(), DefaultMixupConfig(), DefaultREDRESSConfig(),
	DefaultFairGNNConfig(), DefaultNIFTYConfig(), DefaultFairVGNNConfig(), DefaultRawlsGCNConfig())

var (
	_ fairness.Loss         = RegularizerConfig{}
	_ fairness.Loss         = AdversaryConfig{}
	_ fairness.Loss         = MixupConfig{}
	_ fairness.Loss         = REDRESSConfig{}
	_ fairness.Architecture = FairGNNConfig{}
	_ fairness.Architecture = NIFTYConfig{}
	_ fairness.Architecture = FairVGNNConfig{}
	_ fairness.Architecture = RawlsGCNConfig{}
	_ fairness.Weighted     = RegularizerConfig{}
	_ fairness.Seeded       = AdversaryConfig{}
)

// checkFit validates an architecture's configuration and the setup its
// Fit was given.
func checkFit(m fairness.Method, backbone layers.Config, s fairness.Setup) error {
	if s.Task == nil {
		return fmt.Errorf("fairtrain: %s: nil Setup.Task", m.Name())
	}
	if backbone == nil {
		return fmt.Errorf("fairtrain: %s: nil backbone configuration", m.Name())
	}
	if err := m.Validate(); err != nil {
		return fmt.Errorf("fairtrain: %s: %w", m.Name(), err)
	}
	return nil
}

// bodyConfig returns backbone with Out set to width: the body of an
// Encoder.
func bodyConfig(backbone layers.Config, width int) layers.Config {
	b := layers.BaseOf(backbone)
	b.Out = width
	return layers.WithBase(backbone, b)
}

// WithWeight returns c with Alpha = w.
func (c RegularizerConfig) WithWeight(w float64) fairness.Method { c.Alpha = w; return c }

// WithWeight returns c with Alpha = w.
func (c AdversaryConfig) WithWeight(w float64) fairness.Method { c.Alpha = w; return c }

// WithSeed returns c with Seed = seed.
func (c AdversaryConfig) WithSeed(seed int64) fairness.Method { c.Seed = seed; return c }

// WithWeight returns c with Alpha = w.
func (c MixupConfig) WithWeight(w float64) fairness.Method { c.Alpha = w; return c }

// WithSeed returns c with Seed = seed.
func (c MixupConfig) WithSeed(seed int64) fairness.Method { c.Seed = seed; return c }
