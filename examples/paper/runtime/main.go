package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/fairmp/fairmp/examples/paper/internal/exp"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/internal/blas"
	"github.com/fairmp/fairmp/layers/train"
	"gorgonia.org/tensor"
)

func main() {
	blas.Default() // fairmp's BLAS before any graph runs (see internal/blas)
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "runtime:", err)
		os.Exit(1)
	}
}

type options struct {
	data, dataset string
	shape         datasets.SyntheticConfig
	models        []string
	epochs        int
	warmup        int
	dtype         tensor.Dtype
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	fl := flag.NewFlagSet("runtime", flag.ContinueOnError)
	fl.SetOutput(stderr)
	var (
		data    = fl.String("data", os.Getenv("FAIRMP_DATA"), "data directory for a real -dataset (default $FAIRMP_DATA)")
		dataset = fl.String("dataset", "pokec-shape", "pokec-shape (generated, Pokec-z's size), synthetic (small generated), or a preset: "+strings.Join(datasets.Presets, "|"))
		models  = fl.String("models", "mlp,gcn,gat,sgc,appnp,jknet,fmp", "comma-separated models: "+strings.Join(exp.Models, ","))
		epochs  = fl.Int("epochs", 5, "timed training epochs per model")
		warmup  = fl.Int("warmup", 1, "untimed epochs first")
		dtype   = fl.String("dtype", "float64", "float32 or float64")
	)
	if err := fl.Parse(args); err != nil {
		return nil, err
	}
	if fl.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fl.Args())
	}
	o := &options{data: *data, dataset: strings.ToLower(*dataset), shape: datasets.PokecZShape(1), epochs: *epochs, warmup: *warmup}
	switch o.dataset {
	case "pokec-shape":
	case "synthetic":
		o.shape = datasets.DefaultSyntheticConfig()
	default:
		ok := false
		for _, p := range datasets.Presets {
			ok = ok || p == o.dataset
		}
		if !ok {
			return nil, fmt.Errorf("-dataset %q: want pokec-shape, synthetic or one of %s", *dataset, strings.Join(datasets.Presets, ", "))
		}
		if o.data == "" {
			return nil, fmt.Errorf("-dataset %s needs the data directory: pass -data DIR or set $FAIRMP_DATA", o.dataset)
		}
	}
	var err error
	if o.models, err = exp.ParseModels(*models); err != nil {
		return nil, fmt.Errorf("-models: %w", err)
	}
	if o.epochs < 1 {
		return nil, fmt.Errorf("-epochs %d: want at least 1", o.epochs)
	}
	if o.warmup < 0 {
		return nil, fmt.Errorf("-warmup %d: want ≥ 0", o.warmup)
	}
	switch *dtype {
	case "float32":
		o.dtype = tensor.Float32
	case "float64":
		o.dtype = tensor.Float64
	default:
		return nil, fmt.Errorf("-dtype %q: want float32 or float64", *dtype)
	}
	return o, nil
}

func run(args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	return runWith(o, stdout, stderr)
}

func runWith(o *options, stdout, stderr io.Writer) error {
	var ds *datasets.Dataset
	var err error
	switch o.dataset {
	case "pokec-shape", "synthetic":
		fmt.Fprintf(stderr, "generating a %d-node graph ...\n", o.shape.N)
		ds, err = datasets.Synthetic(o.shape)
	default:
		ds, err = datasets.Load(o.data, o.dataset, datasets.PaperOptions())
		if errors.Is(err, fs.ErrNotExist) {
			err = fmt.Errorf("%w (see examples/paper/reproduce for the files each data set needs)", err)
		}
	}
	if err != nil {
		return err
	}
	exp.PrintWarnings(stderr, ds)
	rows, err := measure(o, ds, stderr)
	if err != nil {
		return err
	}
	writeTable(stdout, o, ds, rows)
	return nil
}

type row struct {
	model       string
	train, eval time.Duration // medians per epoch
}

// measure times o.epochs training steps and evaluation passes of each
// model with the library's trainer (train.Trainer), after o.warmup
// untimed epochs, and returns the medians.
func measure(o *options, ds *datasets.Dataset, stderr io.Writer) ([]row, error) {
	var rows []row
	for _, name := range o.models {
		spec := exp.DefaultSpec(name)
		spec.Dtype = o.dtype
		p, err := exp.NewProblem(ds, o.dtype)
		if err != nil {
			return nil, err
		}
		m, err := exp.Build(p, spec)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		tc := train.DefaultConfig()
		tr, err := train.NewTrainer(m, p.Task, tc)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		var steps, evals []time.Duration
		for e := 0; e < o.warmup+o.epochs; e++ {
			t0 := time.Now()
			st, err := tr.Step()
			if err != nil {
				tr.Close()
				return nil, fmt.Errorf("%s: epoch %d: %w", name, e+1, err)
			}
			t1 := time.Now()
			if err := tr.Evaluate(&st); err != nil {
				tr.Close()
				return nil, fmt.Errorf("%s: epoch %d: %w", name, e+1, err)
			}
			t2 := time.Now()
			if e >= o.warmup {
				steps, evals = append(steps, t1.Sub(t0)), append(evals, t2.Sub(t1))
			}
		}
		tr.Close()
		r := row{model: name, train: median(steps), eval: median(evals)}
		fmt.Fprintf(stderr, "%-6s train step %8.1f ms, evaluation %8.1f ms\n", name, ms(r.train), ms(r.eval))
		rows = append(rows, r)
		runtime.GC()
	}
	return rows, nil
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func writeTable(w io.Writer, o *options, ds *datasets.Dataset, rows []row) {
	fmt.Fprintf(w, "%s: %d nodes, %d edges, %d features; %s; median of %d epochs after %d warm-up; GOMAXPROCS %d.\n\n",
		o.dataset, ds.N(), ds.Graph.NumEdges(), ds.NumFeatures, o.dtype, o.epochs, o.warmup, runtime.GOMAXPROCS(0))
	var base time.Duration
	for _, r := range rows {
		if r.model == "mlp" {
			base = r.train + r.eval
		}
	}
	fmt.Fprint(w, "| model | train step ms | evaluation ms | epoch ms |")
	if base > 0 {
		fmt.Fprint(w, " epoch vs MLP |")
	}
	fmt.Fprint(w, "\n|---|---|---|---|")
	if base > 0 {
		fmt.Fprint(w, "---|")
	}
	fmt.Fprintln(w)
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %.1f | %.1f | %.1f |", exp.DisplayName(r.model), ms(r.train), ms(r.eval), ms(r.train+r.eval))
		if base > 0 {
			fmt.Fprintf(w, " %.2f× |", float64(r.train+r.eval)/float64(base))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "\nA training step is forward, backward and one Adam update; an epoch adds one evaluation pass (train.Trainer.Epoch).")
}
