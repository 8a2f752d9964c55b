package datasets

import (
	"bytes"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fairmp/fairmp/graph/features"
)

// The fuzz targets check that no input makes the parsers panic, and that
// what they accept is consistent. Seed corpora are in testdata/fuzz.
// Run, for example: go test ./graph/datasets -run '^$' -fuzz FuzzReadTable -fuzztime 30s

func FuzzReadTable(f *testing.F) {
	f.Add([]byte(fgCSV))
	f.Add([]byte("user_id,a,g\n1,2,Female\n2,\"3\",Male\n"))
	f.Add([]byte("a,b\n1,2\n3\n"))
	f.Add([]byte("\ufeffuser_id,x\n-5,1e308\n+6,NaN\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		spec := tableSpec{
			kinds:    map[string]colKind{"user_id": colID, "skip": colSkip},
			textMaps: map[string]map[string]float64{"g": {"Female": 1, "Male": 0}},
			// A feature limit on a, as written, and on x, as a model's
			// schema scales it.
			limit:     1e6,
			limitCols: map[string]limitRule{"a": {schema: true}, "x": {schema: true, scaled: true, lo: -1, hi: 3}},
		}
		tb, err := readTable(bytes.NewReader(data), nil, "fuzz.csv", spec)
		if err != nil {
			if !isFileError(err) {
				t.Fatalf("error %v is not a FileError", err)
			}
			return
		}
		if tb.rows < 1 || len(tb.data) != tb.rows*len(tb.header) || len(tb.lines) != tb.rows {
			t.Fatalf("%d rows, %d values, %d columns, %d lines", tb.rows, len(tb.data), len(tb.header), len(tb.lines))
		}
		if id := tb.col("user_id"); id >= 0 && len(tb.ids) != tb.rows {
			t.Fatalf("%d ids for %d rows", len(tb.ids), tb.rows)
		}
		for r := 0; r < tb.rows; r++ {
			for k, h := range tb.header {
				v := tb.at(r, k)
				if (h == "a" && !(math.Abs(v) <= 1e6)) || (h == "x" && !(math.Abs(features.ScaleMinMax(v, -1, 3)) <= 1e6)) {
					t.Fatalf("row %d: column %s = %v accepted beyond the limit", r, h, v)
				}
			}
		}
	})
}

func FuzzParseRowEdges(f *testing.F) {
	f.Add([]byte("0 1\n1 2\n"), 3)
	f.Add([]byte("8.380000000000000000e+02 1.000000000000000000e+00\n"), 1000)
	f.Add([]byte("# comment\n\n0\t2\r\n"), 3)
	f.Add([]byte("-0 1e0\n"), 2)
	f.Fuzz(func(t *testing.T, data []byte, n int) {
		if n < 1 || n > 1<<20 {
			n = 1 + (n&0xffff+0xffff)%0xffff
		}
		edges, err := parseRowEdges(bytes.NewReader(data), "fuzz_edges.txt", n)
		if err != nil {
			if !isFileError(err) {
				t.Fatalf("error %v is not a FileError", err)
			}
			return
		}
		for _, e := range edges {
			if e[0] < 0 || e[0] >= n || e[1] < 0 || e[1] >= n {
				t.Fatalf("edge %v out of [0, %d)", e, n)
			}
		}
	})
}

func FuzzParseIDEdges(f *testing.F) {
	f.Add([]byte(fgRel))
	f.Add([]byte("17 -18\n+17 18\n"))
	f.Add([]byte("18446744073709551615 17\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		index := map[idKey]int{{mag: 17}: 0, {mag: 18}: 1, {mag: 18, neg: true}: 2, {mag: 1<<64 - 1}: 3}
		edges, err := parseIDEdges(bytes.NewReader(data), "fuzz_relationship.txt", index)
		if err != nil {
			if !isFileError(err) {
				t.Fatalf("error %v is not a FileError", err)
			}
			return
		}
		for _, e := range edges {
			if e[0] < 0 || e[0] > 3 || e[1] < 0 || e[1] > 3 {
				t.Fatalf("edge %v out of range", e)
			}
		}
	})
}

func FuzzParseSplitFile(f *testing.F) {
	f.Add([]byte(`{"train": [0, 1], "val": [2], "test": [2]}`))
	f.Add([]byte(`{"train": [0], "val": [1], "test": [3]}`))
	f.Add([]byte("{\"train\": [0,\n1], \"val\": [], \"test\": [1.0]}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		labels := []int{0, 1, 1, -1, 0}
		s, err := parseSplitFile(data, "split.json", len(labels), labels)
		if err != nil {
			if !isFileError(err) {
				t.Fatalf("error %v is not a FileError", err)
			}
			return
		}
		for _, l := range [][]int{s.Train, s.Val, s.Test} {
			for _, i := range l {
				if i < 0 || i >= len(labels) || labels[i] < 0 {
					t.Fatalf("split %+v holds node %d", s, i)
				}
			}
		}
	})
}

// FuzzSynthetic: small graphs with arbitrary knobs either generate with
// the requested edge count or return an error; they never hang or panic.
func FuzzSynthetic(f *testing.F) {
	f.Add(8, 0.5, 1.0, 1.0, 1.0, 3.0, int64(1))
	f.Add(4, 0.5, 1.0, 1.0, 0.0, 1.5, int64(2))
	f.Add(30, 0.1, 0.0, 0.5, 0.5, 10.0, int64(3))
	f.Fuzz(func(t *testing.T, n int, frac, bias, hy, hs, deg float64, seed int64) {
		cfg := DefaultSyntheticConfig()
		cfg.N = 4 + (n&0x3f+0x3f)%0x3f
		cfg.NumFeatures = 2
		cfg.GroupFrac, cfg.LabelBias, cfg.LabelHomophily, cfg.SensHomophily, cfg.MeanDegree, cfg.Seed = frac, bias, hy, hs, deg, seed
		ds, err := Synthetic(cfg)
		if err != nil {
			return
		}
		if want := int(math.Round(float64(cfg.N) * deg / 2)); ds.Graph.NumEdges() != want {
			t.Fatalf("%d edges, want %d", ds.Graph.NumEdges(), want)
		}
	})
}

// FuzzLoadFiles runs whole loads on files: the fuzzed bytes are the node
// table, and (split at the first 0xFF byte, if any) the edge file. Any
// input must give a dataset or a *FileError, never a panic, and a
// dataset's graph and labels must agree on the node count.
func FuzzLoadFiles(f *testing.F) {
	f.Add([]byte(fgCSV + "\xff" + fgRel))
	f.Add([]byte("\ufeff" + fgCSV + "\xff\ufeff" + fgRel))
	f.Add([]byte(fgCSV + "\xff9007199254740993 17"))
	f.Add([]byte("user_id,a,LAB,S\n1,2,0," + strings.Repeat("7", 2<<20) + "\n\xff1 1\n"))
	f.Add([]byte(strings.Repeat("\x00", 1<<16)))
	f.Add([]byte("user_id,a,LAB,S\n1,2,0,0\n2,2,1,1\n\xff1 2\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		csv, rel := data, []byte(nil)
		if i := bytes.IndexByte(data, 0xff); i >= 0 {
			csv, rel = data[:i], data[i+1:]
		}
		files := map[string]string{"toy.csv": string(csv)}
		if rel != nil {
			files["toy_relationship.txt"] = string(rel)
		}
		dir := writeFiles(t, files)
		ds, err := LoadFairGNN(dir, fgConfig())
		if err != nil {
			if !isFileError(err) {
				t.Fatalf("error %v is not a FileError", err)
			}
			return
		}
		if ds.Graph.N() != ds.N() || len(ds.Features) != ds.N()*ds.NumFeatures {
			t.Fatalf("graph of %d nodes, %d labels, %d features", ds.Graph.N(), ds.N(), len(ds.Features))
		}
	})
}

// FuzzLoadUserFiles runs LoadFiles on a fuzzed node table and edge list
// (split at the first 0xFF byte), with and without an id column: a
// dataset or a *FileError, never a panic; labels, groups and the split
// agree with the node count.
func FuzzLoadUserFiles(f *testing.F) {
	f.Add([]byte(userCSV+"\xff"+userEdges), true)
	f.Add([]byte("a\tb\tc\n1\tx\ty\n2\tz\tw\n\xff0,1,2.5\n"), false)
	f.Add([]byte("name,age,score,job,outcome,region,set\nann,1,1,0,,,\n\xffann ann\n"), true)
	f.Fuzz(func(t *testing.T, data []byte, ids bool) {
		table, edges := data, []byte(nil)
		if i := bytes.IndexByte(data, 0xff); i >= 0 {
			table, edges = data[:i], data[i+1:]
		}
		dir := writeFiles(t, map[string]string{"people.csv": string(table), "links.txt": string(edges)})
		c := userConfig(dir)
		if !ids {
			c = DefaultFilesConfig()
			c.Nodes, c.Edges, c.LabelColumn, c.SensColumn = filepath.Join(dir, "people.csv"), filepath.Join(dir, "links.txt"), "b", "c"
		}
		ds, err := LoadFiles(c)
		if err != nil {
			if !isFileError(err) {
				t.Fatalf("error %v is not a FileError", err)
			}
			return
		}
		n := ds.N()
		if ds.Graph.N() != n || len(ds.Sens) != n || len(ds.Features) != n*ds.NumFeatures || (ds.IDs != nil && len(ds.IDs) != n) {
			t.Fatalf("graph of %d nodes, %d labels, %d groups, %d features", ds.Graph.N(), n, len(ds.Sens), len(ds.Features))
		}
		for _, list := range [][]int{ds.Split.Train, ds.Split.Val, ds.Split.Test} {
			for _, i := range list {
				if i < 0 || i >= n || ds.Labels[i] < 0 {
					t.Fatalf("split node %d of %d, label %d", i, n, ds.Labels[i])
				}
			}
		}
	})
}
