package modelio

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"

	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/features"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/metrics"
)

// maxHeader bounds the header line Load and ReadHeader accept; maxParams
// bounds the parameter bytes a header may announce (a guard against
// overflow); MaxParamBytes bounds those a configuration may imply.
const (
	maxHeader = 1 << 20
	maxParams = 1 << 34
)

// MaxParamBytes is the most parameter bytes Load and Read accept: 1 GiB,
// a GCN of 100,000 input features and 1,024 hidden units in float64 (819
// MB), far beyond the models this library trains. A file whose
// configuration implies more is refused (ErrFormat) before a byte of its
// parameters is read, and Load's memory is bounded by the parameters the
// configuration implies, never by what the header claims or by the
// file's size.
const MaxParamBytes = 1 << 30

// duplicateKeys refuses a JSON text with a key twice in one object, at
// any depth, naming the key and where it is: encoding/json would keep
// the last silently.
func duplicateKeys(line []byte) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if err := walkKeys(dec, "the header", 0); err != nil {
		return err
	}
	return nil
}

// walkKeys reads one JSON value from dec, checking its objects' keys.
func walkKeys(dec *json.Decoder, path string, depth int) error {
	if depth > 64 {
		return fmt.Errorf("%w: %s nests more than 64 levels deep", ErrFormat, path)
	}
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("%w: the header is not a JSON object: %w", ErrFormat, err)
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return fmt.Errorf("%w: the header is not a JSON object: %w", ErrFormat, err)
			}
			k, _ := kt.(string)
			if seen[k] {
				return fmt.Errorf("%w: duplicate key %q in %s (which one is meant? a file Save writes has each key once)", ErrFormat, k, path)
			}
			seen[k] = true
			sub := k
			if depth > 0 {
				sub = path + "." + k
			}
			if err := walkKeys(dec, sub, depth+1); err != nil {
				return err
			}
		}
		_, err = dec.Token()
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			if err := walkKeys(dec, fmt.Sprintf("%s[%d]", path, i), depth+1); err != nil {
				return err
			}
		}
		_, err = dec.Token()
	}
	if err != nil {
		return fmt.Errorf("%w: the header is not a JSON object: %w", ErrFormat, err)
	}
	return nil
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
	Format   string            `json:"format"`
	Version  int               `json:"version"`
	Kind     string            `json:"kind"`
	Dtype    string            `json:"dtype"`
	Graph    *graphHeader      `json:"graph,omitempty"`
	Sens     *sensHeader       `json:"sens,omitempty"`
	Features *features.Schema  `json:"features,omitempty"`
	Baseline *metrics.Baseline `json:"baseline,omitempty"`
	Nodes    *nodesHeader      `json:"nodes,omitempty"`
	Signed   bool              `json:"signed,omitempty"`
	Config   json.RawMessage   `json:"config"`
	Backbone *specHeader       `json:"backbone,omitempty"`
	Params   []paramHeader     `json:"params"`
}

// Header is what a model file says of itself, read without its
// parameters (ReadHeader).
type Header struct {
	// Kind is the model's kind ("gcn", "fmp"); Backbone a wrapper's
	// backbone kind ("" for other kinds).
	Kind, Backbone string
	// Dtype is the parameters' dtype.
	Dtype tensor.Dtype
	// Graph describes the graph a graph model was saved for (nil for a
	// model without one): its node and edge counts and the fingerprint of
	// its structure.
	Graph *GraphInfo
	// Sens describes the sensitive attribute a model that uses one was
	// saved with: its length and a SHA-256 fingerprint.
	Sens *SensInfo
	// Features is the feature schema the model was trained on, when the
	// file records it (SaveConfig.Features).
	Features *features.Schema
	// Baseline is the model's decisions on the nodes its setting was
	// chosen on, when the file records it (SaveConfig.Baseline): what
	// drift is measured against.
	Baseline *metrics.Baseline
	// Nodes is the number of nodes the file's node record holds (the
	// graph the model was trained on, by id, with their split:
	// SaveConfig.Nodes), 0 without one; NodesByRow reports a record by
	// row number. Read returns the record itself (File.Nodes).
	Nodes      int
	NodesByRow bool
	// Signed reports a signature (checked by Load with Env.TrustedKeys).
	Signed bool
	// Params lists the learnables' names and shapes.
	Params []layers.Param
}

// GraphInfo describes the graph a model was saved for.
type GraphInfo struct {
	Nodes, Edges int
	Fingerprint  string
}

// Describes reports whether g is the graph the model was saved for: the
// same node count, edge count and structure fingerprint (what
// Env.SameGraph asks Load to check).
func (i GraphInfo) Describes(g *graph.Graph) bool {
	h := graphInfo(g)
	return i.Nodes == h.Nodes && i.Edges == h.Edges && i.Fingerprint == h.Fingerprint
}

// SensInfo describes the sensitive attribute a model was saved with.
type SensInfo struct {
	Nodes       int
	Fingerprint string
}

// ReadHeader reads a model file's header line from r and nothing else
// (at most 1 MiB), parsed as strictly as Load parses it: enough to learn
// the model's dtype, graph and feature schema before loading data for it.
// It does not verify the checksum or the signature, so a damaged header
// may read as another schema or graph: to act on a file from elsewhere,
// verify it first with Read (which returns the same Header). It returns
// an error wrapping ErrFormat or ErrVersion.
func ReadHeader(r io.Reader) (*Header, error) {
	line, err := readLine(bufio.NewReader(r))
	if err != nil {
		return nil, fmt.Errorf("modelio: ReadHeader: %w", err)
	}
	h, err := parseHeader(line)
	if err != nil {
		return nil, fmt.Errorf("modelio: ReadHeader: %w", err)
	}
	dt, _, err := h.dtype()
	if err != nil {
		return nil, fmt.Errorf("modelio: ReadHeader: %w", err)
	}
	return headerOf(h, dt), nil
}

// headerOf is the exported view of a parsed header.
func headerOf(h *header, dt tensor.Dtype) *Header {
	out := &Header{Kind: h.Kind, Dtype: dt, Features: h.Features, Baseline: h.Baseline, Signed: h.Signed}
	if h.Nodes != nil {
		out.Nodes, out.NodesByRow = h.Nodes.Count, h.Nodes.Key == keyByRow
	}
	if h.Backbone != nil {
		out.Backbone = h.Backbone.Kind
	}
	if h.Graph != nil {
		out.Graph = &GraphInfo{Nodes: h.Graph.Nodes, Edges: h.Graph.Edges, Fingerprint: h.Graph.Fingerprint}
	}
	if h.Sens != nil {
		out.Sens = &SensInfo{Nodes: h.Sens.Nodes, Fingerprint: h.Sens.Fingerprint}
	}
	for _, p := range h.Params {
		out.Params = append(out.Params, layers.Param{Name: p.Name, Shape: append([]int(nil), p.Shape...)})
	}
	return out
}

// dtype returns the header's dtype and its size in bytes.
func (h *header) dtype() (tensor.Dtype, int, error) {
	switch h.Dtype {
	case "float64":
		return tensor.Float64, 8, nil
	case "float32":
		return tensor.Float32, 4, nil
	}
	return tensor.Dtype{}, 0, fmt.Errorf("%w: dtype %q, want float32 or float64", ErrFormat, h.Dtype)
}

// paramBytes returns the bytes the parameters take, checking every shape
// (positive dimensions, no overflow, at most maxParams in all).
func (h *header) paramBytes(size int) (int, error) {
	total := 0
	for i, p := range h.Params {
		n := 1
		if len(p.Shape) == 0 {
			return 0, fmt.Errorf("%w: parameter %d (%q) has no shape", ErrFormat, i, p.Name)
		}
		for _, d := range p.Shape {
			if d <= 0 || n > maxParams/size/d {
				return 0, fmt.Errorf("%w: parameter %d (%q) has shape %v", ErrFormat, i, p.Name, p.Shape)
			}
			n *= d
		}
		if total += n * size; total > maxParams {
			return 0, fmt.Errorf("%w: the header announces more than %d bytes of parameters", ErrFormat, maxParams)
		}
	}
	return total, nil
}

// headerKeys are the keys a version-3 header may hold, exactly cased.
var headerKeys = map[string]bool{"format": true, "version": true, "kind": true, "dtype": true, "graph": true, "sens": true, "features": true, "baseline": true, "nodes": true, "signed": true, "config": true, "backbone": true, "params": true}

// parseHeader decodes the header line strictly: JSON object keys must be
// exactly those Save writes (encoding/json alone would match them
// case-insensitively and ignore unknown ones).
func parseHeader(line []byte) (*header, error) {
	if err := duplicateKeys(line); err != nil {
		return nil, err
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(line, &keys); err != nil {
		return nil, fmt.Errorf("%w: the header is not a JSON object: %w", ErrFormat, err)
	}
	var format string
	if json.Unmarshal(keys["format"], &format) != nil || format != FormatName {
		return nil, fmt.Errorf("%w: format %s, want %q", ErrFormat, keys["format"], FormatName)
	}
	var version int
	if err := json.Unmarshal(keys["version"], &version); err != nil {
		return nil, fmt.Errorf("%w: version %s", ErrFormat, keys["version"])
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
	for _, sub := range []string{"graph", "sens", "backbone", "nodes"} {
		if raw, ok := keys[sub]; ok {
			if err := exactKeys(raw, sub); err != nil {
				return nil, err
			}
		}
	}
	if raw, ok := keys["features"]; ok {
		if err := exactKeys(raw, "features"); err != nil {
			return nil, err
		}
		if h.Features == nil {
			return nil, fmt.Errorf("%w: features is null", ErrFormat)
		}
		if err := h.Features.Validate(); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrFormat, err)
		}
	}
	if _, ok := keys["nodes"]; ok {
		if h.Nodes == nil {
			return nil, fmt.Errorf("%w: nodes is null", ErrFormat)
		}
		if err := h.Nodes.check(); err != nil {
			return nil, err
		}
	}
	if raw, ok := keys["baseline"]; ok {
		if h.Baseline == nil {
			return nil, fmt.Errorf("%w: baseline is null", ErrFormat)
		}
		if err := h.Baseline.Validate(); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrFormat, err)
		}
		// encoding/json matches keys case-insensitively and leaves a
		// missing one zero: the baseline must hold exactly the keys and
		// values its decoded form writes.
		var got, want any
		again, err := json.Marshal(h.Baseline)
		if err != nil || json.Unmarshal(raw, &got) != nil || json.Unmarshal(again, &want) != nil || !reflect.DeepEqual(got, want) {
			return nil, fmt.Errorf("%w: the baseline is not as Save writes it (keys exactly cased, none missing or unknown)", ErrFormat)
		}
	}
	var ps []json.RawMessage
	if err := json.Unmarshal(keys["params"], &ps); err != nil {
		return nil, fmt.Errorf("%w: params: %w", ErrFormat, err)
	}
	for _, p := range ps {
		if err := exactKeys(p, "params"); err != nil {
			return nil, err
		}
	}
	if len(h.Params) == 0 {
		return nil, fmt.Errorf("%w: the header lists no parameter", ErrFormat)
	}
	return &h, nil
}

var subKeys = map[string][]string{
	"graph":    {"nodes", "edges", "fingerprint"},
	"backbone": {"kind", "config"},
	"sens":     {"nodes", "fingerprint"},
	"params":   {"name", "shape"},
	"nodes":    {"count", "key"},
	"features": {"names", "scaling", "categorical"},
}

// exactKeys checks that the JSON object raw has exactly the keys of
// subKeys[what] ("scaling" of features is optional).
func exactKeys(raw json.RawMessage, what string) error {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrFormat, what, err)
	}
	want := subKeys[what]
	optional := map[string]bool{}
	if what == "features" {
		optional["scaling"], optional["categorical"] = true, true
		if s, ok := keys["scaling"]; ok {
			if err := exactObjectKeys(s, "features.scaling", "min", "max"); err != nil {
				return err
			}
		}
		if s, ok := keys["categorical"]; ok {
			var cats []json.RawMessage
			if err := json.Unmarshal(s, &cats); err != nil {
				return fmt.Errorf("%w: features.categorical: %w", ErrFormat, err)
			}
			for _, c := range cats {
				if err := exactObjectKeys(c, "features.categorical", "column", "levels"); err != nil {
					return err
				}
			}
		}
	}
	for k := range keys {
		found := false
		for _, w := range want {
			found = found || k == w
		}
		if !found {
			got := make([]string, 0, len(keys))
			for g := range keys {
				got = append(got, g)
			}
			sort.Strings(got)
			return fmt.Errorf("%w: %s has keys %v, want %v", ErrFormat, what, got, want)
		}
	}
	for _, k := range want {
		if _, ok := keys[k]; !ok && !optional[k] {
			return fmt.Errorf("%w: %s has no key %q", ErrFormat, what, k)
		}
	}
	return nil
}

// exactObjectKeys checks that raw is an object with exactly the keys.
func exactObjectKeys(raw json.RawMessage, what string, want ...string) error {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrFormat, what, err)
	}
	if len(keys) != len(want) {
		return fmt.Errorf("%w: %s has %d keys, want %v", ErrFormat, what, len(keys), want)
	}
	for _, k := range want {
		if _, ok := keys[k]; !ok {
			return fmt.Errorf("%w: %s has no key %q", ErrFormat, what, k)
		}
	}
	return nil
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
