package fmpbeam

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/internal/tmpfile"
	"github.com/fairmp/fairmp/metrics"
)

// Outputs: sharded text files of predictions, a JSON file of the
// metrics, and (for a job run stage by stage) sharded binary files of
// blocks. Every file is written to a temporary name beside it and renamed
// when complete (on file systems that rename; object stores make an
// object visible only once it is complete), and its content depends on
// the data alone: blocks in ascending order, whatever order Beam
// delivered them in.

// Chunk is a block's part of a shard file.
type Chunk struct {
	Block int64
	Data  []byte
}

func (c *Chunk) put(w *writer) {
	w.varint(c.Block)
	w.u8s(c.Data)
}

func (c *Chunk) get(r *reader) { c.Block, c.Data = r.varint(), r.u8s() }

func encChunk(v Chunk) []byte { return encodeElement(&v) }

func decChunk(b []byte) (Chunk, error) {
	var v Chunk
	err := decodeElement(&v, b, "Chunk")
	return v, err
}

// createAtomic writes a file: write is called with a buffered writer on
// a temporary name, which is renamed to path once complete. A local path
// (no scheme://) is written in plain Go: the temporary file is a new one
// with a random name beside path (path.RANDOM.tmp), created exclusively
// (tmpfile.Create), so never through a symbolic link or over a file left
// at a name the job would use, and the rename replaces whatever is at
// path (a link there is replaced, not followed). Beam's local file system
// is not used for it: it opens with O_TRUNC and follows links. Other
// paths (gs://) go through Beam's file systems, path + ".tmp" renamed
// where the file system renames, else path written directly (an object
// store makes an object visible only once it is complete).
func createAtomic(ctx context.Context, path string, write func(w io.Writer) error) error {
	if isLocal(path) {
		return createLocal(path, write)
	}
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return err
	}
	defer fs.Close()
	rn, renames := fs.(filesystem.Renamer)
	tmp := path
	if renames {
		tmp = path + ".tmp"
	}
	f, err := fs.OpenWrite(ctx, tmp)
	if err != nil {
		return err
	}
	err = writeAndClose(f, write)
	if err == nil && renames {
		err = rn.Rename(ctx, tmp, path)
	}
	if err != nil {
		if rm, ok := fs.(filesystem.Remover); ok && renames {
			rm.Remove(ctx, tmp)
		}
		return fmt.Errorf("fmpbeam: writing %s: %w", path, err)
	}
	return nil
}

// writeAndClose calls write with a buffered writer on f, flushes it and
// closes f, returning the first error.
func writeAndClose(f io.WriteCloser, write func(w io.Writer) error) error {
	bw := bufio.NewWriterSize(f, 1<<20)
	err := write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// isLocal reports whether Beam's file systems take path for a local one
// (filesystem.New's "default" scheme: no "scheme://" before it).
func isLocal(path string) bool { return strings.Index(path, "://") <= 0 }

// createLocal is createAtomic for a local path.
func createLocal(path string, write func(w io.Writer) error) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return fmt.Errorf("fmpbeam: writing %s: %w", path, err)
	}
	f, err := tmpfile.Create(dir, filepath.Base(path)+".", ".tmp")
	if err != nil {
		return fmt.Errorf("fmpbeam: writing %s: %w", path, err)
	}
	err = writeAndClose(f, write)
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("fmpbeam: writing %s: %w", path, err)
	}
	return nil
}

// shardName is the name of shard k of n: prefix-KKKKK-of-NNNNN.suffix.
func shardName(prefix string, k, n int, suffix string) string {
	return fmt.Sprintf("%s-%05d-of-%05d%s", prefix, k, n, suffix)
}

// writeShardFn writes one shard file: its chunks in block order.
type writeShardFn struct {
	Prefix, Suffix string
	Shards         int
}

func (f *writeShardFn) ProcessElement(ctx context.Context, k int64, chunks func(*Chunk) bool) error {
	var all []Chunk
	var c Chunk
	for chunks(&c) {
		all = append(all, c)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Block < all[j].Block })
	if len(all) > 0 && all[0].Block < 0 {
		all = all[1:] // the shard's empty chunk
	}
	return createAtomic(ctx, shardName(f.Prefix, int(k), f.Shards, f.Suffix), func(w io.Writer) error {
		for _, c := range all {
			if _, err := w.Write(c.Data); err != nil {
				return err
			}
		}
		return nil
	})
}

// shardFiles writes chunks (KV<int64, Chunk>, keyed by shard) as shards
// files; a shard without a chunk gets an empty file.
func shardFiles(s beam.Scope, prefix, suffix string, shards int, chunks beam.PCollection) {
	all := make([]any, shards)
	for k := range all {
		all[k] = int64(k)
	}
	empty := beam.ParDo(s, emptyShardFn, beam.Create(s, all...))
	beam.ParDo0(s, &writeShardFn{Prefix: prefix, Suffix: suffix, Shards: shards}, beam.GroupByKey(s, beam.Flatten(s, chunks, empty)))
}

// emptyShardFn gives every shard an empty chunk, so that every shard
// file is written.
func emptyShardFn(k int64) (int64, Chunk) { return k, Chunk{Block: -1} }

// decide returns the class metrics.Evaluate predicts from a node's
// probabilities: with two classes, class 1 when P(1) > opt.Threshold;
// with more, the argmax (the lowest class on ties).
func decide(p []float64, opt metrics.Options) int {
	if len(p) == 2 {
		if p[1] > opt.Threshold {
			return 1
		}
		return 0
	}
	best := 0
	for j, v := range p {
		if v > p[best] {
			best = j
		}
	}
	return best
}

// predictionsFn formats a block's predictions under the chosen setting:
// lines "id p_0 ... p_{C−1} class".
type predictionsFn struct {
	Shards int
	S      int
}

func (f *predictionsFn) ProcessElement(b int64, out Rows, rIt func(*Result) bool, emit func(int64, Chunk)) {
	r, ok := side(rIt)
	if !ok {
		return // the evaluation failed (see side)
	}
	var sb []byte
	c := int(out.C) / f.S
	p := make([]float64, c)
	opt := metrics.DefaultOptions()
	for i := 0; i < int(out.N); i++ {
		opkit.SoftmaxRow(out.V[(i*f.S+r.Setting)*c:(i*f.S+r.Setting+1)*c], p, 1)
		sb = strconv.AppendInt(sb, out.Lo+int64(i), 10)
		for _, v := range p {
			sb = append(sb, ' ')
			sb = strconv.AppendFloat(sb, v, 'g', -1, 64)
		}
		sb = append(sb, ' ')
		sb = strconv.AppendInt(sb, int64(decide(p, opt)), 10)
		sb = append(sb, '\n')
	}
	emit(b%int64(f.Shards), Chunk{Block: b, Data: sb})
}

// WritePredictions writes the predictions of the setting the Result
// chose, from FMP's output out (S settings side by side), as
// shards text files dir/predictions-KKKKK-of-NNNNN.txt: lines "id p_0
// ... p_{C−1} class", the class probabilities (softmax of F) and the
// predicted class as metrics.Evaluate decides it (threshold 0.5 on
// P(class 1) for two classes). Block b goes to shard b mod shards, in
// node order.
func WritePredictions(s beam.Scope, dir string, shards, S int, out, result beam.PCollection) {
	s = s.Scope("WritePredictions")
	chunks := beam.ParDo(s, &predictionsFn{Shards: shards, S: S}, out, beam.SideInput{Input: result})
	shardFiles(s, strings.TrimSuffix(dir, "/")+"/predictions", ".txt", shards, chunks)
}

// Report is the metrics file: the graph, the model, the FMP settings
// and their metrics.
type Report struct {
	Graph  Stats  `json:"graph"`
	Model  string `json:"model,omitempty"`
	Result Result `json:"result"`
}

// writeReportFn writes the metrics file.
type writeReportFn struct {
	Path  string
	Model string
}

func (f *writeReportFn) ProcessElement(ctx context.Context, r Result, graphIt func(*Stats) bool) error {
	graph, ok := side(graphIt)
	if !ok {
		return nil // an earlier stage failed (see side)
	}
	b, err := json.MarshalIndent(Report{Graph: graph, Model: f.Model, Result: r}, "", "  ")
	if err != nil {
		return err
	}
	return createAtomic(ctx, f.Path, func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}

// WriteReport writes the Result and the graph's Stats as the JSON file
// path; model describes the model in it.
func WriteReport(s beam.Scope, path, model string, result, graph beam.PCollection) {
	s = s.Scope("WriteReport")
	beam.ParDo0(s, &writeReportFn{Path: path, Model: model}, result, beam.SideInput{Input: graph})
}

// Block files keep a stage's blocks between the pipelines of a job run
// stage by stage, one file per block: a header line "fairmp-blocks 1
// <kind>\n", then the record (uvarint block, uvarint length, the block's
// encoding).
const blocksMagic = "fairmp-blocks 1 "

// writeBlockFn writes one block's file: the header, then its record.
type writeBlockFn struct {
	Prefix, Kind string
}

func (f *writeBlockFn) ProcessElement(ctx context.Context, b int64, data []byte) error {
	rec := binary.AppendUvarint([]byte(blocksMagic+f.Kind+"\n"), uint64(b))
	rec = binary.AppendUvarint(rec, uint64(len(data)))
	return createAtomic(ctx, fmt.Sprintf("%s-%08d.blk", f.Prefix, b), func(w io.Writer) error {
		if _, err := w.Write(rec); err != nil {
			return err
		}
		_, err := w.Write(data)
		return err
	})
}

func encodeAdjFn(b int64, x AdjBlock) (int64, []byte) { return b, encodeElement(&x) }
func encodeRowsFn(b int64, x Rows) (int64, []byte)    { return b, encodeElement(&x) }
func encodeNodesFn(b int64, x Nodes) (int64, []byte)  { return b, encodeElement(&x) }

func decodeAdjFn(b int64, data []byte) (int64, AdjBlock, error) {
	v, err := decAdjBlock(data)
	return b, v, err
}

func decodeRowsFn(b int64, data []byte) (int64, Rows, error) {
	v, err := decRows(data)
	return b, v, err
}

func decodeNodesFn(b int64, data []byte) (int64, Nodes, error) {
	v, err := decNodes(data)
	return b, v, err
}

// WriteBlocks writes blocks (KV<int64, T> of AdjBlock, Rows or Nodes, as
// kind says: "adj", "rows", "nodes"), each as its own file
// prefix-BBBBBBBB.blk, written where the block is (no shuffle).
func WriteBlocks(s beam.Scope, prefix, kind string, blocks beam.PCollection) {
	s = s.Scope("WriteBlocks " + kind)
	var enc any
	switch kind {
	case "adj":
		enc = encodeAdjFn
	case "rows":
		enc = encodeRowsFn
	case "nodes":
		enc = encodeNodesFn
	default:
		panic(fmt.Sprintf("fmpbeam: WriteBlocks: kind %q", kind)) // a programmer's error
	}
	beam.ParDo0(s, &writeBlockFn{Prefix: prefix, Kind: kind}, beam.ParDo(s, enc, blocks))
}

// readBlocksFn reads a block file's records.
type readBlocksFn struct{ Kind string }

func (f *readBlocksFn) ProcessElement(ctx context.Context, path string, emit func(int64, []byte)) error {
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
	br := bufio.NewReaderSize(rc, 1<<20)
	head, err := br.ReadString('\n')
	if want := blocksMagic + f.Kind + "\n"; err != nil || head != want {
		return fmt.Errorf("fmpbeam: %s: starts with %q, want %q (a block file of %s)", path, head, want, f.Kind)
	}
	for {
		b, err := binary.ReadUvarint(br)
		if errors.Is(err, io.EOF) {
			return nil
		}
		n, err2 := binary.ReadUvarint(br)
		if err != nil || err2 != nil || n > 1<<40 {
			return fmt.Errorf("fmpbeam: %s: corrupt record", path)
		}
		data := make([]byte, n)
		if _, err := io.ReadFull(br, data); err != nil {
			return fmt.Errorf("fmpbeam: %s: truncated record of block %d", path, b)
		}
		emit(int64(b), data)
	}
}

// ReadBlocks reads the block files a glob matches (WriteBlocks of kind)
// back into KV<int64, T>.
func ReadBlocks(s beam.Scope, glob, kind string) beam.PCollection {
	s = s.Scope("ReadBlocks " + kind)
	raw := beam.ParDo(s, &readBlocksFn{Kind: kind}, files(s, glob, kind+" blocks"))
	switch kind {
	case "adj":
		return beam.ParDo(s, decodeAdjFn, raw)
	case "rows":
		return beam.ParDo(s, decodeRowsFn, raw)
	case "nodes":
		return beam.ParDo(s, decodeNodesFn, raw)
	}
	panic(fmt.Sprintf("fmpbeam: ReadBlocks: kind %q", kind)) // a programmer's error
}

// writeStatsFn and readStatsFn keep the Stats between stages.
type writeStatsFn struct{ Path string }

func (f *writeStatsFn) ProcessElement(ctx context.Context, st Stats) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return createAtomic(ctx, f.Path, func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}

type readStatsFn struct{ Path string }

func (f *readStatsFn) ProcessElement(ctx context.Context, _ []byte) (Stats, error) {
	fs, err := filesystem.New(ctx, f.Path)
	if err != nil {
		return Stats{}, err
	}
	defer fs.Close()
	rc, err := fs.OpenRead(ctx, f.Path)
	if err != nil {
		return Stats{}, fmt.Errorf("fmpbeam: %w", err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return Stats{}, fmt.Errorf("fmpbeam: %s: %w", f.Path, err)
	}
	var st Stats
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&st); err != nil {
		return Stats{}, fmt.Errorf("fmpbeam: %s: %w", f.Path, err)
	}
	return st, nil
}

// writeDualFn writes FMP's final duals.
type writeDualFn struct {
	Path     string
	Settings []fmp.Config
}

func (f *writeDualFn) ProcessElement(ctx context.Context, u Dual) error {
	type entry struct {
		Config fmp.Config  `json:"config"`
		Dual   [][]float64 `json:"dual"`
	}
	var out []entry
	for s, c := range f.Settings {
		e := entry{Config: c}
		for r := 0; r < int(u.Rows[s]); r++ {
			lo := (s*int(u.R) + r) * int(u.C)
			e.Dual = append(e.Dual, u.U[lo:lo+int(u.C)])
		}
		out = append(out, e)
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	return createAtomic(ctx, f.Path, func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}

// WriteDuals writes the settings' final FMP duals (FMP's second output)
// as the JSON file path: per setting, its R × C dual.
func WriteDuals(s beam.Scope, path string, settings []fmp.Config, duals beam.PCollection) {
	beam.ParDo0(s.Scope("WriteDuals"), &writeDualFn{Path: path, Settings: settings}, duals)
}

// WriteStats and ReadStats keep a Stats singleton in a JSON file.
func WriteStats(s beam.Scope, path string, st beam.PCollection) {
	beam.ParDo0(s.Scope("WriteStats"), &writeStatsFn{Path: path}, st)
}

func ReadStats(s beam.Scope, path string) beam.PCollection {
	s = s.Scope("ReadStats")
	return beam.ParDo(s, &readStatsFn{Path: path}, beam.Impulse(s))
}

func init() {
	beam.RegisterCoder(reflect.TypeOf(Chunk{}), encChunk, decChunk)
	register.DoFn3x1[context.Context, int64, func(*Chunk) bool, error](&writeShardFn{})
	register.Function1x2(emptyShardFn)
	register.DoFn4x0[int64, Rows, func(*Result) bool, func(int64, Chunk)](&predictionsFn{})
	register.Iter1[Result]()
	register.Emitter2[int64, Chunk]()
	register.DoFn3x1[context.Context, Result, func(*Stats) bool, error](&writeReportFn{})
	register.DoFn3x1[context.Context, int64, []byte, error](&writeBlockFn{})
	register.Function2x2(encodeAdjFn)
	register.Function2x2(encodeRowsFn)
	register.Function2x2(encodeNodesFn)
	register.Function2x3(decodeAdjFn)
	register.Function2x3(decodeRowsFn)
	register.Function2x3(decodeNodesFn)
	register.DoFn3x1[context.Context, string, func(int64, []byte), error](&readBlocksFn{})
	register.DoFn2x1[context.Context, Stats, error](&writeStatsFn{})
	register.DoFn2x1[context.Context, Dual, error](&writeDualFn{})
	register.DoFn2x2[context.Context, []byte, Stats, error](&readStatsFn{})
	register.Emitter2[int64, []byte]()
	register.Iter1[Chunk]()
}
