package modelio

import (
	"bufio"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/features"
	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/fairmp/fairmp/metrics"
)

// The saved-model format (version 3) is one line of JSON, the header,
// ended by '\n', then the parameters in binary, then a 32-byte SHA-256
// checksum of everything before it (followed, in a signed file, by a
// 64-byte ed25519 signature of that checksum):
//
//	{"format":"fairmp-model","version":3,"kind":"gcn","dtype":"float32",
//	 "graph":{"nodes":403,"edges":10621,"fingerprint":"9c0e…"},
//	 "features":{"names":["age",…],"scaling":{"min":[…],"max":[…]}},
//	 "config":{...},"params":[{"name":"gcn.0.W","shape":[96,64]},...]}
//	<parameters><sha256>[<ed25519 signature>]
//
// kind names a model kind declared in package layers (layers.Declare),
// config is the model's configuration as JSON (its dtype is the
// header's), graph describes the graph a graph model was built on (absent
// for models without one; see graph.Graph.Fingerprint), features the
// feature schema the model was trained on (names, order, scaling; absent
// when not recorded, see SaveConfig), and params lists the learnables in
// Learnables() order. A model of a wrapper kind (fmp's: FMP on a
// backbone) also records its backbone and the fingerprint of the
// sensitive attribute it uses,
//
//	"backbone":{"kind":"gcn","config":{...}},"sens":{"nodes":403,"fingerprint":"…"}
//
// with config then the wrapper's own configuration; the attribute itself
// is not in the file (Env.Sens gives it back). A signed file has
// "signed":true. The parameters follow the newline in params order, each
// row-major, as little-endian IEEE-754 values of the header's dtype (4 or
// 8 bytes each). The header is parsed strictly: every key exactly as
// written here, each once, none missing (at every level, the
// configurations' included), no other key.
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
	// ErrSignature: Env.TrustedKeys is set and the file is unsigned, or
	// its signature is by none of the keys.
	ErrSignature = errors.New("modelio: model file not signed by a trusted key")
)

// sensitive is implemented by models that carry a sensitive attribute
// (fmp's).
type sensitive interface{ SensitiveAttribute() []int }

// Env is what a model is built with besides its configuration.
type Env struct {
	// Graph is the graph a graph model is built on and applied to (nil
	// for an MLP): any graph whose nodes have the model's features, the
	// one it was trained on, a grown one, another region's or a
	// subgraph. Its node order is the order of the rows of the features
	// and of Sens.
	Graph *graph.Graph
	// SameGraph makes Load refuse a graph other than the one the model
	// was saved for (node count, edge count or structure: the file's
	// fingerprint, graph.Graph.Fingerprint), and a sensitive attribute
	// other than the saved one: for a caller that means to score the
	// training graph and wants a wrong file caught. A file that records
	// no graph passes only for a model built on none (an MLP: any
	// graph's nodes are its input); a graph model's file without the
	// graph's fingerprint (older or edited) is refused. Without it the
	// fingerprint is information (ReadHeader's Graph), and the attribute
	// is checked only when Graph is the saved graph.
	SameGraph bool
	// Phase is given to the model's stochastic layers: the task's Phase
	// when the model is to be trained further or evaluated with
	// train.Predict on a Task that has one.
	Phase *layers.Phase
	// Name, if not empty, replaces the saved configuration's name (the
	// backbone's, for a wrapper), so a saved model can be loaded twice
	// into one gorgonia graph.
	Name string
	// Sens is the sensitive attribute of Graph's nodes for a model that
	// uses one (fmp's): the file keeps only its fingerprint, so Load
	// needs it, and on the saved graph refuses another attribute than
	// the one the model was saved with. Not used for other models.
	Sens []int
	// TrustedKeys, if not empty, makes Load accept only files signed
	// (SaveConfig.SigningKey) by one of these keys (ErrSignature
	// otherwise): for model files that come from elsewhere.
	TrustedKeys []ed25519.PublicKey
}

// SaveConfig configures Save.
type SaveConfig struct {
	// Features, if not nil, is the feature schema the model was trained
	// on (datasets.Dataset.Schema: names, order, scaling); the file
	// records it, and ReadHeader gives it back, so that prediction on new
	// data can put the columns in the model's order and scale them the
	// same way. Its length must be the model's input width.
	Features *features.Schema
	// Baseline, if not nil, is the model's decisions on the nodes its
	// setting was chosen on (metrics.NewBaseline on the validation
	// nodes); the file records it, and ReadHeader gives it back, so that
	// whoever scores new nodes with the model can measure drift
	// (metrics.CompareBaseline).
	Baseline *metrics.Baseline
	// Nodes, if not nil, records the nodes of the graph the model was
	// trained on by id, with the part of the split each was in
	// (NewNodes): whoever scores a grown graph with the model later
	// tells the nodes it saw from new ones by id, whatever the rows'
	// order, and computes held-out figures only on nodes it never
	// trained or chose on (Read gives it back as File.Nodes). It costs 9
	// bytes a node in the file.
	Nodes *Nodes
	// SigningKey, if not nil, signs the file with ed25519 (the signature
	// covers the checksum, and so the whole file). Load with
	// Env.TrustedKeys checks it.
	SigningKey ed25519.PrivateKey
	// Untrained allows saving a model whose parameters are still those
	// its configuration initialises (train.Trained); without it Save
	// refuses one (train.ErrUntrained): a model saved before training is
	// almost always a mistake.
	Untrained bool
}

// DefaultSaveConfig returns no schema and no signature: Save's file.
func DefaultSaveConfig() SaveConfig { return SaveConfig{} }

// Validate checks the schema and the key's length.
func (c SaveConfig) Validate() error {
	if c.Features != nil {
		if err := c.Features.Validate(); err != nil {
			return fmt.Errorf("modelio: SaveConfig.Features: %w", err)
		}
	}
	if c.Baseline != nil {
		if err := c.Baseline.Validate(); err != nil {
			return fmt.Errorf("modelio: SaveConfig.Baseline: %w", err)
		}
	}
	if c.SigningKey != nil && len(c.SigningKey) != ed25519.PrivateKeySize {
		return fmt.Errorf("modelio: SaveConfig.SigningKey has %d bytes, want an ed25519 private key of %d", len(c.SigningKey), ed25519.PrivateKeySize)
	}
	return nil
}

// Save writes m's kind, configuration and parameters to w in the format
// described above, with cfg's feature schema, drift baseline and
// signature (DefaultSaveConfig: none of them). It returns an error for an invalid cfg, a model (or, for a wrapper such as
// an fmp.Model, a backbone) of no kind declared in package layers,
// parameters that are not finite dense float values of one dtype, a
// schema whose width is not the model's input width, or a failed write.
func Save(w io.Writer, m layers.Model, cfg SaveConfig) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if m == nil {
		return fmt.Errorf("modelio: Save: nil model")
	}
	if c, ok := m.(saveChecker); ok {
		if err := c.SaveCheck(); err != nil {
			return fmt.Errorf("modelio: Save: %w", err)
		}
	}
	h, err := describe(m)
	if err != nil {
		return fmt.Errorf("modelio: Save: %w", err)
	}
	if !cfg.Untrained {
		trained, err := train.Trained(m)
		if err != nil {
			return fmt.Errorf("modelio: Save: %w", err)
		}
		if !trained {
			return fmt.Errorf("modelio: Save: %w (or set SaveConfig.Untrained to save it anyway)", train.ErrUntrained)
		}
	}
	if cfg.Features != nil {
		if in := h.inputWidth; in != len(cfg.Features.Names) {
			return fmt.Errorf("modelio: Save: the feature schema has %d columns, the model takes %d", len(cfg.Features.Names), in)
		}
		h.Features = cfg.Features
	}
	h.Baseline = cfg.Baseline
	if cfg.Nodes != nil {
		if g := h.Graph; g != nil && g.Nodes != cfg.Nodes.Len() {
			return fmt.Errorf("modelio: Save: SaveConfig.Nodes records %d nodes, the model's graph has %d", cfg.Nodes.Len(), g.Nodes)
		}
		h.Nodes = cfg.Nodes.header()
	}
	h.Signed = cfg.SigningKey != nil
	params := m.Learnables()
	dt := params[0].Dtype()
	h.Dtype = dt.String()
	total := 0
	for _, p := range params {
		total += p.Shape().TotalSize() * int(dt.Size())
	}
	if total > MaxParamBytes {
		return fmt.Errorf("modelio: Save: the model has %d bytes of parameters, more than the %d (MaxParamBytes) Load reads", total, MaxParamBytes)
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
	hb, err := json.Marshal(h.header)
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
	if cfg.Nodes != nil {
		cfg.Nodes.write(bw)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("modelio: Save: %w", err)
	}
	digest := sum.Sum(nil)
	trailer := digest
	if h.Signed {
		trailer = append(trailer, ed25519.Sign(cfg.SigningKey, digest)...)
	}
	if _, err := w.Write(trailer); err != nil {
		return fmt.Errorf("modelio: Save: %w", err)
	}
	return nil
}

// described is a model's header before its parameters and dtype, and its
// input width.
type described struct {
	header
	inputWidth int
}

// describe returns the header of a model: its kind and configuration,
// its backbone's for a wrapper, its graph and its sensitive attribute.
func describe(m layers.Model) (*described, error) {
	k, err := layers.KindOf(m)
	if err != nil {
		return nil, err
	}
	cfg, err := k.EncodeConfig(m)
	if err != nil {
		return nil, err
	}
	d := &described{header: header{Format: FormatName, Version: FormatVersion, Kind: k.Name(), Config: cfg}}
	plain, pk := m, k
	if k.Wraps() {
		plain = m.(layers.Wrapper).Backbone()
		if pk, err = layers.KindOf(plain); err != nil {
			return nil, fmt.Errorf("the %s model's backbone: %w", k.Name(), err)
		}
		if pk.Wraps() {
			return nil, fmt.Errorf("the %s model's backbone is itself a wrapper (%s)", k.Name(), pk.Name())
		}
		bcfg, err := pk.EncodeConfig(plain)
		if err != nil {
			return nil, fmt.Errorf("the %s model's backbone: %w", k.Name(), err)
		}
		d.Backbone = &specHeader{Kind: pk.Name(), Config: bcfg}
	}
	c, err := pk.ConfigOf(plain)
	if err != nil {
		return nil, err
	}
	d.inputWidth = layers.BaseOf(c).In
	if len(m.Learnables()) == 0 {
		return nil, fmt.Errorf("the model has no learnables")
	}
	if gm, ok := m.(layers.GraphModel); ok && gm.Graph() != nil {
		d.Graph = graphInfo(gm.Graph())
	}
	if sm, ok := m.(sensitive); ok {
		d.Sens = sensInfo(sm.SensitiveAttribute())
	}
	return d, nil
}

func graphInfo(g *graph.Graph) *graphHeader {
	return &graphHeader{Nodes: g.N(), Edges: g.NumEdges(), Fingerprint: fmt.Sprintf("%016x", g.Fingerprint())}
}

// sensInfo is the attribute's length and the SHA-256 of its values as
// little-endian int64s.
func sensInfo(s []int) *sensHeader {
	h := sha256.New()
	var b [8]byte
	for _, v := range s {
		binary.LittleEndian.PutUint64(b[:], uint64(int64(v)))
		h.Write(b[:])
	}
	return &sensHeader{Nodes: len(s), Fingerprint: fmt.Sprintf("%x", h.Sum(nil))}
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

// saveChecker is a model that can refuse to be saved in its present
// state: an FMP model whose duals are not recorded (fmp.ErrNotRecorded).
type saveChecker interface{ SaveCheck() error }
