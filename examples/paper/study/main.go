// Command study is the λf study behind the fmp package's defaults: it
// trains MLP → FMP backbones with λf = 0 and sweeps FMP's settings on
// their logits (-part sweep), or trains one model per training mode
// (-part modes), and prints validation and test accuracy, ΔDP and ΔEO as
// mean ± std over seeds, with an oracle of per-group thresholds chosen on
// the test labels as a bound.
//
// Usage:
//
//	go run ./study -data $FAIRMP_DATA -datasets synthetic,bail -seeds 5 -epochs 300
//	go run ./study -part modes -modes 10:0.5:2,5:1:2
//
// It trains many models: a full sweep over three data sets takes hours on
// two cores. -cache DIR keeps trained backbones' logits so that further
// sweeps over FMP's settings run forward passes only. Progress goes to
// stderr, the tables to stdout.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/fairmp/fairmp/internal/blas"
)

func main() {
	blas.Default() // fairmp's BLAS before any graph runs (see internal/blas)
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "study:", err)
		}
		os.Exit(2)
	}
}

// settings holds the flags, under the names the study's code reads them
// by (getenv).
var settings = map[string]string{}

func getenv(name string) string { return settings[name] }

func run(args []string, stdout, stderr io.Writer) (err error) {
	fs := flag.NewFlagSet("study", flag.ContinueOnError)
	fs.SetOutput(stderr)
	str := func(name, env, def, usage string) {
		fs.Func(name, usage+" (default "+strconv.Quote(def)+")", func(v string) error { settings[env] = v; return nil })
		settings[env] = def
	}
	settings = map[string]string{}
	str("data", "FAIRMP_DATA", os.Getenv("FAIRMP_DATA"), "folder holding the data sets' folders (default $FAIRMP_DATA)")
	str("datasets", "FAIRMP_STUDY_DATA", "synthetic,bail,nba", "comma-separated data sets: synthetic, bail, nba, credit")
	str("seeds", "FAIRMP_STUDY_SEEDS", "5", "seeds per setting")
	str("epochs", "FAIRMP_STUDY_EPOCHS", "300", "training epochs")
	str("part", "FAIRMP_STUDY_PART", "sweep", "sweep (FMP settings on λf = 0 backbones) or modes (one training per mode)")
	str("ls", "FAIRMP_STUDY_LS", "1", "comma-separated λs values of the sweep")
	str("k", "FAIRMP_STUDY_K", "", "comma-separated K values of the sweep (empty: the study's grid)")
	str("temps", "FAIRMP_STUDY_TEMPS", "", "comma-separated temperatures τ of the sweep (empty: the study's grid)")
	str("modes", "FAIRMP_STUDY_MODES", "10:0.5:2,5:1:2", "-part modes: comma-separated K:τ:λf settings")
	str("modes-nobase", "FAIRMP_STUDY_MODES_NOBASE", "0", "-part modes: 1 skips the λf = 0 baseline rows")
	str("cache", "FAIRMP_STUDY_CACHE", "", "folder caching trained backbones' logits (empty: none)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	for _, name := range []string{"FAIRMP_STUDY_SEEDS", "FAIRMP_STUDY_EPOCHS"} {
		if v, err := strconv.Atoi(settings[name]); err != nil || v < 1 {
			return fmt.Errorf("-%s %q, want a positive integer", map[string]string{"FAIRMP_STUDY_SEEDS": "seeds", "FAIRMP_STUDY_EPOCHS": "epochs"}[name], settings[name])
		}
	}
	t := &runner{out: stdout, log: stderr}
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(failure)
			if !ok {
				panic(r)
			}
			err = f.err
		}
	}()
	study(t)
	return nil
}

// tb is what the study's code needs of its runner: the subset of
// testing.TB it was first written against.
type tb interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
	Log(args ...any)
	Logf(format string, args ...any)
	Run(name string, f func(t tb)) bool
}

// failure carries a Fatal out of the study to run, which returns it.
type failure struct{ err error }

// skip carries a Skipf out of one data set's part.
type skip struct{ msg string }

// runner runs the study as a command: Log lines go to out, Fatal ends the
// run with an error, Skipf skips the current data set with a note on log.
type runner struct{ out, log io.Writer }

func (r *runner) Helper()                   {}
func (r *runner) Fatal(args ...any)         { panic(failure{errors.New(fmt.Sprint(args...))}) }
func (r *runner) Fatalf(f string, a ...any) { panic(failure{fmt.Errorf(f, a...)}) }
func (r *runner) Skipf(f string, a ...any)  { panic(skip{fmt.Sprintf(f, a...)}) }
func (r *runner) Log(args ...any)           { fmt.Fprintln(r.out, args...) }
func (r *runner) Logf(f string, a ...any)   { fmt.Fprintf(r.log, f+"\n", a...) }

// Run runs f, turning a Skipf inside it into a note on the log.
func (r *runner) Run(name string, f func(t tb)) (ok bool) {
	defer func() {
		if rec := recover(); rec != nil {
			s, isSkip := rec.(skip)
			if !isSkip {
				panic(rec)
			}
			fmt.Fprintf(r.log, "%s: skipped: %s\n", name, s.msg)
			ok = false
		}
	}()
	f(r)
	return true
}
