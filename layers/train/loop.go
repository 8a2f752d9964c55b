package train

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Selection is the criterion that chooses the epoch whose parameters a
// training run keeps ([Config].Select), and the best epoch that Patience
// counts from.
type Selection int

const (
	// SelectBestVal keeps the epoch with the highest validation accuracy
	// (the first such epoch on ties). The default.
	SelectBestVal Selection = iota
	// SelectLast keeps the parameters after the last epoch. The best
	// epoch reported (Result.Best) and the one Patience counts from are
	// still the highest validation accuracy's.
	SelectLast
	// SelectValAUC keeps the epoch with the highest validation ROC AUC
	// (EpochStats.ValAUC: class 1's for two classes, the macro
	// one-vs-rest AUC for more). Training refuses it when a class has no
	// validation node (the AUC is undefined).
	SelectValAUC
	// SelectValLoss keeps the epoch with the lowest validation
	// cross-entropy (EpochStats.ValLoss).
	SelectValLoss
	// SelectCustom keeps the epoch with the highest Config.Criterion: a
	// method's own rule.
	SelectCustom
)

// selections lists every Selection with its command-line word (the
// words debias' -select takes) and its String.
var selections = []struct {
	s          Selection
	word, name string
}{
	{SelectBestVal, "acc", "best-val"},
	{SelectValAUC, "auc", "val-auc"},
	{SelectValLoss, "loss", "val-loss"},
	{SelectLast, "last", "last"},
	{SelectCustom, "custom", "custom"},
}

// String returns "best-val" (validation accuracy), "last", "val-auc",
// "val-loss" or "custom".
func (s Selection) String() string {
	for _, e := range selections {
		if e.s == s {
			return e.name
		}
	}
	return fmt.Sprintf("Selection(%d)", int(s))
}

// Word returns the selection's word of SelectionWords ("custom" for
// SelectCustom).
func (s Selection) Word() string {
	for _, e := range selections {
		if e.s == s {
			return e.word
		}
	}
	return s.String()
}

// SelectionWords returns the words ParseSelection takes for the
// selections a command can offer: acc, auc, loss, last (not custom,
// which needs a Config.Criterion).
func SelectionWords() []string {
	var out []string
	for _, e := range selections {
		if e.s != SelectCustom {
			out = append(out, e.word)
		}
	}
	return out
}

// ParseSelection returns the Selection of a word of SelectionWords (or
// of a Selection's String). It returns an error naming the choices for
// any other word.
func ParseSelection(word string) (Selection, error) {
	for _, e := range selections {
		if e.s != SelectCustom && (word == e.word || word == e.name) {
			return e.s, nil
		}
	}
	return 0, fmt.Errorf("selection %q, want one of %s", word, strings.Join(SelectionWords(), ", "))
}

// NeedsAUC reports whether the selection reads EpochStats.ValAUC
// (SelectValAUC, and SelectCustom, whose Criterion may): the trainers
// compute the AUC only then, since it sorts the validation nodes every
// epoch (measured: 3.5 ms on 5,000 validation nodes, 0.19 s on 250,000,
// on 2 shared cores).
func (s Selection) NeedsAUC() bool { return s == SelectValAUC || s == SelectCustom }

// validateSelection checks Select and Criterion against each other.
func (c Config) validateSelection() error {
	switch c.Select {
	case SelectBestVal, SelectLast, SelectValAUC, SelectValLoss:
		if c.Criterion != nil {
			return fmt.Errorf("Criterion is set and Select is %v: set Select to SelectCustom to select by it, or leave Criterion nil", c.Select)
		}
		return nil
	case SelectCustom:
		if c.Criterion == nil {
			return fmt.Errorf("Select is SelectCustom and Criterion is nil: set Criterion (higher is better)")
		}
		return nil
	}
	return fmt.Errorf("Select = %d, want SelectBestVal (validation accuracy), SelectValAUC, SelectValLoss, SelectLast or SelectCustom", int(c.Select))
}

// score returns the value the criterion maximises: the validation
// accuracy (also for SelectLast, whose best epoch is reported and counted
// from), the AUC, minus the loss, or Criterion's value.
func (c Config) score(st EpochStats) float64 {
	switch c.Select {
	case SelectValAUC:
		return st.ValAUC
	case SelectValLoss:
		return -st.ValLoss
	case SelectCustom:
		return c.Criterion(st)
	}
	return st.ValAcc
}

// ErrUndefinedSelection is returned when the selection criterion is
// undefined on the task (SelectValAUC with a class that no validation node
// has).
var ErrUndefinedSelection = errors.New("train: the selection criterion is undefined on this task")

// checkSelection returns ErrUndefinedSelection (wrapped, saying why) when
// cfg selects by validation AUC and a class has no node in val.
func checkSelection(cfg Config, labels, val []int, classes int) error {
	if cfg.Select != SelectValAUC || len(val) == 0 {
		return nil
	}
	count := make([]int, classes)
	for _, i := range val {
		if y := labels[i]; y >= 0 && y < classes {
			count[y]++
		}
	}
	for k, n := range count {
		if n == 0 {
			return fmt.Errorf("%w: selection by validation AUC, and none of the %d validation nodes is of class %d (the AUC needs every class): select by accuracy, loss or the last epoch, or give a split with every class among the validation nodes",
				ErrUndefinedSelection, len(val), k)
		}
	}
	return nil
}

// Loop is the epoch loop of every trainer in the library: Fit,
// minibatch.Fit and the fairness methods that run steps of their own
// (FairVGNN). Epoch runs the training; Run keeps the best epoch's
// parameters by Config.Select, stops early (Patience, SelectAfter, OnEpoch
// returning ErrStop), prints the progress lines (LogEvery) and leaves the
// selected parameters in Params.
type Loop struct {
	// Epoch runs epoch e (1-based, in order): its training steps and the
	// evaluation pass. An error aborts the run, returned as it is.
	Epoch func(e int) (EpochStats, error)
	// Params are the parameters trained (the model's learnables, or the
	// masters a trainer updates): the values kept at the best epoch and
	// restored at the end are theirs.
	Params G.Nodes
	// Labels, Val and Classes are the task's: the labels, the validation
	// nodes (none: every epoch after SelectAfter is the best) and the
	// number of classes. Run checks that the criterion is defined on them.
	Labels, Val []int
	Classes     int
}

// Run runs cfg.Epochs epochs (fewer after early stopping or ErrStop) and
// returns the run's report. At the end Params hold the selected epoch's
// parameters: the best epoch's by cfg.Select, or the last epoch's for
// SelectLast. It returns ErrUndefinedSelection for a criterion undefined
// on the task, Epoch's errors as they are, and OnEpoch's errors other than
// ErrStop as "epoch E: OnEpoch: ...". cfg must be valid (Config.Validate).
//
// Run checks ctx before every epoch: once ctx is cancelled or past its
// deadline it returns an error wrapping ctx.Err() ("before epoch E: ..."),
// and Params hold the last epoch's parameters. An Epoch that runs long
// (mini-batches) checks ctx itself between its steps.
func (l *Loop) Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := checkSelection(cfg, l.Labels, l.Val, l.Classes); err != nil {
		return nil, err
	}
	res := &Result{Selected: cfg.Select, History: make([]EpochStats, 0, cfg.Epochs)}
	res.BestParams = snapshot(l.Params)
	best := math.Inf(-1)
	for epoch := 1; epoch <= cfg.Epochs; epoch++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("before epoch %d: %w", epoch, err)
		}
		st, err := l.Epoch(epoch)
		if err != nil {
			return nil, err
		}
		if epoch > cfg.SelectAfter {
			if len(l.Val) == 0 {
				st.Best = true
			} else if v := cfg.score(st); v > best {
				best, st.Best = v, true
			}
			if st.Best {
				res.Best = st
				copyParams(res.BestParams, l.Params)
			}
		}
		res.Last = st
		res.Epochs = epoch
		res.History = append(res.History, st)
		if cfg.LogEvery > 0 && (epoch%cfg.LogEvery == 0 || epoch == cfg.Epochs) {
			progress(cfg.Log, cfg.Select, st, res.Best)
		}
		if cfg.OnEpoch != nil {
			if err := cfg.OnEpoch(st); err != nil {
				if errors.Is(err, ErrStop) {
					res.Stopped = true
					break
				}
				return nil, fmt.Errorf("epoch %d: OnEpoch: %w", epoch, err)
			}
		}
		if cfg.Patience > 0 && epoch > cfg.SelectAfter && epoch-max(res.Best.Epoch, cfg.SelectAfter) >= cfg.Patience {
			res.Stopped = true
			break
		}
	}
	res.LastParams = snapshot(l.Params)
	if res.Best.Epoch == 0 {
		// Stopped (ErrStop) before the first epoch after SelectAfter, or
		// no epoch had a comparable criterion (NaN).
		res.Best = res.Last
		copyParams(res.BestParams, l.Params)
	}
	if cfg.Select != SelectLast {
		for i, p := range l.Params {
			copyData(p.Value().(*tensor.Dense), res.BestParams[i])
		}
	}
	return res, nil
}

// progress prints one progress line: the epoch's loss and accuracies, and
// the selection criterion's best value so far and its epoch.
func progress(w io.Writer, sel Selection, st, best EpochStats) {
	fmt.Fprintf(w, "epoch %4d  loss %.4f  train %6.2f%%  val %6.2f%%", st.Epoch, st.Loss, 100*st.TrainAcc, 100*st.ValAcc)
	switch sel {
	case SelectValAUC:
		fmt.Fprintf(w, "  val AUC %.4f  best %.4f @ %d\n", st.ValAUC, best.ValAUC, best.Epoch)
	case SelectValLoss:
		fmt.Fprintf(w, "  val loss %.4f  best %.4f @ %d\n", st.ValLoss, best.ValLoss, best.Epoch)
	case SelectCustom:
		fmt.Fprintf(w, "  best (criterion) @ %d\n", best.Epoch)
	default:
		fmt.Fprintf(w, "  best %6.2f%% @ %d\n", 100*best.ValAcc, best.Epoch)
	}
}
