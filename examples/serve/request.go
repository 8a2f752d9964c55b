package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A request is {"nodes": [node, ...]} and a node
//
//	{"id": "any text", "features": {"column": number or "level", ...},
//	 "group": "a value of the sensitive column", "edges": ["id", ...]}
//
// parsed strictly: no unknown key, no key twice, every field of its type.

// request is a parsed POST /score body.
type request struct {
	Nodes []nodeIn
}

// nodeIn is one node of a request, as given.
type nodeIn struct {
	ID       string
	Features map[string]value
	Group    string
	Edges    []string
}

// value is a feature value: a number, or the level of a categorical
// column (text).
type value struct {
	Num   float64
	Level string
	Text  bool
}

// apiError is a refused request: its HTTP status and a message naming
// the field at fault (nodes[3].features.age: ...).
type apiError struct {
	Status int    `json:"-"`
	Field  string `json:"field,omitempty"`
	Msg    string `json:"error"`
	// rangeColumn is the feature outside -feature-range-factor times
	// its training range, for /stats.
	rangeColumn string
}

func (e *apiError) Error() string { return e.Msg }

// fieldError is a 400 naming field.
func fieldError(field, format string, args ...any) *apiError {
	return &apiError{Status: http.StatusBadRequest, Field: field, Msg: field + ": " + fmt.Sprintf(format, args...)}
}

// maxID is the longest node id accepted, in bytes.
const maxID = 256

// parseRequest parses a POST /score body. maxNodes > 0 caps the nodes,
// maxEdges > 0 the edges all its nodes list together (a 413 once the
// body holds more); 0 is no cap (replay).
func parseRequest(body []byte, maxNodes, maxEdges int) (*request, *apiError) {
	if !utf8.Valid(body) {
		// The decoder would make each invalid byte U+FFFD, so that two
		// different ids could become one.
		at := 0
		for at < len(body) {
			r, size := utf8.DecodeRune(body[at:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			at += size
		}
		return nil, &apiError{Status: http.StatusBadRequest, Field: "body", Msg: fmt.Sprintf("body: invalid UTF-8 at byte %d; send the request as UTF-8 text", at)}
	}
	p := &parser{dec: json.NewDecoder(bytes.NewReader(body)), maxEdges: maxEdges}
	p.dec.UseNumber()
	req, err := p.request(maxNodes)
	if err != nil {
		return nil, err
	}
	return req, nil
}

type parser struct {
	dec      *json.Decoder
	maxEdges int // 0: no cap
	edges    int // the edges listed so far
}

// token returns the next token; a syntax error names its byte offset.
func (p *parser) token() (json.Token, *apiError) {
	t, err := p.dec.Token()
	if err == io.EOF {
		return nil, &apiError{Status: http.StatusBadRequest, Field: "body", Msg: "body: the JSON ends early (at byte " + strconv.FormatInt(p.dec.InputOffset(), 10) + "); a request is {\"nodes\": [...]}"}
	}
	if err != nil {
		var se *json.SyntaxError
		off := p.dec.InputOffset()
		if errors.As(err, &se) {
			off = se.Offset
		}
		return nil, &apiError{Status: http.StatusBadRequest, Field: "body", Msg: fmt.Sprintf("body: malformed JSON at byte %d: %v", off, strings.TrimPrefix(err.Error(), "json: "))}
	}
	return t, nil
}

// delim reads the delimiter want.
func (p *parser) delim(field string, want json.Delim, what string) *apiError {
	t, err := p.token()
	if err != nil {
		return err
	}
	if d, ok := t.(json.Delim); !ok || d != want {
		return fieldError(field, "want %s, got %s", what, describe(t))
	}
	return nil
}

// describe names a token for a message.
func describe(t json.Token) string {
	switch v := t.(type) {
	case json.Delim:
		switch v {
		case '{':
			return "an object"
		case '[':
			return "an array"
		}
		return fmt.Sprintf("%q", string(v))
	case string:
		return fmt.Sprintf("the string %q", cut(v))
	case json.Number:
		return "the number " + cut(v.String())
	case bool:
		return fmt.Sprintf("%v", v)
	case nil:
		return "null"
	}
	return fmt.Sprintf("%v", t)
}

// key reads an object's next key, or reports its end (ok false).
func (p *parser) key() (string, bool, *apiError) {
	t, err := p.token()
	if err != nil {
		return "", false, err
	}
	if d, ok := t.(json.Delim); ok && d == '}' {
		return "", false, nil
	}
	return t.(string), true, nil // the decoder only gives strings as keys
}

// str reads a string value.
func (p *parser) str(field string) (string, *apiError) {
	t, err := p.token()
	if err != nil {
		return "", err
	}
	s, ok := t.(string)
	if !ok {
		return "", fieldError(field, "want a string, got %s", describe(t))
	}
	return s, nil
}

func (p *parser) request(maxNodes int) (*request, *apiError) {
	if err := p.delim("body", '{', `a JSON object {"nodes": [...]}`); err != nil {
		return nil, err
	}
	req := &request{}
	seen := false
	for {
		k, ok, err := p.key()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if k != "nodes" {
			return nil, fieldError(field("", k), `unknown field; a request is {"nodes": [...]}`)
		}
		if seen {
			return nil, fieldError("nodes", "given twice")
		}
		seen = true
		if err := p.delim("nodes", '[', "an array of nodes"); err != nil {
			return nil, err
		}
		for p.dec.More() {
			i := len(req.Nodes)
			if maxNodes > 0 && i == maxNodes {
				return nil, &apiError{Status: http.StatusRequestEntityTooLarge, Field: "nodes", Msg: fmt.Sprintf("nodes: more than -max-nodes %d nodes in one request; send them in several", maxNodes)}
			}
			n, err := p.node(i)
			if err != nil {
				return nil, err
			}
			req.Nodes = append(req.Nodes, n)
		}
		if _, err := p.token(); err != nil { // ']'
			return nil, err
		}
	}
	if _, err := p.dec.Token(); err != io.EOF {
		return nil, &apiError{Status: http.StatusBadRequest, Field: "body", Msg: fmt.Sprintf("body: data after the request object (at byte %d); send one object", p.dec.InputOffset())}
	}
	switch {
	case !seen:
		return nil, fieldError("nodes", `missing; a request is {"nodes": [{"id": ..., "features": {...}, "group": ..., "edges": [...]}, ...]}`)
	case len(req.Nodes) == 0:
		return nil, fieldError("nodes", "empty; give at least one node")
	}
	return req, nil
}

// node parses nodes[i].
func (p *parser) node(i int) (nodeIn, *apiError) {
	at := fmt.Sprintf("nodes[%d]", i)
	var n nodeIn
	if err := p.delim(at, '{', `a node object {"id": ..., "features": {...}, "group": ..., "edges": [...]}`); err != nil {
		return n, err
	}
	seen := map[string]bool{}
	for {
		k, ok, err := p.key()
		if err != nil {
			return n, err
		}
		if !ok {
			break
		}
		f := field(at, k)
		if seen[k] {
			return n, fieldError(f, "given twice")
		}
		seen[k] = true
		switch k {
		case "id":
			if n.ID, err = p.str(f); err != nil {
				return n, err
			}
			switch {
			case n.ID == "":
				return n, fieldError(f, "empty; a node needs an id")
			case len(n.ID) > maxID:
				return n, fieldError(f, "%d bytes, at most %d", len(n.ID), maxID)
			case strings.ContainsRune(n.ID, utf8.RuneError):
				return n, fieldError(f, "%q holds U+FFFD, the replacement character that invalid text (an escaped lone surrogate such as \\ud800) decodes to, so that two different ids would be one; give ids as valid text without it", cut(n.ID))
			}
		case "group":
			if n.Group, err = p.str(f); err != nil {
				return n, err
			}
		case "features":
			if n.Features, err = p.features(f); err != nil {
				return n, err
			}
		case "edges":
			if err := p.delim(f, '[', "an array of node ids"); err != nil {
				return n, err
			}
			n.Edges = []string{}
			for p.dec.More() {
				fe := fmt.Sprintf("%s[%d]", f, len(n.Edges))
				if p.maxEdges > 0 && p.edges == p.maxEdges {
					return n, &apiError{Status: http.StatusRequestEntityTooLarge, Field: fe, Msg: fmt.Sprintf("%s: more than -max-edges %d edges in one request (the nodes' edges together: a request's scoring work grows with them, and it holds the single writer); split the request into several with fewer nodes or edges", fe, p.maxEdges)}
				}
				p.edges++
				s, err := p.str(fe)
				if err != nil {
					return n, err
				}
				if strings.ContainsRune(s, utf8.RuneError) {
					return n, fieldError(fe, "%q holds U+FFFD, the replacement character that invalid text decodes to; no id holds it", cut(s))
				}
				n.Edges = append(n.Edges, s)
			}
			if _, err := p.token(); err != nil {
				return n, err
			}
		default:
			return n, fieldError(f, "unknown field; a node has id, features, group and edges")
		}
	}
	for _, k := range []string{"id", "features", "group"} {
		if !seen[k] {
			return n, fieldError(field(at, k), "missing")
		}
	}
	return n, nil
}

// features parses a node's features object.
func (p *parser) features(at string) (map[string]value, *apiError) {
	if err := p.delim(at, '{', `an object {"column": value, ...}`); err != nil {
		return nil, err
	}
	out := map[string]value{}
	for {
		k, ok, err := p.key()
		if err != nil {
			return nil, err
		}
		if !ok {
			return out, nil
		}
		f := field(at, k)
		if _, dup := out[k]; dup {
			return nil, fieldError(f, "given twice")
		}
		t, err := p.token()
		if err != nil {
			return nil, err
		}
		switch v := t.(type) {
		case json.Number:
			x, perr := strconv.ParseFloat(v.String(), 64)
			if perr != nil || math.IsInf(x, 0) || math.IsNaN(x) {
				return nil, fieldError(f, "%s is not a finite number", cut(v.String()))
			}
			out[k] = value{Num: x}
		case string:
			out[k] = value{Level: v, Text: true}
		default:
			return nil, fieldError(f, "want a number (or, for a categorical column, its level as a string), got %s", describe(t))
		}
	}
}

// field names key of the object at: "at.key", or at["key"] for a key
// that is not a plain word; a key longer than 64 bytes is cut (cut).
func field(at, key string) string {
	key = cut(key)
	plain := key != ""
	for _, r := range key {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-') {
			plain = false
			break
		}
	}
	switch {
	case plain && at == "":
		return key
	case plain:
		return at + "." + key
	}
	return fmt.Sprintf("%s[%q]", at, key)
}

// maxEcho is the most bytes of a request's text an error message
// repeats (cut).
const maxEcho = 64

// cut shortens s to at most maxEcho bytes (whole characters) and "…",
// for a message: every echo of a request's text in an error goes
// through it, so that an answer stays small whatever the request.
func cut(s string) string {
	if len(s) <= maxEcho {
		return s
	}
	n := maxEcho
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// canonical returns the request's log record: JSON with the features'
// keys sorted and numbers in their shortest exact form, so that a
// replayed record parses to the same request.
func (r *request) canonical() []byte {
	var b bytes.Buffer
	b.WriteString(`{"nodes":[`)
	for i, n := range r.Nodes {
		if i > 0 {
			b.WriteByte(',')
		}
		n.encode(&b, n.Edges)
	}
	b.WriteString("]}")
	return b.Bytes()
}

// encode writes n as JSON with the edges given.
func (n nodeIn) encode(b *bytes.Buffer, edges []string) {
	b.WriteString(`{"id":`)
	writeString(b, n.ID)
	b.WriteString(`,"features":{`)
	keys := make([]string, 0, len(n.Features))
	for k := range n.Features {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for j, k := range keys {
		if j > 0 {
			b.WriteByte(',')
		}
		writeString(b, k)
		b.WriteByte(':')
		if v := n.Features[k]; v.Text {
			writeString(b, v.Level)
		} else {
			b.WriteString(strconv.FormatFloat(v.Num, 'g', -1, 64))
		}
	}
	b.WriteString(`},"group":`)
	writeString(b, n.Group)
	b.WriteString(`,"edges":[`)
	for j, e := range edges {
		if j > 0 {
			b.WriteByte(',')
		}
		writeString(b, e)
	}
	b.WriteString("]}")
}

// digest is what identifies a node's content: its canonical JSON with
// the edges sorted (a repeated request may list them in another order).
func (n nodeIn) digest() [32]byte {
	var b bytes.Buffer
	edges := slices.Clone(n.Edges)
	slices.Sort(edges)
	n.encode(&b, edges)
	return sha256.Sum256(b.Bytes())
}

func writeString(b *bytes.Buffer, s string) {
	q, _ := json.Marshal(s) // a string always marshals
	b.Write(q)
}
