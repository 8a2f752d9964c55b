package main

import (
	"bytes"
	"encoding/gob"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/fairmp/fairmp/internal/cli"
	"github.com/fairmp/fairmp/layers/perturb"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/fairmp/fairmp/metrics"
)

// savedRun is one method's run on one seed as -out keeps it: what the
// table needs (the test probabilities for the bootstrap of the seed
// mean, the report for the trivial-run warnings), so that seeds run in
// separate processes, or a run cut short, make one table with -merge.
type savedRun struct {
	// Protocol is the run's flags that change its outcome (protocol), so
	// that -merge refuses a run of another protocol saved under the same
	// name.
	Protocol string
	Method   string
	Seed     int64
	Probs    []float64
	Report   metrics.Report
	IV       metrics.Intervals
	Stab     perturb.Report
	Seconds  float64
	Setting  string
	// PropProbs is outcome.prop (FMP's propagation alone); nil in runs
	// saved before it was kept, whose decomposition is then n/a.
	PropProbs []float64
}

// runProtocol names the flags, beyond those in runName, that change a
// run's outcome.
func runProtocol(o *options) string {
	s := fmt.Sprintf("-n %d -epochs %d -hidden %d -edits-threshold %v -fairgnn-alpha %v -fairgnn-beta %v -fairgnn-hidden %d -estimator-epochs %d",
		o.synthN, o.st.Epochs, o.st.Hidden, o.editsThreshold, o.fairgnnAlpha, o.fairgnnBeta, o.fairgnnHidden, o.estEpochs)
	if o.st.Select != train.SelectBestVal {
		// Only when not the default, so that runs saved before the flag
		// still merge.
		s += " -select " + o.st.Select.Word()
	}
	// The flags below, only when not their default, so that runs saved
	// before them still merge.
	tr := train.DefaultConfig()
	if o.st.LR != tr.Adam.LR || o.st.WeightDecay != tr.Adam.WeightDecay {
		s += fmt.Sprintf(" -lr %v -weight-decay %v", o.st.LR, o.st.WeightDecay)
	}
	if !math.IsNaN(o.st.Dropout) {
		s += fmt.Sprintf(" -dropout %v", o.st.Dropout)
	}
	if o.st.SelectAfter > 0 {
		s += fmt.Sprintf(" (selected after epoch %d)", o.st.SelectAfter)
	}
	if o.st.NoScale {
		s += " -no-scale"
	}
	if len(o.st.Overrides) > 0 {
		s += " " + o.st.Flags() // the backbone's fields a preset fixes
	}
	if len(o.weights) > 0 {
		// Only when given, so that runs saved before the flag still merge.
		var ws []string
		for _, m := range o.methods {
			if w, ok := o.weights[m]; ok {
				ws = append(ws, fmt.Sprintf("%s=%v", m, w))
			}
		}
		s += " -method-weights " + strings.Join(ws, ",")
	}
	return s
}

// runName is the stem of -out's files for o's data set and protocol.
func runName(o *options) string {
	name := o.dataset + "_" + o.st.Backbone
	if o.st.IncludeSens {
		name += "_with_sens"
	}
	if o.st.TrainLabels > 0 {
		name += fmt.Sprintf("_train%d", o.st.TrainLabels)
	}
	if o.protocolName != "" {
		name += "_protocol-" + o.protocolName
	}
	return name
}

// runMagic begins every saved run: -merge reads only files that begin
// with it, and -out replaces only files that do (cli.ReplaceFile).
var runMagic = []byte("fairmp baselines run 1\n")

// runPath is where -out keeps method's run on seed.
func runPath(o *options, method string, seed int64) string {
	return filepath.Join(o.out, runName(o)+"_runs", fmt.Sprintf("%s_seed%d.gob", method, seed))
}

// saveRuns writes each outcome of one seed under -out, each file
// written whole to a temporary name first and then renamed, so a run
// cut short leaves the seeds it finished and no partial file; a file in
// the way that is not a saved run is left alone and reported.
func saveRuns(o *options, outs []outcome) error {
	for _, r := range outs {
		path := runPath(o, r.method, r.seed)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		var b bytes.Buffer
		b.Write(runMagic)
		if err := gob.NewEncoder(&b).Encode(savedRun{runProtocol(o), r.method, r.seed, r.probs, r.report, r.iv, r.stab, r.seconds, r.setting, r.prop}); err != nil {
			return fmt.Errorf("%s seed %d: %w", r.method, r.seed, err)
		}
		if err := cli.ReplaceFile(path, b.Bytes(), runMagic); err != nil {
			return err
		}
	}
	return nil
}

// loadRuns reads the saved runs of o's methods on o's seeds (-merge),
// one slice a seed in the order of -methods, as runSeed returns them.
func loadRuns(o *options) ([][]outcome, error) {
	var all [][]outcome
	for s := o.firstSeed; s < o.firstSeed+int64(o.seeds); s++ {
		var outs []outcome
		for _, m := range o.methods {
			path := runPath(o, m, s)
			b, err := os.ReadFile(path)
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("-merge: no saved run of %s on seed %d (%s): run it first with the same -dataset, -backbone, -include-sens, -train-labels, -protocol and -out, -methods %s -first-seed %d -seeds 1", m, s, path, m, s)
			}
			if err != nil {
				return nil, fmt.Errorf("-merge: %w", err)
			}
			if !bytes.HasPrefix(b, runMagic) {
				return nil, fmt.Errorf("-merge: %s is not a run saved by baselines -out (it does not begin with %q)", path, runMagic)
			}
			var r savedRun
			if err := gob.NewDecoder(bytes.NewReader(b[len(runMagic):])).Decode(&r); err != nil {
				return nil, fmt.Errorf("-merge: %s: %w", path, err)
			}
			if r.Protocol != runProtocol(o) {
				return nil, fmt.Errorf("-merge: %s was run with %s, not %s: give the flags it was run with, or another -out", path, r.Protocol, runProtocol(o))
			}
			if r.Method != m || r.Seed != s {
				return nil, fmt.Errorf("-merge: %s holds %s on seed %d, not %s on seed %d", path, r.Method, r.Seed, m, s)
			}
			outs = append(outs, outcome{r.Method, r.Seed, r.Probs, r.Report, r.IV, r.Stab, r.Seconds, r.Setting, r.PropProbs})
		}
		all = append(all, outs)
	}
	return all, nil
}
