// Command debias takes a graph (your own node table and edge list, or a
// preset data set), trains a GNN backbone on it, debiases the backbone
// with FMP (its setting chosen on validation data by a rule you give) and
// with per-group thresholds, and writes what it found: metrics overall
// and per group, a prediction per node for each method, the
// accuracy/fairness frontier as CSV and SVG, and the debiased model.
//
// The rule judges one fairness criterion (-criterion: dp, dp-ratio, eo,
// eo-ratio, eodds, eodds-ratio, fpr, fpr-ratio, as fairlearn defines
// them): the fairest value within -max-acc-loss accuracy points of the
// backbone, or the most accurate within -bound (-criterion dp-ratio
// -bound 0.8 is the four-fifths rule). The per-group thresholds take the
// same criterion as their constraint, deterministic or -randomize'd.
// Groups are the values of the -sens column, or the intersections of
// several (-sens a,b); groups with fewer than -min-group labelled nodes
// are refused, or merged into one group "other" with -merge-small.
//
// Usage:
//
//	go run ./examples/debias -nodes people.csv -edges links.csv -id name \
//	    -label outcome -sens region -out results
//	go run ./examples/debias -dataset bail -data $FAIRMP_DATA -out results/bail
//	go run ./examples/debias -nodes people.csv -edges links.csv -id name \
//	    -label outcome -sens region -model results/model.fmp -out results/again
//
// The file format is documented in package graph/datasets ("Your own
// files") and in the README ("Your own data"): CSV, TSV or Parquet
// (-nodes-format, -edges-format; by default by the .parquet extension),
// rows in any integral notation (numpy.savetxt's 8.38e+02), columns of
// categories one-hot encoded (-categorical, -max-levels), labels whose
// positive class is named unless 0/1, false/true or no/yes (-positive),
// whose count is checked (-classes) and whose spellings must agree
// (-fold-case). Run with -h for every flag.
//
// Scores from another framework replace training: -scores FILE
// -scores-kind logits|probs, a CSV (rows matched by -scores-id COL, or in
// the node table's order) or a .npy file (float32 or float64, one row per
// node); one column per class, or one column (class 1) for two classes.
// The outputs are the same but for the model file, which the scores'
// framework keeps.
//
// Output (-out DIR; written to a temporary folder beside DIR and renamed
// at the end, so a failed run leaves nothing behind; an existing DIR is
// refused unless -overwrite):
//
//	.debias-output   the marker: the files below that this run wrote
//	metrics.json     the data, the settings, and for each method
//	                 (backbone, fmp, thresholds) the validation and test
//	                 metrics, overall and by group
//	predictions.csv  per node: id, group, label, split, and for each method
//	                 the probability of class 1 and the decision
//	frontier.csv     every FMP setting tried: validation and test accuracy,
//	                 ΔDP and the rule's criterion, the chosen one marked
//	frontier.svg     the same as a plot (accuracy against the criterion),
//	                 with the backbone, the thresholds, the chosen point,
//	                 the rule and the majority-class accuracy
//	groups.svg       each group's selection rate, TPR and FPR on the test
//	                 nodes with 95% Wilson intervals, per method (binary
//	                 tasks); "n/a" where a rate is undefined
//	report.html      one self-contained page (no script, nothing fetched):
//	                 data, groups and base rates, the table with intervals
//	                 and marks, warnings with advice, both figures, settings
//	model.fmp        the debiased model (fmp/modelio format), with its
//	                 feature schema, FMP's fitted duals and its decisions'
//	                 baseline on the validation nodes (for drift)
//
// What -overwrite may replace: a folder this command wrote, that is one
// holding its .debias-output marker and nothing but the files the marker
// lists (a file you added there is not the command's to delete), or an
// empty folder; anything else is refused (exit status 2) naming the
// folder and the file that stops it (results folders written before the
// marker existed included: move them away yourself). -out and -export may never be, or
// hold, an input (-nodes, -edges, -split, -model, -scores, -data) or the
// current folder; paths are compared with their symbolic links followed
// and ".." applied, so a symlinked spelling of the input folder is
// refused too. Where the system has no atomic exchange of two folders
// (outside Linux), the old folder is renamed aside, the new one in, and
// the old one removed only then; a run killed between the two renames
// leaves the old folder as .DIR.old-<pid>-<n>, which the next run renames
// back to DIR before it stops to say so. If DIR appears while the command
// runs, the results are kept in DIR.kept-<n> beside it (no later run
// removes that folder) and the exit status is 4.
//
// -export DIR writes nodes.csv and edges.csv (and the marker) the same
// way: a new folder put in place whole, an existing one replaced only
// with -overwrite under the rule above, never one holding an input.
//
// With -model FILE the command trains nothing: it loads the model and
// writes metrics.json and predictions.csv for it. The graph may be the
// one the model was trained on or any other whose node table has the
// model's features (a grown graph, another region's): every node of it
// is scored, and a line on stderr says when the graph is not the saved
// one. For an fmp model, -fmp-scoring says what FMP means there: fitted
// (the default) applies the duals FMP chose on the training graph, kept
// in model.fmp, so that a node's score depends only on its neighbourhood
// and the old nodes keep theirs where it did not change; recompute runs
// FMP again over this graph, the new nodes included, and every score may
// move (examples/paper/deploy measures both). A file saved before the
// duals were kept is recomputed, with a warning.
//
// The model file knows the nodes it was trained on by id (its node
// record: each -id value as an 8-byte SHA-256 key with its part of the
// split, 9 bytes a node, 9 MB at 1M nodes; by row number when trained
// without -id), so the table's rows may come in any order. -model needs
// -id when the file knows its nodes by id. Every figure of a -model run
// is on the saved split, whatever -split or -split-column say: the test
// columns cover only labelled nodes the model never trained or chose on
// (the new nodes, and saved nodes whose labels it never used: its test
// split and nodes in none), the val columns the saved validation nodes,
// and the table says which. predictions.csv's "split" column says the
// same, and its column "seen" is yes for the nodes the model was
// trained on, no for the others, empty when that cannot be told (a file
// saved before the node record, whose first rows are not the saved
// graph; said on stderr). metrics.json gains a "drift" section: the new
// nodes' (else every node's) per-group selection rates, their true- and
// false-positive rates where labels are known, each criterion, each
// group's share of the nodes (the group mix, labels or not), and each
// feature against its range and distribution on the training graph
// (PSI over deciles), against what the model file recorded, with
// intervals; what left its interval is said on stderr, as a
// warning when the two intervals do not overlap. -same-graph refuses
// another graph; on the saved graph another -sens is refused either way. The whole file is
// verified (its checksum, its configuration against its parameters)
// before anything in it is used: a damaged file is reported as corrupt.
// A file that records no feature schema (modelio.Save writes none; the
// model.fmp debias writes has one) is read by column position, with a
// warning: nothing can check the columns' order then. A file without the
// sensitive attribute's fingerprint (a model that uses none) loads with a
// warning that -sens cannot be checked. A model whose outputs are NaN or
// ±Inf on the input is refused (exit 2).
//
// -trusted-keys FILE[,FILE...] loads -model only if it is signed by one
// of the keys: an unsigned file, or one whose signature is by another
// key or is damaged, is refused (exit 2). A key file holds one ed25519
// public key as 64 hexadecimal digits (white space around it ignored).
// The command does not sign the model it writes; make a key pair and sign
// a model with package modelio:
//
//	pub, priv, err := ed25519.GenerateKey(rand.Reader)
//	// keep priv secret; publish the key file:
//	err = os.WriteFile("trusted.pub", []byte(hex.EncodeToString(pub)+"\n"), 0o644)
//	// sign: write the model with the private key
//	err = modelio.Save(w, m, modelio.SaveConfig{Features: &schema, SigningKey: priv})
//
// -protocol NAME (nifty, fairgnn, fairvgnn, edits, fmp) sets the flags of
// a reference repository's training protocol that are not given
// (-backbone with the fields of its configuration the protocol fixes,
// -hidden, -epochs, -lr, -weight-decay, -dropout, -select, -include-sens,
// -no-scale, -train-labels); nothing is searched then. -h lists the
// presets (package internal/protocol).
//
// -compare METHODS -seeds N replaces the one run: on each seed from
// -seed it trains the backbone and runs each method (FMP and the
// thresholds on that backbone, a trained method on the same kind, a
// pre-processing method's backbone on its data), and writes the table of
// method − backbone (accuracy, AUC, ΔDP, ΔEO; paired bootstrap
// intervals, resolved where they exclude 0; FMP's decomposition as rows;
// package internal/paired) to stdout and to -out as compare.md,
// compare.csv and compare_runs.csv.
//
// The backbone: unless -backbone, -lr and -epochs are all given, the
// ones left out are chosen on the validation nodes (gcn, sgc, mlp × lr
// 0.01, 0.001, up to 1000 epochs with early stopping, within
// -search-budget; see the README), and what was tried is printed and
// recorded in metrics.json.
//
// Exit status: 0 on success; 2 for bad input (a flag, a file, a model
// file for another graph, a folder -overwrite may not replace; one line
// naming the flag or file:line:column), nothing written; 1 for a failure
// while running, nothing written; 3 when no FMP setting (or no
// thresholds) met the rule: every output is written all the same, FMP's
// row is then its reference (λs 0, λf 0: the backbone), frontier.csv and
// frontier.svg show what each setting reaches, and a rule-not-met warning
// (metrics.json "diagnostics") names the most accurate and the fairest
// settings found; 4 when -out appeared while the command ran: every
// output is written, to the DIR.kept-<n> folder the message names; 5
// when every debiased result (FMP's and the thresholds') selects every
// node or none, so that its parity means nothing: every output is
// written, the rows are marked "trivial" (the table's marks column,
// metrics.json "marks"), and the warnings say what to change; 6 when
// every debiased result is not above the majority rate: the low end of
// its test accuracy's 95% bootstrap interval (or, without test nodes,
// its validation accuracy) is at or below the accuracy of predicting the
// more frequent class for every node (diagnose.NotAboveMajority), so
// that the test nodes do not show it to beat a constant; every output is
// written and the rows are marked "not above the majority rate" with the
// numbers compared. When several apply, 5 comes before 6, and 6 before 3.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/fairmp/fairmp/internal/blas"
)

func main() {
	blas.Default() // fairmp's BLAS before any graph runs (see internal/blas)
	// Ctrl-C stops a training, a frontier or a scoring at its next
	// epoch, setting or stage, with exit status 1 and nothing half
	// written (outputs are written atomically at the end).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// inputError marks an error caused by the command's input (flags, files,
// a model file): exit status 2.
type inputError struct{ err error }

func (e inputError) Error() string { return e.err.Error() }
func (e inputError) Unwrap() error { return e.err }

func badInput(format string, args ...any) error {
	return inputError{fmt.Errorf(format, args...)}
}

// run is the command; it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err == nil {
		o.ctx = ctx
		err = execute(o, stdout, stderr)
	}
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "debias:", err)
	var ie inputError
	if errors.As(err, &ie) {
		return 2
	}
	if errors.As(err, &ruleNotMet{}) {
		return 3
	}
	if errors.As(err, &keptError{}) {
		return 4
	}
	if errors.As(err, &allTrivial{}) {
		return 5
	}
	if errors.As(err, &notAboveMajority{}) {
		return 6
	}
	return 1
}
