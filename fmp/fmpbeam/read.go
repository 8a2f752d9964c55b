package fmpbeam

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local" // plain paths

	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/fairmp/fairmp/graph/features"
)

// Layout cuts the nodes 0..n−1 into blocks of Size consecutive nodes.
type Layout struct {
	Size int64
}

// DefaultLayout returns blocks of 16,384 nodes: at mean degree 20 a
// block's matrix entries take about 3 MB, and a graph of a billion nodes
// has 61,036 blocks.
func DefaultLayout() Layout { return Layout{Size: 1 << 14} }

// Validate checks that Size is at least 1 and at most 2³¹−1.
func (l Layout) Validate() error {
	if l.Size < 1 || l.Size > math.MaxInt32 {
		return fmt.Errorf("fmpbeam: Layout.Size = %d, want 1 ≤ size ≤ %d", l.Size, math.MaxInt32)
	}
	return nil
}

// The sharded text formats (see the package doc): one file is read whole
// by one worker, so a data set comes in as many files as the workers
// should share. Every format is lines of fields separated by spaces, tabs
// or commas; blank lines and lines starting with '#' are skipped.

// listFn expands a glob into the files it matches, sorted.
type listFn struct {
	Glob string
	Flag string // the command's flag, for the error
}

func (f *listFn) ProcessElement(ctx context.Context, _ []byte, emit func(string)) error {
	fs, err := filesystem.New(ctx, f.Glob)
	if err != nil {
		return fmt.Errorf("fmpbeam: %s %q: %w", f.Flag, f.Glob, err)
	}
	defer fs.Close()
	files, err := fs.List(ctx, f.Glob)
	if err != nil {
		return fmt.Errorf("fmpbeam: %s %q: %w", f.Flag, f.Glob, err)
	}
	if len(files) == 0 {
		return fmt.Errorf("fmpbeam: %s %q matches no file", f.Flag, f.Glob)
	}
	sort.Strings(files)
	for _, p := range files {
		emit(p)
	}
	return nil
}

// files returns the files a glob matches, one per worker's task.
func files(s beam.Scope, glob, flag string) beam.PCollection {
	return beam.Reshuffle(s, beam.ParDo(s, &listFn{Glob: glob, Flag: flag}, beam.Impulse(s)))
}

// scanLines calls f with each non-blank, non-comment line of a file and
// its 1-based number, split into fields.
func scanLines(ctx context.Context, path string, f func(line int, fields []string) error) error {
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return err
	}
	defer fs.Close()
	rc, err := fs.OpenRead(ctx, path)
	if err != nil {
		return err
	}
	defer rc.Close()
	sc := bufio.NewScanner(rc)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<24)
	line := 0
	split := func(r rune) bool { return r == ' ' || r == '\t' || r == ',' || r == '\r' }
	for sc.Scan() {
		line++
		t := sc.Text()
		if strings.HasPrefix(strings.TrimLeft(t, " \t"), "#") {
			continue
		}
		fields := strings.FieldsFunc(t, split)
		if len(fields) == 0 {
			continue
		}
		if err := f(line, fields); err != nil {
			return fmt.Errorf("fmpbeam: %s:%d: %w", path, line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("fmpbeam: %s:%d: %w", path, line+1, err)
	}
	return nil
}

func parseID(s string) (int64, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%q is not a node id, want an integer ≥ 0", s)
	}
	return v, nil
}

// batchEvery is the number of entries after which a file's reader emits
// a block's batch.
const batchEvery = 1 << 16

// readEdgesFn reads an edge file: lines "u v", two node ids. Each edge
// goes to the blocks of both its ends.
type readEdgesFn struct{ Size int64 }

func (f *readEdgesFn) ProcessElement(ctx context.Context, path string, emit func(int64, Edges)) error {
	batch := map[int64]*Edges{}
	add := func(a, b int64) {
		k := a / f.Size
		e := batch[k]
		if e == nil {
			e = &Edges{}
			batch[k] = e
		}
		e.Local = append(e.Local, int32(a-k*f.Size))
		e.Other = append(e.Other, b)
		if len(e.Local) >= batchEvery {
			emit(k, *e)
			delete(batch, k)
		}
	}
	err := scanLines(ctx, path, func(_ int, fs []string) error {
		if len(fs) != 2 {
			return fmt.Errorf("%d fields, want 2 (two node ids)", len(fs))
		}
		u, err := parseID(fs[0])
		if err != nil {
			return err
		}
		v, err := parseID(fs[1])
		if err != nil {
			return err
		}
		add(u, v)
		add(v, u)
		return nil
	})
	for _, k := range sortedKeys(batch) {
		emit(k, *batch[k])
	}
	return err
}

func sortedKeys[V any](m map[int64]V) []int64 {
	keys := make([]int64, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// ReadEdges reads the edge files a glob matches (lines "u v": two node
// ids, in either direction; self-loops and repeated edges are dropped
// when the matrix is built) into batches of edge ends keyed by block
// (KV<int64, Edges>).
func ReadEdges(s beam.Scope, lay Layout, glob string) beam.PCollection {
	s = s.Scope("ReadEdges")
	return beam.ParDo(s, &readEdgesFn{Size: lay.Size}, files(s, glob, "edges"))
}

// readNodesFn reads a node file: lines "id label group split", the label
// and the group integers (−1 unknown), the split one of train, val, test
// and - (none).
type readNodesFn struct{ Size int64 }

func (f *readNodesFn) ProcessElement(ctx context.Context, path string, emit func(int64, Nodes)) error {
	batch := map[int64]*Nodes{}
	err := scanLines(ctx, path, func(_ int, fs []string) error {
		if len(fs) != 4 {
			return fmt.Errorf("%d fields, want 4 (id, label, group, split)", len(fs))
		}
		id, err := parseID(fs[0])
		if err != nil {
			return err
		}
		var lg [2]int32
		for k, name := range []string{"label", "group"} {
			v, err := strconv.ParseInt(fs[1+k], 10, 32)
			if err != nil || v < -1 {
				return fmt.Errorf("%s %q, want an integer ≥ 0 or −1 (unknown)", name, fs[1+k])
			}
			lg[k] = int32(v)
		}
		var split uint8
		switch fs[3] {
		case "train":
			split = SplitTrain
		case "val":
			split = SplitVal
		case "test":
			split = SplitTest
		case "-":
		default:
			return fmt.Errorf("split %q, want train, val, test or -", fs[3])
		}
		k := id / f.Size
		b := batch[k]
		if b == nil {
			b = &Nodes{Lo: k * f.Size}
			batch[k] = b
		}
		b.Idx = append(b.Idx, int32(id-k*f.Size))
		b.Label = append(b.Label, lg[0])
		b.Sens = append(b.Sens, lg[1])
		b.Split = append(b.Split, split)
		if len(b.Idx) >= batchEvery {
			emit(k, *b)
			delete(batch, k)
		}
		return nil
	})
	for _, k := range sortedKeys(batch) {
		emit(k, *batch[k])
	}
	return err
}

// assembleNodesFn puts a block's node lines together, checking that they
// number the block's nodes from its first without a gap or a repeat.
type assembleNodesFn struct{}

func (f *assembleNodesFn) ProcessElement(ctx context.Context, b int64, parts func(*Nodes) bool, emit func(int64, Nodes)) error {
	var all []Nodes
	var p Nodes
	n, bytes := 0, 0
	for parts(&p) {
		all = append(all, p)
		n += len(p.Idx)
		bytes += keyed(b, encodedSize(&p))
	}
	counter(ctx, "read.nodes", bytes)
	out := Nodes{Lo: all[0].Lo, N: int32(n), Label: make([]int32, n), Sens: make([]int32, n), Split: make([]uint8, n)}
	seen := make([]bool, n)
	for _, p := range all {
		for k, i := range p.Idx {
			if int(i) >= n {
				return fmt.Errorf("fmpbeam: the node files do not number the nodes 0..n−1: node %d is listed but %d of the nodes from %d are missing (every node from 0 to the largest id needs a line)", p.Lo+int64(i), int(i)-n+1, p.Lo)
			}
			if seen[i] {
				return fmt.Errorf("fmpbeam: node %d has two lines in the node files", p.Lo+int64(i))
			}
			seen[i] = true
			out.Label[i], out.Sens[i], out.Split[i] = p.Label[k], p.Sens[k], p.Split[k]
		}
	}
	emit(b, out)
	return nil
}

// ReadNodes reads the node files a glob matches (lines "id label group
// split") into one Nodes per block (KV<int64, Nodes>). The ids must be
// 0..n−1, each once (NodeStats checks the blocks' count).
func ReadNodes(s beam.Scope, lay Layout, glob string) beam.PCollection {
	s = s.Scope("ReadNodes")
	parts := beam.ParDo(s, &readNodesFn{Size: lay.Size}, files(s, glob, "nodes"))
	return beam.ParDo(s, &assembleNodesFn{}, beam.GroupByKey(s, parts))
}

// readRowsFn reads a file of rows: lines "id v1 ... vC" (features, or a
// model's logits).
type readRowsFn struct {
	Size int64
	What string
}

func (f *readRowsFn) ProcessElement(ctx context.Context, path string, emit func(int64, Rows)) error {
	batch := map[int64]*Rows{}
	c := -1
	err := scanLines(ctx, path, func(_ int, fs []string) error {
		if c < 0 {
			c = len(fs) - 1
		}
		if len(fs)-1 != c || c < 1 {
			return fmt.Errorf("%d values, want %d (every line of a file of %s has an id and the same number of values)", len(fs)-1, max(c, 1), f.What)
		}
		id, err := parseID(fs[0])
		if err != nil {
			return err
		}
		k := id / f.Size
		b := batch[k]
		if b == nil {
			b = &Rows{Lo: k * f.Size, C: int32(c)}
			batch[k] = b
		}
		b.Idx = append(b.Idx, int32(id-k*f.Size))
		for _, t := range fs[1:] {
			v, err := strconv.ParseFloat(t, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%q is not a finite number", t)
			}
			b.V = append(b.V, v)
		}
		if len(b.Idx) >= batchEvery {
			emit(k, *b)
			delete(batch, k)
		}
		return nil
	})
	for _, k := range sortedKeys(batch) {
		emit(k, *batch[k])
	}
	return err
}

// assembleRowsFn puts a block's rows together: every node of the block
// (its Nodes) must have exactly one row, all rows as wide.
type assembleRowsFn struct{ What string }

func (f *assembleRowsFn) ProcessElement(ctx context.Context, b int64, nodes func(*Nodes) bool, parts func(*Rows) bool, emit func(int64, Rows)) error {
	var nb Nodes
	if !nodes(&nb) {
		var p Rows
		parts(&p)
		return fmt.Errorf("fmpbeam: the %s give node %d, which no node file lists", f.What, p.Lo+int64(p.Idx[0]))
	}
	n := int(nb.N)
	out := Rows{Lo: nb.Lo, N: nb.N, C: -1}
	seen := make([]bool, n)
	count, bytes := 0, keyed(b, encodedSize(&nb))
	var p Rows
	for parts(&p) {
		bytes += keyed(b, encodedSize(&p))
		if out.C < 0 {
			out.C = p.C
			out.V = make([]float64, n*int(p.C))
		}
		if p.C != out.C {
			return fmt.Errorf("fmpbeam: the %s have rows of %d and of %d values", f.What, out.C, p.C)
		}
		c := int(p.C)
		for k, i := range p.Idx {
			if int(i) >= n {
				return fmt.Errorf("fmpbeam: the %s give node %d, which no node file lists", f.What, p.Lo+int64(i))
			}
			if seen[i] {
				return fmt.Errorf("fmpbeam: node %d has two rows in the %s", p.Lo+int64(i), f.What)
			}
			seen[i] = true
			count++
			copy(out.V[int(i)*c:], p.V[k*c:(k+1)*c])
		}
	}
	counter(ctx, "read."+f.What, bytes)
	if count < n {
		for i, ok := range seen {
			if !ok {
				return fmt.Errorf("fmpbeam: node %d has no row in the %s", nb.Lo+int64(i), f.What)
			}
		}
	}
	emit(b, out)
	return nil
}

// ReadRows reads the files of rows a glob matches (lines "id v1 ... vC":
// features, or the logits of a model computed elsewhere) into one Rows
// per block, every node of nodes (KV<int64, Nodes>) with exactly one
// row. what names them in errors ("features", "logits").
func ReadRows(s beam.Scope, lay Layout, glob, what string, nodes beam.PCollection) beam.PCollection {
	s = s.Scope("ReadRows")
	parts := beam.ParDo(s, &readRowsFn{Size: lay.Size, What: what}, files(s, glob, what))
	return beam.ParDo(s, &assembleRowsFn{What: what}, beam.CoGroupByKey(s, nodes, parts))
}

// The feature files of package graph/features are opened once per worker
// process (memory-mapped, checked in one pass) and shared by its bundles.
var (
	openMu    sync.Mutex
	openFiles = map[string]*features.Matrix{}
)

func openFeatures(path string) (*features.Matrix, error) {
	openMu.Lock()
	defer openMu.Unlock()
	if m, ok := openFiles[path]; ok {
		return m, nil
	}
	m, err := features.Open(path)
	if err != nil {
		return nil, err
	}
	openFiles[path] = m
	return m, nil
}

// featureBlocksFn emits the blocks of a feature file, checking its rows
// against the node files' n.
type featureBlocksFn struct {
	Path string
	Size int64
}

func (f *featureBlocksFn) ProcessElement(_ []byte, stIt func(*Stats) bool, emit func(int64)) error {
	st, ok := side(stIt)
	if !ok {
		return nil // an earlier stage failed (see side)
	}
	m, err := openFeatures(f.Path)
	if err != nil {
		return fmt.Errorf("fmpbeam: features %s: %w", f.Path, err)
	}
	if int64(m.Rows()) != st.Nodes {
		return fmt.Errorf("fmpbeam: the feature file %s has %d rows, the node files %d nodes", f.Path, m.Rows(), st.Nodes)
	}
	for b := int64(0); b < st.Blocks; b++ {
		emit(b)
	}
	return nil
}

// featureRowsFn reads one block's rows of a feature file.
type featureRowsFn struct {
	Path string
	Size int64
}

func (f *featureRowsFn) ProcessElement(b int64, emit func(int64, Rows)) error {
	m, err := openFeatures(f.Path)
	if err != nil {
		return fmt.Errorf("fmpbeam: features %s: %w", f.Path, err)
	}
	lo := b * f.Size
	hi := min(lo+f.Size, int64(m.Rows()))
	d := m.Cols()
	rows := make([]int, hi-lo)
	for i := range rows {
		rows[i] = int(lo) + i
	}
	out := Rows{Lo: lo, N: int32(hi - lo), C: int32(d), V: make([]float64, len(rows)*d)}
	if err := features.Gather(m, rows, out.V); err != nil {
		return fmt.Errorf("fmpbeam: features %s: %w", f.Path, err)
	}
	emit(b, out)
	return nil
}

// ReadFeatureFile reads a feature file of package graph/features (the
// project's binary format, as datasets.SyntheticLarge and features.Write
// write it) into one Rows per block. Every worker maps the file: it must
// be a path each worker can open (a local disk on Prism, a shared mount
// on a cluster; for object stores use the text rows of ReadRows). stats
// is NodeStats's output: the file must have n rows.
func ReadFeatureFile(s beam.Scope, lay Layout, path string, stats beam.PCollection) beam.PCollection {
	s = s.Scope("ReadFeatureFile")
	blocks := beam.ParDo(s, &featureBlocksFn{Path: path, Size: lay.Size}, beam.Impulse(s), beam.SideInput{Input: stats})
	return beam.ParDo(s, &featureRowsFn{Path: path, Size: lay.Size}, beam.Reshuffle(s, blocks))
}

// readFileFn reads a whole (small) file: a model file.
type readFileFn struct{ Path string }

func (f *readFileFn) ProcessElement(ctx context.Context, _ []byte, emit func([]byte)) error {
	fs, err := filesystem.New(ctx, f.Path)
	if err != nil {
		return fmt.Errorf("fmpbeam: model %s: %w", f.Path, err)
	}
	defer fs.Close()
	rc, err := fs.OpenRead(ctx, f.Path)
	if err != nil {
		return fmt.Errorf("fmpbeam: model %s: %w", f.Path, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return fmt.Errorf("fmpbeam: model %s: %w", f.Path, err)
	}
	emit(b)
	return nil
}

// ReadModel reads a model file (fmp/modelio's format) into a
// singleton PCollection of its bytes: the side input that carries the
// weights to the workers, which check and decode it once each.
func ReadModel(s beam.Scope, path string) beam.PCollection {
	s = s.Scope("ReadModel")
	return beam.ParDo(s, &readFileFn{Path: path}, beam.Impulse(s))
}

func init() {
	register.DoFn3x1[context.Context, []byte, func(string), error](&listFn{})
	register.DoFn3x1[context.Context, string, func(int64, Edges), error](&readEdgesFn{})
	register.DoFn3x1[context.Context, string, func(int64, Nodes), error](&readNodesFn{})
	register.DoFn4x1[context.Context, int64, func(*Nodes) bool, func(int64, Nodes), error](&assembleNodesFn{})
	register.DoFn3x1[context.Context, string, func(int64, Rows), error](&readRowsFn{})
	register.DoFn5x1[context.Context, int64, func(*Nodes) bool, func(*Rows) bool, func(int64, Rows), error](&assembleRowsFn{})
	register.DoFn3x1[[]byte, func(*Stats) bool, func(int64), error](&featureBlocksFn{})
	register.DoFn2x1[int64, func(int64, Rows), error](&featureRowsFn{})
	register.DoFn3x1[context.Context, []byte, func([]byte), error](&readFileFn{})
	register.Emitter1[string]()
	register.Emitter1[int64]()
	register.Emitter1[[]byte]()
	register.Emitter2[int64, Edges]()
	register.Emitter2[int64, Nodes]()
	register.Emitter2[int64, Rows]()
	register.Iter1[Nodes]()
	register.Iter1[Rows]()
}
