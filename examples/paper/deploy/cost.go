package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/examples/paper/internal/exp"
	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/fmp/modelio"
	"github.com/fairmp/fairmp/fmp/score"
	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/graph/features"
)

// costOptions are the -cost-* flags.
type costOptions struct {
	nodes, features, trainNodes, epochs, repeats int
	degree                                       float64
	newSizes                                     []int
	dir                                          string
}

func (c costOptions) validate() error {
	maxNew := 0
	for _, k := range c.newSizes {
		maxNew = max(maxNew, k)
	}
	switch {
	case c.nodes < 100:
		return fmt.Errorf("-cost-nodes %d, want ≥ 100", c.nodes)
	case c.features < 1:
		return fmt.Errorf("-cost-features %d, want ≥ 1", c.features)
	case !(c.degree >= 0):
		return fmt.Errorf("-cost-degree %v, want ≥ 0", c.degree)
	case c.trainNodes < 50 || c.trainNodes >= c.nodes:
		return fmt.Errorf("-cost-train-nodes %d, want 50 ≤ it < -cost-nodes %d", c.trainNodes, c.nodes)
	case maxNew > c.nodes-c.trainNodes:
		return fmt.Errorf("-cost-new asks for %d new nodes, but only %d nodes are outside the training subgraph (-cost-nodes − -cost-train-nodes)", maxNew, c.nodes-c.trainNodes)
	case c.epochs < 1:
		return fmt.Errorf("-cost-epochs %d, want ≥ 1", c.epochs)
	case c.repeats < 1:
		return fmt.Errorf("-cost-repeats %d, want ≥ 1", c.repeats)
	case c.dir == "":
		return fmt.Errorf("-cost-dir is empty, want a folder for the feature file")
	}
	return nil
}

// costRow is one scorer and number of new nodes.
type costRow struct {
	scorer      string
	newNodes    int
	field       int
	hops        int
	median, min time.Duration
	// cpu is the process's CPU time (user + system) of the median run:
	// what the call cost when other programs share the cores.
	cpu           time.Duration
	rssBefore     float64 // MB: resident memory before the call
	peak          float64 // MB: the highest VmHWM over the repetitions
	peakAvailable bool
}

// runCost generates the graph, trains a GCN briefly on a subgraph of it,
// puts FMP on it (λs 0, the study's base, and λs 1, the library's
// default), and times the scoring of new nodes with each model file.
func runCost(o *options, stdout, progress io.Writer) error {
	c := o.cost
	start := time.Now()
	load := loadAverage()
	fmt.Fprintf(progress, "load average at the start: %s\n", load)
	cfg := datasets.PokecZShape(1)
	cfg.N, cfg.NumFeatures, cfg.MeanDegree = c.nodes, c.features, c.degree
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(c.dir, fmt.Sprintf("deploy-cost-%d-%d.fmx", c.nodes, c.features))
	defer os.Remove(path)
	fmt.Fprintf(progress, "generating %d nodes, mean degree %.2f, %d features (datasets.SyntheticLarge)\n", c.nodes, c.degree, c.features)
	ds, err := datasets.SyntheticLarge(cfg, path, progress)
	if err != nil {
		return err
	}
	fx, err := features.Open(path)
	if err != nil {
		return err
	}
	defer fx.Close()

	// The model: a GCN trained briefly on the first trainNodes nodes (the
	// generator draws every node's group and label independently, so
	// they are a uniform sample).
	ids := make([]int, c.trainNodes)
	for i := range ids {
		ids[i] = i
	}
	old, err := induced(ds, fx, ids)
	if err != nil {
		return err
	}
	fmt.Fprintf(progress, "training a GCN on the subgraph of %d nodes, %d edges, %d epochs (%v elapsed)\n", old.N(), old.Graph.NumEdges(), c.epochs, time.Since(start).Round(time.Second))
	p, err := exp.NewProblem(old, tensor.Float64)
	if err != nil {
		return err
	}
	spec := exp.DefaultSpec("gcn")
	tc := exp.DefaultTrainOptions()
	tc.Epochs, tc.Adam.LR = c.epochs, 0.01
	out, err := exp.Run(p, spec, tc)
	if err != nil {
		return err
	}
	xOld, err := features.NewDense(old.Features, old.N(), old.NumFeatures)
	if err != nil {
		return err
	}
	type namedScorer struct {
		name string
		s    *score.Scorer
	}
	var scorers, frozen []namedScorer
	var bfile bytes.Buffer
	if err := modelio.Save(&bfile, out.Model, modelio.DefaultSaveConfig()); err != nil {
		return err
	}
	bs, err := score.Open(bytes.NewReader(bfile.Bytes()), score.DefaultConfig())
	if err != nil {
		return err
	}
	scorers = append(scorers, namedScorer{"GCN alone", bs})
	for _, ls := range []float64{0, 1} {
		oc := fmp.DefaultOnConfig()
		oc.FMP.LambdaS = ls
		m, err := fmp.On(out.Model, old.Graph, old.Sens, oc, p.Task.Phase)
		if err != nil {
			return err
		}
		if err := m.Record(xOld); err != nil {
			return err
		}
		var buf bytes.Buffer
		if err := modelio.Save(&buf, m, modelio.DefaultSaveConfig()); err != nil {
			return err
		}
		fs, err := score.Open(bytes.NewReader(buf.Bytes()), score.DefaultConfig())
		if err != nil {
			return err
		}
		frozen = append(frozen, namedScorer{fmt.Sprintf("FMP λs=%g λf=%g K=%d, frozen (Add)", ls, oc.FMP.LambdaF, oc.FMP.K), fs})
		for _, sem := range []score.Semantics{score.Fitted, score.Recompute} {
			sc := score.DefaultConfig()
			sc.FMP = sem
			s, err := score.Open(bytes.NewReader(buf.Bytes()), sc)
			if err != nil {
				return err
			}
			scorers = append(scorers, namedScorer{fmt.Sprintf("FMP λs=%g λf=%g K=%d, %s", ls, oc.FMP.LambdaF, oc.FMP.K, sem), s})
		}
	}

	// The new nodes: drawn among the nodes outside the training subgraph;
	// each smaller set is a prefix of the larger.
	rest := rand.New(rand.NewSource(1)).Perm(c.nodes - c.trainNodes)
	var rows []costRow
	for _, k := range c.newSizes {
		nodes := make([]int, k)
		for i := range nodes {
			nodes[i] = c.trainNodes + rest[i]
		}
		sort.Ints(nodes)
		for _, ns := range scorers {
			row := costRow{scorer: ns.name, newNodes: k, hops: ns.s.Hops()}
			err := timeCalls(&row, c.repeats, nil, func() (int, error) {
				sc, err := ns.s.Score(context.Background(), ds.Graph, fx, ds.Sens, nodes)
				if err != nil {
					return 0, err
				}
				return sc.Field, nil
			})
			if err != nil {
				return fmt.Errorf("%s, %d new nodes: %w", ns.name, k, err)
			}
			fmt.Fprintf(progress, "%7d new nodes  %-36s field %8d  median %v (CPU %v)  peak RSS %.0f MB (%v elapsed)\n",
				k, ns.name, row.field, row.median.Round(time.Millisecond), row.cpu.Round(time.Millisecond), row.peak, time.Since(start).Round(time.Second))
			rows = append(rows, row)
		}
	}
	// Frozen (score.Frozen): the graph without the new nodes is frozen
	// once (not timed), then Frozen.Add scores the new nodes, numbered
	// last; graph.Grow's cost, which any growing graph pays, is given in
	// the progress line.
	for _, k := range c.newSizes {
		nodes := make([]int, k)
		for i := range nodes {
			nodes[i] = c.trainNodes + rest[i]
		}
		sort.Ints(nodes)
		base, grown, perm, growTime, err := frozenGraphs(ds, nodes)
		if err != nil {
			return err
		}
		baseX, grownX := permuted{fx, perm[:len(perm)-k]}, permuted{fx, perm}
		sens := make([]int, len(perm))
		for r, i := range perm {
			sens[r] = ds.Sens[i]
		}
		for _, ns := range frozen {
			// Add reads the backbone's ball and the new nodes' own rows.
			row := costRow{scorer: ns.name, newNodes: k, hops: scorers[0].s.Hops()}
			var fz *score.Frozen
			err := timeCalls(&row, c.repeats, func() (err error) {
				fz, err = ns.s.Freeze(context.Background(), base, baseX, sens[:len(perm)-k])
				return err
			}, func() (int, error) { return fz.Add(context.Background(), grown, grownX, sens) })
			if err != nil {
				return fmt.Errorf("%s, %d new nodes: %w", ns.name, k, err)
			}
			fmt.Fprintf(progress, "%7d new nodes  %-36s field %8d  median %v (CPU %v)  peak RSS %.0f MB; graph.Grow took %v (%v elapsed)\n",
				k, ns.name, row.field, row.median.Round(time.Millisecond), row.cpu.Round(time.Millisecond), row.peak, growTime.Round(time.Millisecond), time.Since(start).Round(time.Second))
			rows = append(rows, row)
		}
	}
	var table strings.Builder
	writeCostTable(&table, c, ds, rows, time.Since(start), load)
	fmt.Fprint(stdout, table.String())
	if o.out == "" {
		return nil
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(o.out, "cost.md"), []byte(table.String()), 0o644); err != nil {
		return err
	}
	return writeCostCSV(filepath.Join(o.out, "cost.csv"), rows)
}

// timeCalls runs call repeats times, each after prepare (not timed; nil:
// none), a collection and a reset of the peak RSS, and fills row's field,
// median and minimum wall time, the median run's CPU time, the RSS before
// the first call and the peak RSS.
func timeCalls(row *costRow, repeats int, prepare func() error, call func() (int, error)) error {
	var times, cpus []time.Duration
	for rep := 0; rep < repeats; rep++ {
		if prepare != nil {
			if err := prepare(); err != nil {
				return err
			}
		}
		runtime.GC()
		debug.FreeOSMemory()
		before := procStatusMB("VmRSS")
		reset := resetPeakRSS()
		c0 := cpuTime()
		t0 := time.Now()
		field, err := call()
		if err != nil {
			return err
		}
		times = append(times, time.Since(t0))
		cpus = append(cpus, cpuTime()-c0)
		row.field = field
		if rep == 0 {
			row.rssBefore = before
		}
		if reset {
			row.peakAvailable = true
			row.peak = max(row.peak, procStatusMB("VmHWM"))
		}
	}
	order := make([]int, len(times))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(i, j int) bool { return times[order[i]] < times[order[j]] })
	row.median, row.min, row.cpu = times[order[len(order)/2]], times[order[0]], cpus[order[len(order)/2]]
	return nil
}

func writeCostTable(w io.Writer, c costOptions, ds *datasets.Dataset, rows []costRow, took time.Duration, load string) {
	fmt.Fprintf(w, "Generated graph (datasets.SyntheticLarge, Pokec-z's bias knobs): %d nodes, %d edges (mean degree %.2f), %d float32 features in a mapped file; a GCN (2 hops) trained %d epochs on the subgraph of its first %d nodes; GOMAXPROCS %d; whole run %v; load average at the start %s (other programs shared the cores: the CPU column is this process's own time).\n",
		ds.N(), ds.Graph.NumEdges(), 2*float64(ds.Graph.NumEdges())/float64(ds.N()), c.features, c.epochs, c.trainNodes, runtime.GOMAXPROCS(0), took.Round(time.Second), load)
	fmt.Fprintf(w, "Wall time of Scorer.Score, median (min) of %d runs, and the CPU time (user + system, all threads) of the median run; field = Scores.Field; peak RSS = the process's VmHWM during the call (reset before it through /proc/self/clear_refs; it includes the graph, the mapped feature pages and the heap held before the call, given in the RSS-before column).\n\n", c.repeats)
	fmt.Fprintln(w, "| new nodes | scorer | radius (hops) | receptive field | wall time | CPU time | RSS before, MB | peak RSS, MB |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		hops := strconv.Itoa(r.hops)
		if r.hops < 0 {
			hops = "whole graph"
		}
		peak := "–"
		if r.peakAvailable {
			peak = fmt.Sprintf("%.0f", r.peak)
		}
		fmt.Fprintf(w, "| %d | %s | %s | %d | %v (%v) | %v | %.0f | %s |\n", r.newNodes, r.scorer, hops, r.field,
			r.median.Round(time.Millisecond), r.min.Round(time.Millisecond), r.cpu.Round(time.Millisecond), r.rssBefore, peak)
	}
}

func writeCostCSV(path string, rows []costRow) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write([]string{"new_nodes", "scorer", "hops", "field", "median_seconds", "min_seconds", "cpu_seconds", "rss_before_mb", "peak_rss_mb"})
	for _, r := range rows {
		w.Write([]string{strconv.Itoa(r.newNodes), r.scorer, strconv.Itoa(r.hops), strconv.Itoa(r.field),
			strconv.FormatFloat(r.median.Seconds(), 'f', 4, 64), strconv.FormatFloat(r.min.Seconds(), 'f', 4, 64), strconv.FormatFloat(r.cpu.Seconds(), 'f', 4, 64),
			strconv.FormatFloat(r.rssBefore, 'f', 0, 64), strconv.FormatFloat(r.peak, 'f', 0, 64)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// cpuTime is the process's user + system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loadAverage returns the 1, 5 and 15 minute load averages ("?" where
// /proc/loadavg is missing).
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], ", ")
}

// procStatusMB reads a field of /proc/self/status in MB (0 where there is
// none: not Linux).
func procStatusMB(key string) float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, key+":"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				if kb, err := strconv.ParseFloat(f[0], 64); err == nil {
					return kb / 1024
				}
			}
		}
	}
	return 0
}

// resetPeakRSS resets VmHWM to the current RSS (Linux ≥ 4.0) and reports
// whether it could.
func resetPeakRSS() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// frozenGraphs renumbers ds's graph so that nodes (ascending) come last:
// base is the graph of the other nodes, grown base.Grow of nodes and
// their edges, perm the old id of each new id. It returns Grow's time.
func frozenGraphs(ds *datasets.Dataset, nodes []int) (base, grown *graph.Graph, perm []int, growTime time.Duration, err error) {
	n, k := ds.N(), len(nodes)
	id := make([]int, n)
	isNew := make([]bool, n)
	for _, i := range nodes {
		isNew[i] = true
	}
	perm = make([]int, 0, n)
	for i := 0; i < n; i++ {
		if !isNew[i] {
			id[i] = len(perm)
			perm = append(perm, i)
		}
	}
	for _, i := range nodes {
		id[i] = len(perm)
		perm = append(perm, i)
	}
	var edges, extra [][2]int
	for i := 0; i < n; i++ {
		for _, j := range ds.Graph.Neighbors(i) {
			if int(j) <= i {
				continue
			}
			e := [2]int{id[i], id[j]}
			if isNew[i] || isNew[int(j)] {
				extra = append(extra, e)
			} else {
				edges = append(edges, e)
			}
		}
	}
	if base, err = graph.FromEdges(n-k, edges); err != nil {
		return nil, nil, nil, 0, err
	}
	t0 := time.Now()
	grown, err = base.Grow(k, extra)
	return base, grown, perm, time.Since(t0), err
}

// permuted is a feature source whose row r is row perm[r] of x.
type permuted struct {
	x    features.Source
	perm []int
}

func (p permuted) Rows() int { return len(p.perm) }
func (p permuted) Cols() int { return p.x.Cols() }
func (p permuted) Gather(dst []float32, rows []int) error {
	src := make([]int, len(rows))
	for k, r := range rows {
		if r < 0 || r >= len(p.perm) {
			return fmt.Errorf("row %d of %d", r, len(p.perm))
		}
		src[k] = p.perm[r]
	}
	return p.x.Gather(dst, src)
}
