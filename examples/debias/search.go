package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/internal/protocol"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/fairness"
	"github.com/fairmp/fairmp/layers/train"
)

// The backbone search: unless -backbone, -lr and -epochs are all given,
// the command trains the candidates below on the training nodes and keeps
// the best by -select (the highest validation accuracy by default; the
// first on ties), each stopped early when that criterion has not improved
// for searchPatience epochs, and all within -search-budget. A data set nobody
// tuned the defaults on is the case it is for: a GCN at the library's
// lr 0.001 for 300 epochs can sit at the majority-class rate where an SGC
// or an MLP at lr 0.01 learns the task.
var (
	// searchKinds are the backbones tried when -backbone is not given,
	// in order (on ties, the earlier wins).
	searchKinds = []string{"gcn", "sgc", "mlp"}
	// searchLRs are the learning rates tried when -lr is not given.
	searchLRs = []float64{0.01, 0.001}
)

const (
	// searchEpochs is the most epochs a candidate trains when -epochs is
	// not given. searchPatience·(1/lr) epochs without a better validation
	// accuracy stop it: 100 at lr 0.01, none within 1000 at lr 0.001.
	// Adam moves the weights about lr a step, so a slow learning rate
	// needs as many more epochs before its accuracy leaves the majority
	// rate (seen on a generated graph with a weak signal: a GCN at lr
	// 0.001 whose validation accuracy stayed flat for its first 100
	// epochs, and then learnt).
	searchEpochs   = 1000
	searchPatience = 1.0
	// defaultSearchBudget is -search-budget's default.
	defaultSearchBudget = 3 * time.Minute
)

// searchPlan is what the search tries: the kinds, the learning rates and
// the epochs (a cap with early stopping, or the -epochs given).
type searchPlan struct {
	kinds  []*layers.Kind
	lrs    []float64
	epochs int
	// patience is searchPatience with a search of the epochs, 0 with
	// -epochs given (no early stopping).
	patience float64
	budget   time.Duration
	hidden   int // -hidden, for the kinds that have a hidden layer (0: their default)
}

// active reports whether there is anything to choose.
func (p searchPlan) active() bool {
	return len(p.kinds) > 1 || len(p.lrs) > 1 || p.patience > 0
}

// newSearchPlan reads the plan from the flags: a flag the user gave is
// fixed, the others are searched.
func newSearchPlan(set map[string]bool, k *layers.Kind, lr float64, epochs, hidden int, budget time.Duration) (searchPlan, error) {
	p := searchPlan{kinds: []*layers.Kind{k}, lrs: []float64{lr}, epochs: epochs, budget: budget}
	if set["hidden"] {
		p.hidden = hidden
	}
	if budget < 0 {
		return p, badInput("-search-budget %v, want a duration ≥ 0 (0: no search; train -backbone at -lr for -epochs)", budget)
	}
	if budget == 0 {
		return p, nil
	}
	if !set["backbone"] {
		p.kinds = nil
		for _, name := range searchKinds {
			sk, err := layers.LookupKind(name)
			if err != nil {
				return p, err
			}
			if set["hidden"] && !sk.HasHidden() {
				continue // -hidden asks for a hidden layer
			}
			if set["dropout"] {
				if _, err := (protocol.Settings{Backbone: name, Dropout: 0}).Configure(1, 2, layers.DefaultOptions()); err != nil {
					continue // -dropout asks for a kind with dropout
				}
			}
			p.kinds = append(p.kinds, sk)
		}
	}
	if !set["lr"] {
		p.lrs = searchLRs
	}
	if !set["epochs"] {
		p.epochs, p.patience = searchEpochs, searchPatience
	}
	return p, nil
}

// describe says what the plan tries, for the progress line and the
// report.
func (p searchPlan) describe() string {
	var kinds []string
	for _, k := range p.kinds {
		kinds = append(kinds, k.Name())
	}
	lrs := make([]string, len(p.lrs))
	for i, v := range p.lrs {
		lrs[i] = fmt.Sprintf("%g", v)
	}
	ep := fmt.Sprintf("%d epochs", p.epochs)
	if p.patience > 0 {
		ep = fmt.Sprintf("up to %d epochs, stopped after %g/lr without a better validation accuracy", p.epochs, p.patience)
	}
	return fmt.Sprintf("%s × lr %s, %s, within %v", strings.Join(kinds, ", "), strings.Join(lrs, ", "), ep, p.budget)
}

// candidate is one trained configuration of the search.
type candidate struct {
	Kind      string  `json:"backbone"`
	LR        float64 `json:"lr"`
	EpochsRun int     `json:"epochs_run"`
	// BestEpoch is the epoch kept (by -select), and ValAcc, ValAUC and
	// ValLoss its validation accuracy, ROC AUC (with -select auc) and
	// cross-entropy.
	BestEpoch int     `json:"best_epoch"`
	ValAcc    float64 `json:"val_accuracy"`
	ValAUC    float64 `json:"val_auc,omitempty"` // computed with -select auc alone
	ValLoss   float64 `json:"val_loss"`
	Seconds   float64 `json:"seconds"`
	// Cut says the budget stopped it before it finished.
	Cut bool `json:"cut_by_budget,omitempty"`
}

// searchRecord is what a search tried and chose (metrics.json
// run.search).
type searchRecord struct {
	Plan     string      `json:"plan"`
	Tried    []candidate `json:"tried"`
	NotTried []string    `json:"not_tried"`
	Chosen   candidate   `json:"chosen"`
	// Majority is the validation nodes' majority-class rate.
	Majority float64 `json:"val_majority_rate"`
	Seconds  float64 `json:"seconds"`
}

// cut reports whether -search-budget stopped the search: a candidate not
// tried, or one stopped before it finished.
func (s *searchRecord) cut() bool {
	if len(s.NotTried) > 0 {
		return true
	}
	for _, c := range s.Tried {
		if c.Cut {
			return true
		}
	}
	return false
}

// fitted is the backbone the command goes on with.
type fitted struct {
	fit  *fairness.Fitted
	task *train.Task
	kind *layers.Kind
	lr   float64
	// search records what was tried (nil without a search).
	search *searchRecord
}

// fitBackbone trains the backbone: the search's choice, or the flags'
// configuration when everything is fixed. With -method, the search runs
// on plain training and the chosen configuration is then trained with
// the method.
func fitBackbone(o *options, ds *datasets.Dataset, stderr io.Writer) (*fitted, error) {
	p := o.search
	if !p.active() {
		f, _, err := trainOne(o, ds, p.kinds[0], p.lrs[0], p, o.method, stderr, "", time.Time{})
		return f, err
	}
	if !o.quiet {
		fmt.Fprintf(stderr, "backbone search: %s\n", p.describe())
	}
	start := time.Now()
	var (
		best     *fitted
		bestC    candidate
		tried    []candidate
		notTried []string
	)
	total := len(p.kinds) * len(p.lrs)
	n := 0
	for _, lr := range p.lrs {
		for _, k := range p.kinds {
			n++
			if time.Since(start) >= p.budget {
				notTried = append(notTried, fmt.Sprintf("%s lr %g", k.Name(), lr))
				continue
			}
			f, c, err := trainOne(o, ds, k, lr, p, nil, stderr, fmt.Sprintf("search %d/%d: ", n, total), start)
			if err != nil {
				return nil, err
			}
			tried = append(tried, c)
			if !o.quiet {
				cut := ""
				if c.Cut {
					cut = ", cut by -search-budget"
				}
				fmt.Fprintf(stderr, "search %d/%d: %s, lr %g: %s at epoch %d (%d epochs run%s, %.1f s)\n",
					n, total, k.Name(), lr, c.kept(o.train.Select), c.BestEpoch, c.EpochsRun, cut, c.Seconds)
			}
			if best == nil || c.score(o.train.Select) > bestC.score(o.train.Select) {
				best, bestC = f, c
			}
		}
	}
	major := majorityRate(ds, ds.Split.Val)
	if !o.quiet {
		fmt.Fprintf(stderr, "backbone search: chose %s, lr %g (%s at epoch %d; predicting the more frequent class scores %.2f%%), %d of %d tried in %v\n",
			bestC.Kind, bestC.LR, bestC.kept(o.train.Select), bestC.BestEpoch, 100*major, len(tried), total, time.Since(start).Round(time.Second))
		if len(notTried) > 0 {
			fmt.Fprintf(stderr, "backbone search: -search-budget %v spent before %s; raise it to try them\n", p.budget, strings.Join(notTried, ", "))
		}
	}
	best.search = &searchRecord{Plan: p.describe(), Tried: tried, NotTried: nonNil(notTried),
		Chosen: bestC, Majority: major, Seconds: time.Since(start).Seconds()}
	if o.method == nil {
		return best, nil
	}
	// The method trains the chosen configuration.
	f, _, err := trainOne(o, ds, best.kind, best.lr, p, o.method, stderr, "", time.Time{})
	if err != nil {
		return nil, err
	}
	f.search = best.search
	return f, nil
}

// trainOne trains kind k at learning rate lr in a task of its own (a
// gorgonia graph per model), with method m (nil: plain), printing its
// progress with prefix; a non-zero searchStart stops it when the search's
// budget is spent.
func trainOne(o *options, ds *datasets.Dataset, k *layers.Kind, lr float64, p searchPlan, m fairness.Method, stderr io.Writer, prefix string, searchStart time.Time) (*fitted, candidate, error) {
	c := candidate{Kind: k.Name(), LR: lr}
	task, err := newTask(ds, o.model.Dtype)
	if err != nil {
		return nil, c, err
	}
	task.Sens = ds.Sens
	opts := o.model
	opts.Hidden = 0
	if k.HasHidden() {
		opts.Hidden = p.hidden
	}
	st := o.settings(k)
	st.Hidden = opts.Hidden
	cfg, err := st.Configure(ds.NumFeatures, ds.NumClasses(), opts)
	if err != nil {
		return nil, c, inputError{err}
	}
	tc := o.train
	tc.Adam.LR, tc.Epochs, tc.Patience = lr, p.epochs, patienceAt(p.patience, lr, p.epochs)
	begin := time.Now()
	last := time.Time{}
	tc.OnEpoch = func(st train.EpochStats) error {
		if !searchStart.IsZero() && time.Since(searchStart) >= p.budget {
			c.Cut = true
			return train.ErrStop
		}
		if o.quiet {
			return nil
		}
		now := time.Now()
		if st.Epoch != tc.Epochs && st.Epoch != 1 && now.Sub(last) < 2*time.Second {
			return nil
		}
		last = now
		el := now.Sub(begin)
		left := time.Duration(float64(el) / float64(st.Epoch) * float64(tc.Epochs-st.Epoch))
		upTo := ""
		if tc.Patience > 0 {
			upTo = "at most "
		}
		fmt.Fprintf(stderr, "%s%s lr %g epoch %d/%d  loss %.4f  val acc %.2f%%  val ΔDP %.2f%%  (%v, %sabout %v left)\n",
			prefix, k.Title(), lr, st.Epoch, tc.Epochs, st.Loss, 100*st.ValAcc, 100*st.ValDP, el.Round(time.Second), upTo, left.Round(time.Second))
		return nil
	}
	// The backbone, trained plainly or with -method (fairness.Fit: a
	// strategy's terms on the backbone itself, or FairGNN's and NIFTY's
	// encoder on it).
	setup := fairness.NewSetup(ds.Graph, task, ds.Sens)
	fit, err := fairness.Fit(o.ctx, m, cfg, setup, tc)
	if errors.Is(err, train.ErrUndefinedSelection) {
		return nil, c, badInput("-select %s: %v", tc.Select.Word(), err)
	}
	if err != nil {
		var ie inputError
		if m != nil && !errors.As(err, &ie) {
			return nil, c, fmt.Errorf("training %s with -method %s: %w", k.Name(), m.Name(), err)
		}
		return nil, c, fmt.Errorf("training %s: %w", k.Name(), err)
	}
	res := fit.Result
	kept := res.Best
	if tc.Select == train.SelectLast {
		kept = res.Last
	}
	c.EpochsRun, c.Seconds = res.Epochs, time.Since(begin).Seconds()
	c.BestEpoch, c.ValAcc, c.ValAUC, c.ValLoss = kept.Epoch, kept.ValAcc, kept.ValAUC, kept.ValLoss
	return &fitted{fit: fit, task: task, kind: k, lr: lr}, c, nil
}

// patienceAt is the early-stopping patience in epochs at learning rate
// lr: patience/lr, 0 (none) when that reaches the epochs or patience is 0.
func patienceAt(patience, lr float64, epochs int) int {
	e := int(math.Round(patience / lr))
	if patience == 0 || e >= epochs {
		return 0
	}
	return e
}

// belowMajorityAdvice is what to do when a model of the command is no
// better than predicting the more frequent class, in the command's
// flags: let the search choose what was fixed, or, when it chose
// everything, look at the data.
func belowMajorityAdvice(o *options, s *searchRecord) string {
	var fixed []string
	for _, f := range []string{"backbone", "lr", "epochs"} {
		if o.set[f] {
			fixed = append(fixed, "-"+f)
		}
	}
	switch {
	case o.search.budget == 0:
		return "the backbone has not learnt the task: leave out -search-budget 0 (and " + andList([]string{"-backbone", "-lr", "-epochs"}) + ") so that the command chooses the backbone, its learning rate and its epochs on validation; then check the labels and the features"
	case len(fixed) > 0:
		return "the backbone has not learnt the task: leave out " + andList(fixed) + " so that the backbone search chooses " + map[bool]string{true: "it", false: "them"}[len(fixed) == 1] + " on validation too; then check the labels and the features"
	case s != nil && s.cut():
		return "the backbone search was cut by -search-budget " + o.search.budget.String() + ": raise it; then check the labels and the features"
	}
	return "no backbone of the search (" + o.search.describe() + ") did better on validation: the features and the graph may not predict the label; check -label and the features (-drop, -categorical)"
}

// selectionName says in words which epoch -select keeps (metrics.json's
// settings.selection).
func selectionName(sel train.Selection) string {
	switch sel {
	case train.SelectValAUC:
		return "best validation AUC"
	case train.SelectValLoss:
		return "lowest validation loss"
	case train.SelectLast:
		return "last epoch"
	}
	return "best validation accuracy"
}

// score is the candidate's value of the -select criterion, higher
// better: the search keeps the highest (the kept epoch's validation
// accuracy for acc and last).
func (c candidate) score(sel train.Selection) float64 {
	switch sel {
	case train.SelectValAUC:
		return c.ValAUC
	case train.SelectValLoss:
		return -c.ValLoss
	}
	return c.ValAcc
}

// kept describes the kept epoch's validation numbers, the -select
// criterion's first.
func (c candidate) kept(sel train.Selection) string {
	switch sel {
	case train.SelectValAUC:
		return fmt.Sprintf("validation AUC %.4f (accuracy %.2f%%)", c.ValAUC, 100*c.ValAcc)
	case train.SelectValLoss:
		return fmt.Sprintf("validation loss %.4f (accuracy %.2f%%)", c.ValLoss, 100*c.ValAcc)
	}
	return fmt.Sprintf("validation accuracy %.2f%%", 100*c.ValAcc)
}
