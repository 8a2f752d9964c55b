package modelio

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/layers"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The saved-model format (version 3) is one line of JSON, the header,
// ended by '\n', then the parameters in binary, then a 32-byte SHA-256
// checksum of everything before it:
//
//	{"format":"fairmp-model","version":3,"kind":"gcn","dtype":"float32",
//	 "graph":{"nodes":403,"edges":10621,"fingerprint":"9c0e…"},
//	 "config":{...},"params":[{"name":"gcn.0.W","shape":[96,64]},...]}
//	<parameters><sha256>
//
// kind names a model kind declared in package layers (layers.Declare),
// config is the model's configuration as JSON (its dtype is the
// header's), graph describes the graph a graph model was built on (absent
// for models without one; see graph.Graph.Fingerprint), and params lists
// the learnables in Learnables() order. A model of a wrapper kind (fmp's:
// FMP on a backbone) also records its backbone,
//
//	"backbone":{"kind":"gcn","config":{...}},"sens":{"nodes":403,"fingerprint":"…"}
//
// with config then the wrapper's own configuration, and sens the
// fingerprint of the sensitive attribute of a model that carries one. The
// parameters follow the newline in params order, each row-major, as
// little-endian IEEE-754 values of the header's dtype (4 or 8 bytes
// each). The header is parsed strictly: every key exactly as written
// here, no other key.
//
// Files of versions 1 and 2 (written before the registry of kinds) are
// refused with ErrVersion: load them with the release that wrote them.
const (
	FormatName    = "fairmp-model"
	FormatVersion = 3
)

// Errors a caller may branch on; Load and Save wrap them with the
// details.
var (
	// ErrFormat: the data is not a fairmp model file (or its header is
	// malformed).
	ErrFormat = errors.New("modelio: not a fairmp model file")
	// ErrVersion: a fairmp model file of a format version this release
	// does not read.
	ErrVersion = errors.New("modelio: unsupported format version")
	// ErrCorrupt: the file is truncated, its checksum does not match, or
	// it holds a non-finite parameter.
	ErrCorrupt = errors.New("modelio: corrupt model file")
	// ErrUnknownKind: the file's kind, or the model given to Save, is of
	// no kind declared in package layers. It is layers.ErrUnknownKind.
	ErrUnknownKind = layers.ErrUnknownKind
	// ErrMismatch: the file was saved for another graph or sensitive
	// attribute than the one given to Load, or its parameters do not
	// match the model its configuration builds.
	ErrMismatch = errors.New("modelio: model file does not match")
)

// sensitive is implemented by models that carry a sensitive attribute
// (fmp's).
type sensitive interface{ SensitiveAttribute() []int }

// Env is what a model is built with besides its configuration.
type Env struct {
	// Graph is the graph a graph model is built on (nil for an MLP). Load
	// refuses a graph whose node count, edge count or structure differs
	// from the one the model was saved with.
	Graph *graph.Graph
	// Phase is given to the model's stochastic layers: the task's Phase
	// when the model is to be trained further or evaluated with
	// train.Predict on a Task that has one.
	Phase *layers.Phase
	// Name, if not empty, replaces the saved configuration's name (the
	// backbone's, for a wrapper), so a saved model can be loaded twice
	// into one gorgonia graph.
	Name string
	// Sens, if not nil, is the sensitive attribute the caller expects a
	// model that carries one (fmp's) to have been saved with; Load refuses
	// a file saved with another. nil skips the check (the model keeps the
	// attribute saved in the file).
	Sens []int
}

type paramHeader struct {
	Name  string `json:"name"`
	Shape []int  `json:"shape"`
}

type graphHeader struct {
	Nodes       int    `json:"nodes"`
	Edges       int    `json:"edges"`
	Fingerprint string `json:"fingerprint"`
}

type sensHeader struct {
	Nodes       int    `json:"nodes"`
	Fingerprint string `json:"fingerprint"`
}

type specHeader struct {
	Kind   string          `json:"kind"`
	Config json.RawMessage `json:"config"`
}

type header struct {
	Format   string          `json:"format"`
	Version  int             `json:"version"`
	Kind     string          `json:"kind"`
	Dtype    string          `json:"dtype"`
	Graph    *graphHeader    `json:"graph,omitempty"`
	Sens     *sensHeader     `json:"sens,omitempty"`
	Config   json.RawMessage `json:"config"`
	Backbone *specHeader     `json:"backbone,omitempty"`
	Params   []paramHeader   `json:"params"`
}

func graphInfo(g *graph.Graph) *graphHeader {
	return &graphHeader{Nodes: g.N(), Edges: g.NumEdges(), Fingerprint: fmt.Sprintf("%016x", g.Fingerprint())}
}

func sensInfo(s []int) *sensHeader {
	h := sha256.New()
	var b [8]byte
	for _, v := range s {
		binary.LittleEndian.PutUint64(b[:], uint64(int64(v)))
		h.Write(b[:])
	}
	return &sensHeader{Nodes: len(s), Fingerprint: fmt.Sprintf("%x", h.Sum(nil)[:8])}
}

// Save writes m's kind, configuration and parameters to w in the format
// described above. It returns an error if m (or, for a wrapper such as an
// fmp.Model, its backbone) is of no kind declared in package layers, its
// parameters are not finite dense float values of one dtype, or writing
// fails.
func Save(w io.Writer, m layers.Model) error {
	if m == nil {
		return fmt.Errorf("modelio: Save: nil model")
	}
	k, err := layers.KindOf(m)
	if err != nil {
		return fmt.Errorf("modelio: Save: %w", err)
	}
	cfg, err := k.EncodeConfig(m)
	if err != nil {
		return fmt.Errorf("modelio: Save: %w", err)
	}
	h := header{Format: FormatName, Version: FormatVersion, Kind: k.Name(), Config: cfg}
	if k.Wraps() {
		bb := m.(layers.Wrapper).Backbone()
		bk, err := layers.KindOf(bb)
		if err != nil {
			return fmt.Errorf("modelio: Save: the %s model's backbone: %w", k.Name(), err)
		}
		if bk.Wraps() {
			return fmt.Errorf("modelio: Save: the %s model's backbone is itself a wrapper (%s)", k.Name(), bk.Name())
		}
		bcfg, err := bk.EncodeConfig(bb)
		if err != nil {
			return fmt.Errorf("modelio: Save: the %s model's backbone: %w", k.Name(), err)
		}
		h.Backbone = &specHeader{Kind: bk.Name(), Config: bcfg}
	}
	params := m.Learnables()
	if len(params) == 0 {
		return fmt.Errorf("modelio: Save: the model has no learnables")
	}
	dt := params[0].Dtype()
	h.Dtype = dt.String()
	if gm, ok := m.(layers.GraphModel); ok && gm.Graph() != nil {
		h.Graph = graphInfo(gm.Graph())
	}
	if sm, ok := m.(sensitive); ok {
		h.Sens = sensInfo(sm.SensitiveAttribute())
	}
	for _, p := range params {
		if _, ok := p.Value().(*tensor.Dense); !ok || p.Dtype() != dt {
			return fmt.Errorf("modelio: Save: parameter %s, want a dense %v value", opkit.DescribeNode(p), dt)
		}
		if k, v, bad := firstNonFinite(p.Value().Data()); bad {
			return fmt.Errorf("modelio: Save: parameter %q, value %d is %v: refusing to save a non-finite parameter", p.Name(), k, v)
		}
		h.Params = append(h.Params, paramHeader{Name: p.Name(), Shape: append([]int(nil), p.Shape()...)})
	}
	hb, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("modelio: Save: header: %w", err)
	}
	sum := sha256.New()
	bw := bufio.NewWriter(io.MultiWriter(w, sum))
	bw.Write(hb)
	bw.WriteByte('\n')
	var b [8]byte
	for _, p := range params {
		switch s := p.Value().Data().(type) {
		case []float64:
			for _, v := range s {
				binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
				bw.Write(b[:8])
			}
		case []float32:
			for _, v := range s {
				binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
				bw.Write(b[:4])
			}
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("modelio: Save: %w", err)
	}
	if _, err := w.Write(sum.Sum(nil)); err != nil {
		return fmt.Errorf("modelio: Save: %w", err)
	}
	return nil
}

// firstNonFinite returns the index and value of the first NaN or ±Inf in
// data ([]float64 or []float32).
func firstNonFinite(data any) (int, float64, bool) {
	switch s := data.(type) {
	case []float64:
		for k, v := range s {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return k, v, true
			}
		}
	case []float32:
		for k, v := range s {
			if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
				return k, f, true
			}
		}
	}
	return 0, 0, false
}

// maxHeader bounds the header line Load accepts; maxParams bounds the
// parameter bytes a header may announce.
const (
	maxHeader = 16 << 20
	maxParams = 1 << 34
)

// File is the content of a model file, read without building the model:
// what a program needs that runs the model by itself (package
// fmp/fmpbeam runs the library's kinds on Apache Beam). Read returns it.
type File struct {
	// Kind is the model's kind, and Config its configuration as that kind
	// decodes it (Base.Dtype is the file's dtype). For a wrapper (an fmp
	// model) they are the backbone's.
	Kind   *layers.Kind
	Config layers.Config
	// Wrapper is the wrapper's kind for a wrapped model (nil otherwise),
	// and WrapperConfig its own configuration as saved (fmp's: the
	// propagation, the FMP configuration and the sensitive attribute).
	Wrapper       *layers.Kind
	WrapperConfig json.RawMessage
	// Graph describes the graph a graph model was saved for (nil for a
	// model without one).
	Graph *GraphInfo
	// Params are the parameters in Learnables() order, in the file's
	// dtype.
	Params []Param
}

// GraphInfo is what a model file records of its graph: the node and edge
// counts and the structure fingerprint (graph.Graph.Fingerprint, as 16
// hexadecimal digits).
type GraphInfo struct {
	Nodes, Edges int
	Fingerprint  string
}

// Param is one saved parameter.
type Param struct {
	Name  string
	Value *tensor.Dense
}

// Read reads a model file written by Save: its whole content is read and
// its checksum verified; the kind and configuration are decoded by the
// kind's declaration (the wrapper's own configuration is left as saved).
// Nothing is built. Its errors are Load's, but for those only building
// can find (ErrMismatch).
func Read(r io.Reader) (*File, error) {
	h, vals, err := read(r)
	if err != nil {
		return nil, fmt.Errorf("modelio: Read: %w", err)
	}
	k, err := layers.LookupKind(h.Kind)
	if err != nil {
		return nil, fmt.Errorf("modelio: Read: %w", err)
	}
	spec, wrapper, err := unwrap(h, k)
	if err != nil {
		return nil, fmt.Errorf("modelio: Read: %w", err)
	}
	f := &File{Params: make([]Param, len(vals))}
	if wrapper != nil {
		f.Wrapper, f.WrapperConfig = wrapper, h.Config
	}
	if f.Kind, err = layers.LookupKind(spec.Kind); err != nil {
		return nil, fmt.Errorf("modelio: Read: the backbone: %w", err)
	}
	if f.Kind.Wraps() {
		return nil, fmt.Errorf("modelio: Read: %w: the %s model's backbone is itself a wrapper (%s)", ErrFormat, h.Kind, f.Kind.Name())
	}
	if f.Config, err = f.Kind.DecodeConfig(spec.Config, vals[0].Dtype()); err != nil {
		return nil, fmt.Errorf("modelio: Read: %w: %w", ErrFormat, err)
	}
	if h.Graph != nil {
		f.Graph = &GraphInfo{Nodes: h.Graph.Nodes, Edges: h.Graph.Edges, Fingerprint: h.Graph.Fingerprint}
	}
	for i, v := range vals {
		f.Params[i] = Param{Name: h.Params[i].Name, Value: v}
	}
	return f, nil
}

// read reads a whole model file, checks its checksum and decodes its
// parameters (refusing a non-finite value).
func read(r io.Reader) (*header, []*tensor.Dense, error) {
	br := bufio.NewReader(r)
	line, err := readLine(br)
	if err != nil {
		return nil, nil, fmt.Errorf("header: %w", err)
	}
	h, err := parseHeader(line)
	if err != nil {
		return nil, nil, err
	}
	var dt tensor.Dtype
	size := 4
	switch h.Dtype {
	case "float64":
		dt, size = tensor.Float64, 8
	case "float32":
		dt = tensor.Float32
	default:
		return nil, nil, fmt.Errorf("%w: dtype %q, want float32 or float64", ErrFormat, h.Dtype)
	}
	if len(h.Params) == 0 {
		return nil, nil, fmt.Errorf("%w: the header lists no parameters", ErrFormat)
	}
	total := 0
	for i, p := range h.Params {
		n := 1
		for _, d := range p.Shape {
			if d <= 0 || n > maxParams/size/d {
				return nil, nil, fmt.Errorf("%w: parameter %d (%q) has shape %v", ErrFormat, i, p.Name, p.Shape)
			}
			n *= d
		}
		if total += n * size; total > maxParams {
			return nil, nil, fmt.Errorf("%w: the header announces more than %d bytes of parameters", ErrFormat, maxParams)
		}
	}
	payload := make([]byte, total+sha256.Size)
	if n, err := io.ReadFull(br, payload); err != nil {
		return nil, nil, fmt.Errorf("%w: the file ends after %d of %d bytes of parameters and checksum (truncated)", ErrCorrupt, n, len(payload))
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return nil, nil, fmt.Errorf("%w: data continues after the checksum", ErrCorrupt)
	}
	sum := sha256.New()
	sum.Write(line)
	sum.Write([]byte{'\n'})
	sum.Write(payload[:total])
	if !bytes.Equal(sum.Sum(nil), payload[total:]) {
		return nil, nil, fmt.Errorf("%w: checksum mismatch (the header or the parameters were changed after saving)", ErrCorrupt)
	}
	off := 0
	vals := make([]*tensor.Dense, len(h.Params))
	for i, p := range h.Params {
		v := tensor.New(tensor.WithShape(p.Shape...), tensor.Of(dt))
		switch d := v.Data().(type) {
		case []float64:
			for k := range d {
				d[k] = math.Float64frombits(binary.LittleEndian.Uint64(payload[off:]))
				off += 8
			}
		case []float32:
			for k := range d {
				d[k] = math.Float32frombits(binary.LittleEndian.Uint32(payload[off:]))
				off += 4
			}
		}
		if k, bad, ok := firstNonFinite(v.Data()); ok {
			return nil, nil, fmt.Errorf("%w: parameter %q, value %d is %v", ErrCorrupt, p.Name, k, bad)
		}
		vals[i] = v
	}
	return h, vals, nil
}

// Load reads a model written by Save, builds it in g with the builder of
// its kind and env, and sets its parameters. The whole file is read and
// its checksum verified before anything is added to g.
//
// It returns an error wrapping ErrFormat for data that is not a model
// file or a malformed header (unknown or miscased keys included),
// ErrVersion for another format version, ErrCorrupt for a truncated file,
// a checksum mismatch or a non-finite parameter, ErrUnknownKind for a
// kind neither the library's nor registered, and ErrMismatch for a graph
// (node count, edge count or structure) or sensitive attribute other than
// the one the model was saved with, or parameters whose count, names or
// shapes differ from the model its configuration builds; and the
// builder's error for a configuration it rejects.
func Load(r io.Reader, g *G.ExprGraph, env Env) (layers.Model, error) {
	h, vals, err := read(r)
	if err != nil {
		return nil, fmt.Errorf("modelio: Load: %w", err)
	}
	dt := vals[0].Dtype()
	if err := checkGraph(h, env); err != nil {
		return nil, fmt.Errorf("modelio: Load: %w", err)
	}
	m, savedName, err := build(h, g, dt, env)
	if err != nil {
		return nil, fmt.Errorf("modelio: Load: %w", err)
	}
	params := m.Learnables()
	if len(params) != len(h.Params) {
		return nil, fmt.Errorf("modelio: Load: %w: %d saved parameters, the built %s model has %d", ErrMismatch, len(h.Params), h.Kind, len(params))
	}
	for i, p := range params {
		want := h.Params[i].Name
		if env.Name != "" && savedName != "" && strings.HasPrefix(want, savedName) {
			want = env.Name + strings.TrimPrefix(want, savedName)
		}
		if p.Name() != want {
			return nil, fmt.Errorf("modelio: Load: %w: parameter %d is %q in the file, the built %s model's is %q", ErrMismatch, i, h.Params[i].Name, h.Kind, p.Name())
		}
		if !tensor.Shape(h.Params[i].Shape).Eq(p.Shape()) {
			return nil, fmt.Errorf("modelio: Load: %w: parameter %d (%q) has saved shape %v, the built model's has %v", ErrMismatch, i, h.Params[i].Name, h.Params[i].Shape, p.Shape())
		}
		if p.Dtype() != dt {
			return nil, fmt.Errorf("modelio: Load: %w: parameter %q is %v, want %v", ErrMismatch, p.Name(), p.Dtype(), dt)
		}
	}
	for i, p := range params {
		switch d := p.Value().Data().(type) {
		case []float64:
			copy(d, vals[i].Data().([]float64))
		case []float32:
			copy(d, vals[i].Data().([]float32))
		}
	}
	return m, nil
}

// headerKeys are the keys a version-2 header may hold, exactly cased.
var headerKeys = map[string]bool{"format": true, "version": true, "kind": true, "dtype": true, "graph": true, "sens": true, "config": true, "backbone": true, "params": true}

// parseHeader decodes the header line strictly: JSON object keys must be
// exactly those Save writes (encoding/json alone would match them
// case-insensitively and ignore unknown ones).
func parseHeader(line []byte) (*header, error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(line, &keys); err != nil {
		return nil, fmt.Errorf("%w: the header is not a JSON object: %w", ErrFormat, err)
	}
	var probe struct {
		Format  json.RawMessage `json:"format"`
		Version json.RawMessage `json:"version"`
	}
	probe.Format, probe.Version = keys["format"], keys["version"]
	var format string
	if json.Unmarshal(probe.Format, &format) != nil || format != FormatName {
		return nil, fmt.Errorf("%w: format %s, want %q", ErrFormat, probe.Format, FormatName)
	}
	var version int
	if err := json.Unmarshal(probe.Version, &version); err != nil {
		return nil, fmt.Errorf("%w: version %s", ErrFormat, probe.Version)
	}
	if version != FormatVersion {
		return nil, fmt.Errorf("%w: format version %d, this release reads version %d (load older files with the release that wrote them)", ErrVersion, version, FormatVersion)
	}
	for k := range keys {
		if !headerKeys[k] {
			return nil, fmt.Errorf("%w: unknown header key %q", ErrFormat, k)
		}
	}
	for _, k := range []string{"kind", "dtype", "config", "params"} {
		if _, ok := keys[k]; !ok {
			return nil, fmt.Errorf("%w: the header has no %q", ErrFormat, k)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	var h header
	if err := dec.Decode(&h); err != nil {
		return nil, fmt.Errorf("%w: header: %w", ErrFormat, err)
	}
	for _, sub := range []string{"graph", "sens", "backbone"} {
		if raw, ok := keys[sub]; ok {
			if err := exactKeys(raw, sub); err != nil {
				return nil, err
			}
		}
	}
	if raw, ok := keys["params"]; ok {
		var ps []json.RawMessage
		if err := json.Unmarshal(raw, &ps); err != nil {
			return nil, fmt.Errorf("%w: params: %w", ErrFormat, err)
		}
		for _, p := range ps {
			if err := exactKeys(p, "params"); err != nil {
				return nil, err
			}
		}
	}
	return &h, nil
}

var subKeys = map[string][]string{
	"graph":    {"nodes", "edges", "fingerprint"},
	"backbone": {"kind", "config"},
	"sens":     {"nodes", "fingerprint"},
	"params":   {"name", "shape"},
}

// exactKeys checks that the JSON object raw has exactly the keys of
// subKeys[what].
func exactKeys(raw json.RawMessage, what string) error {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrFormat, what, err)
	}
	want := subKeys[what]
	if len(keys) != len(want) {
		got := make([]string, 0, len(keys))
		for k := range keys {
			got = append(got, k)
		}
		sort.Strings(got)
		return fmt.Errorf("%w: %s has keys %v, want %v", ErrFormat, what, got, want)
	}
	for _, k := range want {
		if _, ok := keys[k]; !ok {
			return fmt.Errorf("%w: %s has no key %q", ErrFormat, what, k)
		}
	}
	return nil
}

// checkGraph compares the graph and sensitive attribute recorded in h
// with env's.
func checkGraph(h *header, env Env) error {
	if h.Graph != nil {
		if env.Graph == nil {
			return fmt.Errorf("%w: the %s model was saved for a graph of %d nodes and %d edges, but Env.Graph is nil", ErrMismatch, h.Kind, h.Graph.Nodes, h.Graph.Edges)
		}
		got := graphInfo(env.Graph)
		switch {
		case got.Nodes != h.Graph.Nodes:
			return fmt.Errorf("%w: the %s model was saved for a graph of %d nodes, Env.Graph has %d", ErrMismatch, h.Kind, h.Graph.Nodes, got.Nodes)
		case got.Edges != h.Graph.Edges:
			return fmt.Errorf("%w: the %s model was saved for a graph of %d edges, Env.Graph has %d (same %d nodes)", ErrMismatch, h.Kind, h.Graph.Edges, got.Edges, got.Nodes)
		case got.Fingerprint != h.Graph.Fingerprint:
			return fmt.Errorf("%w: the %s model was saved for another graph with the same %d nodes and %d edges (structure fingerprint %s, Env.Graph's %s)", ErrMismatch, h.Kind, got.Nodes, got.Edges, h.Graph.Fingerprint, got.Fingerprint)
		}
	}
	if h.Sens != nil && env.Sens != nil {
		got := sensInfo(env.Sens)
		if got.Nodes != h.Sens.Nodes {
			return fmt.Errorf("%w: the %s model was saved with a sensitive attribute of %d nodes, Env.Sens has %d", ErrMismatch, h.Kind, h.Sens.Nodes, got.Nodes)
		}
		if got.Fingerprint != h.Sens.Fingerprint {
			return fmt.Errorf("%w: the %s model was saved with another sensitive attribute than Env.Sens (same %d nodes)", ErrMismatch, h.Kind, got.Nodes)
		}
	}
	return nil
}

// build builds the model a header describes, with fresh parameters,
// and returns it with the configuration's saved name (the backbone's, for
// a wrapper).
func build(h *header, g *G.ExprGraph, dt tensor.Dtype, env Env) (layers.Model, string, error) {
	k, err := layers.LookupKind(h.Kind)
	if err != nil {
		return nil, "", fmt.Errorf("%w (a kind is declared by the package that defines the model: import it, as _ \"github.com/fairmp/fairmp/fmp\" for fmp)", err)
	}
	spec, _, err := unwrap(h, k)
	if err != nil {
		return nil, "", err
	}
	bk, err := layers.LookupKind(spec.Kind)
	if err != nil {
		return nil, "", fmt.Errorf("the backbone: %w", err)
	}
	if bk.Wraps() {
		return nil, "", fmt.Errorf("%w: the %s model's backbone is itself a wrapper (%s)", ErrFormat, h.Kind, bk.Name())
	}
	cfg, err := bk.DecodeConfig(spec.Config, dt)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %w", ErrFormat, err)
	}
	b := layers.BaseOf(cfg)
	saved := b.Name
	if env.Name != "" {
		b.Name = env.Name
		cfg = layers.WithBase(cfg, b)
	}
	m, err := bk.Build(g, env.Graph, cfg, env.Phase)
	if err != nil {
		return nil, "", fmt.Errorf("building the %s model: %w", bk.Name(), err)
	}
	if k.Wraps() {
		if m, err = k.Wrap(m, env.Graph, h.Config, env.Phase); err != nil {
			return nil, "", fmt.Errorf("building the %s model on its %s backbone: %w", k.Name(), bk.Name(), err)
		}
	}
	return m, saved, nil
}

// unwrap returns the specification of the model a header's kind k
// builds first (the backbone's for a wrapper, with the wrapper's kind),
// checking that a wrapper has a backbone and only a wrapper has one.
func unwrap(h *header, k *layers.Kind) (specHeader, *layers.Kind, error) {
	if k.Wraps() != (h.Backbone != nil) {
		if k.Wraps() {
			return specHeader{}, nil, fmt.Errorf("%w: the %s kind wraps a backbone, and the header has no \"backbone\"", ErrFormat, k.Name())
		}
		return specHeader{}, nil, fmt.Errorf("%w: the %s kind has no backbone, and the header has one", ErrFormat, k.Name())
	}
	if k.Wraps() {
		return *h.Backbone, k, nil
	}
	return specHeader{Kind: h.Kind, Config: h.Config}, nil, nil
}

func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxHeader {
			return nil, fmt.Errorf("%w: no newline in the first %d bytes", ErrFormat, maxHeader)
		}
		if err == nil {
			return line[:len(line)-1], nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == io.EOF {
			return nil, fmt.Errorf("%w: no newline after the header (truncated or not a fairmp model)", ErrFormat)
		}
		return nil, err
	}
}
