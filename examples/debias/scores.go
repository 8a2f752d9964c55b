package main

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fairmp/fairmp/metrics/selection"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/internal/npy"
	"github.com/fairmp/fairmp/layers"
)

// scoresOptions are the -scores flags: another model's per-node scores,
// debiased instead of a backbone trained here.
type scoresOptions struct {
	file string
	kind string // "logits" or "probs"
	id   string // the column of node ids in a CSV scores file
}

// scoreFlags are the flags that train a backbone, which -scores replaces.
var scoreFlags = []string{"backbone", "method", "method-weight", "hidden", "dtype", "epochs", "lr", "weight-decay", "dropout", "train-labels", "model"}

// checkScores checks the -scores flags against the others.
func (s scoresOptions) check(set map[string]bool) error {
	if s.file == "" {
		if set["scores-kind"] || set["scores-id"] {
			return badInput("-scores-kind and -scores-id describe a -scores file; give -scores FILE")
		}
		return nil
	}
	var also []string
	for _, f := range scoreFlags {
		if set[f] {
			also = append(also, "-"+f)
		}
	}
	if len(also) > 0 {
		return badInput("-scores %s debiases another model's scores, so nothing is trained or loaded here: %s would be ignored; leave them out", s.file, strings.Join(also, ", "))
	}
	switch s.kind {
	case "logits", "probs":
	case "":
		return badInput("-scores %s: say what the scores are with -scores-kind logits (any real numbers, before a softmax or sigmoid) or -scores-kind probs (probabilities in [0, 1])", s.file)
	default:
		return badInput("-scores-kind %q, want logits or probs", s.kind)
	}
	if s.id != "" && isNPY(s.file) {
		return badInput("-scores-id %s names a column of a CSV scores file; a .npy file has none: its rows are the nodes in the node table's order", s.id)
	}
	return nil
}

func isNPY(path string) bool { return strings.EqualFold(filepath.Ext(path), ".npy") }

// readScores reads the -scores file as n × c logits of ds's nodes: c = 1
// is one score per node of a two-class task (the logit of class 1, or
// P(class 1)), else one column per class. Probabilities become their
// logarithms (clamped at 1e-12): the softmax of log p is p.
func readScores(s scoresOptions, ds *datasets.Dataset) ([]float64, int, error) {
	var rows, cols int
	var data []float64
	var err error
	if isNPY(s.file) {
		var m *npy.Matrix
		if m, err = npy.ReadFile(s.file); err != nil {
			return nil, 0, inputError{fmt.Errorf("-scores %s: %w", s.file, err)}
		}
		rows, cols, data = m.Rows, m.Cols, m.Data
		if rows != ds.N() {
			return nil, 0, badInput("-scores %s: %d rows, the node table has %d nodes: a .npy file holds one row per node, in the node table's order", s.file, rows, ds.N())
		}
	} else if data, cols, err = readScoresCSV(s, ds); err != nil {
		return nil, 0, err
	}
	c := ds.NumClasses()
	if cols != c && !(cols == 1 && c == 2) {
		return nil, 0, badInput("-scores %s: %d score columns, the task has %d classes: want one column per class, or one column (class 1) for two classes", s.file, cols, c)
	}
	n := ds.N()
	z := make([]float64, n*c)
	for i := 0; i < n; i++ {
		row := data[i*cols : (i+1)*cols]
		if s.kind == "probs" {
			sum := 0.0
			for j, p := range row {
				if p < 0 || p > 1 {
					return nil, 0, badInput("-scores %s: row %d, column %d: %v is not a probability; are these logits (-scores-kind logits)?", s.file, i+1, j+1, p)
				}
				sum += p
			}
			if cols > 1 && math.Abs(sum-1) > 1e-3 {
				return nil, 0, badInput("-scores %s: row %d: the probabilities sum to %v, want 1 (one column per class); are these logits (-scores-kind logits)?", s.file, i+1, sum)
			}
		}
		out := z[i*c : (i+1)*c]
		switch {
		case cols == 1 && s.kind == "logits":
			out[0], out[1] = 0, row[0]
		case cols == 1:
			out[0], out[1] = math.Log(math.Max(1-row[0], 1e-12)), math.Log(math.Max(row[0], 1e-12))
		case s.kind == "logits":
			copy(out, row)
		default:
			for j, p := range row {
				out[j] = math.Log(math.Max(p, 1e-12))
			}
		}
	}
	return z, c, nil
}

// readScoresCSV reads a CSV (or TSV, or space-separated) scores file: an
// optional header (a first line holding a field that is not a number),
// then one row per node; with -scores-id, the header's column of that
// name holds node ids (the node table's -id values, or its 0-based rows)
// and the rows may come in any order; without, the rows are the nodes in
// the node table's order. Every node must have exactly one row. The file
// may hold at most 4 KiB per node plus 1 MiB.
func readScoresCSV(s scoresOptions, ds *datasets.Dataset) ([]float64, int, error) {
	f, err := os.Open(s.file)
	if err != nil {
		return nil, 0, inputError{fmt.Errorf("-scores: %w", err)}
	}
	defer f.Close()
	limit := int64(ds.N())*4096 + 1<<20
	if st, err := f.Stat(); err == nil && st.Size() > limit {
		return nil, 0, badInput("-scores %s: %d bytes, more than %d for the scores of %d nodes", s.file, st.Size(), limit, ds.N())
	}
	where := func(line, col int, format string, args ...any) error {
		at := fmt.Sprintf("%s:%d", s.file, line)
		if col > 0 {
			at += ":" + strconv.Itoa(col)
		}
		return badInput("%s: "+format, append([]any{at}, args...)...)
	}
	cr := csv.NewReader(io.LimitReader(f, limit))
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	if ext := strings.ToLower(filepath.Ext(s.file)); ext == ".tsv" || ext == ".tab" {
		cr.Comma = '\t'
	}
	idCol := -1
	index := map[string]int{}
	for i, id := range ds.IDs {
		index[id] = i
	}
	var data []float64
	cols := -1
	seen := make([]int, ds.N()) // the line of each node's row
	row := 0
	for first := true; ; first = false {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, 0, where(pe.Line, pe.Column, "%v", pe.Err)
			}
			return nil, 0, inputError{fmt.Errorf("-scores %s: %w", s.file, err)}
		}
		line, _ := cr.FieldPos(0)
		if len(rec) == 1 && cr.Comma == ',' && strings.ContainsAny(rec[0], " \t") {
			rec = strings.Fields(rec[0]) // numpy.savetxt's spaces
		}
		if first {
			header := false
			for _, v := range rec {
				if _, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil {
					header = true
				}
			}
			if header {
				for k, h := range rec {
					if strings.TrimSpace(h) == s.id {
						idCol = k
					}
				}
				if s.id != "" && idCol < 0 {
					return nil, 0, where(line, 0, "no column %q (-scores-id) in the header %s", s.id, strings.Join(rec, ","))
				}
				cols = len(rec)
				if idCol >= 0 {
					cols--
				}
				continue
			}
			if s.id != "" {
				return nil, 0, where(line, 0, "no header line, so no column %q (-scores-id): add a header naming the columns", s.id)
			}
		}
		n := len(rec)
		if idCol >= 0 {
			n--
		}
		if cols < 0 {
			cols = n
		}
		if n != cols || cols < 1 {
			return nil, 0, where(line, 0, "%d scores, want %d (as many as the first row)", n, cols)
		}
		node := row
		if idCol >= 0 {
			id := strings.TrimSpace(rec[idCol])
			var ok bool
			if ds.IDs != nil {
				node, ok = index[id]
			} else {
				v, err := strconv.Atoi(id)
				node, ok = v, err == nil && v >= 0 && v < ds.N()
			}
			_, col := cr.FieldPos(idCol)
			if !ok {
				return nil, 0, where(line, col, "node %q (-scores-id %s) is not a node of the node table", id, s.id)
			}
			if seen[node] != 0 {
				return nil, 0, where(line, col, "node %q has a row already, at line %d: want one row per node", id, seen[node])
			}
		} else if row >= ds.N() {
			return nil, 0, where(line, 0, "more rows than the node table's %d nodes: want one row per node, in the node table's order (or name an id column with -scores-id)", ds.N())
		}
		seen[node] = line
		if data == nil {
			data = make([]float64, ds.N()*cols)
		}
		j := 0
		for k, v := range rec {
			if k == idCol {
				continue
			}
			x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
				_, col := cr.FieldPos(k)
				return nil, 0, where(line, col, "%q is not a finite number, want a score", v)
			}
			data[node*cols+j] = x
			j++
		}
		row++
	}
	for i, l := range seen {
		if l == 0 {
			name := strconv.Itoa(i)
			if ds.IDs != nil {
				name = strconv.Quote(ds.IDs[i])
			}
			return nil, 0, badInput("-scores %s: %d rows for %d nodes: node %s has no row; want a score row for every node", s.file, row, ds.N(), name)
		}
	}
	return data, cols, nil
}

// debiasScores is trainAndDebias for scores computed elsewhere: the
// backbone's probabilities are the scores' softmax, FMP's frontier runs
// on them as logits (fmp.NewLogitsFrontier, λs = 0 as the base so that
// λf = 0 is the scores themselves), and the thresholds on P(class 1). No
// model is written: the scores' model lives in its own framework.
func debiasScores(o *options, ds *datasets.Dataset, stderr io.Writer) (*result, error) {
	z, c, err := readScores(o.scores, ds)
	if err != nil {
		return nil, err
	}
	n := ds.N()
	r := &result{ds: ds, training: map[string]any{"scores_file": o.scores.file, "scores_kind": o.scores.kind, "model_file": "none: the scores' model lives where they were computed"}}
	bb := &method{Name: "backbone", probs: softmaxRows(z, c)}
	r.methods = append(r.methods, bb)
	adj, err := layers.DefaultPropagation().Matrix(ds.Graph)
	if err != nil {
		return nil, err
	}
	base := o.fmp
	base.LambdaS = 0
	fc := fmp.DefaultFrontierConfig()
	fc.LambdaF, fc.LambdaS, fc.Rule, fc.Test = o.lambdaF, o.lambdaS, o.rule, ds.Split.Test
	if !o.quiet {
		fmt.Fprintf(stderr, "FMP frontier on the scores of %s: %d settings (λs %v × λf %v), rule: %s\n", o.scores.file, len(fc.LambdaF)*len(fc.LambdaS), fc.LambdaS, fc.LambdaF, o.rule)
	}
	zt := tensor.New(tensor.WithShape(n, c), tensor.WithBacking(append([]float64(nil), z...)))
	begin := time.Now()
	f, err := fmp.NewLogitsFrontier(o.ctx, zt, adj, ds.Sens, ds.Labels, ds.Split.Val, base, fc)
	if err != nil && (f == nil || !errors.Is(err, selection.ErrNoCandidate)) {
		return nil, fmt.Errorf("FMP frontier: %w", err)
	}
	// No setting met the rule: as trainAndDebias, the reference (the
	// scores themselves) is kept and every output written (ruleNotMet).
	r.training["frontier_seconds"] = time.Since(begin).Seconds()
	r.frontier = f
	best := f.Best()
	l, err := fmp.New(adj, ds.Sens, best.Config)
	if err != nil {
		return nil, err
	}
	out, err := l.Apply(zt)
	if err != nil {
		return nil, err
	}
	r.methods = append(r.methods, &method{Name: "fmp", probs: softmaxRows(out.Data().([]float64), c),
		Setting: map[string]float64{"lambda_s": best.Config.LambdaS, "lambda_f": best.Config.LambdaF, "k": float64(best.Config.K), "tau": best.Config.Temperature}})
	if err := r.finish(o, bb.probs); err != nil {
		return nil, err
	}
	return r, nil
}

// scoreSettings replaces, in metrics.json's settings, the training
// settings of a run on -scores by the scores' file and kind.
func scoreSettings(o *options, set map[string]any) {
	if o.scores.file == "" {
		return
	}
	for _, k := range []string{"backbone", "hidden", "dtype", "epochs", "lr", "weight_decay", "selection"} {
		delete(set, k)
	}
	set["scores"] = map[string]any{"file": o.scores.file, "kind": o.scores.kind, "id_column": o.scores.id}
}

// softmaxRows returns the row softmax of the n × c matrix z (max
// subtracted).
func softmaxRows(z []float64, c int) []float64 {
	p := make([]float64, len(z))
	for i := 0; i < len(z); i += c {
		m := z[i]
		for _, v := range z[i : i+c] {
			m = max(m, v)
		}
		s := 0.0
		for j, v := range z[i : i+c] {
			p[i+j] = math.Exp(v - m)
			s += p[i+j]
		}
		for j := range p[i : i+c] {
			p[i+j] /= s
		}
	}
	return p
}
