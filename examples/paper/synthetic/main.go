package main

import (
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fairmp/fairmp/examples/paper/internal/exp"
	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/internal/blas"
	"github.com/fairmp/fairmp/metrics"
)

func main() {
	blas.Default() // fairmp's BLAS before any graph runs (see internal/blas)
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "synthetic:", err)
		os.Exit(1)
	}
}

type options struct {
	homophily []float64
	models    []string
	seeds     int
	data      datasets.SyntheticConfig
	train     exp.TrainOptions
	fmp       fmp.Config
	out       string
	fromCSV   string
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("synthetic", flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := datasets.DefaultSyntheticConfig()
	tr := exp.DefaultTrainOptions()
	def := fmp.DefaultConfig()
	var (
		hs      = fs.String("homophily", "0.5,0.6,0.7,0.8,0.9,0.95", "comma-separated sensitive homophily values to sweep, each in [0, 1]")
		models  = fs.String("models", "mlp,gcn,fmp", "comma-separated models: "+strings.Join(exp.Models, ","))
		seeds   = fs.Int("seeds", 3, "graphs and models per point (seeds 1..N)")
		n       = fs.Int("n", data.N, "nodes per graph")
		epochs  = fs.Int("epochs", tr.Epochs, "training epochs")
		lambdaS = fs.Float64("lambda-s", def.LambdaS, "FMP λs")
		lambdaF = fs.Float64("lambda-f", def.LambdaF, "FMP λf")
		out     = fs.String("out", ".", "directory for synthetic.csv and synthetic.svg")
		from    = fs.String("from-csv", "", "a synthetic.csv of an earlier run: print its table and plot it to -out/synthetic.svg instead of training (-n and -epochs label the table)")
	)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	o := &options{seeds: *seeds, data: data, train: tr, fmp: def, out: *out, fromCSV: *from}
	for _, s := range strings.Split(*hs, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || math.IsNaN(v) || v < 0 || v > 1 {
			return nil, fmt.Errorf("-homophily: %q is not a number in [0, 1]", s)
		}
		o.homophily = append(o.homophily, v)
	}
	var err error
	if o.models, err = exp.ParseModels(*models); err != nil {
		return nil, fmt.Errorf("-models: %w", err)
	}
	if o.seeds < 1 {
		return nil, fmt.Errorf("-seeds %d: want at least 1", o.seeds)
	}
	o.data.N = *n
	if err := o.data.Validate(); err != nil {
		return nil, fmt.Errorf("-n: %w", err)
	}
	if *epochs < 1 {
		return nil, fmt.Errorf("-epochs %d: want at least 1", *epochs)
	}
	o.train.Epochs = *epochs
	o.fmp.LambdaS, o.fmp.LambdaF = *lambdaS, *lambdaF
	if err := o.fmp.Validate(); err != nil {
		return nil, fmt.Errorf("-lambda-s/-lambda-f: %w", err)
	}
	if st, err := os.Stat(o.out); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("-out %q: not an existing directory", o.out)
	}
	return o, nil
}

// point is one model at one homophily value, over the seeds.
type point struct {
	Knob     float64 // the generator's SensHomophily
	Measured float64 // mean measured sensitive homophily of the graphs
	Model    string
	Summary  metrics.Summary
}

func run(args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if o.fromCSV != "" {
		pts, err := readCSV(o.fromCSV, o)
		if err != nil {
			return err
		}
		svgPath := filepath.Join(o.out, "synthetic.svg")
		if err := plotDP(svgPath, pts, o.models); err != nil {
			return err
		}
		writeTable(stdout, pts, o)
		fmt.Fprintf(stdout, "\nwrote %s\n", svgPath)
		return nil
	}
	pts, err := sweep(o, stderr)
	if err != nil {
		return err
	}
	csvPath := filepath.Join(o.out, "synthetic.csv")
	if err := writeCSV(csvPath, pts); err != nil {
		return err
	}
	svgPath := filepath.Join(o.out, "synthetic.svg")
	if err := plotDP(svgPath, pts, o.models); err != nil {
		return err
	}
	writeTable(stdout, pts, o)
	fmt.Fprintf(stdout, "\nwrote %s and %s\n", csvPath, svgPath)
	return nil
}

func sweep(o *options, stderr io.Writer) ([]point, error) {
	total, done := len(o.homophily)*o.seeds*len(o.models), 0
	start := time.Now()
	var pts []point
	for _, h := range o.homophily {
		reports := map[string][]metrics.Report{}
		measured := 0.0
		for seed := 1; seed <= o.seeds; seed++ {
			cfg := o.data
			cfg.SensHomophily, cfg.Seed = h, int64(seed)
			ds, err := datasets.Synthetic(cfg)
			if err != nil {
				return nil, fmt.Errorf("sensitive homophily %g, seed %d: %w", h, seed, err)
			}
			mh, err := ds.Graph.Homophily(ds.Sens)
			if err != nil {
				return nil, err
			}
			measured += mh / float64(o.seeds)
			for _, m := range o.models {
				spec := exp.DefaultSpec(m)
				spec.Seed, spec.FMP = int64(seed), o.fmp
				p, err := exp.NewProblem(ds, spec.Dtype)
				if err != nil {
					return nil, err
				}
				res, err := exp.Run(p, spec, o.train)
				if err != nil {
					return nil, fmt.Errorf("sensitive homophily %g, seed %d: %w", h, seed, err)
				}
				reports[m] = append(reports[m], res.Report)
				done++
				eta := time.Duration(float64(time.Since(start)) / float64(done) * float64(total-done))
				fmt.Fprintf(stderr, "[%d/%d] h_s %.2f seed %d %-6s acc %6.2f ΔDP %6.2f  ETA %s\n", done, total, h, seed, m,
					metrics.Percent(res.Report.Accuracy), metrics.Percent(res.Report.DemographicParity), eta.Round(time.Second))
			}
		}
		for _, m := range o.models {
			s, err := metrics.Summarize(reports[m])
			if err != nil {
				return nil, err
			}
			pts = append(pts, point{Knob: h, Measured: measured, Model: m, Summary: s})
		}
	}
	return pts, nil
}

func writeCSV(path string, pts []point) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write([]string{"sens_homophily", "measured_sens_homophily", "model", "runs",
		"accuracy_mean", "accuracy_std", "dp_mean", "dp_std", "eo_mean", "eo_std"})
	pc := func(v float64) string { return strconv.FormatFloat(metrics.Percent(v), 'f', 2, 64) }
	for _, p := range pts {
		s := p.Summary
		w.Write([]string{strconv.FormatFloat(p.Knob, 'f', 2, 64), strconv.FormatFloat(p.Measured, 'f', 3, 64), p.Model,
			strconv.Itoa(s.Runs), pc(s.Accuracy.Mean), pc(s.Accuracy.Std), pc(s.DemographicParity.Mean),
			pc(s.DemographicParity.Std), pc(s.EqualOpportunity.Mean), pc(s.EqualOpportunity.Std)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// readCSV reads a synthetic.csv written by writeCSV (its metrics are
// percent with two decimals) and sets o's models and seeds from it, in
// first-seen order. The rows of one homophily value must hold the same
// models in the same order, as writeCSV writes them.
func readCSV(path string, o *options) ([]point, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) < 2 || len(recs[0]) != 10 || recs[0][0] != "sens_homophily" {
		return nil, fmt.Errorf("%s: not a synthetic.csv (want its 10-column header and at least one row)", path)
	}
	o.models, o.seeds = nil, 0
	var pts []point
	for n, r := range recs[1:] {
		var v [9]float64
		for k, col := range []int{0, 1, 3, 4, 5, 6, 7, 8, 9} {
			if v[k], err = strconv.ParseFloat(r[col], 64); err != nil {
				return nil, fmt.Errorf("%s:%d: column %s: %w", path, n+2, recs[0][col], err)
			}
		}
		stat := func(mean, std float64) metrics.Stat { return metrics.Stat{Mean: mean / 100, Std: std / 100} }
		p := point{Knob: v[0], Measured: v[1], Model: r[2], Summary: metrics.Summary{Runs: int(v[2]),
			Accuracy: stat(v[3], v[4]), DemographicParity: stat(v[5], v[6]), EqualOpportunity: stat(v[7], v[8])}}
		pts = append(pts, p)
		if !slices.Contains(o.models, p.Model) {
			o.models = append(o.models, p.Model)
		}
		o.seeds = max(o.seeds, p.Summary.Runs)
	}
	if len(pts)%len(o.models) != 0 {
		return nil, fmt.Errorf("%s: %d rows for %d models: want every model at every homophily value", path, len(pts), len(o.models))
	}
	for i, p := range pts {
		if want := o.models[i%len(o.models)]; p.Model != want || p.Knob != pts[i-i%len(o.models)].Knob {
			return nil, fmt.Errorf("%s:%d: %s at homophily %.2f, want %s at %.2f (the rows of a homophily value in the order writeCSV writes them)",
				path, i+2, p.Model, p.Knob, want, pts[i-i%len(o.models)].Knob)
		}
	}
	return pts, nil
}

func writeTable(w io.Writer, pts []point, o *options) {
	fmt.Fprintf(w, "ΔDP %% (mean±std over %d seeds) against sensitive homophily, %d-node graphs, %d epochs\n\n",
		o.seeds, o.data.N, o.train.Epochs)
	fmt.Fprint(w, "| h_s (measured) |")
	for _, m := range o.models {
		fmt.Fprintf(w, " %s ΔDP | %s acc |", m, m)
	}
	fmt.Fprint(w, "\n|---|")
	for range o.models {
		fmt.Fprint(w, "---|---|")
	}
	fmt.Fprintln(w)
	for i := 0; i < len(pts); i += len(o.models) {
		fmt.Fprintf(w, "| %.2f (%.3f) |", pts[i].Knob, pts[i].Measured)
		for _, p := range pts[i : i+len(o.models)] {
			fmt.Fprintf(w, " %s | %s |", p.Summary.DemographicParity, p.Summary.Accuracy)
		}
		fmt.Fprintln(w)
	}
}
