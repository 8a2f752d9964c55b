package datasets

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/stretchr/testify/require"
)

// writeFiles writes name → content into a new temporary folder.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A small FairGNN-format table: ids beyond 2^53 that differ only in the
// last digit (they collide as float64), a label of 2 (→ 1), −1 (unknown),
// a sensitive value of 3 (→ 1).
const fgCSV = `user_id,a,LAB,b,S
9007199254740993,1,0,10,0
9007199254740992,3,2,20,3
17,5,-1,20,1
18,2,1,40,0
`
const fgRel = "9007199254740993\t9007199254740992\n9007199254740992 9007199254740993\n17\t17\n\n18\t9007199254740993\n"

func fgConfig() FairGNNConfig {
	return FairGNNConfig{Name: "toy", File: "toy", IDColumn: "user_id", LabelColumn: "LAB", SensColumn: "S", Options: PaperOptions()}
}

func TestLoadFairGNN(t *testing.T) {
	dir := writeFiles(t, map[string]string{"toy.csv": fgCSV, "toy_relationship.txt": fgRel})
	c := fgConfig()
	ds, err := LoadFairGNN(dir, c)
	require.NoError(t, err)
	if !reflect.DeepEqual(ds.Labels, []int{0, 1, -1, 1}) || !reflect.DeepEqual(ds.Sens, []int{0, 1, 1, 0}) {
		t.Errorf("labels %v sens %v", ds.Labels, ds.Sens)
	}
	if !reflect.DeepEqual(ds.FeatureNames, []string{"a", "b"}) || !reflect.DeepEqual(ds.Features, []float64{1, 10, 3, 20, 5, 20, 2, 40}) {
		t.Errorf("features %v %v", ds.FeatureNames, ds.Features)
	}
	if !reflect.DeepEqual(ds.Graph.Edges(), [][2]int{{0, 1}, {0, 3}}) {
		t.Errorf("edges %v", ds.Graph.Edges())
	}
	if cl := ds.Graph.Cleanup(); cl.Input != 4 || cl.SelfLoops != 1 || cl.Duplicates != 1 {
		t.Errorf("cleanup %+v", cl)
	}
	// No split.json: a random split of the 3 labelled nodes.
	want, _ := RandomSplit(ds.Labels, c.Options.SplitFractions, c.Options.SplitSeed)
	if !reflect.DeepEqual(ds.Split, want) {
		t.Errorf("split %+v, want %+v", ds.Split, want)
	}

	c.MinMaxScale = true
	c.Options.IncludeSens = true
	ds, err = LoadFairGNN(dir, c)
	require.NoError(t, err)
	// a: min 1, max 5; b: min 10, max 40; S kept as 0/1, unscaled.
	testutil.AllClose(t, "scaled", ds.Features, []float64{-1, -1, 0, 0, -1.0 / 3, 1, 1, -1.0 / 3, 1, -0.5, 1, 0}, 1e-15, 0)
	if !reflect.DeepEqual(ds.FeatureNames, []string{"a", "b", "S"}) {
		t.Errorf("names %v", ds.FeatureNames)
	}

	// The parent folder holding toy/ works too, and split.json is used.
	parent := t.TempDir()
	if err := os.Rename(dir, filepath.Join(parent, "toy")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(parent, "toy", "split.json"), []byte(`{"train": [1, 0], "val": [3], "test": [3]}`), 0o644)
	ds, err = LoadFairGNN(parent, fgConfig())
	require.NoError(t, err)
	if !reflect.DeepEqual(ds.Split, Split{Train: []int{1, 0}, Val: []int{3}, Test: []int{3}}) {
		t.Errorf("split %+v", ds.Split)
	}
	c = fgConfig()
	c.Options.IgnoreSplitFile = true
	ds, _ = LoadFairGNN(parent, c)
	if len(ds.Split.Train) != 1 || len(ds.Split.Val) != 1 || len(ds.Split.Test) != 1 {
		t.Errorf("IgnoreSplitFile: split %+v, want 1/1/1 of 3 labelled nodes", ds.Split)
	}
}

func TestLoadNIFTY(t *testing.T) {
	csv := "Gender,x,Purpose,GoodCustomer\nFemale,1,car,1\nMale,2,tv,-1\nMale,4,car,1.0\n"
	edges := "0.000000000000000000e+00 2.000000000000000000e+00\n1 2\n"
	c := NIFTYConfig{Name: "g", File: "g", LabelColumn: "GoodCustomer", SensColumn: "Gender",
		LabelMap: map[string]int{"-1": 0}, SensMap: map[string]int{"Female": 1, "Male": 0},
		Drop: []string{"Purpose"}, Threshold: 0.8, Options: DefaultOptions()}
	dir := writeFiles(t, map[string]string{"g.csv": csv, "g_edges.txt": edges})
	ds, err := LoadNIFTY(dir, c)
	require.NoError(t, err)
	if !reflect.DeepEqual(ds.Labels, []int{1, 0, 1}) || !reflect.DeepEqual(ds.Sens, []int{1, 0, 0}) ||
		!reflect.DeepEqual(ds.Features, []float64{1, 2, 4}) || !reflect.DeepEqual(ds.Graph.Edges(), [][2]int{{0, 2}, {1, 2}}) {
		t.Errorf("labels %v sens %v features %v edges %v", ds.Labels, ds.Sens, ds.Features, ds.Graph.Edges())
	}
	// Without the edges file: the similarity graph over Gender (mapped)
	// and x. Rows (1,1), (0,2), (0,4): distances √2, √10, 2.
	// Node 0: sims 1/(1+√2)=.414, 1/(1+√10)=.240; t·max = .331 → {1}.
	// Node 1: .414, 1/3; cut .331 → {0, 2}. Node 2: .240, .333 → cut .267 → {1}.
	dir = writeFiles(t, map[string]string{"g.csv": csv})
	ds, err = LoadNIFTY(dir, c)
	require.NoError(t, err)
	if !reflect.DeepEqual(ds.Graph.Edges(), [][2]int{{0, 1}, {1, 2}}) {
		t.Errorf("similarity edges %v, want [[0 1] [1 2]]", ds.Graph.Edges())
	}
}

func TestPresets(t *testing.T) {
	for _, name := range Presets {
		fg, err1 := FairGNNPreset(name)
		nf, err2 := NIFTYPreset(name)
		if (err1 == nil) == (err2 == nil) {
			t.Errorf("%s: FairGNN error %v, NIFTY error %v: want exactly one preset", name, err1, err2)
		}
		if err1 == nil && (fg.Name != name || fg.LabelColumn == "") || err2 == nil && (nf.Name != name || nf.Threshold == 0) {
			t.Errorf("%s: %+v %+v", name, fg, nf)
		}
	}
	if _, err := Load(t.TempDir(), "cora", DefaultOptions()); err == nil || !strings.Contains(err.Error(), "unknown data set \"cora\"") {
		t.Errorf("error %v", err)
	}
}

// TestLoadErrors checks that every kind of bad input gives an error that
// names file:line(:column) and what was expected.
func TestLoadErrors(t *testing.T) {
	split := func(s string) map[string]string {
		return map[string]string{"toy.csv": fgCSV, "toy_relationship.txt": fgRel, "split.json": s}
	}
	cases := []struct {
		name  string
		files map[string]string
		want  string // substring, with "F" standing for the folder
	}{
		{"missing csv", map[string]string{}, "F/toy.csv: missing file (also tried F/toy/toy.csv)"},
		{"missing edges", map[string]string{"toy.csv": fgCSV}, "F/toy_relationship.txt: missing edge file"},
		{"empty csv", map[string]string{"toy.csv": ""}, "F/toy.csv:1: empty file, want a header line"},
		{"header only", map[string]string{"toy.csv": "user_id,a,LAB,S\n"}, "F/toy.csv:2: no data rows"},
		{"missing column", map[string]string{"toy.csv": "user_id,a,S\n1,2,3\n"}, `F/toy.csv:1: missing column "LAB"; columns present: user_id, a, S`},
		{"non-numeric", map[string]string{"toy.csv": "user_id,a,LAB,S\n1,2,0,0\n2,x1,0,0\n"}, `F/toy.csv:3:3: column "a": "x1" is not a number`},
		{"empty cell", map[string]string{"toy.csv": "user_id,a,LAB,S\n1,,0,0\n"}, `F/toy.csv:2:3: column "a": empty cell, want a number`},
		{"ragged", map[string]string{"toy.csv": "user_id,a,LAB,S\n1,2,0,0\n2,3,0\n"}, "F/toy.csv:3: ragged row: 3 fields, want 4"},
		{"nan", map[string]string{"toy.csv": "user_id,a,LAB,S\n1,NaN,0,0\n"}, `F/toy.csv:2:3: column "a": "NaN" is not finite`},
		{"inf", map[string]string{"toy.csv": "user_id,a,LAB,S\n1,2,0,0\n2,3,0,-inf\n"}, `F/toy.csv:3:7: column "S": "-inf" is not finite`},
		{"overflow", map[string]string{"toy.csv": "user_id,a,LAB,S\n1,1e999,0,0\n"}, `F/toy.csv:2:3: column "a": "1e999" is not finite`},
		{"bad id", map[string]string{"toy.csv": "user_id,a,LAB,S\n1.5,2,0,0\n"}, `F/toy.csv:2:1: column "user_id": "1.5" is not an integer id`},
		{"duplicate id", map[string]string{"toy.csv": "user_id,a,LAB,S\n7,2,0,0\n7,2,0,1\n"}, `F/toy.csv:3: column "user_id": user id 7 repeats line 2`},
		{"one group", map[string]string{"toy.csv": "user_id,a,LAB,S\n7,2,0,0\n8,2,0,-1\n9,2,1,0\n"}, `F/toy.csv: column "S": every node with a known value is in one group (2 with value <= 0`},
		{"empty edges", map[string]string{"toy.csv": fgCSV, "toy_relationship.txt": "# no edges\n\n"}, "F/toy_relationship.txt: no edges"},
		{"binary csv", map[string]string{"toy.csv": "user_id,a\x00\x00\x00"}, "F/toy.csv:1: binary or not UTF-8 text: NUL byte at byte 10"},
		{"latin-1 csv", map[string]string{"toy.csv": "user_id,a,LAB,S\n1,caf\xe9,0,0\n"}, "F/toy.csv:2: binary or not UTF-8 text: invalid UTF-8 at byte 22"},
		{"binary edges", map[string]string{"toy.csv": fgCSV, "toy_relationship.txt": "\x00\x01"}, "F/toy_relationship.txt:1: binary or not UTF-8 text"},
		{"huge cell", map[string]string{"toy.csv": "user_id,a,LAB,S\n1,2,0," + strings.Repeat("9", 3<<20) + "\n"}, "F/toy.csv: a row longer than 1048576 bytes"},
		{"huge bad cell", map[string]string{"toy.csv": "user_id,a,LAB,S\n1,2,0," + strings.Repeat("x", 100<<10) + "\n"}, `column "S": "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"… (102400 bytes) is not a number`},
		{"split all empty", split(`{"train": [], "val": [], "test": []}`), `F/split.json: the "train" list is empty`},
		{"split no test", split(`{"train": [0], "val": [], "test": []}`), `F/split.json: the "test" list is empty`},
		{"label not integer", map[string]string{"toy.csv": "user_id,a,LAB,S\n7,2,0.5,0\n"}, `F/toy.csv:2: column "LAB" (field 3): label 0.5 is not an integer`},
		{"duplicate column", map[string]string{"toy.csv": "user_id,a,a,S\n"}, `F/toy.csv:1:3: column name "a" repeats column 2`},
		{"unknown user", map[string]string{"toy.csv": fgCSV, "toy_relationship.txt": "17 18\n18 99\n"}, "F/toy_relationship.txt:2:4: user id 99 is not in the node table"},
		{"bad user", map[string]string{"toy.csv": fgCSV, "toy_relationship.txt": "17 1e3\n"}, `F/toy_relationship.txt:1:4: "1e3" is not an integer user id`},
		{"three fields", map[string]string{"toy.csv": fgCSV, "toy_relationship.txt": "17 18 19\n"}, "F/toy_relationship.txt:1: 3 fields, want 2"},
		{"split out of range", split(`{"train": [0, 4], "val": [], "test": [1]}`), "F/split.json:1:15: train[1] = 4 out of range, want a row index in [0, 4)"},
		{"split twice", split("{\"train\": [0, 1],\n \"val\": [3],\n \"test\": [1]}"), "F/split.json:3:11: test[0] = 1 is also in train"},
		{"split unlabelled", split(`{"train": [2], "val": [], "test": []}`), "F/split.json:1:12: train[0] = 2 is a node with an unknown label"},
		{"split not integer", split(`{"train": [1.5], "val": [], "test": []}`), "F/split.json:1:12: train[0] = 1.5, want an integer row index"},
		{"split missing list", split(`{"train": [1]}`), `F/split.json: no "val" list`},
		{"split bad key", split(`{"training": [1]}`), `key "training", want "train", "val" or "test"`},
		{"split empty", split(""), "F/split.json:1: empty file"},
	}
	for _, c := range cases {
		dir := writeFiles(t, c.files)
		_, err := LoadFairGNN(dir, fgConfig())
		want := strings.ReplaceAll(c.want, "F/", dir+"/")
		if err == nil || !strings.Contains(err.Error(), want) || !isFileError(err) {
			t.Errorf("%s: error %v, want a FileError containing %q", c.name, err, want)
		}
		if c.name == "missing csv" && !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("missing csv: error does not wrap fs.ErrNotExist")
		}
	}

	nc := NIFTYConfig{Name: "n", File: "n", LabelColumn: "y", SensColumn: "s", Threshold: 0.5, Options: DefaultOptions()}
	for _, c := range []struct{ edges, want string }{
		{"0 1\n1 3\n", "F/n_edges.txt:2:3: row index 3 out of range, want an integer in [0, 3)"},
		{"0 1\n1 -1\n", "F/n_edges.txt:2:3: row index -1 out of range"},
		{"0 1.5\n", `F/n_edges.txt:1:3: "1.5" is not a row index, want an integer in [0, 3)`},
		{"0 3.0e+00\n", "F/n_edges.txt:1:3: row index 3.0e+00 out of range"},
		{"0 nan\n", `F/n_edges.txt:1:3: "nan" is not a row index`},
		{"0\n", "F/n_edges.txt:1: 1 fields, want 2"},
	} {
		dir := writeFiles(t, map[string]string{"n.csv": "y,s,x\n0,1,2\n1,0,3\n1,1,4\n", "n_edges.txt": c.edges})
		_, err := LoadNIFTY(dir, nc)
		want := strings.ReplaceAll(c.want, "F/", dir+"/")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want one containing %q", err, want)
		}
	}
	// A text cell in a column without a map.
	dir := writeFiles(t, map[string]string{"n.csv": "y,s,x\n0,Male,2\n"})
	if _, err := LoadNIFTY(dir, nc); err == nil || !strings.Contains(err.Error(), `n.csv:2:3: column "s": "Male" is not a number`) {
		t.Errorf("error %v", err)
	}
	// Config errors.
	bad := nc
	bad.Threshold = 2
	if _, err := LoadNIFTY(dir, bad); err == nil || !strings.Contains(err.Error(), "NIFTYConfig.Threshold = 2") {
		t.Errorf("error %v", err)
	}
	bad = nc
	bad.Options.SplitFractions = [3]float64{1, 1, 0}
	if _, err := LoadNIFTY(dir, bad); err == nil || !strings.Contains(err.Error(), "Options.SplitFractions") {
		t.Errorf("error %v", err)
	}
	for _, c := range []struct {
		mod  func(*FairGNNConfig)
		want string
	}{
		{func(c *FairGNNConfig) { c.File = "" }, "FairGNNConfig.File is empty"},
		{func(c *FairGNNConfig) { c.IDColumn = "" }, "FairGNNConfig.IDColumn is empty"},
		{func(c *FairGNNConfig) { c.SensColumn = "LAB" }, "LabelColumn and SensColumn are both \"LAB\""},
		{func(c *FairGNNConfig) { c.Drop = []string{"S"} }, "Drop holds SensColumn \"S\""},
	} {
		fc := fgConfig()
		c.mod(&fc)
		if _, err := LoadFairGNN(dir, fc); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
	fc := fgConfig()
	fc.Drop = []string{"zz"}
	dir = writeFiles(t, map[string]string{"toy.csv": fgCSV, "toy_relationship.txt": fgRel})
	if _, err := LoadFairGNN(dir, fc); err == nil || !strings.Contains(err.Error(), `missing column "zz"`) {
		t.Errorf("error %v", err)
	}
}

// TestLoadPresetsOnToyFiles runs the pokec_n and german presets through
// Load on small files laid out as in the releases (parent folder).
func TestLoadPresetsOnToyFiles(t *testing.T) {
	parent := t.TempDir()
	os.Mkdir(filepath.Join(parent, "pokec_n"), 0o755)
	os.WriteFile(filepath.Join(parent, "pokec_n", "region_job_2.csv"),
		[]byte("user_id,completion_percentage,gender,region,AGE,I_am_working_in_field\n1001,10,1,0,22,-1\n1002,20,0,1,30,3\n1003,30,1,1,41,0\n1004,40,0,0,50,1\n"), 0o644)
	os.WriteFile(filepath.Join(parent, "pokec_n", "region_job_2_relationship.txt"), []byte("1001\t1002\n1003\t1004\n1004\t1001\n"), 0o644)
	if err := os.Rename(filepath.Join(parent, "pokec_n"), filepath.Join(parent, "pokec")); err != nil {
		t.Fatal(err)
	}
	ds, err := Load(parent, "pokec_n", DefaultOptions()) // FairGNN's dataset/pokec layout
	require.NoError(t, err)
	if !reflect.DeepEqual(ds.Labels, []int{-1, 1, 0, 1}) || !reflect.DeepEqual(ds.Sens, []int{0, 1, 1, 0}) ||
		!reflect.DeepEqual(ds.FeatureNames, []string{"completion_percentage", "gender", "AGE"}) || ds.Graph.NumEdges() != 3 {
		t.Errorf("pokec_n: labels %v sens %v names %v edges %d", ds.Labels, ds.Sens, ds.FeatureNames, ds.Graph.NumEdges())
	}
	if ds.Features[2] != 22 { // Pokec presets are not scaled
		t.Errorf("AGE of node 0 = %v, want 22 (unscaled)", ds.Features[2])
	}

	os.Mkdir(filepath.Join(parent, "german"), 0o755)
	os.WriteFile(filepath.Join(parent, "german", "german.csv"),
		[]byte("Gender,ForeignWorker,Age,PurposeOfLoan,LoanAmount,GoodCustomer\nFemale,1,30,Car,1000,1\nMale,0,40,Radio,2000,-1\nMale,1,50,Other,1500,1\n"), 0o644)
	ds, err = Load(parent, "german", DefaultOptions())
	require.NoError(t, err)
	if !reflect.DeepEqual(ds.Labels, []int{1, 0, 1}) || !reflect.DeepEqual(ds.Sens, []int{1, 0, 0}) ||
		!reflect.DeepEqual(ds.FeatureNames, []string{"ForeignWorker", "Age", "LoanAmount"}) {
		t.Errorf("german: labels %v sens %v names %v", ds.Labels, ds.Sens, ds.FeatureNames)
	}
	// Min-max scaled: Age 30, 40, 50 → −1, 0, 1.
	if ds.Features[1] != -1 || ds.Features[4] != 0 || ds.Features[7] != 1 {
		t.Errorf("german features %v", ds.Features)
	}
	// Similarity graph (threshold 0.8) on the raw Gender (mapped),
	// ForeignWorker, Age, LoanAmount: distances 0-1 ≈ 1000.05, 0-2 ≈ 500.40,
	// 1-2 ≈ 500.10, so 0 → {2}, 1 → {2}, 2 → {0, 1}.
	if e := ds.Graph.Edges(); !reflect.DeepEqual(e, [][2]int{{0, 2}, {1, 2}}) {
		t.Errorf("german: edges %v, want [[0 2] [1 2]]", e)
	}
}
