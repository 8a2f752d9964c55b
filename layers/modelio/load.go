package modelio

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/layers"
)

// Load reads a model written by Save, builds it in g through its kind's
// declaration with env, and sets its parameters.
//
// Nothing is added to g, and nothing is allocated beyond what the file
// really holds, before the file is verified: the header line is read
// (at most 1 MiB) and parsed strictly; the parameters are read as they
// come (memory grows with the bytes actually read, so a short file that
// announces a huge parameter fails as truncated, without allocating it);
// the checksum, and with Env.TrustedKeys the signature, are checked; the
// graph and the sensitive attribute are compared with env's; the
// configuration is decoded strictly and validated (step counts are
// bounded by layers.MaxSteps), and the parameter names and shapes it
// builds (layers.Kind.Params) are compared with the file's. Only then is
// the model built. Memory and time are bounded by the file's own size and
// by env's graph.
//
// It returns an error wrapping ErrFormat for data that is not a model
// file or a malformed header or configuration (unknown or miscased keys
// included), ErrVersion for another format version, ErrCorrupt for a
// truncated file, a checksum mismatch or a non-finite parameter,
// ErrSignature for a file not signed by one of env's TrustedKeys,
// ErrUnknownKind for a kind no package of the program declares, and
// ErrMismatch for a graph model without Env.Graph, a model that needs
// Env.Sens without it, another sensitive attribute on the saved graph,
// another graph with Env.SameGraph, or parameters whose count, names or
// shapes differ from what the configuration builds.
//
// The checksum detects accidents (a truncated copy, a flipped bit), not
// edits: anyone can recompute it. Load model files from elsewhere with
// Env.TrustedKeys, or only from sources you trust.
func Load(r io.Reader, g *G.ExprGraph, env Env) (layers.Model, error) {
	h, dt, payload, err := readVerified(r, env.TrustedKeys)
	if err != nil {
		return nil, fmt.Errorf("modelio: Load: %w", err)
	}
	if err := checkGraph(h, env); err != nil {
		return nil, fmt.Errorf("modelio: Load: %w", err)
	}
	m, _, err := build(h, g, dt, env)
	if err != nil {
		return nil, fmt.Errorf("modelio: Load: %w", err)
	}
	params := m.Learnables()
	if len(params) != len(h.Params) {
		return nil, fmt.Errorf("modelio: Load: %w: %d saved parameters, the built %s model has %d", ErrMismatch, len(h.Params), h.Kind, len(params))
	}
	for i, p := range params {
		if !tensor.Shape(h.Params[i].Shape).Eq(p.Shape()) || p.Dtype() != dt {
			return nil, fmt.Errorf("modelio: Load: %w: parameter %d (%q) has saved shape %v (%v), the built model's has %v (%v)", ErrMismatch, i, h.Params[i].Name, h.Params[i].Shape, dt, p.Shape(), p.Dtype())
		}
	}
	// Decode into fresh buffers first, so that a non-finite value leaves
	// the built parameters untouched.
	vals, err := decodeParams(h, dt, payload)
	if err != nil {
		return nil, fmt.Errorf("modelio: Load: %w", err)
	}
	for i, p := range params {
		switch d := p.Value().Data().(type) {
		case []float64:
			copy(d, vals[i].([]float64))
		case []float32:
			copy(d, vals[i].([]float32))
		}
	}
	return m, nil
}

// File is a model file's content, verified and decoded without building
// the model: what a program needs that runs the model by itself (package
// fmp/fmpbeam runs the library's kinds on Apache Beam). Read returns it.
type File struct {
	// Header is what the file says of itself, as ReadHeader gives it.
	Header *Header
	// Kind is the model's kind, and Config its configuration as that kind
	// decodes it (its Base.Dtype is the file's dtype). For a wrapped model
	// (an fmp model) they are the backbone's.
	Kind   *layers.Kind
	Config layers.Config
	// Wrapper is the wrapper's kind for a wrapped model (nil otherwise),
	// and WrapperConfig its own configuration as saved (fmp's: the
	// propagation, the FMP configuration and the sensitive attribute's
	// settings), checked by the kind but not decoded.
	Wrapper       *layers.Kind
	WrapperConfig json.RawMessage
	// Graph describes the graph a graph model was saved for (nil for a
	// model without one). Read does not compare it with any graph.
	Graph *GraphInfo
	// Params are the parameters in Learnables() order, in the file's
	// dtype, with the names and shapes its configuration builds.
	Params []Param
}

// Param is one saved parameter.
type Param struct {
	Name  string
	Value *tensor.Dense
}

// Read reads a model file written by Save and verifies it as Load does
// (the header strictly, the checksum, with trusted keys the signature,
// the configuration and the parameters' names and shapes against what it
// builds), without building the model or comparing it with a graph. Its
// errors are Load's but ErrMismatch for the graph and the attribute.
func Read(r io.Reader, trusted ...ed25519.PublicKey) (*File, error) {
	h, dt, payload, err := readVerified(r, trusted)
	if err != nil {
		return nil, fmt.Errorf("modelio: Read: %w", err)
	}
	k, err := layers.LookupKind(h.Kind)
	if err != nil {
		return nil, fmt.Errorf("modelio: Read: %w (a kind of your own is declared by the package that defines the model: import that package)", err)
	}
	spec, err := backboneSpec(h, k)
	if err != nil {
		return nil, fmt.Errorf("modelio: Read: %w", err)
	}
	f := &File{}
	if k.Wraps() {
		f.Wrapper, f.WrapperConfig = k, h.Config
	}
	if f.Kind, f.Config, err = decodeBackbone(h, spec, dt); err != nil {
		return nil, fmt.Errorf("modelio: Read: %w", err)
	}
	if h.Features != nil && len(h.Features.Names) != layers.BaseOf(f.Config).In {
		return nil, fmt.Errorf("modelio: Read: %w: the feature schema has %d columns, the %s configuration takes %d", ErrFormat, len(h.Features.Names), f.Kind.Name(), layers.BaseOf(f.Config).In)
	}
	if err := checkParams(h, f.Kind, f.Config, "", ""); err != nil {
		return nil, fmt.Errorf("modelio: Read: %w", err)
	}
	vals, err := decodeParams(h, dt, payload)
	if err != nil {
		return nil, fmt.Errorf("modelio: Read: %w", err)
	}
	for i, p := range h.Params {
		f.Params = append(f.Params, Param{Name: p.Name, Value: tensor.New(tensor.WithShape(p.Shape...), tensor.WithBacking(vals[i]))})
	}
	f.Header = headerOf(h, dt)
	f.Graph = f.Header.Graph
	return f, nil
}

// readVerified reads a whole model file: the header line (strictly
// parsed), the parameters as they come (memory grows with the bytes that
// arrive, up to what the header announces), the checksum, and with keys
// the signature. It returns the header, the dtype and the parameters'
// bytes.
func readVerified(r io.Reader, keys []ed25519.PublicKey) (*header, tensor.Dtype, []byte, error) {
	br := bufio.NewReader(r)
	line, err := readLine(br)
	if err != nil {
		return nil, tensor.Dtype{}, nil, fmt.Errorf("header: %w", err)
	}
	h, err := parseHeader(line)
	if err != nil {
		return nil, tensor.Dtype{}, nil, err
	}
	dt, size, err := h.dtype()
	if err != nil {
		return nil, tensor.Dtype{}, nil, err
	}
	total, err := h.paramBytes(size)
	if err != nil {
		return nil, tensor.Dtype{}, nil, err
	}
	trailer := sha256.Size
	if h.Signed {
		trailer += ed25519.SignatureSize
	}
	var buf bytes.Buffer
	want := int64(total + trailer)
	if n, err := io.CopyN(&buf, br, want); err != nil {
		if err == io.EOF {
			return nil, tensor.Dtype{}, nil, fmt.Errorf("%w: the file ends after %d of %d bytes of parameters and checksum (truncated)", ErrCorrupt, n, want)
		}
		return nil, tensor.Dtype{}, nil, err
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return nil, tensor.Dtype{}, nil, fmt.Errorf("%w: data continues after the checksum", ErrCorrupt)
	}
	payload := buf.Bytes()
	sum := sha256.New()
	sum.Write(line)
	sum.Write([]byte{'\n'})
	sum.Write(payload[:total])
	digest := sum.Sum(nil)
	if !bytes.Equal(digest, payload[total:total+sha256.Size]) {
		return nil, tensor.Dtype{}, nil, fmt.Errorf("%w: checksum mismatch (the header or the parameters were changed after saving)", ErrCorrupt)
	}
	if err := checkSignature(h, digest, payload[total+sha256.Size:], keys); err != nil {
		return nil, tensor.Dtype{}, nil, err
	}
	return h, dt, payload[:total], nil
}

// decodeParams decodes the parameters' bytes into one []float32 or
// []float64 per parameter, refusing a non-finite value.
func decodeParams(h *header, dt tensor.Dtype, payload []byte) ([]any, error) {
	off := 0
	vals := make([]any, len(h.Params))
	for i, p := range h.Params {
		n := tensor.Shape(p.Shape).TotalSize()
		switch dt {
		case tensor.Float64:
			s := make([]float64, n)
			for k := range s {
				s[k] = math.Float64frombits(binary.LittleEndian.Uint64(payload[off:]))
				off += 8
			}
			vals[i] = s
		default:
			s := make([]float32, n)
			for k := range s {
				s[k] = math.Float32frombits(binary.LittleEndian.Uint32(payload[off:]))
				off += 4
			}
			vals[i] = s
		}
		if k, v, bad := firstNonFinite(vals[i]); bad {
			return nil, fmt.Errorf("%w: parameter %q, value %d is %v", ErrCorrupt, p.Name, k, v)
		}
	}
	return vals, nil
}

// checkSignature verifies sig, the file's signature of its checksum,
// against keys; with no keys a signature is not required.
func checkSignature(h *header, digest, sig []byte, keys []ed25519.PublicKey) error {
	if len(keys) == 0 {
		return nil
	}
	if !h.Signed {
		return fmt.Errorf("%w: the file is unsigned", ErrSignature)
	}
	for _, k := range keys {
		if len(k) == ed25519.PublicKeySize && ed25519.Verify(k, digest, sig) {
			return nil
		}
	}
	return fmt.Errorf("%w: the signature is by none of the %d trusted keys", ErrSignature, len(keys))
}

// checkGraph checks env's graph and sensitive attribute against the
// fingerprints h records. A graph model needs a graph and a model that
// uses a sensitive attribute needs one, always. The graph itself may be
// any graph (a grown one, another region's, a subgraph) unless
// env.SameGraph asks for the saved one. On the saved graph, asked for or
// not, the attribute must be the saved one: the same nodes with other
// groups is a mistake the fingerprint catches.
func checkGraph(h *header, env Env) error {
	if h.Graph != nil && env.Graph == nil {
		return fmt.Errorf("%w: the %s model was saved for a graph of %d nodes and %d edges, but Env.Graph is nil", ErrMismatch, h.Kind, h.Graph.Nodes, h.Graph.Edges)
	}
	if h.Sens != nil && env.Sens == nil {
		return fmt.Errorf("%w: the %s model uses a sensitive attribute of %d nodes and the file keeps only its fingerprint: give it as Env.Sens", ErrMismatch, h.Kind, h.Sens.Nodes)
	}
	same := true
	if h.Graph != nil {
		got := graphInfo(env.Graph)
		var differs string
		switch {
		case got.Nodes != h.Graph.Nodes:
			differs = fmt.Sprintf("the %s model was saved for a graph of %d nodes, Env.Graph has %d", h.Kind, h.Graph.Nodes, got.Nodes)
		case got.Edges != h.Graph.Edges:
			differs = fmt.Sprintf("the %s model was saved for a graph of %d edges, Env.Graph has %d (same %d nodes)", h.Kind, h.Graph.Edges, got.Edges, got.Nodes)
		case got.Fingerprint != h.Graph.Fingerprint:
			differs = fmt.Sprintf("the %s model was saved for another graph with the same %d nodes and %d edges: the edges differ (structure fingerprint %s, Env.Graph's %s)", h.Kind, got.Nodes, got.Edges, h.Graph.Fingerprint, got.Fingerprint)
		}
		if differs != "" {
			if env.SameGraph {
				return fmt.Errorf("%w: %s (Env.SameGraph asks for the saved graph)", ErrMismatch, differs)
			}
			same = false
		}
	}
	if h.Sens != nil && (same || env.SameGraph) {
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
// after checking its configuration's parameters against the header's;
// it returns the model and the configuration's saved name (the
// backbone's, for a wrapper).
func build(h *header, g *G.ExprGraph, dt tensor.Dtype, env Env) (layers.Model, string, error) {
	k, err := layers.LookupKind(h.Kind)
	if err != nil {
		return nil, "", fmt.Errorf("%w (a kind of your own is declared by the package that defines the model: import that package)", err)
	}
	spec, err := backboneSpec(h, k)
	if err != nil {
		return nil, "", err
	}
	bk, cfg, err := decodeBackbone(h, spec, dt)
	if err != nil {
		return nil, "", err
	}
	b := layers.BaseOf(cfg)
	saved := b.Name
	if env.Name != "" {
		b.Name = env.Name
		cfg = layers.WithBase(cfg, b)
	}
	if h.Features != nil && len(h.Features.Names) != b.In {
		return nil, "", fmt.Errorf("%w: the feature schema has %d columns, the %s configuration takes %d", ErrFormat, len(h.Features.Names), bk.Name(), b.In)
	}
	if err := checkParams(h, bk, cfg, saved, env.Name); err != nil {
		return nil, "", err
	}
	m, err := bk.Build(g, env.Graph, cfg, env.Phase)
	if err != nil {
		return nil, "", fmt.Errorf("building the %s model: %w", bk.Name(), err)
	}
	if k.Wraps() {
		if m, err = k.Wrap(m, env.Graph, env.Sens, h.Config, env.Phase); err != nil {
			return nil, "", fmt.Errorf("building the %s model on its %s backbone: %w", k.Name(), bk.Name(), err)
		}
	}
	return m, saved, nil
}

// backboneSpec returns the kind and configuration of the model a header
// describes: the backbone's for a wrapper kind (whose own configuration
// k checks), the header's own otherwise.
func backboneSpec(h *header, k *layers.Kind) (specHeader, error) {
	if k.Wraps() != (h.Backbone != nil) {
		if k.Wraps() {
			return specHeader{}, fmt.Errorf("%w: the %s kind wraps a backbone, and the header has no \"backbone\"", ErrFormat, k.Name())
		}
		return specHeader{}, fmt.Errorf("%w: the %s kind has no backbone, and the header has one", ErrFormat, k.Name())
	}
	if !k.Wraps() {
		return specHeader{Kind: h.Kind, Config: h.Config}, nil
	}
	if err := k.CheckConfig(h.Config); err != nil {
		return specHeader{}, fmt.Errorf("%w: %w", ErrFormat, err)
	}
	return *h.Backbone, nil
}

// decodeBackbone looks spec's kind up and decodes its configuration
// strictly, in dtype dt; a backbone that is itself a wrapper is refused.
func decodeBackbone(h *header, spec specHeader, dt tensor.Dtype) (*layers.Kind, layers.Config, error) {
	bk, err := layers.LookupKind(spec.Kind)
	if err != nil {
		return nil, nil, fmt.Errorf("the backbone: %w", err)
	}
	if bk.Wraps() {
		return nil, nil, fmt.Errorf("%w: the %s model's backbone is itself a wrapper (%s)", ErrFormat, h.Kind, bk.Name())
	}
	cfg, err := bk.DecodeConfig(spec.Config, dt)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrFormat, err)
	}
	return bk, cfg, nil
}

// checkParams compares the parameters cfg builds (their names with the
// saved name replaced by name, when set) with the header's, before
// anything is built.
func checkParams(h *header, k *layers.Kind, cfg layers.Config, saved, name string) error {
	want, err := k.Params(cfg)
	if err != nil {
		return err
	}
	if len(want) != len(h.Params) {
		return fmt.Errorf("%w: the file holds %d parameters, its %s configuration builds %d", ErrMismatch, len(h.Params), k.Name(), len(want))
	}
	for i, p := range h.Params {
		pn := p.Name
		if name != "" && saved != "" && strings.HasPrefix(pn, saved) {
			pn = name + strings.TrimPrefix(pn, saved)
		}
		if pn != want[i].Name {
			return fmt.Errorf("%w: parameter %d is %q in the file, its %s configuration builds %q", ErrMismatch, i, p.Name, k.Name(), want[i].Name)
		}
		if !tensor.Shape(p.Shape).Eq(tensor.Shape(want[i].Shape)) {
			return fmt.Errorf("%w: parameter %d (%q) has shape %v in the file, its %s configuration builds %v", ErrMismatch, i, p.Name, p.Shape, k.Name(), want[i].Shape)
		}
	}
	return nil
}
