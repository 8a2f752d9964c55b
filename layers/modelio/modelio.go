package modelio

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/layers"

	"github.com/fairmp/fairmp/graph"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The saved-model format (version 1) is one line of JSON, the header,
// ended by '\n', followed by the parameters in binary:
//
//	{"format":"fairmp-model","version":1,"kind":"gcn","dtype":"float32",
//	 "nodes":403,"config":{...},"params":[{"name":"gcn.0.W","shape":[96,64]},...]}
//
// kind names an entry of the table of kinds (the library's own, or one
// added with Register), config is the model's
// configuration as JSON (its dtype is the header's), nodes is the number
// of graph nodes a graph model was built for (0 for models without a
// graph), and params lists the learnables in Learnables() order. The
// parameters follow the newline in that order, each row-major, as
// little-endian IEEE-754 values of the header's dtype (4 or 8 bytes each).
const (
	FormatName    = "fairmp-model"
	FormatVersion = 1
)

// Savable is a Model that Save can write: it names its kind
// and returns its configuration (any value that encodes to the JSON the
// kind's builder reads).
type Savable interface {
	layers.Model
	Kind() string
	SaveConfig() any
}

// Env is what a builder needs besides the configuration.
type Env struct {
	// Graph is the graph a graph model is built on (nil for an MLP).
	Graph *graph.Graph
	// Phase is given to the model's stochastic layers.
	Phase *layers.Phase
	// Name, if not empty, replaces the saved configuration's "name", so a
	// saved model can be loaded twice into one gorgonia graph.
	Name string
}

type paramHeader struct {
	Name  string `json:"name"`
	Shape []int  `json:"shape"`
}

type header struct {
	Format  string          `json:"format"`
	Version int             `json:"version"`
	Kind    string          `json:"kind"`
	Dtype   string          `json:"dtype"`
	Nodes   int             `json:"nodes"`
	Config  json.RawMessage `json:"config"`
	Params  []paramHeader   `json:"params"`
}

// matrixer is implemented by graph models.
type matrixer interface{ Matrix() *graph.Matrix }

// Save writes m's kind, configuration and parameters to w in the format
// described above. It returns an error if m is not Savable, its kind is
// not registered, its parameters are not dense float values of one dtype,
// or writing fails.
func Save(w io.Writer, m layers.Model) error {
	s, ok := m.(Savable)
	if !ok {
		return fmt.Errorf("modelio: Save: %T does not implement Savable", m)
	}
	if _, ok := builder(s.Kind()); !ok {
		return fmt.Errorf("modelio: Save: unknown kind %q: not one of the library's and not registered (modelio.Register)", s.Kind())
	}
	cfg, err := json.Marshal(s.SaveConfig())
	if err != nil {
		return fmt.Errorf("modelio: Save: configuration: %w", err)
	}
	params := m.Learnables()
	if len(params) == 0 {
		return fmt.Errorf("modelio: Save: the model has no learnables")
	}
	dt := params[0].Dtype()
	h := header{Format: FormatName, Version: FormatVersion, Kind: s.Kind(), Dtype: dt.String(), Config: cfg}
	if mx, ok := m.(matrixer); ok {
		h.Nodes, _ = mx.Matrix().Dims()
	}
	for _, p := range params {
		if _, ok := p.Value().(*tensor.Dense); !ok || p.Dtype() != dt {
			return fmt.Errorf("modelio: Save: parameter %s, want a dense %v value", opkit.DescribeNode(p), dt)
		}
		h.Params = append(h.Params, paramHeader{Name: p.Name(), Shape: append([]int(nil), p.Shape()...)})
	}
	hb, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("modelio: Save: header: %w", err)
	}
	bw := bufio.NewWriter(w)
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
	return nil
}

// maxHeader bounds the header line Load accepts.
const maxHeader = 16 << 20

// Load reads a model written by Save, builds it in g with the builder of its kind// builder and env, and sets its parameters. It returns an error naming
// the problem for another format, an unsupported version, an unknown
// kind, a configuration the builder rejects, a graph of another size than
// the saved model's, parameters whose count, names or shapes differ from
// the built model's, or truncated data.
func Load(r io.Reader, g *G.ExprGraph, env Env) (layers.Model, error) {
	br := bufio.NewReader(r)
	line, err := readLine(br)
	if err != nil {
		return nil, fmt.Errorf("modelio: Load: header: %w", err)
	}
	var h header
	if err := json.Unmarshal(line, &h); err != nil {
		return nil, fmt.Errorf("modelio: Load: header is not valid JSON: %w", err)
	}
	if h.Format != FormatName {
		return nil, fmt.Errorf("modelio: Load: format %q, want %q", h.Format, FormatName)
	}
	if h.Version != FormatVersion {
		return nil, fmt.Errorf("modelio: Load: format version %d, this library reads version %d", h.Version, FormatVersion)
	}
	var dt tensor.Dtype
	switch h.Dtype {
	case "float64":
		dt = tensor.Float64
	case "float32":
		dt = tensor.Float32
	default:
		return nil, fmt.Errorf("modelio: Load: dtype %q, want float32 or float64", h.Dtype)
	}
	build, ok := builder(h.Kind)
	if !ok {
		return nil, fmt.Errorf("modelio: Load: unknown kind %q (known: %v)", h.Kind, Kinds())
	}
	if h.Nodes > 0 {
		if env.Graph == nil {
			return nil, fmt.Errorf("modelio: Load: the %s model was saved for a graph of %d nodes, but env.Graph is nil", h.Kind, h.Nodes)
		}
		if env.Graph.N() != h.Nodes {
			return nil, fmt.Errorf("modelio: Load: the %s model was saved for a graph of %d nodes, env.Graph has %d", h.Kind, h.Nodes, env.Graph.N())
		}
	}
	cfg := h.Config
	if env.Name != "" {
		var mcfg map[string]json.RawMessage
		if err := json.Unmarshal(cfg, &mcfg); err != nil {
			return nil, fmt.Errorf("modelio: Load: configuration: %w", err)
		}
		nb, _ := json.Marshal(env.Name)
		mcfg["name"] = nb
		if cfg, err = json.Marshal(mcfg); err != nil {
			return nil, fmt.Errorf("modelio: Load: configuration: %w", err)
		}
	}
	m, err := build(g, cfg, dt, env)
	if err != nil {
		return nil, fmt.Errorf("modelio: Load: building the %s model: %w", h.Kind, err)
	}
	params := m.Learnables()
	if len(params) != len(h.Params) {
		return nil, fmt.Errorf("modelio: Load: %d saved parameters, the built %s model has %d", len(h.Params), h.Kind, len(params))
	}
	for i, p := range params {
		if !tensor.Shape(h.Params[i].Shape).Eq(p.Shape()) {
			return nil, fmt.Errorf("modelio: Load: parameter %d (%q) has saved shape %v, the built model's %q has %v", i, h.Params[i].Name, h.Params[i].Shape, p.Name(), p.Shape())
		}
		if p.Dtype() != dt {
			return nil, fmt.Errorf("modelio: Load: parameter %q is %v, want %v", p.Name(), p.Dtype(), dt)
		}
	}
	var b [8]byte
	for i, p := range params {
		switch s := p.Value().Data().(type) {
		case []float64:
			for k := range s {
				if _, err := io.ReadFull(br, b[:8]); err != nil {
					return nil, fmt.Errorf("modelio: Load: parameter %q, value %d of %d: %w", h.Params[i].Name, k, len(s), err)
				}
				s[k] = math.Float64frombits(binary.LittleEndian.Uint64(b[:8]))
			}
		case []float32:
			for k := range s {
				if _, err := io.ReadFull(br, b[:4]); err != nil {
					return nil, fmt.Errorf("modelio: Load: parameter %q, value %d of %d: %w", h.Params[i].Name, k, len(s), err)
				}
				s[k] = math.Float32frombits(binary.LittleEndian.Uint32(b[:4]))
			}
		}
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return nil, fmt.Errorf("modelio: Load: data continues after the last parameter")
	}
	return m, nil
}

func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxHeader {
			return nil, fmt.Errorf("longer than %d bytes", maxHeader)
		}
		if err == nil {
			return line[:len(line)-1], nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == io.EOF {
			return nil, fmt.Errorf("no newline after the header (truncated or not a fairmp model)")
		}
		return nil, err
	}
}
