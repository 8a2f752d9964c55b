package datasets

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"unicode/utf8"
)

// Limits every loader applies, whatever the input file holds. A table
// row (a CSV record, possibly spanning lines inside quotes) and an edge
// line may be at most maxLine bytes; a split file at most
// maxSplitPerNode bytes per node of the data set plus maxLine.
const (
	maxLine         = 1 << 20
	maxSplitPerNode = 64
	sniffBytes      = 8 << 10
	maxQuoted       = 64
)

// errTooLong is returned by a capReader when one record exceeds its
// limit.
var errTooLong = errors.New("record too long")

// capReader counts the bytes read and fails once more than limit bytes
// were read since the last mark: it bounds the memory one record of a
// streaming parser can take.
type capReader struct {
	r           io.Reader
	n, mark     int64
	limit       int64
	exceeded    bool
	lastNewline bool // the last byte read was '\n'
	sawAny      bool
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.exceeded {
		return 0, errTooLong
	}
	if room := c.mark + c.limit + sniffBytes - c.n; int64(len(p)) > room {
		if room <= 0 {
			c.exceeded = true
			return 0, errTooLong
		}
		p = p[:room]
	}
	k, err := c.r.Read(p)
	c.n += int64(k)
	if k > 0 {
		c.sawAny = true
		c.lastNewline = p[k-1] == '\n'
	}
	return k, err
}

// markRecord starts a new record: the next limit bytes are allowed.
func (c *capReader) markRecord() { c.mark = c.n }

// uncapped lifts the limit, for parsers that bound their lines
// themselves.
func (c *capReader) uncapped() { c.limit = 1 << 62 }

// textFile is an input file opened for streaming: its first bytes were
// checked to be text, a UTF-8 byte-order mark was skipped, and reads are
// capped per record.
type textFile struct {
	f   *os.File
	cap *capReader
	br  *bufio.Reader
}

// openText opens path for streaming. It returns a *FileError when the
// file cannot be opened or its first bytes are not UTF-8 text (a NUL
// byte, or invalid UTF-8).
func openText(path string) (*textFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &FileError{File: path, Msg: err.Error(), Err: err}
	}
	tf := &textFile{f: f}
	tf.cap = &capReader{r: f, limit: maxLine}
	tf.cap.markRecord()
	tf.br = bufio.NewReaderSize(tf.cap, 64<<10)
	head, err := tf.br.Peek(sniffBytes)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		f.Close()
		return nil, &FileError{File: path, Msg: err.Error(), Err: err}
	}
	if err := checkText(path, head, len(head) < sniffBytes); err != nil {
		f.Close()
		if bytes.HasPrefix(head, []byte("PAR1")) {
			err.Msg += " (this is a Parquet file: read it with the parquet format)"
		}
		return nil, err
	}
	if bytes.HasPrefix(head, []byte("\ufeff")) {
		tf.br.Discard(3)
	}
	return tf, nil
}

// checkText returns a *FileError if head, the first bytes of file, holds
// a NUL byte or invalid UTF-8. whole says head is the whole file (else its
// last, possibly cut, rune is not checked).
func checkText(file string, head []byte, whole bool) *FileError {
	if i := bytes.IndexByte(head, 0); i >= 0 {
		line := 1 + bytes.Count(head[:i], []byte{'\n'})
		return fileErr(file, line, 0, "binary or not UTF-8 text: NUL byte at byte %d; want a text file", i+1)
	}
	h := head
	if !whole {
		// Drop a rune the sniff window may have cut.
		for k := 0; k < utf8.UTFMax && len(h) > 0 && !utf8.RuneStart(h[len(h)-1]); k++ {
			h = h[:len(h)-1]
		}
		if len(h) > 0 && utf8.RuneStart(h[len(h)-1]) && h[len(h)-1] >= utf8.RuneSelf {
			h = h[:len(h)-1]
		}
	}
	if !utf8.Valid(h) {
		off := 0
		for off < len(h) {
			r, size := utf8.DecodeRune(h[off:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			off += size
		}
		line := 1 + bytes.Count(h[:off], []byte{'\n'})
		return fileErr(file, line, 0, "binary or not UTF-8 text: invalid UTF-8 at byte %d; want a UTF-8 text file", off+1)
	}
	return nil
}

// Close closes the file.
func (t *textFile) Close() error { return t.f.Close() }

// endsWithoutNewline reports whether the file was read to its end and its
// last byte is not a newline.
func (t *textFile) endsWithoutNewline() bool { return t.cap.sawAny && !t.cap.lastNewline }

// quote returns s quoted with %q, cut to at most maxQuoted bytes of s
// (with "…" and the full length) so that error messages stay readable
// whatever a cell holds.
func quote(s string) string {
	if len(s) <= maxQuoted {
		return strconv.Quote(s)
	}
	cut := maxQuoted
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(s[:cut]), len(s))
}
