// Package npy reads NumPy's .npy files of floating-point scores: the
// format numpy.save writes (versions 1.0, 2.0 and 3.0), little-endian
// float32 ('<f4') or float64 ('<f8'), C order, one or two dimensions.
//
// The reader is bounded: the header is at most 1 MiB, and the data must
// be exactly what the header announces and what the file holds, checked
// against the file's real size before anything is allocated for it.
// Every other input (another dtype, big-endian or Fortran-ordered data,
// three dimensions, a cut or padded file, a NaN or an infinity) is an
// error saying what was found and what is wanted; nothing panics.
package npy

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// MaxHeader bounds the header a file may announce.
const MaxHeader = 1 << 20

// Matrix is a rows × cols matrix of float64, row-major; a 1-D file of n
// values is n × 1.
type Matrix struct {
	Rows, Cols int
	Data       []float64
	// Dtype is the file's dtype: "<f4" or "<f8".
	Dtype string
}

// ErrFormat is wrapped by every error about the file's content.
var ErrFormat = errors.New("npy: not a readable .npy file of scores")

// ReadFile reads the .npy file at path.
func ReadFile(path string) (*Matrix, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return Read(f, st.Size())
}

// Read reads a .npy file of size bytes from r.
func Read(r io.Reader, size int64) (*Matrix, error) {
	br := bufio.NewReader(r)
	var pre [8]byte
	if _, err := io.ReadFull(br, pre[:]); err != nil {
		return nil, fmt.Errorf("%w: %d bytes, shorter than the magic string and version", ErrFormat, size)
	}
	if string(pre[:6]) != "\x93NUMPY" {
		return nil, fmt.Errorf("%w: no \\x93NUMPY magic string at the start (a text file? give text scores a .csv name)", ErrFormat)
	}
	var hlen int64
	switch pre[6] {
	case 1:
		var b [2]byte
		if _, err := io.ReadFull(br, b[:]); err != nil {
			return nil, fmt.Errorf("%w: cut in the header length", ErrFormat)
		}
		hlen = int64(binary.LittleEndian.Uint16(b[:]))
	case 2, 3:
		var b [4]byte
		if _, err := io.ReadFull(br, b[:]); err != nil {
			return nil, fmt.Errorf("%w: cut in the header length", ErrFormat)
		}
		hlen = int64(binary.LittleEndian.Uint32(b[:]))
	default:
		return nil, fmt.Errorf("%w: format version %d.%d, want 1.0, 2.0 or 3.0", ErrFormat, pre[6], pre[7])
	}
	start := int64(10)
	if pre[6] > 1 {
		start = 12
	}
	if hlen > MaxHeader || start+hlen > size {
		return nil, fmt.Errorf("%w: the header claims %d bytes, more than the file's %d or the limit of %d", ErrFormat, hlen, size, MaxHeader)
	}
	hb := make([]byte, hlen)
	if _, err := io.ReadFull(br, hb); err != nil {
		return nil, fmt.Errorf("%w: cut in the header", ErrFormat)
	}
	h, err := parseHeader(string(hb))
	if err != nil {
		return nil, err
	}
	var width int64
	switch h.descr {
	case "<f4":
		width = 4
	case "<f8":
		width = 8
	default:
		hint := ""
		switch {
		case strings.HasPrefix(h.descr, ">"):
			hint = " (big-endian: save with arr.astype('<f8'))"
		case strings.Contains(h.descr, "i") || strings.Contains(h.descr, "u"):
			hint = " (integers: scores are logits or probabilities; save them as floats)"
		}
		return nil, fmt.Errorf("%w: dtype %q, want little-endian float32 ('<f4') or float64 ('<f8')%s", ErrFormat, h.descr, hint)
	}
	if h.fortran && len(h.shape) == 2 && h.shape[1] > 1 {
		return nil, fmt.Errorf("%w: Fortran (column-major) order, want C order: save numpy.ascontiguousarray(arr)", ErrFormat)
	}
	m := &Matrix{Dtype: h.descr, Cols: 1}
	switch len(h.shape) {
	case 1:
		m.Rows = h.shape[0]
	case 2:
		m.Rows, m.Cols = h.shape[0], h.shape[1]
	default:
		return nil, fmt.Errorf("%w: shape %v, want (nodes,) or (nodes, classes)", ErrFormat, h.shape)
	}
	if m.Rows < 1 || m.Cols < 1 {
		return nil, fmt.Errorf("%w: shape %v holds no score", ErrFormat, h.shape)
	}
	data := size - start - hlen
	if int64(m.Rows) > data || int64(m.Cols) > data || int64(m.Rows)*int64(m.Cols)*width != data {
		return nil, fmt.Errorf("%w: shape %v of %s takes %d bytes, the file holds %d after its header (a cut or padded file?)", ErrFormat, h.shape, h.descr, int64(m.Rows)*int64(m.Cols)*width, data)
	}
	n := m.Rows * m.Cols
	m.Data = make([]float64, n)
	buf := make([]byte, 8*4096)
	for i := 0; i < n; {
		k := min(n-i, len(buf)/int(width))
		b := buf[:k*int(width)]
		if _, err := io.ReadFull(br, b); err != nil {
			return nil, fmt.Errorf("%w: cut after %d of %d values", ErrFormat, i, n)
		}
		for j := 0; j < k; j++ {
			var v float64
			if width == 4 {
				v = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*j:])))
			} else {
				v = math.Float64frombits(binary.LittleEndian.Uint64(b[8*j:]))
			}
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%w: row %d, column %d: %v, want finite scores", ErrFormat, (i+j)/m.Cols+1, (i+j)%m.Cols+1, v)
			}
			m.Data[i+j] = v
		}
		i += k
	}
	return m, nil
}

type header struct {
	descr   string
	fortran bool
	shape   []int
}

// parseHeader parses the header's Python dict literal: exactly the keys
// 'descr' (a string), 'fortran_order' (True or False) and 'shape' (a
// tuple of non-negative integers).
func parseHeader(s string) (header, error) {
	var h header
	p := &lit{s: strings.TrimRight(s, " \n\x00")}
	bad := func(what string) (header, error) {
		return header{}, fmt.Errorf("%w: header %q: %s", ErrFormat, cut(s), what)
	}
	if !p.eat('{') {
		return bad("want a dict {'descr': ..., 'fortran_order': ..., 'shape': (...)}")
	}
	seen := map[string]bool{}
	for !p.eat('}') {
		key, ok := p.str()
		if !ok || !p.eat(':') {
			return bad("want 'key': value pairs")
		}
		if seen[key] {
			return bad("key " + strconv.Quote(key) + " twice")
		}
		seen[key] = true
		switch key {
		case "descr":
			if h.descr, ok = p.str(); !ok {
				return bad("'descr' is not a string (a structured dtype?)")
			}
		case "fortran_order":
			switch {
			case p.word("True"):
				h.fortran = true
			case p.word("False"):
			default:
				return bad("'fortran_order' is not True or False")
			}
		case "shape":
			if h.shape, ok = p.tuple(); !ok {
				return bad("'shape' is not a tuple of integers")
			}
		default:
			return bad("unknown key " + strconv.Quote(key))
		}
		if !p.eat(',') && !p.peek('}') {
			return bad("want ',' or '}'")
		}
	}
	if p.skip(); p.i != len(p.s) {
		return bad("text after the dict")
	}
	if !seen["descr"] || !seen["fortran_order"] || !seen["shape"] {
		return bad("want the keys 'descr', 'fortran_order' and 'shape'")
	}
	return h, nil
}

func cut(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}

// lit scans a Python literal.
type lit struct {
	s string
	i int
}

func (p *lit) skip() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n') {
		p.i++
	}
}

func (p *lit) peek(c byte) bool { p.skip(); return p.i < len(p.s) && p.s[p.i] == c }

func (p *lit) eat(c byte) bool {
	if p.peek(c) {
		p.i++
		return true
	}
	return false
}

func (p *lit) word(w string) bool {
	p.skip()
	if strings.HasPrefix(p.s[p.i:], w) {
		p.i += len(w)
		return true
	}
	return false
}

func (p *lit) str() (string, bool) {
	p.skip()
	if p.i >= len(p.s) || (p.s[p.i] != '\'' && p.s[p.i] != '"') {
		return "", false
	}
	q := p.s[p.i]
	end := strings.IndexByte(p.s[p.i+1:], q)
	if end < 0 {
		return "", false
	}
	v := p.s[p.i+1 : p.i+1+end]
	p.i += end + 2
	return v, true
}

func (p *lit) tuple() ([]int, bool) {
	if !p.eat('(') {
		return nil, false
	}
	var out []int
	for !p.eat(')') {
		p.skip()
		j := p.i
		for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
			j++
		}
		if j == p.i || j-p.i > 12 {
			return nil, false
		}
		v, _ := strconv.Atoi(p.s[p.i:j])
		out = append(out, v)
		p.i = j
		if !p.eat(',') && !p.peek(')') {
			return nil, false
		}
	}
	return out, true
}
