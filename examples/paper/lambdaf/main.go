// Command lambdaf measures what FMP's fairness budget λf does to the
// decisions: for each data set and seed it trains the paper's MLP → FMP
// backbone once (two-stage, λf = 0), then debiases it with every λf of a
// fine grid (Model.WithFMP, forward passes only) and records, on the
// validation nodes, the thresholded ΔDP, the signed gap of selection
// rates (group 1 minus group 0, the sign says who is favoured), the
// signed gap of the mean soft probabilities softmax(F) (what FMP
// equalises at τ = 1), the accuracy, and whether the dual reached its
// bound. It does this for several dual step factors ρ, and checks
// whether the thresholded validation ΔDP ever rises as λf grows.
//
// Usage:
//
//	go run ./lambdaf -data $FAIRMP_DATA -datasets synthetic,bail,credit,nba -seeds 3 -out results
//
// Output: a table per data set on stdout, and with -out DIR lambdaf.csv
// (one row per data set, seed, ρ and λf) and lambdaf.svg (signed gap of
// the decisions and of the mean P(y = 1) against λf, mean over seeds, one
// panel per data set, a line per target, λs and ρ). Progress goes to
// stderr (-q for none).
package main

import (
	"bytes"
	"encoding/csv"
	"errors"
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
	"github.com/fairmp/fairmp/internal/cli"
	"github.com/fairmp/fairmp/internal/svgplot"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/fairmp/fairmp/metrics"
	"gorgonia.org/tensor"
)

func main() {
	blas.Default() // fairmp's BLAS before any graph runs (see internal/blas)
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "lambdaf:", err)
		}
		os.Exit(2)
	}
}

type options struct {
	data, out   string
	sets        []string
	seeds       int
	epochs      int
	lambdaF     []float64
	rhos        []float64
	quiet       bool
	synthNodes  int
	temperature float64
	k           int
	targets     []string
	lambdaS     []float64
}

// row is one data set, seed, ρ and λf, measured on the validation nodes.
type row struct {
	set                 string
	target              string
	eo, testEO          float64
	seed                int
	rho, lambdaF        float64
	lambdaS             float64
	acc, dp, gap, soft  float64
	bound               bool
	testAcc, testDP     float64
	testGap, testSoftGp float64
}

func run(args []string, stdout, stderr io.Writer) error {
	o := &options{}
	fs := flag.NewFlagSet("lambdaf", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sets := fs.String("datasets", "synthetic", "comma-separated: synthetic, nba, bail, credit, german, pokec_z, pokec_n")
	lf := fs.String("lambda-f", "0,0.1,0.2,0.3,0.4,0.5,0.6,0.8,1,1.25,1.5,1.75,2,2.5,3,4,5,6,8,10,16", "λf grid")
	rhos := fs.String("rho", "4,1", "dual step factors ρ to compare (the default is 4)")
	ls := fs.String("lambda-s", "1", "λs values: one backbone is trained per λs (two-stage, λf = 0), then debiased over the λf grid")
	targets := fs.String("target", "dp", `fairness terms to compare: "dp" (Δs over every node with a known group: demographic parity) and "eo" (Δs over the training nodes with label 1 only: an equal-opportunity surrogate)`)
	fs.StringVar(&o.data, "data", os.Getenv("FAIRMP_DATA"), "folder of the data sets (default $FAIRMP_DATA)")
	fs.IntVar(&o.seeds, "seeds", 3, "seeds")
	fs.IntVar(&o.epochs, "epochs", 300, "training epochs of the backbone")
	fs.IntVar(&o.synthNodes, "synthetic-nodes", 2000, "nodes of the generated graph")
	fs.Float64Var(&o.temperature, "tau", fmp.DefaultConfig().Temperature, "FMP temperature τ")
	fs.IntVar(&o.k, "k", fmp.DefaultConfig().K, "FMP steps K")
	fs.StringVar(&o.out, "out", "", "folder for lambdaf.csv and lambdaf.svg")
	fs.BoolVar(&o.quiet, "q", false, "no progress")
	from := fs.String("from-csv", "", "a lambdaf.csv of an earlier run: print its tables and plot it (with -out) instead of training")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var err error
	if o.lambdaF, err = cli.ParseFloats(*lf, 0); err != nil {
		return fmt.Errorf("-lambda-f: %w", err)
	}
	if o.rhos, err = cli.ParseFloats(*rhos, 0); err != nil {
		return fmt.Errorf("-rho: %w", err)
	}
	if o.lambdaS, err = cli.ParseFloats(*ls, 0); err != nil {
		return fmt.Errorf("-lambda-s: %w", err)
	}
	for _, t := range strings.Split(*targets, ",") {
		switch t = strings.TrimSpace(t); t {
		case "dp", "eo":
			o.targets = append(o.targets, t)
		case "":
		default:
			return fmt.Errorf("-target %q, want dp or eo", t)
		}
	}
	if len(o.targets) == 0 {
		return errors.New("-target: none given")
	}
	o.sets = cli.SplitList(*sets)
	switch {
	case o.seeds < 1 || o.epochs < 1:
		return fmt.Errorf("-seeds %d -epochs %d, want ≥ 1", o.seeds, o.epochs)
	case len(o.sets) == 0:
		return errors.New("-datasets: none given")
	}
	var all []row
	if *from != "" {
		if all, err = readCSV(*from, o); err != nil {
			return err
		}
		return finish(stdout, o, all)
	}
	start := time.Now()
	for _, set := range o.sets {
		ds, err := load(o, set)
		if err != nil {
			return err
		}
		for seed := 1; seed <= o.seeds; seed++ {
			if !o.quiet {
				fmt.Fprintf(stderr, "%s seed %d (%v elapsed)\n", set, seed, time.Since(start).Round(time.Second))
			}
			for _, ls := range o.lambdaS {
				rs, err := sweep(o, ds, set, int64(seed), ls)
				if err != nil {
					return fmt.Errorf("%s seed %d λs %g: %w", set, seed, ls, err)
				}
				all = append(all, rs...)
			}
		}
	}
	return finish(stdout, o, all)
}

// finish prints the tables and writes the CSV and the plot.
func finish(stdout io.Writer, o *options, all []row) error {
	report(stdout, o, all)
	if o.out == "" {
		return nil
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	if err := writeCSV(filepath.Join(o.out, "lambdaf.csv"), all); err != nil {
		return err
	}
	return plotGaps(filepath.Join(o.out, "lambdaf.svg"), o, all)
}

func load(o *options, set string) (*datasets.Dataset, error) {
	if set == "synthetic" {
		c := datasets.DefaultSyntheticConfig()
		c.N = o.synthNodes
		return datasets.Synthetic(c)
	}
	if o.data == "" {
		return nil, fmt.Errorf("-datasets %s needs -data or $FAIRMP_DATA", set)
	}
	return datasets.Load(o.data, set, datasets.PaperOptions())
}

// sweep trains one backbone and measures every ρ and λf on it.
func sweep(o *options, ds *datasets.Dataset, set string, seed int64, lambdaS float64) ([]row, error) {
	p, err := exp.NewProblem(ds, exp.DefaultSpec("fmp").Dtype)
	if err != nil {
		return nil, err
	}
	spec := exp.DefaultSpec("fmp")
	spec.Seed = seed
	spec.FMP.K, spec.FMP.Temperature, spec.FMP.LambdaS = o.k, o.temperature, lambdaS
	tc := exp.DefaultTrainOptions()
	tc.Epochs = o.epochs
	out, err := exp.Run(p, spec, tc)
	if err != nil {
		return nil, err
	}
	m := out.Model.(*fmp.Model)
	logits, err := train.Logits(m.Backbone(), p.Task)
	if err != nil {
		return nil, err
	}
	var rs []row
	for _, target := range o.targets {
		tm, err := targetModel(m, ds, target)
		if err != nil {
			return nil, err
		}
		r, err := sweepTarget(o, ds, set, seed, p, tm, logits, target)
		if err != nil {
			return nil, err
		}
		rs = append(rs, r...)
	}
	return rs, nil
}

// targetModel returns m itself for "dp", and for "eo" the same trained
// backbone under an FMP layer whose sensitive attribute is known only on
// the training nodes with label 1 (−1 elsewhere): its Δs compares the
// groups' mean predictions among known positives, the quantity ΔEO
// compares among positives.
func targetModel(m *fmp.Model, ds *datasets.Dataset, target string) (*fmp.Model, error) {
	if target == "dp" {
		return m, nil
	}
	sens := make([]int, ds.N())
	for i := range sens {
		sens[i] = -1
	}
	for _, i := range ds.Split.Train {
		if ds.Labels[i] == 1 {
			sens[i] = ds.Sens[i]
		}
	}
	return fmp.On(m.Backbone(), ds.Graph, sens, m.OnConfig(), m.Phase())
}

// sweepTarget measures every ρ and λf for one fairness term.
func sweepTarget(o *options, ds *datasets.Dataset, set string, seed int64, p *exp.Problem, m *fmp.Model, logits *tensor.Dense, target string) ([]row, error) {
	var rs []row
	for _, rho := range o.rhos {
		// The budget binds when the output differs from the output with
		// an unbounded dual (λf = 1e6): the same K steps whose projection
		// never acts.
		cfg := m.Config()
		cfg.Rho, cfg.LambdaF = rho, 1e6
		free, err := fmp.Explain(logits, m.Matrix(), m.SensitiveAttribute(), cfg)
		if err != nil {
			return nil, err
		}
		for _, lf := range o.lambdaF {
			cfg.LambdaF = lf
			mm, err := m.WithFMP(cfg)
			if err != nil {
				return nil, err
			}
			pred, err := train.Predict(mm, p.Task, nil)
			if err != nil {
				return nil, err
			}
			r := row{set: set, target: target, seed: int(seed), rho: rho, lambdaF: lf, lambdaS: cfg.LambdaS}
			if r.acc, r.dp, r.gap, r.soft, r.eo, err = measure(pred.Probs, ds, ds.Split.Val); err != nil {
				return nil, fmt.Errorf("%s seed %d λf %g: validation: %w", set, seed, lf, err)
			}
			if r.testAcc, r.testDP, r.testGap, r.testSoftGp, r.testEO, err = measure(pred.Probs, ds, ds.Split.Test); err != nil {
				return nil, fmt.Errorf("%s seed %d λf %g: test: %w", set, seed, lf, err)
			}
			if lf > 0 {
				a, err := fmp.Explain(logits, m.Matrix(), m.SensitiveAttribute(), cfg)
				if err != nil {
					return nil, err
				}
				r.bound = !equal(a.Output, free.Output)
			}
			rs = append(rs, r)
		}
	}
	return rs, nil
}

func equal(a, b []float64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

// measure returns accuracy, ΔDP, the signed gap of selection rates
// (group 1 − group 0), the signed gap of mean P(y = 1) and ΔEO on the
// nodes idx, as metrics.Evaluate computes them (nodes with an unknown
// label or group left out; binary groups). The mean-probability gap, which
// Evaluate does not report, is taken over the same nodes.
func measure(probs []float64, ds *datasets.Dataset, idx []int) (acc, dp, gap, soft, eo float64, err error) {
	r, err := metrics.Evaluate(probs, 2, ds.Labels, ds.Sens, idx, metrics.DefaultOptions())
	if err != nil {
		return 0, 0, 0, 0, 0, err
	}
	if len(r.Groups) != 2 {
		return 0, 0, 0, 0, 0, fmt.Errorf("%d sensitive groups, want 2 for a signed gap", len(r.Groups))
	}
	var sum, n [2]float64
	for _, i := range idx {
		if g := ds.Sens[i]; g >= 0 && ds.Labels[i] >= 0 {
			sum[g] += probs[2*i+1]
			n[g]++
		}
	}
	gap = r.Groups[1].SelectionRate - r.Groups[0].SelectionRate
	soft = sum[1]/n[1] - sum[0]/n[0]
	return r.Accuracy, r.DemographicParity, gap, soft, r.EqualOpportunity, nil
}

func report(w io.Writer, o *options, all []row) {
	for _, ls := range o.lambdaS {
		var sub []row
		for _, r := range all {
			if r.lambdaS == ls {
				sub = append(sub, r)
			}
		}
		if len(o.lambdaS) > 1 {
			fmt.Fprintf(w, "\n## λs = %g\n", ls)
		}
		reportOne(w, o, sub)
	}
	if len(o.lambdaS) > 1 {
		grid(w, o, all)
	}
}

// grid prints, per data set, validation accuracy and ΔDP over λs × λf
// (the first target and ρ), and the setting the default rule (lowest
// validation ΔDP within one accuracy point of the model at λs = 1, λf =
// 0 when λs = 1 is in the grid, else of the first λs) chooses per seed.
func grid(w io.Writer, o *options, all []row) {
	t, rho := o.targets[0], o.rhos[0]
	ref := o.lambdaS[0]
	for _, ls := range o.lambdaS {
		if ls == 1 {
			ref = 1
		}
	}
	for _, set := range o.sets {
		for _, what := range []string{"accuracy", "ΔDP"} {
			fmt.Fprintf(w, "\n%s, validation %s %% (mean over %d seeds; rows λs, columns λf; %s, ρ = %g)\n\n| λs \\ λf |", set, what, o.seeds, t, rho)
			for _, lf := range o.lambdaF {
				fmt.Fprintf(w, " %g |", lf)
			}
			fmt.Fprint(w, "\n|---|")
			for range o.lambdaF {
				fmt.Fprint(w, "---|")
			}
			fmt.Fprintln(w)
			for _, ls := range o.lambdaS {
				fmt.Fprintf(w, "| %g |", ls)
				for _, lf := range o.lambdaF {
					v, n := 0.0, 0.0
					for _, r := range all {
						if r.set == set && r.target == t && r.rho == rho && r.lambdaS == ls && r.lambdaF == lf {
							if what == "accuracy" {
								v += r.acc
							} else {
								v += r.dp
							}
							n++
						}
					}
					fmt.Fprintf(w, " %.2f |", 100*v/n)
				}
				fmt.Fprintln(w)
			}
		}
		fmt.Fprintf(w, "\n%s: chosen on validation (lowest ΔDP within 1 accuracy point of λs = %g, λf = 0), with its test accuracy / ΔDP:\n", set, ref)
		for seed := 1; seed <= o.seeds; seed++ {
			var refAcc float64
			for _, r := range all {
				if r.set == set && r.target == t && r.rho == rho && r.seed == seed && r.lambdaS == ref && r.lambdaF == 0 {
					refAcc = r.acc
				}
			}
			var best *row
			for k := range all {
				r := &all[k]
				if r.set != set || r.target != t || r.rho != rho || r.seed != seed || r.acc < refAcc-0.01-1e-12 {
					continue
				}
				if best == nil || r.dp < best.dp || (r.dp == best.dp && r.acc > best.acc) {
					best = r
				}
			}
			if best != nil {
				fmt.Fprintf(w, "- seed %d: λs %g, λf %g: validation %.2f / %.2f, test %.2f / %.2f\n", seed, best.lambdaS, best.lambdaF, 100*best.acc, 100*best.dp, 100*best.testAcc, 100*best.testDP)
			}
		}
	}
}

func reportOne(w io.Writer, o *options, all []row) {
	for _, set := range o.sets {
		fmt.Fprintf(w, "\n%s: validation, mean over %d seeds (%%): accuracy / ΔDP / signed gap of decisions (group 1 − group 0) / signed gap of mean P(y=1) / ΔEO; * = the budget binds (output differs from an unbounded dual's) in every seed\n\n", set, o.seeds)
		head := "| λf |"
		sep := "|---|"
		for _, target := range o.targets {
			for _, rho := range o.rhos {
				head += fmt.Sprintf(" %s, ρ = %g |", target, rho)
				sep += "---|"
			}
		}
		fmt.Fprintln(w, head)
		fmt.Fprintln(w, sep)
		for _, lf := range o.lambdaF {
			line := fmt.Sprintf("| %g |", lf)
			for _, target := range o.targets {
				for _, rho := range o.rhos {
					var acc, dp, gap, soft, eo float64
					n, bound := 0.0, true
					for _, r := range all {
						if r.set == set && r.target == target && r.rho == rho && r.lambdaF == lf {
							acc, dp, gap, soft, eo, n = acc+r.acc, dp+r.dp, gap+r.gap, soft+r.soft, eo+r.eo, n+1
							bound = bound && r.bound
						}
					}
					mark := ""
					if bound && lf > 0 {
						mark = "*"
					}
					line += fmt.Sprintf(" %.2f / %.2f / %+.2f / %+.2f / %.2f%s |", 100*acc/n, 100*dp/n, 100*gap/n, 100*soft/n, 100*eo/n, mark)
				}
			}
			fmt.Fprintln(w, line)
		}
		for _, target := range o.targets {
			for _, rho := range o.rhos {
				fmt.Fprintf(w, "\n%s, ρ = %g: %s\n", target, rho, monotone(all, set, target, rho, o))
			}
		}
	}
}

// monotone says, per seed, whether the validation ΔDP ever rises as λf
// grows (by more than one validation node's worth), and where.
func monotone(all []row, set, target string, rho float64, o *options) string {
	var notes []string
	for seed := 1; seed <= o.seeds; seed++ {
		var rs []row
		for _, r := range all {
			if r.set == set && r.target == target && r.rho == rho && r.seed == seed {
				rs = append(rs, r)
			}
		}
		best := math.Inf(1)
		for _, r := range rs {
			if r.dp > best+1e-9 {
				notes = append(notes, fmt.Sprintf("seed %d: ΔDP rises to %.2f at λf %g after %.2f", seed, 100*r.dp, r.lambdaF, 100*best))
				break
			}
			best = math.Min(best, r.dp)
		}
	}
	if len(notes) == 0 {
		return "validation ΔDP never rises with λf"
	}
	return strings.Join(notes, "; ")
}

func writeCSV(path string, all []row) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write([]string{"dataset", "target", "seed", "rho", "lambda_f", "lambda_s", "val_accuracy", "val_dp", "val_gap", "val_soft_gap", "dual_at_bound", "test_accuracy", "test_dp", "test_gap", "test_soft_gap", "val_eo", "test_eo"})
	g := func(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }
	for _, r := range all {
		w.Write([]string{r.set, r.target, strconv.Itoa(r.seed), g(r.rho), g(r.lambdaF), g(r.lambdaS), g(r.acc), g(r.dp), g(r.gap), g(r.soft), strconv.FormatBool(r.bound), g(r.testAcc), g(r.testDP), g(r.testGap), g(r.testSoftGp), g(r.eo), g(r.testEO)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// plotGaps draws, per data set (two panels a row), the validation
// signed gap (group 1 − group 0, mean over seeds) of the decision rates
// (solid, a marker at each λf) and of the mean P(y = 1) (dashed) against
// λf: one colour per combination of the target, λs and ρ values the rows
// hold, named by those that vary, and parity as a grey line at 0.
func plotGaps(path string, o *options, all []row) error {
	type combo struct {
		target   string
		ls, rho  float64
		name     string
		color    string
		shape    svgplot.Shape
		any      bool
		dec, sft svgplot.Series
	}
	shapes := []svgplot.Shape{svgplot.Circle, svgplot.Square, svgplot.Diamond, svgplot.Triangle, svgplot.TriangleDown}
	var combos []combo
	for _, t := range o.targets {
		for _, ls := range o.lambdaS {
			for _, rho := range o.rhos {
				var parts []string
				if len(o.targets) > 1 {
					parts = append(parts, svgplot.Escape(t))
				}
				if len(o.lambdaS) > 1 {
					parts = append(parts, fmt.Sprintf("λ_s = %g", ls))
				}
				if len(o.rhos) > 1 {
					parts = append(parts, fmt.Sprintf("ρ = %g", rho))
				}
				name := strings.Join(parts, ", ")
				if name == "" {
					name = "FMP"
				}
				k := len(combos)
				combos = append(combos, combo{target: t, ls: ls, rho: rho, name: name, color: svgplot.SeriesColor(k), shape: shapes[k%len(shapes)]})
			}
		}
	}
	fig := svgplot.Figure{
		Title: fmt.Sprintf("Signed gap, group 1 − group 0, against λ_f (validation, mean of %d seeds)", o.seeds),
		Legend: svgplot.Legend{Extra: []svgplot.Series{
			{Name: "gap of the decision rates", Color: svgplot.Black},
			{Name: "gap of the mean P(y = 1)", Color: svgplot.Black, Dashed: true, NoMarkers: true},
		}},
	}
	if len(o.sets) > 2 {
		fig.Columns = 2
	}
	for _, set := range o.sets {
		p := svgplot.Panel{Title: svgplot.Escape(set), XLabel: "λ_f", YLabel: "group 1 − group 0 (%)",
			Lines: []svgplot.RefLine{{At: 0, Label: "parity", Color: "#999999"}}}
		for _, c := range combos {
			dec := svgplot.Series{Name: c.name, Color: c.color, Shape: c.shape}
			soft := svgplot.Series{Color: c.color, Dashed: true, NoMarkers: true}
			for _, lf := range o.lambdaF {
				var g, sf, n float64
				for _, r := range all {
					if r.set == set && r.target == c.target && r.lambdaS == c.ls && r.rho == c.rho && r.lambdaF == lf {
						g, sf, n = g+r.gap, sf+r.soft, n+1
					}
				}
				if n == 0 {
					continue
				}
				dec.X, dec.Y = append(dec.X, lf), append(dec.Y, 100*g/n)
				soft.X, soft.Y = append(soft.X, lf), append(soft.Y, 100*sf/n)
			}
			if len(dec.X) > 0 {
				p.Series = append(p.Series, soft, dec)
			}
		}
		if len(p.Series) == 0 {
			continue
		}
		fig.Panels = append(fig.Panels, p)
	}
	if len(fig.Panels) == 0 {
		return fmt.Errorf("plot %s: no rows", path)
	}
	var b bytes.Buffer
	if err := fig.WriteSVG(&b); err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// readCSV reads a lambdaf.csv written by writeCSV and sets o's data sets,
// targets, ρ, λf and λs values and seed count from it, in first-seen
// order.
func readCSV(path string, o *options) ([]row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) < 2 || len(recs[0]) != 17 || recs[0][0] != "dataset" {
		return nil, fmt.Errorf("%s: not a lambdaf.csv (want its 17-column header and at least one row)", path)
	}
	o.sets, o.targets, o.rhos, o.lambdaF, o.lambdaS = nil, nil, nil, nil, nil
	seeds := map[int]bool{}
	var all []row
	for n, r := range recs[1:] {
		var v [14]float64
		for k, col := range []int{2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15, 16} {
			if v[k], err = strconv.ParseFloat(r[col], 64); err != nil {
				return nil, fmt.Errorf("%s:%d: column %s: %w", path, n+2, recs[0][col], err)
			}
		}
		x := row{set: r[0], target: r[1], seed: int(v[0]), rho: v[1], lambdaF: v[2], lambdaS: v[3],
			acc: v[4], dp: v[5], gap: v[6], soft: v[7], bound: r[10] == "true",
			testAcc: v[8], testDP: v[9], testGap: v[10], testSoftGp: v[11], eo: v[12], testEO: v[13]}
		all = append(all, x)
		if !slices.Contains(o.sets, x.set) {
			o.sets = append(o.sets, x.set)
		}
		if !slices.Contains(o.targets, x.target) {
			o.targets = append(o.targets, x.target)
		}
		if !slices.Contains(o.rhos, x.rho) {
			o.rhos = append(o.rhos, x.rho)
		}
		if !slices.Contains(o.lambdaF, x.lambdaF) {
			o.lambdaF = append(o.lambdaF, x.lambdaF)
		}
		if !slices.Contains(o.lambdaS, x.lambdaS) {
			o.lambdaS = append(o.lambdaS, x.lambdaS)
		}
		seeds[x.seed] = true
	}
	o.seeds = len(seeds)
	return all, nil
}
