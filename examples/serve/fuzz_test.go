package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseRequest: the request parser never panics on any body; a
// refusal names its field, is valid UTF-8 and is short whatever the
// body; an accepted request's ids are valid text without U+FFFD, and its
// log record (canonical) parses back to the same record.
func FuzzParseRequest(f *testing.F) {
	for _, s := range []string{
		`{"nodes":[{"id":"a","features":{"x0":0.1,"x1":"red"},"group":"1","edges":["n1","b"]},{"id":"b","features":{"x0":-2e3},"group":"0","edges":[]}]}`,
		`{"nodes":[{"id":"\u00e9\u4e2d","features":{},"group":"","edges":["\ud83d\ude00"]}]}`,
		`{"nodes":[{"id":"\ud800","features":{},"group":"1"}]}`,
		`{"nodes":[]}`, `{}`, `[1]`, `{"nodes":[{"id":"a","id":"b"}]}`, "{\"nodes\":[{\"id\":\"a\xff\"}]}",
		`{"nodes":[{"id":"a","features":{"x":1e999},"group":"1"}]}`, `{"nodes":[{"id":"a","features":{"x":1},"group":"1","edges":["a","a"]}]} {}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, aerr := parseRequest(body, 1000, 50)
		if aerr != nil {
			if aerr.Status < 400 || aerr.Status > 499 {
				t.Fatalf("status %d", aerr.Status)
			}
			if !strings.HasPrefix(aerr.Msg, aerr.Field+": ") {
				t.Fatalf("the message does not start with its field %q: %q", aerr.Field, aerr.Msg)
			}
			if !utf8.ValidString(aerr.Msg) || len(aerr.Msg) > 1024 {
				t.Fatalf("a message of %d bytes (valid UTF-8: %v): %.200q", len(aerr.Msg), utf8.ValidString(aerr.Msg), aerr.Msg)
			}
			return
		}
		for i, n := range req.Nodes {
			for _, id := range append([]string{n.ID}, n.Edges...) {
				if !utf8.ValidString(id) || strings.ContainsRune(id, utf8.RuneError) {
					t.Fatalf("nodes[%d]: id %q accepted", i, id)
				}
			}
			if n.ID == "" || len(n.ID) > maxID {
				t.Fatalf("nodes[%d]: id of %d bytes accepted", i, len(n.ID))
			}
		}
		rec := req.canonical()
		again, aerr := parseRequest(rec, 0, 0)
		if aerr != nil {
			t.Fatalf("the log record %q does not parse: %v", rec, aerr)
		}
		if got := again.canonical(); !bytes.Equal(got, rec) {
			t.Fatalf("the log record %q parses to %q", rec, got)
		}
	})
}

// readLog reads the records of b from its start (no magic) with the
// service's reader.
func readLog(b []byte) (payloads [][]byte, end int64, err error) {
	lr := newLogReader(bytes.NewReader(b), int64(len(b)), 0)
	for {
		p, err := lr.next()
		if err != nil {
			return payloads, lr.off, err
		}
		payloads = append(payloads, p)
	}
}

// wholeAt reports whether a whole record starts at b[p:] (the rule of
// logReader.wholeAfter, written again plainly over memory).
func wholeAt(b []byte, p int) bool {
	if p+8 > len(b) {
		return false
	}
	l := int(binary.LittleEndian.Uint32(b[p:]))
	if l == 0 || l > maxRecord || p+8+l > len(b) {
		return false
	}
	c := crc32.Update(crc32.Update(0, crcTable, b[p:p+4]), crcTable, b[p+8:p+8+l])
	return c == binary.LittleEndian.Uint32(b[p+4:])
}

// FuzzLogReader: the log reader never panics; what it reads whole is the
// file's bytes; it calls a bad record a torn tail only when the record
// is short or the file ends in a zero, no whole record starts after it
// and its bytes are no whole record under another length; and a bit
// flipped anywhere before the last record of a good log (flip chooses
// which) is refused as damage, never dropped nor read as fewer records.
func FuzzLogReader(f *testing.F) {
	var good []byte
	for _, p := range []string{`{"format":"fairmp-serve-log"}`, `{"nodes":[{"id":"a"}]}`, `{"nodes":[{"id":"b"}]}`} {
		good = encodeRecord(good, []byte(p))
	}
	f.Add(good, uint32(0))
	f.Add(good, uint32(8*40+30))
	f.Add(good[:len(good)-3], uint32(5))
	f.Add(append(bytes.Clone(good), make([]byte, 20)...), uint32(77))
	f.Add(good[:10], uint32(1))
	f.Add([]byte{}, uint32(0))
	f.Fuzz(func(t *testing.T, b []byte, flip uint32) {
		payloads, end, err := readLog(b)
		var whole []byte
		for _, p := range payloads {
			whole = encodeRecord(whole, p)
		}
		if !bytes.Equal(whole, b[:end]) {
			t.Fatalf("the records read are not the file's first %d bytes", end)
		}
		var bad *badRecord
		switch {
		case err == io.EOF:
			if end != int64(len(b)) {
				t.Fatalf("a clean end at %d of %d bytes", end, len(b))
			}
		case errors.As(err, &bad):
			if bad.off != end {
				t.Fatalf("the bad record at %d, the last whole one ends at %d", bad.off, end)
			}
			if bad.torn {
				o := int(bad.off)
				for p := o + 1; p < len(b); p++ {
					if wholeAt(b, p) {
						t.Fatalf("a torn tail at %d with a whole record at %d", o, p)
					}
				}
				left := len(b) - o
				short := left < 8
				if !short {
					l := int(binary.LittleEndian.Uint32(b[o:]))
					short = 8+l > left
				}
				if !short && b[len(b)-1] != 0 {
					t.Fatalf("a torn tail at %d that is whole and does not end in zero", o)
				}
				if left > 8 {
					other := bytes.Clone(b[o:])
					binary.LittleEndian.PutUint32(other, uint32(left-8))
					if wholeAt(other, 0) {
						t.Fatalf("a torn tail at %d that is a whole record of another length", o)
					}
				}
			}
		default:
			t.Fatalf("reading memory: %v", err)
		}
		if err != io.EOF || len(payloads) < 2 {
			return
		}
		lastStart := len(b) - 8 - len(payloads[len(payloads)-1])
		bit := int(flip % uint32(8*lastStart))
		flipped := bytes.Clone(b)
		flipped[bit/8] ^= 1 << (bit % 8)
		_, _, err = readLog(flipped)
		if errors.As(err, &bad) && !bad.torn {
			return
		}
		// Only a checksum collision (2^-32 a record) can make a record
		// with a flipped length read whole.
		o := 0
		for _, p := range payloads {
			if bit/8 < o+8+len(p) {
				break
			}
			o += 8 + len(p)
		}
		if bit/8 < o+4 && wholeAt(flipped, o) {
			t.Skip("a CRC-32C collision")
		}
		t.Fatalf("bit %d flipped (record at byte %d): read as %v, not refused", bit, o, err)
	})
}
