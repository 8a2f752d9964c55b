// Package protocol declares the training protocols of the reference
// repositories (NIFTY, FairGNN, FairVGNN, EDITS, FMP) as presets of the
// flags the commands baselines (examples/paper/baselines) and debias
// share: -backbone (with the fields of its configuration the protocol
// fixes), -hidden, -epochs, -lr, -weight-decay, -dropout, -select,
// -include-sens, -no-scale and -train-labels. A command reads its flags
// into a [Settings], and -protocol NAME fills every one of them the
// command line did not give from the preset ([Lookup], [Preset.For],
// [Apply]): explicit flags override the preset. [LoadPreset] loads a
// data set scaled or not (-no-scale). [Help] lists the presets
// and what each sets, [Settings.Flags] records a run's protocol, and
// [Settings.Configure] builds the backbone's configuration.
//
// The table was read from each repository's code (file names in
// [Preset].Source); where fairmp has no equivalent of the repository's
// choice, the preset takes the nearest one fairmp offers and
// [Preset].Differs says so.
package protocol

import (
	"fmt"
	"maps"
	"math"
	"math/rand"
	"slices"
	"sort"
	"strings"

	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/train"
)

// Settings are a protocol's values of the commands' shared flags.
type Settings struct {
	// Backbone is the -backbone kind; Overrides the fields of its
	// configuration the protocol fixes beyond the flags (by their JSON
	// keys, as layers.Kind.Override takes them), applied only with the
	// preset's own backbone.
	Backbone  string
	Overrides map[string]any
	// Hidden is -hidden (for a kind with a hidden layer), Epochs -epochs.
	Hidden, Epochs int
	// LR and WeightDecay are Adam's (-lr, -weight-decay).
	LR, WeightDecay float64
	// Dropout is -dropout; NaN keeps the backbone's own.
	Dropout float64
	// Select is -select; SelectAfter the first epochs never kept
	// (train.Config.SelectAfter; no flag, the preset's alone).
	Select      train.Selection
	SelectAfter int
	// IncludeSens keeps the sensitive attribute among the features (its
	// group id, unscaled) (-include-sens).
	IncludeSens bool
	// NoScale leaves the features unscaled (-no-scale); otherwise every
	// feature column is min-max scaled to [−1, 1] over all nodes (the
	// sensitive column, when a feature, is never scaled: the repositories
	// that keep it restore it unscaled after scaling the others).
	NoScale bool
	// TrainLabels keeps that many training nodes, half of each class
	// ([CapTrain]); 0 keeps them all (-train-labels).
	TrainLabels int
}

// Flag names of the Settings' fields, as both commands spell them.
const (
	FlagBackbone    = "backbone"
	FlagHidden      = "hidden"
	FlagEpochs      = "epochs"
	FlagLR          = "lr"
	FlagWeightDecay = "weight-decay"
	FlagDropout     = "dropout"
	FlagSelect      = "select"
	FlagIncludeSens = "include-sens"
	FlagNoScale     = "no-scale"
	FlagTrainLabels = "train-labels"
)

// Preset is one repository's protocol.
type Preset struct {
	// Name is -protocol's word; Repository the GitHub repository read.
	Name, Repository string
	// Model describes the backbone in the repository's terms.
	Model string
	// Settings are the values every data set shares.
	Settings Settings
	// TrainLabels and NoScale are the repository's per data set (a data
	// set not listed: Settings' values).
	TrainLabels map[string]int
	NoScale     map[string]bool
	// Source lists the files the values were read from.
	Source string
	// Differs says where fairmp's run cannot be the repository's.
	Differs []string
}

// For returns the preset's settings on the named data set.
func (p Preset) For(dataset string) Settings {
	s := p.Settings
	s.Overrides = maps.Clone(s.Overrides)
	if n, ok := p.TrainLabels[dataset]; ok {
		s.TrainLabels = n
	}
	if v, ok := p.NoScale[dataset]; ok {
		s.NoScale = v
	}
	return s
}

// identity is the activation whose value is its input: LeakyReLU with
// slope 1, so that a JKNet of one layer is one GCN convolution and a
// linear head with nothing between them.
var identity = layers.LeakyReLU(1)

// oneConvLinear is the backbone "one GCNConv (d → hidden), then a
// Linear (hidden → classes), no activation or dropout between them":
// layers' JKNet with one layer (its jump of one output is that output)
// and the identity.
var oneConvLinear = map[string]any{"layers": 1, "activation": identity, "mode": layers.JKConcat}

// presets is the table: one entry per repository.
var presets = []Preset{
	{
		Name: "nifty", Repository: "chirag126/nifty",
		Model: "vanilla \"GCN\": one GCNConv (d → 16) then a Linear (16 → 1, Xavier-initialised), no activation or dropout",
		Settings: Settings{Backbone: "jknet", Overrides: oneConvLinear, Hidden: 16, Epochs: 300, LR: 1e-3, WeightDecay: 1e-5,
			Dropout: 0, Select: train.SelectValLoss, IncludeSens: true},
		TrainLabels: map[string]int{"bail": 100, "credit": 6000, "german": 100},
		Source:      "nifty_sota_gnn.py (arguments, training loop, lowest validation loss), models/gcn.py (Xavier-uniform Linear, zero bias), utils.py (load_bail, load_credit, load_german: label_number, min-max scaling but the sensitive column)",
		Differs: []string{
			"the repository's head is one logit with BCE; fairmp's has two logits with cross-entropy (the same decision function, another parametrisation under Adam)",
		},
	},
	{
		Name: "fairgnn", Repository: "EnyanDai/FairGNN",
		Model: "GCN body (two GraphConv, ReLU and dropout 0.5 between) then a Linear head",
		Settings: Settings{Backbone: "gcn", Hidden: 128, Epochs: 2000, LR: 1e-3, WeightDecay: 1e-5, Dropout: 0.5,
			Select: train.SelectValAUC},
		TrainLabels: map[string]int{"nba": 100, "pokec_z": 500, "pokec_n": 500},
		NoScale:     map[string]bool{"pokec_z": true, "pokec_n": true},
		Source:      "src/train_fairGNN.py (arguments, data sets, selection), src/scripts/*/train_fairGCN.sh (--num-hidden 128, --epochs 2000), src/models/GCN.py, src/utils.py (load_pokec, feature_norm: NBA alone)",
		Differs: []string{
			"the repository keeps the epoch of lowest validation ΔDP + ΔEO among those above a validation accuracy and AUC set per data set (--acc, --roc); fairmp offers no such selection: the preset keeps the highest validation AUC",
			"on NBA the repository's validation nodes are its test nodes (test_idx=True); fairmp keeps the data set's split",
			"the repository draws its label_number training nodes without regard to class; -train-labels draws half of each class",
			"fairmp's GCN ends in a convolution to the classes where the repository's body ends in a convolution to 128 and a Linear head (one linear map after another: the same function class)",
		},
	},
	{
		Name: "fairvgnn", Repository: "yuwvandy/FairVGNN",
		Model: "GCN encoder (one GCNConv, d → 16) then a Linear classifier (16 → 1)",
		Settings: Settings{Backbone: "jknet", Overrides: oneConvLinear, Hidden: 16, Epochs: 300, LR: 1e-3, WeightDecay: 0,
			Dropout: 0, Select: train.SelectValAUC, IncludeSens: true},
		TrainLabels: map[string]int{"bail": 100, "credit": 6000, "german": 100},
		NoScale:     map[string]bool{"german": true},
		Source:      "fairvgnn.py (arguments, selection), run_bail.sh (--epochs 300), run_credit.sh (--epochs 200), dataset.py (get_dataset: label_num, feature_norm but the sensitive column, none on German)",
		Differs: []string{
			"the repository keeps the epoch of highest validation AUC + F1 + accuracy − α(ΔDP + ΔEO); fairmp offers no such selection: the preset keeps the highest validation AUC",
			"the repository trains its classifier at lr 0.01 and its encoder at 0.001 (run_bail.sh); fairmp has one learning rate: 0.001",
			"run_credit.sh trains 200 epochs, run_bail.sh 300: the preset's 300",
		},
	},
	{
		Name: "edits", Repository: "yushundong/EDITS",
		Model: "GCN (one GCNConv, d → 16) then a Linear (16 → 1), Xavier-initialised, no activation",
		Settings: Settings{Backbone: "jknet", Overrides: oneConvLinear, Hidden: 16, Epochs: 1000, LR: 1e-3, WeightDecay: 1e-5,
			Dropout: 0, Select: train.SelectValLoss, SelectAfter: 15, IncludeSens: true},
		TrainLabels: map[string]int{"bail": 100, "credit": 6000, "german": 100},
		NoScale:     map[string]bool{"german": true},
		Source:      "classification.py (arguments, lowest validation loss after epoch 15, feature_norm but the sensitive column, none on German), gcn.py (GCN_Body never applies its dropout)",
		Differs: []string{
			"the repository's head is one logit with BCE; fairmp's has two logits with cross-entropy",
		},
	},
	{
		Name: "fmp", Repository: "zhimengj0326/FMP",
		Model: "2-layer MLP (d → 64 → 2, ReLU, no dropout) before the FMP layer",
		Settings: Settings{Backbone: "mlp", Hidden: 64, Epochs: 300, LR: 1e-3, WeightDecay: 0, Dropout: 0,
			Select: train.SelectLast},
		Source: "main.py (data sets, min-max scaling, Adam without weight decay, the last epoch reported), fairgnn.py (the MLP; --dropout unused), run_fgnn.sh (300 epochs); examples/paper/authors/README.md has the lines",
		Differs: []string{
			"the repository's split is 80% training, the rest test, with validation = test; fairmp keeps the data set's split",
		},
	},
}

// Names lists the presets' names, in the table's order.
func Names() []string {
	var out []string
	for _, p := range presets {
		out = append(out, p.Name)
	}
	return out
}

// Lookup returns the named preset, or an error naming them all.
func Lookup(name string) (Preset, error) {
	for _, p := range presets {
		if p.Name == name {
			return p, nil
		}
	}
	return Preset{}, fmt.Errorf("protocol %q, want one of %s", name, strings.Join(Names(), ", "))
}

// Apply sets every field of s whose flag is not in given to p's value:
// the flags given override the preset. The backbone's Overrides and its
// dropout describe the preset's model: they come with the preset's
// backbone alone (a -backbone given keeps its kind's own dropout unless
// -dropout is given too).
func Apply(s *Settings, p Settings, given map[string]bool) {
	set := func(flag string, f func()) {
		if !given[flag] {
			f()
		}
	}
	if !given[FlagBackbone] {
		s.Backbone, s.Overrides = p.Backbone, maps.Clone(p.Overrides)
		set(FlagDropout, func() { s.Dropout = p.Dropout })
	}
	set(FlagHidden, func() { s.Hidden = p.Hidden })
	set(FlagEpochs, func() { s.Epochs = p.Epochs })
	set(FlagLR, func() { s.LR = p.LR })
	set(FlagWeightDecay, func() { s.WeightDecay = p.WeightDecay })
	set(FlagSelect, func() { s.Select, s.SelectAfter = p.Select, p.SelectAfter })
	set(FlagIncludeSens, func() { s.IncludeSens = p.IncludeSens })
	set(FlagNoScale, func() { s.NoScale = p.NoScale })
	set(FlagTrainLabels, func() { s.TrainLabels = p.TrainLabels })
}

// Flags writes s as the flags that give it, for a run's record:
// "-backbone jknet (layers 1, activation leaky_relu(1), mode cat)
// -hidden 16 …".
func (s Settings) Flags() string {
	b := "-backbone " + s.Backbone
	if len(s.Overrides) > 0 {
		keys := slices.Sorted(maps.Keys(s.Overrides))
		var kv []string
		for _, k := range keys {
			kv = append(kv, fmt.Sprintf("%s %v", k, s.Overrides[k]))
		}
		b += " (" + strings.Join(kv, ", ") + ")"
	}
	drop := "the backbone's own"
	if !math.IsNaN(s.Dropout) {
		drop = fmt.Sprint(s.Dropout)
	}
	out := fmt.Sprintf("%s -hidden %d -epochs %d -lr %g -weight-decay %g -dropout %s -select %s", b, s.Hidden, s.Epochs, s.LR, s.WeightDecay, drop, s.Select.Word())
	if s.SelectAfter > 0 {
		out += fmt.Sprintf(" (after epoch %d)", s.SelectAfter)
	}
	if s.IncludeSens {
		out += " -include-sens"
	}
	if s.NoScale {
		out += " -no-scale"
	}
	if s.TrainLabels > 0 {
		out += fmt.Sprintf(" -train-labels %d", s.TrainLabels)
	}
	return out
}

// Help lists the presets and what each sets, for -h.
func Help() string {
	var b strings.Builder
	for _, p := range presets {
		fmt.Fprintf(&b, "  %s (%s): %s\n      %s", p.Name, p.Repository, p.Model, p.Settings.Flags())
		var per []string
		for _, ds := range slices.Sorted(maps.Keys(p.TrainLabels)) {
			per = append(per, fmt.Sprintf("-train-labels %d on %s", p.TrainLabels[ds], ds))
		}
		for _, ds := range slices.Sorted(maps.Keys(p.NoScale)) {
			if p.NoScale[ds] {
				per = append(per, "-no-scale on "+ds)
			}
		}
		if per != nil {
			fmt.Fprintf(&b, "; %s", strings.Join(per, ", "))
		}
		b.WriteString("\n")
		for _, d := range p.Differs {
			fmt.Fprintf(&b, "      differs: %s\n", d)
		}
	}
	return b.String()
}

// Configure returns the configuration of s's backbone for in features
// and classes classes: the kind's default with opt, -hidden where the
// kind has a hidden layer, the protocol's Overrides and -dropout. It
// returns an error naming the flag for a kind unknown or without a field
// set (-dropout of a kind without dropout).
func (s Settings) Configure(in, classes int, opt layers.Options) (layers.Config, error) {
	k, err := layers.LookupKind(s.Backbone)
	if err != nil {
		return nil, fmt.Errorf("-backbone: %w", err)
	}
	if k.HasHidden() {
		opt.Hidden = s.Hidden
	}
	cfg, err := k.Configure(in, classes, opt)
	if err != nil {
		return nil, fmt.Errorf("-backbone %s: %w", s.Backbone, err)
	}
	fields := maps.Clone(s.Overrides)
	if fields == nil {
		fields = map[string]any{}
	}
	if !math.IsNaN(s.Dropout) {
		fields["dropout"] = s.Dropout
	}
	if len(fields) == 0 {
		return cfg, nil
	}
	if _, ok := fields["dropout"]; ok && !hasField(k, cfg, "dropout") {
		return nil, fmt.Errorf("-dropout %v: the %s backbone has no dropout; leave -dropout out", s.Dropout, s.Backbone)
	}
	out, err := k.Override(cfg, fields)
	if err != nil {
		return nil, fmt.Errorf("-backbone %s: %w", s.Backbone, err)
	}
	return out, nil
}

// hasField reports whether cfg of kind k has the JSON field key.
func hasField(k *layers.Kind, cfg layers.Config, key string) bool {
	_, err := k.Override(cfg, map[string]any{key: nil})
	return err == nil || !strings.Contains(err.Error(), "has no field")
}

// CapTrain keeps n of the training nodes train: n/2 of each of the two
// classes, or all of a class with fewer, drawn with the reference
// codes' split seed (20) whatever the run's seed, so that every run and
// method trains on the same nodes (NIFTY's, FairVGNN's and EDITS' code:
// at most label_number/2 per class; FairGNN's draws label_number nodes
// without regard to class). The result is sorted.
func CapTrain(train, labels []int, n int) []int {
	byClass := map[int][]int{}
	for _, i := range train {
		byClass[labels[i]] = append(byClass[labels[i]], i)
	}
	rng := rand.New(rand.NewSource(20))
	var out []int
	for _, c := range []int{0, 1} {
		idx := byClass[c]
		rng.Shuffle(len(idx), func(a, b int) { idx[a], idx[b] = idx[b], idx[a] })
		out = append(out, idx[:min(n/2, len(idx))]...)
	}
	sort.Ints(out)
	return out
}

// LoadPreset loads a preset data set (datasets.Presets) as datasets.Load
// does, with its own scaling (min-max to [−1, 1]; pokec_z's and
// pokec_n's none), or unscaled (scale false: -no-scale).
func LoadPreset(dir, name string, opts datasets.Options, scale bool) (*datasets.Dataset, error) {
	if c, err := datasets.FairGNNPreset(name); err == nil {
		c.Options, c.MinMaxScale = opts, c.MinMaxScale && scale
		return datasets.LoadFairGNN(dir, c)
	}
	if c, err := datasets.NIFTYPreset(name); err == nil {
		c.Options, c.MinMaxScale = opts, c.MinMaxScale && scale
		return datasets.LoadNIFTY(dir, c)
	}
	return datasets.Load(dir, name, opts)
}
