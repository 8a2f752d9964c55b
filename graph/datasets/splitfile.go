package datasets

import (
	"bytes"
	"encoding/json"
	"io"
)

// parseSplitFile reads {"train": [...], "val": [...], "test": [...]} with
// 0-based row indices. Each index must be an integer in [0, n) (in any
// notation: 838, 838.0, 8.38e+02; see parseIndex) of a node
// with a known label, and no node may be in two lists, except that val
// and test may be the very same list (as in FairGNN's NBA split, which
// validates on the test set). Errors name file:line:column.
func parseSplitFile(data []byte, file string, n int, labels []int) (Split, error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	pos := func(off int64) (int, int) {
		if off > int64(len(data)) {
			off = int64(len(data))
		}
		line := 1 + bytes.Count(data[:off], []byte{'\n'})
		col := int(off) - bytes.LastIndexByte(data[:off], '\n')
		return line, col
	}
	errAt := func(off int64, format string, args ...any) error {
		l, c := pos(off)
		return fileErr(file, l, c, format, args...)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err == io.EOF {
		return Split{}, fileErr(file, 1, 0, "empty file, want {\"train\": [...], \"val\": [...], \"test\": [...]}")
	}
	if err != nil || tok != json.Delim('{') {
		return Split{}, errAt(dec.InputOffset(), "want a JSON object {\"train\": [...], \"val\": [...], \"test\": [...]}")
	}
	lists := map[string][]int{}
	offs := map[string][]int64{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return Split{}, errAt(dec.InputOffset(), "bad JSON: %v", err)
		}
		key, _ := tok.(string)
		if key != "train" && key != "val" && key != "test" {
			return Split{}, errAt(dec.InputOffset(), "key %q, want \"train\", \"val\" or \"test\"", key)
		}
		if _, dup := lists[key]; dup {
			return Split{}, errAt(dec.InputOffset(), "key %q appears twice", key)
		}
		if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
			return Split{}, errAt(dec.InputOffset(), "%q: want an array of row indices", key)
		}
		list := []int{}
		var lo []int64
		for dec.More() {
			start := dec.InputOffset()
			tok, err := dec.Token()
			if err != nil {
				return Split{}, errAt(dec.InputOffset(), "bad JSON in %q: %v", key, err)
			}
			// start is the offset before any separator; point at the token.
			for start < int64(len(data)) && (data[start] == ',' || data[start] == ' ' || data[start] == '\n' || data[start] == '\t' || data[start] == '\r') {
				start++
			}
			num, ok := tok.(json.Number)
			v, _, isInt := parseIndex(string(num))
			if !ok || !isInt {
				return Split{}, errAt(start, "%s[%d] = %v, want an integer row index", key, len(list), tok)
			}
			if v < 0 || v >= int64(n) {
				return Split{}, errAt(start, "%s[%d] = %d out of range, want a row index in [0, %d)", key, len(list), v, n)
			}
			if labels[v] < 0 {
				return Split{}, errAt(start, "%s[%d] = %d is a node with an unknown label", key, len(list), v)
			}
			list = append(list, int(v))
			lo = append(lo, start)
		}
		if _, err := dec.Token(); err != nil {
			return Split{}, errAt(dec.InputOffset(), "bad JSON in %q: %v", key, err)
		}
		lists[key] = list
		offs[key] = lo
	}
	if _, err := dec.Token(); err != nil {
		return Split{}, errAt(dec.InputOffset(), "bad JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Split{}, errAt(dec.InputOffset(), "data after the closing brace, want one JSON object")
	}
	for _, k := range []string{"train", "val", "test"} {
		if _, ok := lists[k]; !ok {
			return Split{}, fileErr(file, 0, 0, "no %q list, want {\"train\": [...], \"val\": [...], \"test\": [...]}", k)
		}
	}
	for _, k := range []string{"train", "test"} {
		if len(lists[k]) == 0 {
			return Split{}, fileErr(file, 0, 0, "the %q list is empty, want at least one node (val may be empty)", k)
		}
	}
	valIsTest := equalInts(lists["val"], lists["test"])
	where := make(map[int]string, n)
	for _, k := range []string{"train", "val", "test"} {
		if k == "test" && valIsTest {
			continue
		}
		for p, i := range lists[k] {
			if prev, ok := where[i]; ok {
				return Split{}, errAt(offs[k][p], "%s[%d] = %d is also in %s: want each node in at most one list (val may equal test as a whole)", k, p, i, prev)
			}
			where[i] = k
		}
	}
	s := Split{Train: lists["train"], Val: lists["val"], Test: lists["test"]}
	if valIsTest {
		s.Val = append([]int{}, s.Test...)
	}
	return s, nil
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
