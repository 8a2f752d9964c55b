package modelio

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"math"
	"strings"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/layers"
)

// Load reads a model written by Save, builds it in g through its kind's
// declaration with env, and sets its parameters.
//
// Nothing is added to g before the file is verified, and memory is
// bounded by what the file's configuration implies (at most
// MaxParamBytes), never by what the header claims or the file's size:
// the header line is read (at most 1 MiB) and parsed strictly (no
// unknown, miscased, duplicate or missing key at any level); the
// configuration is decoded and validated (step counts are bounded by
// layers.MaxSteps) and the parameter names and shapes it builds
// (layers.Kind.Params) are compared with the header's list before a
// byte of parameters is read; when r tells its size (a regular *os.File,
// a bytes.Reader) a file of another size than the header announces is
// refused then too (ErrCorrupt, naming both sizes), without reading it
// (and one longer than any model file, whatever its header);
// the parameters are read in chunks as they arrive; the checksum, and with Env.TrustedKeys the signature, are
// checked; then the graph and the sensitive attribute are compared with
// env's. If the header cannot be interpreted, the rest of the file is
// hashed first, so that a damaged file is reported as ErrCorrupt rather
// than as what its damaged header reads. Only then is the model built.
//
// It returns an error wrapping ErrFormat for data that is not a model
// file or a malformed header or configuration (unknown or miscased keys
// included), ErrVersion for another format version, ErrCorrupt for a
// truncated file, a checksum mismatch or a non-finite parameter,
// ErrSignature for a file not signed by one of env's TrustedKeys,
// ErrUnknownKind for a kind no package of the program declares, and
// ErrMismatch for a graph model without Env.Graph, a model that needs
// Env.Sens without it, another sensitive attribute on the saved graph,
// another graph with Env.SameGraph (or, with it, a graph model's file
// that records no graph), or parameters whose count, names or
// shapes differ from what the configuration builds.
//
// The checksum detects accidents (a truncated copy, a flipped bit), not
// edits: anyone can recompute it. Load model files from elsewhere with
// Env.TrustedKeys, or only from sources you trust.
func Load(r io.Reader, g *G.ExprGraph, env Env) (layers.Model, error) {
	v, err := readVerified(r, env.TrustedKeys)
	if err != nil {
		return nil, fmt.Errorf("modelio: Load: %w", err)
	}
	h, dt := v.h, v.dt
	if err := checkGraph(h, env); err != nil {
		return nil, fmt.Errorf("modelio: Load: %w", err)
	}
	if env.SameGraph && h.Graph == nil {
		if err := checkNoGraph(v, env); err != nil {
			return nil, fmt.Errorf("modelio: Load: %w", err)
		}
	}
	m, err := build(v, g, env)
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
	for i, p := range params {
		switch d := p.Value().Data().(type) {
		case []float64:
			copy(d, v.vals[i].([]float64))
		case []float32:
			copy(d, v.vals[i].([]float32))
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
	// Nodes is the file's record of the graph's nodes by id with their
	// split (SaveConfig.Nodes), nil when it has none (files saved
	// without one, and before the record existed).
	Nodes *Nodes
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
	v, err := readVerified(r, trusted)
	if err != nil {
		return nil, fmt.Errorf("modelio: Read: %w", err)
	}
	f := &File{Kind: v.bk, Config: v.cfg}
	if v.kind.Wraps() {
		f.Wrapper, f.WrapperConfig = v.kind, v.h.Config
	}
	for i, p := range v.h.Params {
		f.Params = append(f.Params, Param{Name: p.Name, Value: tensor.New(tensor.WithShape(p.Shape...), tensor.WithBacking(v.vals[i]))})
	}
	f.Header = headerOf(v.h, v.dt)
	f.Graph = f.Header.Graph
	f.Nodes = v.nodes
	return f, nil
}

// Backbone builds the model the file holds (a wrapper's backbone: an fmp
// model's) in g on the graph gr, with the file's parameter values, for a
// program that runs the model itself rather than the whole saved model
// (package fmp/score builds it on a one-node graph and runs it layer by
// layer on the rows of any graph, layers.LayerwiseLogits). gr may be nil
// for a model without a graph. It returns an error for what the kind's
// constructor refuses, or parameters that differ from what it builds.
func (f *File) Backbone(g *G.ExprGraph, gr *graph.Graph, phase *layers.Phase) (layers.Model, error) {
	if f == nil || f.Kind == nil {
		return nil, fmt.Errorf("modelio: File.Backbone: no file (use the File that Read returns)")
	}
	m, err := f.Kind.Build(g, gr, f.Config, phase)
	if err != nil {
		return nil, fmt.Errorf("modelio: File.Backbone: building the %s model: %w", f.Kind.Name(), err)
	}
	ps := m.Learnables()
	if len(ps) != len(f.Params) {
		return nil, fmt.Errorf("modelio: File.Backbone: %w: %d parameters in the file, the built %s model has %d", ErrMismatch, len(f.Params), f.Kind.Name(), len(ps))
	}
	for i, p := range ps {
		v := f.Params[i].Value
		if !v.Shape().Eq(p.Shape()) || v.Dtype() != p.Dtype() {
			return nil, fmt.Errorf("modelio: File.Backbone: %w: parameter %d (%q) is %v (%v) in the file, %v (%v) in the built model", ErrMismatch, i, f.Params[i].Name, v.Shape(), v.Dtype(), p.Shape(), p.Dtype())
		}
		switch d := p.Value().Data().(type) {
		case []float64:
			copy(d, v.Data().([]float64))
		case []float32:
			copy(d, v.Data().([]float32))
		}
	}
	return m, nil
}

// verified is a model file read and verified: its header and dtype, its
// kind, the kind and decoded configuration of the model it builds (the
// backbone's, for a wrapper) and its parameters' values in the file's
// dtype ([]float32 or []float64 each).
type verified struct {
	h       *header
	dt      tensor.Dtype
	kind    *layers.Kind
	bk      *layers.Kind
	cfg     layers.Config
	vals    []any
	nodes   *Nodes
	signed  bool
	trailer int
}

// chunk is the size of the reads of parameters: memory grows by at most
// this much before the bytes that justify it have arrived.
const chunk = 64 << 10

// maxTrailer is the longest trailer: a checksum and a signature.
const maxTrailer = sha256.Size + ed25519.SignatureSize

// readVerified reads a whole model file: the header line (at most 1
// MiB), which must claim to be a fairmp model of this format version;
// then the header is parsed strictly and its configuration decoded,
// validated and compared with the parameters the header lists, before a
// byte of parameters is read. If any of that fails, the rest of the file
// is hashed (not kept) to tell a damaged file (ErrCorrupt) or one not
// signed by keys (ErrSignature) from an intact file whose header is
// wrong (that error). Otherwise the parameters are read and decoded in
// chunks as they arrive (memory bounded by what the configuration
// implies, at most MaxParamBytes), then the checksum and with keys the
// signature are checked, and last the values' finiteness.
func readVerified(r io.Reader, keys []ed25519.PublicKey) (*verified, error) {
	avail, sized := remaining(r)
	br := bufio.NewReaderSize(r, chunk)
	line, err := readLine(br)
	if err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	if err := claims(line); err != nil {
		return nil, err
	}
	sum := sha256.New()
	sum.Write(line)
	sum.Write([]byte{'\n'})
	v, total, err := interpret(line)
	if err != nil {
		// Only the checksum tells a damaged header from an intact file
		// whose header is wrong; a file longer than any model file is
		// damaged without reading it.
		var perr error
		if limit := int64(len(line)+1) + MaxParamBytes + maxTrailer; sized && avail > limit {
			perr = fmt.Errorf("%w: the file has %d bytes, more than any model file with this header holds (%d)", ErrCorrupt, avail, limit)
		} else {
			perr = probe(br, sum, keys)
		}
		if perr != nil {
			return nil, fmt.Errorf("%w (the damaged header reads: %v)", perr, err)
		}
		return nil, err
	}
	what := "parameters and checksum"
	if v.h.Nodes != nil {
		total += v.h.Nodes.bytes()
		what = "parameters, node record and checksum"
	}
	if sized {
		if err := checkSize(v, len(line), total, avail, what); err != nil {
			return nil, err
		}
	}
	size := 8
	if v.dt == tensor.Float32 {
		size = 4
	}
	buf := make([]byte, chunk)
	read := 0
	// fill reads len(b) bytes into b, counting them; a short file is
	// truncated. hash adds them to the checksum (all but the trailer).
	fill := func(b []byte, hash bool) error {
		got, err := io.ReadFull(br, b)
		read += got
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return fmt.Errorf("%w: the file ends after %d of %d bytes of %s (truncated)", ErrCorrupt, read, total+v.trailer, what)
		} else if err != nil {
			return err
		}
		if hash {
			sum.Write(b)
		}
		return nil
	}
	v.vals = make([]any, len(v.h.Params))
	for i, p := range v.h.Params {
		n := tensor.Shape(p.Shape).TotalSize()
		var f64 []float64
		var f32 []float32
		for n > 0 {
			m := min(n, chunk/size)
			b := buf[:m*size]
			if err := fill(b, true); err != nil {
				return nil, err
			}
			if size == 8 {
				for k := 0; k < m; k++ {
					f64 = append(f64, math.Float64frombits(binary.LittleEndian.Uint64(b[8*k:])))
				}
			} else {
				for k := 0; k < m; k++ {
					f32 = append(f32, math.Float32frombits(binary.LittleEndian.Uint32(b[4*k:])))
				}
			}
			n -= m
		}
		if size == 8 {
			v.vals[i] = f64
		} else {
			v.vals[i] = f32
		}
	}
	if v.h.Nodes != nil {
		if v.nodes, err = readNodes(v.h.Nodes, buf, func(b []byte) error { return fill(b, true) }); err != nil {
			return nil, err
		}
	}
	tr := buf[:v.trailer]
	if err := fill(tr, false); err != nil {
		return nil, err
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return nil, fmt.Errorf("%w: data continues after the checksum", ErrCorrupt)
	}
	digest := sum.Sum(nil)
	if !bytes.Equal(digest, tr[:sha256.Size]) {
		return nil, fmt.Errorf("%w: checksum mismatch (the header or the parameters were changed after saving)", ErrCorrupt)
	}
	if err := checkSignature(v.signed, digest, tr[sha256.Size:], keys); err != nil {
		return nil, err
	}
	for i, p := range v.h.Params {
		if k, x, bad := firstNonFinite(v.vals[i]); bad {
			return nil, fmt.Errorf("%w: parameter %q, value %d is %v", ErrCorrupt, p.Name, k, x)
		}
	}
	if v.nodes != nil {
		if err := v.nodes.validate(); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// remaining returns the bytes left to read from r when r tells them: an
// in-memory reader (*bytes.Reader, *strings.Reader, *bytes.Buffer: Len)
// or a regular file (an *os.File, or anything with Stat and Seek: its
// size less its offset).
func remaining(r io.Reader) (int64, bool) {
	switch x := r.(type) {
	case *bytes.Reader:
		return int64(x.Len()), true
	case *strings.Reader:
		return int64(x.Len()), true
	case *bytes.Buffer:
		return int64(x.Len()), true
	case interface {
		Stat() (fs.FileInfo, error)
		io.Seeker
	}:
		fi, err := x.Stat()
		if err != nil || !fi.Mode().IsRegular() {
			return 0, false
		}
		off, err := x.Seek(0, io.SeekCurrent)
		if err != nil || off > fi.Size() {
			return 0, false
		}
		return fi.Size() - off, true
	}
	return 0, false
}

// checkSize compares the size of a file whose header line (line bytes,
// interpreted as v, announcing total bytes of parameters and node record,
// what) is followed by avail-line bytes with the size the header
// announces (the line, the parameters and node record, the checksum and
// signature), before a byte of parameters is read: a file cut short or
// extended (a sparse file's hole reads as zeros) is refused at once, not
// after hashing it to its end.
func checkSize(v *verified, line, total int, avail int64, what string) error {
	want := int64(line+1) + int64(total) + int64(v.trailer)
	if avail == want {
		return nil
	}
	how := "the file is truncated"
	if avail > want {
		how = "data continues after the checksum (an extended file, or a sparse file's hole)"
	}
	return fmt.Errorf("%w: the file has %d bytes, its header announces %d (a %d-byte header line, %d bytes of %s): %s", ErrCorrupt, avail, want, line+1, total+v.trailer, what, how)
}

// savedPrefix is how every header Save writes begins.
const savedPrefix = `{"format":"` + FormatName + `",`

// claims checks that the header line claims to be a fairmp model of this
// format version. A line that is not JSON but begins as Save's do is a
// damaged header: the checksum decides (probe).
func claims(line []byte) error {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(line, &keys); err != nil {
		if bytes.HasPrefix(line, []byte(savedPrefix)) {
			return nil
		}
		return fmt.Errorf("%w: the header is not a JSON object: %w", ErrFormat, err)
	}
	var format string
	if json.Unmarshal(keys["format"], &format) != nil || format != FormatName {
		return fmt.Errorf("%w: format %s, want %q", ErrFormat, keys["format"], FormatName)
	}
	var version int
	if err := json.Unmarshal(keys["version"], &version); err != nil {
		return fmt.Errorf("%w: version %s", ErrFormat, keys["version"])
	}
	if version != FormatVersion {
		return fmt.Errorf("%w: format version %d, this release reads version %d (load older files with the release that wrote them)", ErrVersion, version, FormatVersion)
	}
	return nil
}

// interpret parses a header line strictly and decodes its configuration,
// checking the parameters it lists against those the configuration
// builds and their size against MaxParamBytes; it returns the header's
// interpretation and the parameters' size in bytes.
func interpret(line []byte) (*verified, int, error) {
	h, err := parseHeader(line)
	if err != nil {
		return nil, 0, err
	}
	dt, size, err := h.dtype()
	if err != nil {
		return nil, 0, err
	}
	total, err := h.paramBytes(size)
	if err != nil {
		return nil, 0, err
	}
	k, err := layers.LookupKind(h.Kind)
	if err != nil {
		return nil, 0, fmt.Errorf("%w (a kind of your own is declared by the package that defines the model: import that package)", err)
	}
	spec, err := backboneSpec(h, k)
	if err != nil {
		return nil, 0, err
	}
	bk, cfg, err := decodeBackbone(h, spec, dt)
	if err != nil {
		return nil, 0, err
	}
	if h.Features != nil && len(h.Features.Names) != layers.BaseOf(cfg).In {
		return nil, 0, fmt.Errorf("%w: the feature schema has %d columns, the %s configuration takes %d", ErrFormat, len(h.Features.Names), bk.Name(), layers.BaseOf(cfg).In)
	}
	if err := checkParams(h, bk, cfg, "", ""); err != nil {
		return nil, 0, err
	}
	if total > MaxParamBytes {
		return nil, 0, fmt.Errorf("%w: the %s configuration has %d bytes of parameters, more than the %d (MaxParamBytes) this release loads", ErrFormat, bk.Name(), total, MaxParamBytes)
	}
	if h.Nodes != nil && total+h.Nodes.bytes() > MaxParamBytes {
		return nil, 0, fmt.Errorf("%w: %d bytes of parameters and a node record of %d nodes (%d bytes) are more than the %d (MaxParamBytes) this release loads", ErrFormat, total, h.Nodes.Count, h.Nodes.bytes(), MaxParamBytes)
	}
	v := &verified{h: h, dt: dt, kind: k, bk: bk, cfg: cfg, signed: h.Signed, trailer: sha256.Size}
	if h.Signed {
		v.trailer += ed25519.SignatureSize
	}
	return v, total, nil
}

// probe reads the rest of a file whose header could not be interpreted,
// hashing it without keeping it (at most MaxParamBytes, which bounds the
// parameters and the node record together, and a trailer),
// and returns nil if the file is intact (its last 32 bytes are the
// SHA-256 of everything before them, or, signed, the 32 before its last
// 64) and, with keys, signed by one of them; ErrCorrupt or ErrSignature
// otherwise. The header's error is then the file's, not damage's.
func probe(br *bufio.Reader, sum hash.Hash, keys []ed25519.PublicKey) error {
	t := &tailHash{h: sum}
	limit := int64(MaxParamBytes + maxTrailer)
	n, err := io.CopyN(t, br, limit+1)
	if err == nil {
		return fmt.Errorf("%w: more than %d bytes follow the header, more than any model file holds", ErrCorrupt, limit)
	}
	if err != io.EOF {
		return err
	}
	tail := t.tail
	if len(tail) >= sha256.Size {
		c := cloneHash(sum)
		c.Write(tail[:len(tail)-sha256.Size])
		if bytes.Equal(c.Sum(nil), tail[len(tail)-sha256.Size:]) {
			return checkSignature(false, nil, nil, keys)
		}
	}
	if len(tail) == maxTrailer {
		if d := sum.Sum(nil); bytes.Equal(d, tail[:sha256.Size]) {
			return checkSignature(true, d, tail[sha256.Size:], keys)
		}
	}
	return fmt.Errorf("%w: checksum mismatch (%d bytes after the header): the file is damaged", ErrCorrupt, n)
}

// tailHash hashes what is written to it but its last maxTrailer bytes,
// which it keeps.
type tailHash struct {
	h    hash.Hash
	tail []byte
}

func (t *tailHash) Write(p []byte) (int, error) {
	if len(p) >= maxTrailer {
		t.h.Write(t.tail)
		t.h.Write(p[:len(p)-maxTrailer])
		t.tail = append(t.tail[:0], p[len(p)-maxTrailer:]...)
		return len(p), nil
	}
	t.tail = append(t.tail, p...)
	if over := len(t.tail) - maxTrailer; over > 0 {
		t.h.Write(t.tail[:over])
		t.tail = append(t.tail[:0], t.tail[over:]...)
	}
	return len(p), nil
}

// cloneHash returns a copy of a SHA-256 state.
func cloneHash(h hash.Hash) hash.Hash {
	st, err := h.(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		panic(err) // crypto/sha256 always marshals
	}
	c := sha256.New()
	if err := c.(encoding.BinaryUnmarshaler).UnmarshalBinary(st); err != nil {
		panic(err)
	}
	return c
}

// checkSignature verifies sig, the file's signature of its checksum,
// against keys; with no keys a signature is not required.
func checkSignature(signed bool, digest, sig []byte, keys []ed25519.PublicKey) error {
	if len(keys) == 0 {
		return nil
	}
	if !signed {
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

// checkNoGraph is Env.SameGraph's check of a file that records no graph.
// Save records the graph of every model built on one (a
// layers.GraphModel with a graph: every graph kind, and an fmp model on
// any backbone), so such a file is accepted only for a model built on
// none (an MLP), which any graph's nodes may be scored with, as they
// are without SameGraph. A model built on a graph whose file records
// none (an older or edited file) cannot show that Env.Graph is the saved
// graph: refused (ErrMismatch). The model is built to be asked, in a
// scratch gorgonia graph, so that the caller's gets nothing from a
// refused file.
func checkNoGraph(v *verified, env Env) error {
	m, err := build(v, G.NewGraph(), env)
	if err != nil {
		return err
	}
	if gm, ok := m.(layers.GraphModel); ok && gm.Graph() != nil {
		return fmt.Errorf("%w: the %s model is built on a graph, but the file records no graph (no \"graph\" fingerprint in its header: an older or edited file), so it cannot show which graph it was saved for (Env.SameGraph asks for the saved graph)", ErrMismatch, v.h.Kind)
	}
	return nil
}

// build builds the model a verified file describes, with fresh
// parameters, named env.Name if set.
func build(v *verified, g *G.ExprGraph, env Env) (layers.Model, error) {
	bk, cfg := v.bk, v.cfg
	b := layers.BaseOf(cfg)
	saved := b.Name
	if env.Name != "" {
		b.Name = env.Name
		cfg = layers.WithBase(cfg, b)
	}
	if err := checkParams(v.h, bk, cfg, saved, env.Name); err != nil {
		return nil, err
	}
	m, err := bk.Build(g, env.Graph, cfg, env.Phase)
	if err != nil {
		return nil, fmt.Errorf("building the %s model: %w", bk.Name(), err)
	}
	if v.kind.Wraps() {
		if m, err = v.kind.Wrap(m, env.Graph, env.Sens, v.h.Config, env.Phase); err != nil {
			return nil, fmt.Errorf("building the %s model on its %s backbone: %w", v.kind.Name(), bk.Name(), err)
		}
	}
	return m, nil
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
