package main

import (
	"context"
	"crypto/ed25519"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/fairmp/fairmp/metrics/selection"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/fmp/score"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/internal/cli"
	"github.com/fairmp/fairmp/internal/protocol"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/fairness"

	// The registry lists the methods of the packages imported: fairtrain
	// registers the in-training and architecture methods (preprocess,
	// postprocess and fmp are imported for their own use too).
	_ "github.com/fairmp/fairmp/layers/fairtrain"
	"github.com/fairmp/fairmp/layers/postprocess"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/fairmp/fairmp/metrics"
)

type options struct {
	// ctx stops the run's training, frontier and scoring (the command's
	// Ctrl-C).
	ctx context.Context
	// Input: files or a preset.
	files         datasets.FilesConfig
	dataset, data string
	synthN        int
	// Model and training.
	backbone string          // the -backbone kind's name
	kind     *layers.Kind    // its declaration
	model    layers.Options  // -hidden, -dtype, -seed
	train    train.Config    // -epochs, -lr, -weight-decay
	search   searchPlan      // what -backbone, -lr and -epochs leave to choose (-search-budget)
	set      map[string]bool // the flags given
	method   fairness.Method // -method of the in-training or architecture stage (nil: plain training), with -method-weight
	pre      fairness.Pre    // -method naming a pre-processing method (nil: none)
	// protocol is -protocol's preset name ("": none); overrides the
	// fields of the backbone's configuration it fixes (with its own
	// backbone alone), dropout -dropout (NaN: the backbone's own),
	// trainLabels -train-labels (0: every training node) and noScale
	// -no-scale.
	protocol    string
	overrides   map[string]any
	dropout     float64
	trainLabels int
	noScale     bool
	// compare lists -compare's methods (nil: no comparison), run on
	// -seeds seeds from -seed.
	compare []string
	seeds   int
	// degreeGroups, when > 0, makes the groups that many degree groups
	// instead of the sensitive attribute (-degree-groups).
	degreeGroups int
	// Debiasing.
	lambdaF, lambdaS []float64
	fmp              fmp.Config
	rule             selection.Rule
	// Per-group thresholds.
	randomize bool
	objective postprocess.Objective
	// Output.
	out, modelFile string
	trustedKeys    []ed25519.PublicKey // -trusted-keys
	trustedFiles   string
	sameGraph      bool // -same-graph
	trustColumns   bool // -trust-column-order
	fmpScoring     score.Semantics
	scores         scoresOptions
	export         string
	overwrite      bool
	quiet          bool
	// flagsUsed are the flags given on the command line, by name, with
	// their values (for report.html).
	flagsUsed [][2]string
}

// defaultBackbone is the backbone trained when -backbone is not given and
// nothing is searched (-search-budget 0).
const defaultBackbone = "gcn"

// floatList writes numbers as "a, b and c".
func floatList(v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprintf("%g", x)
	}
	return andList(s)
}

// backbones lists the kinds -backbone takes: every declared kind that
// is built from a configuration (not a wrapper such as fmp).
func backbones() []string {
	var out []string
	for _, k := range layers.Kinds() {
		if !k.Wraps() && !k.Composite() {
			out = append(out, k.Name())
		}
	}
	return out
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("debias", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `debias trains a GNN on a graph, debiases it with FMP and with per-group
thresholds (both chosen on validation nodes by one rule on one fairness
-criterion), and writes metrics, predictions, the frontier (CSV and SVG)
and the model to -out.

  debias -nodes FILE -edges FILE -label COL -sens COL[,COL...] [-id COL] -out DIR [flags]
  debias -dataset bail|credit|nba|german|pokec_z|pokec_n|synthetic [-data DIR] -out DIR [flags]
  debias (the same input flags) -model FILE -out DIR

The node table is CSV or TSV with a header, or Parquet; every column but
the id, label, sensitive, split and -drop columns is a numeric feature
(-categorical ones are one-hot encoded). The edge list holds two node ids
(or 0-based rows without -id, in any integral notation) per line or per
Parquet row. -scores FILE debiases another model's per-node scores
instead of training. The full format: go doc
github.com/fairmp/fairmp/graph/datasets.

Exit status 2 for bad input and 1 for a failure (nothing written either
way); 3 when no setting met the rule (everything written, the backbone
kept as FMP's answer); 4 when -out appeared while the command ran (the
results written beside it, to the folder the message names); 5 when
every debiased row selects every node or none, 6 when none is above the
majority rate (everything written, the rows marked; 5 before 6 before 3).

-overwrite replaces only a folder this command wrote (it holds a
.debias-output file listing its files, and nothing else) or an empty one;
-out and -export never name an input's folder, its parents, or the
current folder (symlinks and .. resolved).

-compare METHODS trains the backbone and each method on -seeds seeds and
writes each method's effect net of its backbone (method − backbone, paired
bootstrap intervals) to stdout and -out (compare.md, compare.csv,
compare_runs.csv) instead of the one-run outputs.

Flags:
`)
		fs.PrintDefaults()
		fmt.Fprintf(stderr, "\n-protocol presets (every flag they set can be given to override it):\n%s", protocol.Help())
	}
	def := datasets.DefaultFilesConfig()
	tr := train.DefaultConfig()
	fdef := fmp.DefaultConfig()
	var (
		cats      = fs.String("categorical", "", "comma-separated columns of categories (text or numbers) to one-hot encode: a feature column per level, named column=level")
		maxLevels = fs.Int("max-levels", def.MaxLevels, "most levels a -categorical column may have")
		comma     = fs.String("comma", "", "node table delimiter: comma, tab, semicolon or pipe (default: tab for .tsv/.tab or a header with tabs, else comma)")
		noScale   = fs.Bool(protocol.FlagNoScale, false, "keep the features as they are, each value within ±1.84e19 for -dtype float32 and ±1.34e154 for float64, whose squares are finite (default: min-max scale each to [-1, 1]; a preset's own scaling, pokec_z and pokec_n none)")
		proto     = fs.String("protocol", "", "a reference repository's training protocol, which sets -backbone (and its fields), -hidden, -epochs, -lr, -weight-decay, -dropout, -select, -include-sens, -no-scale and -train-labels unless given, with no backbone search: "+strings.Join(protocol.Names(), ", ")+" (-h lists what each sets)")
		dropout   = fs.String(protocol.FlagDropout, "", "dropout of the backbone, for a kind that has one (default: the kind's own, 0.5 for gcn; the search tries only kinds that have one)")
		compare   = fs.String("compare", "", "comma-separated methods to compare with their backbone instead of one run: fmp, thresholds, "+strings.Join(compareTrained(), ", ")+" (FMP and the thresholds post-process the backbone of the same seed, the others train the -backbone kind; with -seeds; see above)")
		fracs     = fs.String("split-fractions", "0.5,0.25,0.25", "train,val,test fractions of the labelled nodes, when there is no split file or column")
		seed      = fs.Int64("seed", 1, "seed of the model (initialisation, dropout) and of the random split")
		hidden    = fs.Int("hidden", 64, "hidden width (GAT: heads × per-head width, 4 × 16 by default; SGC has none)")
		dtype     = fs.String("dtype", "float32", "float32 or float64 (float32 took the same decisions as float64 on Bail, Credit and the generated graph, in about half the time; the library's layers default to float64)")
		lambdaF   = fs.String("lambda-f", "", "FMP λf values to try, comma-separated (default: 20 values from 0 to 16)")
		lambdaS   = fs.String("lambda-s", "0,1", "FMP λs values to try, comma-separated (0: no extra propagation)")
		criterion = fs.String("criterion", "dp", "fairness criterion the rule judges: "+strings.Join(metrics.CriterionNames(), ", ")+" (fairlearn's definitions; differences: lower is fairer, ratios: higher)")
		maxLoss   = fs.Float64("max-acc-loss", 1, "rule: the fairest validation -criterion within this many accuracy points of the backbone's")
		bound     = fs.Float64("bound", 0, "rule instead: the highest validation accuracy whose -criterion meets this bound: for a difference, at most this many points (5); for a ratio, at least this ratio (0.8, the four-fifths rule)")
		randomize = fs.Bool("randomize", false, "per-group thresholds mix two thresholds per group, drawing decisions with -seed (fairlearn's ThresholdOptimizer): they meet the rule exactly where single thresholds cannot")
		objective = fs.String("objective", "accuracy", "what the per-group thresholds maximise: accuracy or balanced-accuracy")
		minGroup  = fs.Int("min-group", 20, "smallest number of labelled nodes a sensitive group may have (0: no minimum); smaller groups are refused, or merged with -merge-small")
		merge     = fs.Bool("merge-small", false, "merge the sensitive groups below -min-group into one group \"other\" instead of refusing them")
		// -backbone, -lr and -epochs have no default of the flag package's:
		// their help says the one that applies (the search's, or with
		// -search-budget 0 the library's), filled in below when not given.
		backbone  = fs.String("backbone", "", "backbone: "+strings.Join(backbones(), ", ")+" (default: chosen on validation among "+strings.Join(searchKinds, ", ")+"; "+defaultBackbone+" with -search-budget 0)")
		budget    = fs.Duration("search-budget", defaultSearchBudget, "time the backbone search may take: unless -backbone, -lr and -epochs are all given, the ones left out are chosen on validation (0: no search: the flags given, "+defaultBackbone+", lr "+fmt.Sprint(tr.Adam.LR)+" and "+fmt.Sprint(tr.Epochs)+" epochs for those left out)")
		method    = fs.String("method", "", "a fairness method besides FMP and the post-processing every run applies: train the backbone with an in-training method ("+strings.Join(fairness.Names(fairness.StageLoss), ", ")+") or train one of the architectures ("+strings.Join(methodArchitectures(), ", ")+"); or debias the graph and features before training: "+strings.Join(fairness.Names(fairness.StagePre), ", ")+" (EDITS, from the training nodes' two groups: the backbone, FMP and the thresholds then use its graph and features) (default: plain training)")
		weight    = fs.Float64("method-weight", 0, "the -method's weight (regularizer, adversary, mixup: α; fairgnn: β, the adversary's; nifty: λ, the fairness-and-stability term's; rawlsgcn: 1, or 0 for plain training); default: the method's own")
		dataFlags = fs.Bool("include-sens", false, "keep the sensitive column among the features (as its group id)")
	)
	t := cli.NodeTable{SeveralSens: true}
	t.Register(fs, def)
	fs.StringVar(&o.files.NodesFormat, "nodes-format", "", "node table format: csv or parquet (default: parquet for names ending in .parquet, else csv)")
	fs.StringVar(&o.files.EdgesFormat, "edges-format", "", "edge list format: csv (text lines) or parquet (default: parquet for names ending in .parquet, else csv)")
	fs.StringVar(&o.files.Split, "split", "", "split file {\"train\": [...], \"val\": [...], \"test\": [...]} of 0-based rows (optional)")
	fs.IntVar(&o.trainLabels, protocol.FlagTrainLabels, 0, "keep this many of the split's training nodes, half of each class where it has them, drawn with seed 20 whatever -seed (the reference codes' label_number: NIFTY 100 on Bail, 6000 on Credit); 0 keeps them all")
	fs.IntVar(&o.seeds, "seeds", 5, "with -compare: seeds -seed, -seed+1, ... each method and its backbone run on")
	fs.IntVar(&o.degreeGroups, "degree-groups", 0, "make the groups N groups of nodes by degree (quantiles of the labelled nodes' degrees, nodes of one degree together; RawlsGCN's degree fairness) instead of the sensitive attribute, for FMP, the thresholds, every criterion and the intervals; -sens is still read (a feature with -include-sens); 0: the sensitive attribute")
	fs.StringVar(&o.dataset, "dataset", "", "a preset instead of files: "+strings.Join(datasets.Presets, ", ")+", or synthetic (generated)")
	fs.StringVar(&o.data, "data", os.Getenv("FAIRMP_DATA"), "folder of the presets' folders (default $FAIRMP_DATA)")
	fs.IntVar(&o.synthN, "synthetic-nodes", 2000, "nodes of the generated graph (-dataset synthetic)")
	o.train = tr
	fs.IntVar(&o.train.Epochs, "epochs", 0, fmt.Sprintf("training epochs, the epoch best by -select kept (default: up to %d, stopped after %g/lr epochs without a better one by -select; %d with -search-budget 0)", searchEpochs, searchPatience, tr.Epochs))
	fs.Float64Var(&o.train.Adam.LR, "lr", 0, fmt.Sprintf("Adam learning rate (default: chosen on validation among %s; %g with -search-budget 0)", floatList(searchLRs), tr.Adam.LR))
	fs.Float64Var(&o.train.Adam.WeightDecay, "weight-decay", tr.Adam.WeightDecay, "Adam weight decay")
	// -select: the training loop's selection criterion (train.Config.Select).
	selection := fs.String("select", "acc", "the epoch whose parameters are kept, and the best epoch early stopping counts from: "+
		"acc (highest validation accuracy), auc (highest validation ROC AUC from the scores; the macro one-vs-rest AUC with 3+ classes; refused when a class has no validation node), "+
		"loss (lowest validation cross-entropy) or last (the last epoch; early stopping then counts from the highest validation accuracy); the backbone search compares its candidates by it too")
	fs.IntVar(&o.fmp.K, "k", fdef.K, "FMP unrolled steps K")
	fs.Float64Var(&o.fmp.Temperature, "tau", fdef.Temperature, "FMP temperature τ")
	fs.StringVar(&o.out, "out", "", "output folder (required; must not exist unless -overwrite)")
	fs.BoolVar(&o.overwrite, "overwrite", false, "replace -out (or -export) if it exists and is this command's (its .debias-output file lists every file in it) or empty; only once the new results are complete")
	fs.StringVar(&o.modelFile, "model", "", "predict with this saved model instead of training")
	fs.BoolVar(&o.trustColumns, "trust-column-order", false, "with -model: score with a model file that records no feature schema (older files, modelio.Save's), whose columns are then read by position: you vouch that the node table's feature columns are in the order (and scaling) the model was trained with; without it such a file is refused (a file with its schema has its columns matched by name, and this changes nothing)")
	fs.BoolVar(&o.sameGraph, "same-graph", false, "with -model: refuse a graph other than the one the model was saved for, and another -sens (default: score any graph whose node table has the model's features: a grown graph, another region's)")
	scoring := fs.String("fmp-scoring", "fitted", "with -model on an fmp model: what FMP means for the nodes scored: fitted (the duals chosen on the training graph, kept in the model file; old nodes keep their scores, new ones are scored as if FMP had been fitted with them) or recompute (FMP run again over this whole graph: every score may move)")
	fs.StringVar(&o.trustedFiles, "trusted-keys", "", "with -model: load it only if it is signed by one of these ed25519 public keys (FILE[,FILE...], each 64 hex digits; see the README)")
	fs.StringVar(&o.scores.file, "scores", "", "debias another model's per-node scores instead of training: CSV (a header optional, one row per node) or .npy (float32/float64, one row per node in the node table's order); one column per class, or one column (class 1) for two classes")
	fs.StringVar(&o.scores.kind, "scores-kind", "", "what -scores holds: logits (real numbers before a softmax or sigmoid) or probs (probabilities); required with -scores")
	fs.StringVar(&o.scores.id, "scores-id", "", "column of a CSV -scores file holding node ids (the -id values, or 0-based rows); default: rows in the node table's order")
	fs.BoolVar(&o.quiet, "q", false, "no progress lines on stderr")
	fs.StringVar(&o.export, "export", "", "write the input graph as nodes.csv and edges.csv in the documented format to this new folder (put in place whole, as -out; an existing one only with -overwrite), and stop (a preset or -dataset synthetic becomes files you can edit)")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return nil, err
		}
		return nil, inputError{err}
	}
	if fs.NArg() > 0 {
		return nil, badInput("unexpected arguments %q (flags go before them? every input is a flag)", fs.Args())
	}
	// Input.
	files := t.Nodes != "" || t.Edges != ""
	switch {
	case files && o.dataset != "":
		return nil, badInput("-dataset %s and -nodes/-edges both given, want one input", o.dataset)
	case !files && o.dataset == "":
		return nil, badInput("no input: give -nodes and -edges (with -label and -sens), or -dataset")
	case files && (t.Nodes == "" || t.Edges == ""):
		return nil, badInput("-nodes and -edges go together, want both")
	case files && (t.Label == "" || t.Sens == ""):
		return nil, badInput("-label and -sens name the node table's label and sensitive columns, want both")
	case o.dataset != "" && o.dataset != "synthetic" && !slices.Contains(datasets.Presets, o.dataset):
		return nil, badInput("-dataset %q, want one of %s or synthetic", o.dataset, strings.Join(datasets.Presets, ", "))
	case o.dataset != "" && o.dataset != "synthetic" && o.data == "":
		return nil, badInput("-dataset %s needs -data or $FAIRMP_DATA", o.dataset)
	case o.dataset == "synthetic" && o.synthN < 50:
		return nil, badInput("-synthetic-nodes %d, want ≥ 50", o.synthN)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) {
		set[f.Name] = true
		o.flagsUsed = append(o.flagsUsed, [2]string{f.Name, f.Value.String()})
	})
	o.dropout = math.NaN()
	if *dropout != "" {
		v, err := strconv.ParseFloat(*dropout, 64)
		if err != nil || !(v >= 0 && v < 1) {
			return nil, badInput("-dropout %q, want a probability in [0, 1)", *dropout)
		}
		o.dropout = v
	}
	if *proto != "" {
		if err := o.applyProtocol(*proto, set, backbone, hidden, selection, dataFlags, noScale); err != nil {
			return nil, err
		}
	}
	o.noScale = *noScale
	if !set["backbone"] {
		*backbone = defaultBackbone
	}
	if !set["epochs"] {
		o.train.Epochs = tr.Epochs
	}
	if !set["lr"] {
		o.train.Adam.LR = tr.Adam.LR
	}
	// Groups, for files and presets alike.
	if *minGroup < 0 {
		return nil, badInput("-min-group %d, want ≥ 0 labelled nodes (0: no minimum)", *minGroup)
	}
	if *merge && *minGroup == 0 {
		return nil, badInput("-merge-small needs -min-group above 0: the size below which groups are merged")
	}
	o.files.Options = def.Options
	o.files.Options.MinGroupSize, o.files.Options.MergeSmallGroups = *minGroup, *merge
	// A preset reads -include-sens too (the files' loader below as well).
	o.files.Options.IncludeSens = *dataFlags
	if files {
		base := def
		base.Options = o.files.Options
		base.Split, base.NodesFormat, base.EdgesFormat = o.files.Split, o.files.NodesFormat, o.files.EdgesFormat
		var err error
		if o.files, err = t.Files(base); err != nil {
			return nil, inputError{err}
		}
		o.files.Categorical, o.files.MaxLevels = cli.SplitList(*cats), *maxLevels
		o.files.MinMaxScale = !*noScale
		o.files.Options.IncludeSens = *dataFlags
		o.files.Options.SplitSeed = *seed
		switch *comma {
		case "":
		case "comma", ",":
			o.files.Comma = ','
		case "tab", "\\t", "\t":
			o.files.Comma = '\t'
		case "semicolon", ";":
			o.files.Comma = ';'
		case "pipe", "|":
			o.files.Comma = '|'
		default:
			return nil, badInput("-comma %q, want comma, tab, semicolon or pipe", *comma)
		}
		f, err := cli.ParseFloats(*fracs, 0)
		if err != nil || len(f) != 3 {
			return nil, badInput("-split-fractions %q, want three numbers train,val,test", *fracs)
		}
		copy(o.files.Options.SplitFractions[:], f)
		if err := o.files.Validate(); err != nil {
			return nil, inFlags(inputError{err})
		}
	} else if t.Sens != "" {
		return nil, badInput("-sens %s is for -nodes/-edges; a -dataset preset has its own sensitive column", t.Sens)
	} else if f := setAmong(set, fileOnly); f != "" {
		return nil, badInput("%s is for -nodes/-edges; a -dataset preset reads its own columns", f)
	}
	if o.degreeGroups < 0 || o.degreeGroups == 1 {
		return nil, badInput("-degree-groups %d, want ≥ 2 degree groups, or 0 for the sensitive attribute's", o.degreeGroups)
	}
	// Model and training.
	k, err := layers.LookupKind(*backbone)
	if err != nil || k.Wraps() || k.Composite() {
		return nil, badInput("-backbone %q, want one of %s", *backbone, strings.Join(backbones(), ", "))
	}
	o.backbone, o.kind = *backbone, k
	if *method != "" {
		pre, m, err := methodFlag(*method)
		if err != nil {
			return nil, err
		}
		if set["method-weight"] {
			w, ok := m.(fairness.Weighted)
			if !ok {
				return nil, badInput("-method-weight %v: -method %s has no weight", *weight, *method)
			}
			m = w.WithWeight(*weight)
		}
		m = fairness.WithSeed(m, *seed)
		if err := m.Validate(); err != nil {
			return nil, badInput("-method %s -method-weight %v: %v", *method, *weight, err)
		}
		if pre {
			o.pre = m.(fairness.Pre)
		} else {
			o.method = m
		}
	} else if set["method-weight"] {
		return nil, badInput("-method-weight %v without -method: name the method it weighs", *weight)
	}
	o.model = layers.DefaultOptions()
	o.model.Seed = *seed
	switch {
	case *hidden < 1:
		return nil, badInput("-hidden %d, want ≥ 1", *hidden)
	case k.HasHidden():
		o.model.Hidden = *hidden
	case set["hidden"]:
		return nil, badInput("-hidden %d: the %s backbone has no hidden layer; leave -hidden out", *hidden, k.Name())
	}
	switch *dtype {
	case "float64":
		o.model.Dtype = tensor.Float64
		o.files.FeatureLimit = datasets.FeatureLimit64
	case "float32":
		o.model.Dtype = tensor.Float32
		o.files.FeatureLimit = datasets.FeatureLimit32
	default:
		return nil, badInput("-dtype %q, want float32 or float64", *dtype)
	}
	if _, err := k.Configure(1, 2, o.model); err != nil {
		return nil, badInput("-backbone %s -hidden %d: %v", k.Name(), *hidden, err)
	}
	if _, err := o.settings(k).Configure(1, 2, o.model); err != nil {
		return nil, badInput("%v", err)
	}
	switch {
	case o.train.Epochs < 1:
		return nil, badInput("-epochs %d, want ≥ 1", o.train.Epochs)
	case !(o.train.Adam.LR > 0):
		return nil, badInput("-lr %v, want > 0", o.train.Adam.LR)
	case !(o.train.Adam.WeightDecay >= 0):
		return nil, badInput("-weight-decay %v, want ≥ 0", o.train.Adam.WeightDecay)
	}
	o.set = set
	// -select.
	if sel, err := train.ParseSelection(*selection); err != nil {
		return nil, badInput("-select %q, want one of %s", *selection, strings.Join(train.SelectionWords(), ", "))
	} else if set["select"] && o.modelFile != "" {
		return nil, badInput("-model %s predicts with a saved model, which trains and chooses nothing: -select would be ignored; leave it out", o.modelFile)
	} else {
		o.train.Select = sel
	}
	if o.search, err = newSearchPlan(set, k, o.train.Adam.LR, o.train.Epochs, *hidden, *budget); err != nil {
		return nil, err
	}
	// Debiasing.
	steps, tau := o.fmp.K, o.fmp.Temperature
	o.fmp = fdef
	o.fmp.K, o.fmp.Temperature = steps, tau
	if err := o.fmp.Validate(); err != nil {
		return nil, badInput("-k %d -tau %v: %v", steps, tau, err)
	}
	fc := fmp.DefaultFrontierConfig()
	o.lambdaF = fc.LambdaF
	if *lambdaF != "" {
		v, err := cli.ParseFloats(*lambdaF, 0)
		if err != nil {
			return nil, badInput("-lambda-f %q: %v", *lambdaF, err)
		}
		o.lambdaF = v
	}
	v, err := cli.ParseFloats(*lambdaS, 0)
	if err != nil {
		return nil, badInput("-lambda-s %q: %v", *lambdaS, err)
	}
	o.lambdaS = v
	fc.LambdaF, fc.LambdaS = o.lambdaF, o.lambdaS
	if o.trustedFiles != "" {
		if o.modelFile == "" {
			return nil, badInput("-trusted-keys checks the signature of a -model file; give -model, or leave -trusted-keys out")
		}
		if o.trustedKeys, err = readTrustedKeys(o.trustedFiles); err != nil {
			return nil, err
		}
	}
	if o.trustColumns && o.modelFile == "" {
		return nil, badInput("-trust-column-order vouches for the columns of a -model file without a feature schema; give -model, or leave -trust-column-order out")
	}
	if o.fmpScoring, err = score.ParseSemantics(*scoring); err != nil {
		return nil, badInput("-fmp-scoring %q: want fitted or recompute", *scoring)
	}
	if set["fmp-scoring"] && o.modelFile == "" {
		return nil, badInput("-fmp-scoring says what FMP means when a saved -model scores a graph; give -model, or leave -fmp-scoring out")
	}
	if o.modelFile != "" {
		var training []string
		for _, f := range []string{"backbone", "search-budget", "method", "method-weight", "hidden", "dtype", "epochs", "lr", "weight-decay", "dropout", "train-labels", "lambda-f", "lambda-s", "k", "tau", "criterion", "bound", "max-acc-loss", "randomize", "objective"} {
			if set[f] {
				training = append(training, "-"+f)
			}
		}
		if len(training) > 0 {
			return nil, badInput("-model %s predicts with a saved model, which trains and chooses nothing: %s would be ignored; leave them out", o.modelFile, strings.Join(training, ", "))
		}
	}
	if err := o.scores.check(set); err != nil {
		return nil, err
	}
	if o.trainLabels < 0 || o.trainLabels == 1 {
		return nil, badInput("-train-labels %d, want 0 (all) or at least 2 (one of each class)", o.trainLabels)
	}
	if err := o.compareFlags(*compare, set, *hidden); err != nil {
		return nil, err
	}
	if o.rule, err = cli.Rule(cli.RuleFlags{Criterion: *criterion, MaxAccLoss: *maxLoss, Bound: *bound, SetMaxAccLoss: set["max-acc-loss"], SetBound: set["bound"]}); err != nil {
		return nil, badInput("%v", err)
	}
	o.randomize = *randomize
	if o.objective, err = postprocess.ParseObjective(*objective); err != nil {
		return nil, badInput("-objective %q, want accuracy or balanced-accuracy", *objective)
	}
	fc.Rule = o.rule
	if err := fc.Validate(); err != nil {
		return nil, badInput("-lambda-f/-lambda-s: %v", err)
	}
	if o.export != "" {
		return o, nil
	}
	if o.out == "" {
		return nil, badInput("-out is required: the folder the results go to")
	}
	if _, err := os.Stat(o.out); err == nil && !o.overwrite {
		return nil, badInput("-out %s exists; choose a new folder or add -overwrite", o.out)
	}
	return o, nil
}

// fileOnly lists the flags that describe a node table of your own, which
// a -dataset preset does not read.
var fileOnly = []string{"positive", "fold-case", "classes", "categorical", "max-levels", "nodes-format", "edges-format"}

// setAmong returns the first of names that was set, as "-name", or "".
func setAmong(set map[string]bool, names []string) string {
	for _, n := range names {
		if set[n] {
			return "-" + n
		}
	}
	return ""
}

// readTrustedKeys reads -trusted-keys (cli.TrustedKeys) as bad input.
func readTrustedKeys(list string) ([]ed25519.PublicKey, error) {
	keys, err := cli.TrustedKeys(list)
	if err != nil {
		return nil, badInput("%v", err)
	}
	return keys, nil
}

// methodArchitectures lists the architectures -method takes: every
// registered one but FMP, which every run puts on the backbone.
func methodArchitectures() []string {
	var out []string
	for _, n := range fairness.Names(fairness.StageArchitecture) {
		if n != "fmp" {
			out = append(out, n)
		}
	}
	return out
}

// methodFlag looks -method up in the registry of methods (package
// layers/fairness) and says whether it is a pre-processing method. It
// refuses FMP (every run puts it on the backbone, on the frontier of
// -lambda-f and -lambda-s) and post-processing methods (every run fits
// them: per-group thresholds, per-group class offsets for three classes
// or more), naming what the command does instead.
func methodFlag(name string) (pre bool, m fairness.Method, err error) {
	offered := append(append(fairness.Names(fairness.StagePre), fairness.Names(fairness.StageLoss)...), methodArchitectures()...)
	m, err = fairness.Lookup(name)
	if err != nil {
		return false, nil, badInput("-method %q, want one of %s", name, strings.Join(offered, ", "))
	}
	st, err := fairness.StageOf(m)
	if err != nil {
		return false, nil, badInput("-method %s: %v", name, err)
	}
	switch {
	case name == "fmp":
		return false, nil, badInput("-method fmp: every run puts FMP on the backbone and chooses its setting on validation (-lambda-f, -lambda-s): -method names a method besides it, one of %s", strings.Join(offered, ", "))
	case st == fairness.StagePost:
		return false, nil, badInput("-method %s: a post-processing method, which every run fits on the trained model (per-group thresholds; per-group class offsets with three classes or more: the table's post-processing rows): -method names a method of another stage, one of %s", name, strings.Join(offered, ", "))
	}
	return st == fairness.StagePre, m, nil
}

// methodLabel names a method with its weight, when it has one:
// "fairgnn (weight 1)".
func methodLabel(m fairness.Method) string {
	if w, ok := m.(fairness.Weighted); ok {
		return fmt.Sprintf("%s (weight %g)", m.Name(), w.Weight())
	}
	return m.Name()
}

// applyProtocol fills the flags not given (set) from the preset named
// name (-protocol) on o's data set, and marks -backbone, -hidden, -lr and
// -epochs given: the preset fixes them, so nothing is searched. The
// flag variables are parseFlags' own.
func (o *options) applyProtocol(name string, set map[string]bool, backbone *string, hidden *int, selection *string, includeSens, noScale *bool) error {
	pr, err := protocol.Lookup(name)
	if err != nil {
		return badInput("-protocol: %v", err)
	}
	if o.modelFile != "" || o.scores.file != "" {
		return badInput("-protocol %s is a training protocol, and -model and -scores train nothing; leave -protocol out", name)
	}
	sel, _ := train.ParseSelection(*selection) // a wrong word given is refused below
	s := protocol.Settings{Backbone: *backbone, Hidden: *hidden, Epochs: o.train.Epochs, LR: o.train.Adam.LR, WeightDecay: o.train.Adam.WeightDecay,
		Dropout: o.dropout, Select: sel, IncludeSens: *includeSens, NoScale: *noScale, TrainLabels: o.trainLabels}
	protocol.Apply(&s, pr.For(o.dataset), set)
	*backbone, o.overrides, *hidden = s.Backbone, s.Overrides, s.Hidden
	o.train.Epochs, o.train.Adam.LR, o.train.Adam.WeightDecay, o.dropout = s.Epochs, s.LR, s.WeightDecay, s.Dropout
	*selection, o.train.SelectAfter = s.Select.Word(), s.SelectAfter
	*includeSens, *noScale, o.trainLabels = s.IncludeSens, s.NoScale, s.TrainLabels
	for _, f := range []string{"backbone", "lr", "epochs"} {
		set[f] = true
	}
	if k, err := layers.LookupKind(s.Backbone); err == nil && k.HasHidden() {
		set["hidden"] = true // (-hidden of a kind without one is refused)
	}
	o.protocol = name
	return nil
}

// settings returns the protocol's settings of kind k: its fields the
// preset fixes (with the preset's own backbone alone) and -dropout.
func (o *options) settings(k *layers.Kind) protocol.Settings {
	s := protocol.Settings{Backbone: k.Name(), Hidden: o.model.Hidden, Dropout: o.dropout}
	if o.protocol != "" && k.Name() == o.backbone {
		s.Overrides = o.overrides
	}
	return s
}
