package layers

import (
	"fmt"
	"math"
	"reflect"

	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/internal/opkit"
)

// MaxSteps bounds every count of steps a configuration may ask for
// (SGC's and APPNP's K, FMP's K, the number of layers): a model's running
// time grows with it, and a model file from elsewhere must not be able to
// ask for hours. The library's defaults are 1 to 10.
const MaxSteps = 1000

// Config is a model's configuration: a plain struct that embeds [Base],
// with a DefaultXxxConfig constructor and a Validate method. Every model
// kind of the library has one (MLPConfig, GCNConfig, ...), and so does a
// kind of the user's own (see [Declare]).
type Config interface {
	// Validate reports the first invalid field, by name.
	Validate() error
	// base is promoted from Base: a configuration implements Config by
	// embedding Base.
	base() Base
}

// Base is the part of every model configuration that the library reads
// and sets whatever the kind: model files set the dtype and the name,
// mini-batch training the seed, commands the dtype and the seed. It is
// embedded, so its fields read as the configuration's own (cfg.Seed) and
// encode to the same JSON keys.
type Base struct {
	// Name prefixes the parameter names (Name+".0.W", ...); it must be
	// unique among the models in one gorgonia graph (gorgonia merges
	// input nodes of equal name and shape).
	Name string `json:"name"`
	// In is the number of input features; Out the output width: for a
	// model, the number of classes (the width of its logits); for a layer
	// (LinearConfig, GATConvConfig), the width it outputs
	// (per head for GAT). Model files record Out as "classes".
	In  int `json:"in"`
	Out int `json:"classes"`
	// Dtype is Float32 or Float64. Default Float64. Model files record it
	// in their header, not in the configuration.
	Dtype tensor.Dtype `json:"-"`
	// Seed seeds the initialisation and every dropout mask: one seed fixes
	// a training run.
	Seed int64 `json:"seed"`
}

// DefaultBase returns the base of a default configuration: the given
// name and widths, float64, seed 1.
func DefaultBase(name string, in, out int) Base {
	return Base{Name: name, In: in, Out: out, Dtype: tensor.Float64, Seed: 1}
}

func (b Base) base() Base { return b }

// basePtr gives the registry write access to an embedded Base.
func (b *Base) basePtr() *Base { return b }

// Validate reports the first invalid field of b: an empty Name, In or
// Out not positive, or a Dtype other than Float32 and Float64. A
// configuration's own Validate calls it first (c.Base.Validate()).
func (b Base) Validate() error {
	if b.Name == "" {
		return fmt.Errorf("Name is empty, want a unique prefix for the parameter names")
	}
	if err := positive("In", b.In); err != nil {
		return err
	}
	if err := positive("Out", b.Out); err != nil {
		return err
	}
	return checkDtype(b.Dtype)
}

// BaseOf returns the Base embedded in cfg.
func BaseOf(cfg Config) Base { return cfg.base() }

// WithBase returns a copy of cfg whose embedded Base is b. The result has
// cfg's dynamic type. It does not validate.
func WithBase(cfg Config, b Base) Config {
	v := reflect.New(reflect.TypeOf(cfg))
	v.Elem().Set(reflect.ValueOf(cfg))
	*v.Interface().(interface{ basePtr() *Base }).basePtr() = b
	return v.Elem().Interface().(Config)
}

// StackConfig is what the configurations of the stacked graph models
// (GCNConfig, APPNPConfig, JKNetConfig) share besides Base: width, depth,
// activation, dropout and propagation. It is embedded, so its fields read
// as the model configuration's own (cfg.Hidden) and encode to the same
// JSON keys.
type StackConfig struct {
	Base
	// Hidden is the width of the hidden layers. Default 64.
	Hidden int `json:"hidden"`
	// Layers is the number of layers (>= 1). Default 2.
	Layers int `json:"layers"`
	// Activation follows every hidden layer. Default ReLU.
	Activation Activation `json:"activation"`
	// Dropout after each hidden activation. Default 0.5.
	Dropout float64 `json:"dropout"`
	// InputDropout on the input features. Default 0.
	InputDropout float64 `json:"input_dropout"`
	// Propagation builds Ã. Default PyG's.
	Propagation Propagation `json:"propagation"`
}

// defaultStack returns the shared defaults: 2 layers of width 64, ReLU,
// dropout 0.5, PyG's propagation, float64, seed 1.
func defaultStack(name string, in, classes int) StackConfig {
	return StackConfig{Base: DefaultBase(name, in, classes), Hidden: 64, Layers: 2, Activation: ReLU(),
		Dropout: 0.5, Propagation: DefaultPropagation()}
}

// Validate checks every field.
func (c StackConfig) Validate() error {
	if err := c.Base.Validate(); err != nil {
		return err
	}
	if err := validateStack(c.Hidden, c.Layers, c.Activation, c.Dropout, c.InputDropout); err != nil {
		return err
	}
	return c.Propagation.Validate()
}

// validateStack checks the fields a stack of layers shares (StackConfig's
// and MLPConfig's).
func validateStack(hidden, layers int, act Activation, dropout, inputDropout float64) error {
	if err := positive("Hidden", hidden); err != nil {
		return err
	}
	if err := positive("Layers", layers); err != nil {
		return err
	}
	if layers > MaxSteps {
		return fmt.Errorf("Layers = %d, want at most %d (MaxSteps)", layers, MaxSteps)
	}
	if err := act.Validate(); err != nil {
		return fmt.Errorf("Activation: %w", err)
	}
	if err := checkProb("Dropout", dropout); err != nil {
		return err
	}
	return checkProb("InputDropout", inputDropout)
}

func positive(field string, v int) error {
	if v <= 0 {
		return fmt.Errorf("%s = %d, want > 0", field, v)
	}
	return nil
}

func checkDtype(dt tensor.Dtype) error {
	if err := opkit.CheckFloat(dt); err != nil {
		return fmt.Errorf("Dtype: %w", err)
	}
	return nil
}

func checkProb(field string, p float64) error {
	if !(p >= 0 && p < 1) {
		return fmt.Errorf("%s = %v, want 0 <= p < 1", field, p)
	}
	return nil
}

func checkFinite(field string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("%s = %v, want a finite value", field, v)
	}
	return nil
}
