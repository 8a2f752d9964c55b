package layers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
)

// ErrUnknownKind is returned (wrapped) for a kind name, configuration or
// model that no declaration knows.
var ErrUnknownKind = errors.New("layers: unknown model kind")

// KindSpec declares a model kind: its name, its configuration type C, its
// model type M, its constructor and its defaults. Each model of this
// package declares its kind once, in its own file, with MustDeclare; a
// model of the user's own is declared the same way and is then trained in
// mini-batches, saved, loaded and built by name like the library's.
//
// Whether the kind runs on sampled blocks (package layers/minibatch) is
// read from M: it does when M implements [BlockModel].
type KindSpec[C Config, M Model] struct {
	// Name names the kind in model files and on command lines ("gcn"):
	// lower-case letters, digits, '-' and '_'.
	Name string
	// Title names it in tables and plots ("GCN"). Empty: Name.
	Title string
	// Summary is one line for listings, such as a command's -h.
	Summary string
	// Default returns the kind's default configuration for in features
	// and classes classes.
	Default func(in, classes int) C
	// New builds a model in g with configuration cfg, on the graph gr
	// (models that do not propagate, such as the MLP, ignore it), with
	// phase switching its dropout. It is the kind's exported constructor,
	// adapted to this argument list where needed.
	New func(g *G.ExprGraph, gr *graph.Graph, cfg C, phase *Phase) (M, error)
	// Config returns the configuration a model was built with: the
	// model's Config method as a method expression ((*GCN).Config).
	Config func(m M) C
	// Params returns the names and shapes of the learnables a
	// configuration builds, in Learnables order, without building
	// anything: model files check a configuration against the
	// parameters they hold before the model is built (so that a file
	// cannot make Load allocate what it does not contain). The registry's
	// tests check it against the built models of every library kind.
	Params func(cfg C) []Param
	// Hidden, if not nil, sets the hidden width of a configuration (the
	// -hidden of the commands); it returns an error for a width the kind
	// cannot take. nil: the kind has no hidden width.
	Hidden func(cfg *C, width int) error
	// Propagation, if not nil, says how the kind's models build their
	// propagation matrix from a graph (Propagation.Matrix): the matrix of
	// BlockModel.Matrix, which mini-batches are sampled from and which
	// LayerwiseLogits and the Beam pipeline take for any other graph.
	// nil: the kind does not propagate.
	Propagation func(cfg C) Propagation
	// Composite marks a kind whose configuration holds another kind's
	// (package fairtrain's "encoder": a body of any kind and a linear
	// head, what FairGNN, NIFTY and FairVGNN train): its models save,
	// load and score as any kind's, but it is not offered as a backbone
	// ([Backbones] leaves it out), since the methods that train it build
	// it on a backbone of their own.
	Composite bool
}

// WrapperSpec declares a kind of model that wraps another (its
// backbone): fmp.Model, FMP on any backbone, is one. A wrapper adds no
// parameters of its own to the backbone's as far as model files are
// concerned: a file records the wrapper's configuration, the backbone's
// kind and configuration, and the backbone's parameters.
type WrapperSpec[C validator, M Wrapper] struct {
	// Name, Title and Summary are as in KindSpec.
	Name, Title, Summary string
	// Wrap builds the wrapper on a backbone already built, on the graph
	// gr, for the sensitive attribute sens (nil for a wrapper that uses
	// none), with the backbone's phase: the arguments of fmp.On.
	Wrap func(backbone Model, gr *graph.Graph, sens []int, cfg C, phase *Phase) (M, error)
	// Config returns the wrapper's own configuration (without the
	// backbone's).
	Config func(m M) C
}

// validator is a configuration that can check itself (a wrapper's).
type validator interface {
	Validate() error
}

// Wrapper is a model built on another model, its backbone.
type Wrapper interface {
	Model
	Backbone() Model
}

// Kind is a declared model kind (see [KindSpec] and [WrapperSpec]): what
// model files, mini-batch training and the commands know of a model.
// Look kinds up with [LookupKind], [KindOf] and [KindOfConfig]; list
// them with [Kinds].
type Kind struct {
	name, title, summary     string
	cfgType, modelType       reflect.Type
	blocks, wraps, composite bool

	def    func(in, classes int) Config
	build  func(g *G.ExprGraph, gr *graph.Graph, cfg Config, phase *Phase) (Model, error)
	params func(cfg Config) ([]Param, error)
	wrap   func(backbone Model, gr *graph.Graph, sens []int, raw json.RawMessage, phase *Phase) (Model, error)
	check  func(raw json.RawMessage) error
	encode func(m Model) (any, error)
	decode func(raw json.RawMessage) (Config, error)
	hidden func(cfg Config, width int) (Config, error)
	prop   func(cfg Config) (Propagation, error)
}

var registry struct {
	sync.RWMutex
	byName   map[string]*Kind
	byConfig map[reflect.Type]*Kind
	byModel  map[reflect.Type]*Kind
}

// Declare adds the kind s describes to the registry and returns it. It
// returns an error for an invalid name, a nil function, a configuration
// type that does not embed Base by value, or a name, configuration type
// or model type already declared. It is safe for concurrent use; declare
// a kind once, in a package-level variable of the file that defines the
// model (see MustDeclare).
func Declare[C Config, M Model](s KindSpec[C, M]) (*Kind, error) {
	if s.Default == nil || s.New == nil || s.Config == nil || s.Params == nil {
		return nil, fmt.Errorf("layers: Declare %q: Default, New, Config and Params must all be set", s.Name)
	}
	var zc C
	ct := reflect.TypeOf(zc)
	if ct == nil || ct.Kind() != reflect.Struct {
		return nil, fmt.Errorf("layers: Declare %q: the configuration type %v is not a struct (embed layers.Base in a struct)", s.Name, ct)
	}
	if _, ok := reflect.New(ct).Interface().(interface{ basePtr() *Base }); !ok {
		return nil, fmt.Errorf("layers: Declare %q: the configuration type %v does not embed layers.Base by value", s.Name, ct)
	}
	var zm M
	mt := reflect.TypeOf(&zm).Elem()
	_, blocks := any(zm).(BlockModel)
	k := &Kind{name: s.Name, title: s.Title, summary: s.Summary, cfgType: ct, modelType: mt, blocks: blocks, composite: s.Composite}
	k.def = func(in, classes int) Config { return s.Default(in, classes) }
	k.build = func(g *G.ExprGraph, gr *graph.Graph, cfg Config, phase *Phase) (Model, error) {
		c, ok := cfg.(C)
		if !ok {
			return nil, fmt.Errorf("layers: a %T is not a configuration of the %s kind (%v)", cfg, s.Name, ct)
		}
		m, err := s.New(g, gr, c, phase)
		if err != nil {
			return nil, err
		}
		return m, nil
	}
	k.encode = encoder(s.Name, mt, s.Config)
	k.params = func(cfg Config) ([]Param, error) {
		c, ok := cfg.(C)
		if !ok {
			return nil, fmt.Errorf("layers: a %T is not a configuration of the %s kind (%v)", cfg, s.Name, ct)
		}
		return s.Params(c), nil
	}
	k.decode = func(raw json.RawMessage) (Config, error) {
		var c C
		if err := decodeStrict(raw, &c); err != nil {
			return nil, fmt.Errorf("the %s configuration: %w", s.Name, err)
		}
		return c, nil
	}
	if s.Hidden != nil {
		k.hidden = func(cfg Config, width int) (Config, error) {
			c, ok := cfg.(C)
			if !ok {
				return nil, fmt.Errorf("layers: a %T is not a configuration of the %s kind (%v)", cfg, s.Name, ct)
			}
			if err := s.Hidden(&c, width); err != nil {
				return nil, err
			}
			return c, nil
		}
	}
	if s.Propagation != nil {
		k.prop = func(cfg Config) (Propagation, error) {
			c, ok := cfg.(C)
			if !ok {
				return Propagation{}, fmt.Errorf("layers: a %T is not a configuration of the %s kind (%v)", cfg, s.Name, ct)
			}
			return s.Propagation(c), nil
		}
	}
	if err := register(k); err != nil {
		return nil, err
	}
	return k, nil
}

// MustDeclare is Declare for package-level declarations: it panics where
// Declare returns an error (a programmer error, found when the program
// starts).
func MustDeclare[C Config, M Model](s KindSpec[C, M]) *Kind { return must(Declare(s)) }

// DeclareWrapper adds a wrapper kind to the registry; see Declare for its
// errors.
func DeclareWrapper[C validator, M Wrapper](s WrapperSpec[C, M]) (*Kind, error) {
	if s.Wrap == nil || s.Config == nil {
		return nil, fmt.Errorf("layers: DeclareWrapper %q: Wrap and Config must both be set", s.Name)
	}
	var zc C
	var zm M
	ct, mt := reflect.TypeOf(&zc).Elem(), reflect.TypeOf(&zm).Elem()
	k := &Kind{name: s.Name, title: s.Title, summary: s.Summary, cfgType: ct, modelType: mt, wraps: true}
	decode := func(raw json.RawMessage) (C, error) {
		var c C
		if err := decodeStrict(raw, &c); err != nil {
			return c, fmt.Errorf("the %s configuration: %w", s.Name, err)
		}
		if err := c.Validate(); err != nil {
			return c, fmt.Errorf("the %s configuration: %w", s.Name, err)
		}
		return c, nil
	}
	k.check = func(raw json.RawMessage) error {
		_, err := decode(raw)
		return err
	}
	k.wrap = func(backbone Model, gr *graph.Graph, sens []int, raw json.RawMessage, phase *Phase) (Model, error) {
		c, err := decode(raw)
		if err != nil {
			return nil, err
		}
		m, err := s.Wrap(backbone, gr, sens, c, phase)
		if err != nil {
			return nil, err
		}
		return m, nil
	}
	k.encode = encoder(s.Name, mt, s.Config)
	if err := register(k); err != nil {
		return nil, err
	}
	return k, nil
}

// encoder returns a kind's encode function: the configuration of a model
// of type M, or an error for a model of another type.
func encoder[C any, M Model](name string, mt reflect.Type, config func(M) C) func(Model) (any, error) {
	return func(m Model) (any, error) {
		mm, ok := m.(M)
		if !ok {
			return nil, fmt.Errorf("layers: a %T is not a model of the %s kind (%v)", m, name, mt)
		}
		return config(mm), nil
	}
}

// must panics on a declaration error: MustDeclare and MustDeclareWrapper.
func must(k *Kind, err error) *Kind {
	if err != nil {
		panic(err)
	}
	return k
}

// MustDeclareWrapper is DeclareWrapper for package-level declarations: it
// panics where DeclareWrapper returns an error.
func MustDeclareWrapper[C validator, M Wrapper](s WrapperSpec[C, M]) *Kind {
	return must(DeclareWrapper(s))
}

func validKindName(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

func register(k *Kind) error {
	if !validKindName(k.name) {
		return fmt.Errorf("layers: kind name %q, want lower-case letters, digits, '-' or '_'", k.name)
	}
	if k.title == "" {
		k.title = k.name
	}
	registry.Lock()
	defer registry.Unlock()
	if registry.byName == nil {
		registry.byName = map[string]*Kind{}
		registry.byConfig = map[reflect.Type]*Kind{}
		registry.byModel = map[reflect.Type]*Kind{}
	}
	if _, ok := registry.byName[k.name]; ok {
		return fmt.Errorf("layers: kind %q is already declared", k.name)
	}
	if o, ok := registry.byModel[k.modelType]; ok {
		return fmt.Errorf("layers: kind %q: model type %v is already the %q kind's", k.name, k.modelType, o.name)
	}
	if o, ok := registry.byConfig[k.cfgType]; ok && !k.wraps {
		return fmt.Errorf("layers: kind %q: configuration type %v is already the %q kind's", k.name, k.cfgType, o.name)
	}
	registry.byName[k.name] = k
	registry.byModel[k.modelType] = k
	if !k.wraps {
		registry.byConfig[k.cfgType] = k
	}
	return nil
}

// LookupKind returns the kind declared with name. For a name no
// declaration knows it returns an error wrapping ErrUnknownKind that
// lists the known names.
func LookupKind(name string) (*Kind, error) {
	registry.RLock()
	k, ok := registry.byName[name]
	registry.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknownKind, name, strings.Join(kindNames(), ", "))
	}
	return k, nil
}

// KindOf returns the kind of a model (by its dynamic type).
func KindOf(m Model) (*Kind, error) {
	registry.RLock()
	k, ok := registry.byModel[reflect.TypeOf(m)]
	registry.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w: no kind is declared for the model type %T (declare one with layers.Declare)", ErrUnknownKind, m)
	}
	return k, nil
}

// KindOfConfig returns the kind of a configuration (by its dynamic type).
func KindOfConfig(cfg Config) (*Kind, error) {
	registry.RLock()
	k, ok := registry.byConfig[reflect.TypeOf(cfg)]
	registry.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w: no kind is declared for the configuration type %T (declare one with layers.Declare)", ErrUnknownKind, cfg)
	}
	return k, nil
}

// Kinds returns every declared kind, sorted by name: the library's own
// (mlp, gcn, sgc, appnp, gat, jknet; fmp when package fmp is imported,
// encoder when package layers/fairtrain is) and the user's. [Backbones]
// lists those a model is built from as a backbone.
func Kinds() []*Kind {
	registry.RLock()
	defer registry.RUnlock()
	ks := make([]*Kind, 0, len(registry.byName))
	for _, k := range registry.byName {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i].name < ks[j].name })
	return ks
}

// Backbones returns the kinds a model is built from as a backbone,
// sorted by name: every declared kind but the wrappers (fmp) and the
// composite kinds (KindSpec.Composite: fairtrain's encoder). The commands
// offer these as -backbone.
func Backbones() []*Kind {
	var out []*Kind
	for _, k := range Kinds() {
		if !k.wraps && !k.composite {
			out = append(out, k)
		}
	}
	return out
}

// BackboneNames returns the names of Backbones, in the same order.
func BackboneNames() []string {
	var ns []string
	for _, k := range Backbones() {
		ns = append(ns, k.name)
	}
	return ns
}

// kindNames returns the names of Kinds, in the same order.
func kindNames() []string {
	var ns []string
	for _, k := range Kinds() {
		ns = append(ns, k.name)
	}
	return ns
}

// Build builds the model of a configuration in g on the graph gr with
// phase, through its kind's constructor. It returns an error wrapping
// ErrUnknownKind for a configuration type no kind declares, and the
// constructor's error otherwise.
func Build(g *G.ExprGraph, gr *graph.Graph, cfg Config, phase *Phase) (Model, error) {
	if cfg == nil {
		return nil, fmt.Errorf("layers: Build: nil configuration")
	}
	k, err := KindOfConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("layers: Build: %w", err)
	}
	return k.Build(g, gr, cfg, phase)
}

// Name returns the kind's name ("gcn").
func (k *Kind) Name() string { return k.name }

// Title returns the kind's name in tables ("GCN").
func (k *Kind) Title() string { return k.title }

// Summary returns the kind's one-line description.
func (k *Kind) Summary() string { return k.summary }

// Blocks reports whether the kind's models run on sampled blocks (they
// implement BlockModel): package layers/minibatch trains them.
func (k *Kind) Blocks() bool { return k.blocks }

// Wraps reports whether the kind is a wrapper (declared with
// DeclareWrapper): its models are built on a backbone, not from a
// configuration alone.
func (k *Kind) Wraps() bool { return k.wraps }

// Composite reports whether the kind's configuration holds another
// kind's (KindSpec.Composite): it is not offered as a backbone.
func (k *Kind) Composite() bool { return k.composite }

// HasHidden reports whether the kind's configuration has a hidden width
// that Options.Hidden sets.
func (k *Kind) HasHidden() bool { return k.hidden != nil }

// String returns the kind's name.
func (k *Kind) String() string { return k.name }

// Default returns the kind's default configuration for in features and
// classes classes. It returns an error for a wrapper kind, which has
// none.
func (k *Kind) Default(in, classes int) (Config, error) {
	if k.wraps {
		return nil, fmt.Errorf("layers: the %s kind wraps a backbone and has no configuration of its own: build the backbone, then wrap it", k.name)
	}
	return k.def(in, classes), nil
}

// Options are the settings every kind takes by name, as the commands set
// them from their flags.
type Options struct {
	// Hidden is the hidden width (for GAT, heads × per-head width); 0
	// keeps the kind's default. A kind without one (HasHidden false)
	// refuses a width other than 0.
	Hidden int
	// Dtype is Float32 or Float64. Default Float64.
	Dtype tensor.Dtype
	// Seed seeds the initialisation and every dropout mask. Default 1.
	Seed int64
}

// DefaultOptions returns the kinds' own hidden widths, float64 and seed 1.
func DefaultOptions() Options { return Options{Dtype: tensor.Float64, Seed: 1} }

// Validate checks the options.
func (o Options) Validate() error {
	if o.Hidden < 0 {
		return fmt.Errorf("Hidden = %d, want ≥ 1, or 0 for the kind's default", o.Hidden)
	}
	return checkDtype(o.Dtype)
}

// Configure returns the kind's default configuration for in features and
// classes classes with the options applied, validated.
func (k *Kind) Configure(in, classes int, o Options) (Config, error) {
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("layers: %s: options: %w", k.name, err)
	}
	cfg, err := k.Default(in, classes)
	if err != nil {
		return nil, err
	}
	b := cfg.base()
	b.Dtype, b.Seed = o.Dtype, o.Seed
	cfg = WithBase(cfg, b)
	if o.Hidden != 0 {
		if k.hidden == nil {
			return nil, fmt.Errorf("layers: the %s model has no hidden width (Options.Hidden = %d, want 0)", k.name, o.Hidden)
		}
		if cfg, err = k.hidden(cfg, o.Hidden); err != nil {
			return nil, fmt.Errorf("layers: %s: hidden width %d: %w", k.name, o.Hidden, err)
		}
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("layers: %s: %w", k.name, err)
	}
	return cfg, nil
}

// Override returns cfg with the fields named by their JSON keys
// ("dropout", "k") set to the given values, validated: for settings
// beyond Options, by name. It returns an error for a key the
// configuration does not have (naming those it has) or a value of the
// wrong type.
func (k *Kind) Override(cfg Config, fields map[string]any) (Config, error) {
	if k.wraps {
		return nil, fmt.Errorf("layers: Override: the %s kind has no configuration of its own", k.name)
	}
	if reflect.TypeOf(cfg) != k.cfgType {
		return nil, fmt.Errorf("layers: Override: a %T is not a configuration of the %s kind (%v)", cfg, k.name, k.cfgType)
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("layers: Override %s: %w", k.name, err)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("layers: Override %s: %w", k.name, err)
	}
	keys := make([]string, 0, len(fields))
	for key := range fields {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	for _, key := range keys {
		if _, ok := obj[key]; !ok {
			known := make([]string, 0, len(obj))
			for kk := range obj {
				known = append(known, kk)
			}
			sort.Strings(known)
			return nil, fmt.Errorf("layers: Override: the %s configuration has no field %q (it has %s)", k.name, key, strings.Join(known, ", "))
		}
		v, err := json.Marshal(fields[key])
		if err != nil {
			return nil, fmt.Errorf("layers: Override %s: %q: %w", k.name, key, err)
		}
		obj[key] = v
	}
	if raw, err = json.Marshal(obj); err != nil {
		return nil, fmt.Errorf("layers: Override %s: %w", k.name, err)
	}
	out, err := k.decode(raw)
	if err != nil {
		return nil, fmt.Errorf("layers: Override: %w", err)
	}
	b := out.base()
	b.Dtype = cfg.base().Dtype // not in the JSON
	out = WithBase(out, b)
	if err := out.Validate(); err != nil {
		return nil, fmt.Errorf("layers: Override %s: %w", k.name, err)
	}
	return out, nil
}

// Build builds a model of the kind in g on the graph gr with phase. It
// returns an error for a wrapper kind, a configuration of another kind,
// and the constructor's errors.
func (k *Kind) Build(g *G.ExprGraph, gr *graph.Graph, cfg Config, phase *Phase) (Model, error) {
	if k.wraps {
		return nil, fmt.Errorf("layers: the %s kind wraps a backbone: build the backbone, then wrap it", k.name)
	}
	return k.build(g, gr, cfg, phase)
}

// Wrap builds a model of a wrapper kind on backbone, for the sensitive
// attribute sens, from the wrapper's configuration as EncodeConfig wrote
// it (fmp/modelio's use). It returns an error for a kind that is not a
// wrapper or a configuration it cannot decode.
func (k *Kind) Wrap(backbone Model, gr *graph.Graph, sens []int, config json.RawMessage, phase *Phase) (Model, error) {
	if !k.wraps {
		return nil, fmt.Errorf("layers: the %s kind is not a wrapper", k.name)
	}
	return k.wrap(backbone, gr, sens, config, phase)
}

// CheckConfig decodes a configuration of the kind from JSON strictly and
// validates it, without building anything: a wrapper's own
// configuration, or (like DecodeConfig) a plain kind's.
func (k *Kind) CheckConfig(raw json.RawMessage) error {
	if k.wraps {
		return k.check(raw)
	}
	_, err := k.decode(raw)
	return err
}

// Params returns the names and shapes of the learnables the
// configuration builds, in Learnables order, without building anything.
// It returns an error for a wrapper kind (its learnables are its
// backbone's) and a configuration of another kind.
func (k *Kind) Params(cfg Config) ([]Param, error) {
	if k.wraps {
		return nil, fmt.Errorf("layers: the %s kind wraps a backbone: its parameters are the backbone's", k.name)
	}
	return k.params(cfg)
}

// Propagation returns how the configuration's model builds its
// propagation matrix from a graph, and false for a kind that does not
// propagate (an MLP). It returns an error for a wrapper kind and a
// configuration of another kind.
func (k *Kind) Propagation(cfg Config) (Propagation, bool, error) {
	if k.wraps {
		return Propagation{}, false, fmt.Errorf("layers: the %s kind wraps a backbone: its matrix is the backbone's", k.name)
	}
	if k.prop == nil {
		return Propagation{}, false, nil
	}
	p, err := k.prop(cfg)
	return p, err == nil, err
}

// Param is the name and shape of a learnable parameter.
type Param struct {
	Name  string
	Shape []int
}

// linearParams returns a Linear layer's parameters: name.W (in × out),
// then name.b (1 × out) with bias.
func linearParams(name string, in, out int, bias bool) []Param {
	ps := []Param{{Name: name + ".W", Shape: []int{in, out}}}
	if bias {
		ps = append(ps, Param{Name: name + ".b", Shape: []int{1, out}})
	}
	return ps
}

// stackParams returns the parameters of depth linear layers in → hidden
// → … → out named name.0, name.1, …: the MLP's, APPNP's and (their
// convolutions having the same names and shapes) GCN's.
func stackParams(name string, in, hidden, out, depth int, bias bool) []Param {
	var ps []Param
	for l := 0; l < depth; l++ {
		i, o := hidden, hidden
		if l == 0 {
			i = in
		}
		if l == depth-1 {
			o = out
		}
		ps = append(ps, linearParams(fmt.Sprintf("%s.%d", name, l), i, o, bias)...)
	}
	return ps
}

// EncodeConfig returns, as JSON, the configuration m was built with (a
// wrapper's own, without its backbone's). It returns an error for a
// model of another kind.
func (k *Kind) EncodeConfig(m Model) (json.RawMessage, error) {
	c, err := k.encode(m)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("layers: the %s configuration: %w", k.name, err)
	}
	return raw, nil
}

// ConfigOf returns the configuration m was built with, for a kind that is
// not a wrapper.
func (k *Kind) ConfigOf(m Model) (Config, error) {
	if k.wraps {
		return nil, fmt.Errorf("layers: the %s kind wraps a backbone and has no configuration of its own", k.name)
	}
	c, err := k.encode(m)
	if err != nil {
		return nil, err
	}
	return c.(Config), nil
}

// DecodeConfig decodes a configuration of the kind from JSON strictly
// (an unknown or miscased key is an error) and validates it; the JSON
// holds no dtype, so the result's is dt. It returns an error for a
// wrapper kind.
func (k *Kind) DecodeConfig(raw json.RawMessage, dt tensor.Dtype) (Config, error) {
	if k.wraps {
		return nil, fmt.Errorf("layers: the %s kind wraps a backbone: its configuration is decoded by Wrap", k.name)
	}
	c, err := k.decode(raw)
	if err != nil {
		return nil, err
	}
	b := c.base()
	b.Dtype = dt
	c = WithBase(c, b)
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("the %s configuration: %w", k.name, err)
	}
	return c, nil
}

// decodeStrict unmarshals raw into v, refusing unknown keys, keys that
// differ from the struct's only in case, and trailing data.
func decodeStrict(raw json.RawMessage, v any) error {
	if err := exactCase(raw, reflect.TypeOf(v).Elem()); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("data after the configuration")
	}
	return requiredKeys(raw, reflect.TypeOf(v).Elem(), "")
}

// requiredKeys checks that the JSON object raw has every key of the
// struct type t that json.Marshal writes whatever the value (every field
// but omitempty and omitzero ones), descending into struct-typed fields,
// optional ones too where present (a "sinkhorn" object must hold every
// key of its own): a missing key would silently leave its field zero. It
// names the first missing key with its path.
func requiredKeys(raw json.RawMessage, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil // not an object (null included): the decoder reports or allows it
	}
	names := make([]string, 0)
	fields, required := jsonFields(t), requiredFields(t)
	for name := range fields {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		val, ok := obj[name]
		if _, req := required[name]; !ok && !req {
			continue // an optional key left out
		}
		if !ok {
			if path != "" {
				return fmt.Errorf("no key %q in %s (every key is required: a missing one would be zero)", name, path)
			}
			return fmt.Errorf("no key %q (every key is required: a missing one would be zero)", name)
		}
		sub := name
		if path != "" {
			sub = path + "." + name
		}
		if err := requiredKeys(val, fields[name], sub); err != nil {
			return err
		}
	}
	return nil
}

var unmarshalerType = reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()

// requiredFields maps the JSON names of t's fields that json.Marshal
// always writes (not omitempty; embedded structs' included) to their
// types.
func requiredFields(t reflect.Type) map[string]reflect.Type { return fieldsOf(t, true) }

// exactCase checks that every key of the JSON object raw is spelled
// exactly as a field's JSON name of the struct type t (encoding/json
// would accept "Hidden" for "hidden"), descending into embedded structs
// and struct-typed fields.
func exactCase(raw json.RawMessage, t reflect.Type) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil // not an object: the decoder reports it
	}
	fields := jsonFields(t)
	for key, val := range obj {
		f, ok := fields[key]
		if !ok {
			for name := range fields {
				if strings.EqualFold(name, key) {
					return fmt.Errorf("key %q, want %q (keys are case-sensitive)", key, name)
				}
			}
			continue // unknown: the decoder reports it
		}
		if err := exactCase(val, f); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
	}
	return nil
}

// jsonFields maps the JSON names of t's fields (embedded structs'
// included) to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type { return fieldsOf(t, false) }

// fieldsOf maps the JSON names of t's fields (embedded structs'
// included) to their types; with required, only those json.Marshal
// always writes (not omitempty or omitzero).
func fieldsOf(t reflect.Type, required bool) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			for k, v := range fieldsOf(f.Type, required) {
				out[k] = v
			}
			continue
		}
		if required && (strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,")) {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}
