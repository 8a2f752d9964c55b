package metrics

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"strings"
)

// Baseline is what a model's decisions looked like on the nodes its
// setting was chosen on (the validation nodes): each group's selection
// rate, true- and false-positive rates with their intervals, and every
// fairness criterion with its bootstrap interval; for a task of c > 2
// classes, every class's rates against the rest and the criteria for c
// classes (see Classes). A model file records
// it (modelio.SaveConfig.Baseline), and Drift compares the nodes a saved
// model scores later with it.
//
// NewBaseline measures the decisions; the caller adds what it knows
// before saving: GroupNames (the groups' values, datasets.Dataset's
// GroupNames), so that drift messages say "Female", not "group 1", and
// RecordFeatures on the training nodes' features, so that drift of the
// features is measured without labels. fmp/score's Scorer.Drift compares
// the nodes it scored with the baseline its model file recorded, in one
// call.
type Baseline struct {
	// Nodes is the number of nodes the baseline was measured on (labelled
	// and of a known group).
	Nodes int `json:"nodes"`
	// Level is the intervals' confidence level.
	Level float64 `json:"level"`
	// Groups holds each group's rates, in group order.
	Groups []GroupRates `json:"groups"`
	// Criteria holds every criterion defined on those nodes, keyed by
	// criterion (JSON: by name).
	Criteria map[Criterion]Interval `json:"criteria"`
	// GroupNames, if not nil, names group g GroupNames[g] (one name per
	// group id, at least up to the largest id in Groups; non-empty and
	// distinct). Drift messages then name groups by them.
	GroupNames []string `json:"group_names,omitempty"`
	// Features, if not nil, are the references of the model's first
	// MaxFeatureColumns features on the training nodes (RecordFeatures),
	// and FeatureColumns the model's number of feature columns.
	Features       []FeatureRef `json:"features,omitempty"`
	FeatureColumns int          `json:"feature_columns,omitempty"`
	// Classes is c for a baseline of a task of c > 2 classes, and 0 for
	// two classes (as in every baseline written before per-class drift).
	// With c > 2 classes Groups is empty, ClassGroups holds every class's
	// per-group rates and Criteria the criteria for c classes (the worst
	// class's, [ClassBreakdown.Criterion], with [BootstrapClasses]'
	// intervals).
	Classes int `json:"classes,omitempty"`
	// ClassGroups[k] holds each group's rates of class k against the rest
	// (selection P(ŷ = k | group), the TPR and FPR of class k): Groups as
	// measured with Options.Positive = k. Every class lists the same
	// groups with the same counts. Only with Classes > 2.
	ClassGroups [][]GroupRates `json:"class_groups,omitempty"`
	// ClassNames, if not nil, names class k ClassNames[k] (Classes names,
	// non-empty and distinct; datasets.Dataset's ClassNames). Drift
	// messages then name classes by them. Only with Classes > 2.
	ClassNames []string `json:"class_names,omitempty"`
}

// GroupName returns group g's name: GroupNames[g] quoted ("Female"),
// or "group g" without names.
func (b Baseline) GroupName(g int) string {
	return groupName(b.GroupNames, g)
}

// groupName names group g as Baseline.GroupName does.
func groupName(names []string, g int) string { return nameOf("group", names, g) }

// nameOf names item i of a kind ("group", "class"): by names[i], quoted,
// when there is one, else by its number.
func nameOf(kind string, names []string, i int) string {
	if i >= 0 && i < len(names) {
		return fmt.Sprintf("%s %q", kind, names[i])
	}
	return fmt.Sprintf("%s %d", kind, i)
}

// GroupRates is one group's decision rates with their intervals (Wilson
// score intervals at the baseline's level: exact enough for small
// groups, never outside [0, 1]).
type GroupRates struct {
	Group int `json:"group"`
	// Count is the group's number of nodes; Labelled those with a label.
	Count    int `json:"count"`
	Labelled int `json:"labelled"`
	// Selection is P(ŷ = positive | group); TPR and FPR the true- and
	// false-positive rates, nil without positive (negative) labelled
	// nodes.
	Selection Interval  `json:"selection_rate"`
	TPR       *Interval `json:"tpr,omitempty"`
	FPR       *Interval `json:"fpr,omitempty"`
}

// NewBaseline measures the baseline of probs (n × classes) on nodes (nil:
// all), with labels and groups (−1: unknown; such nodes are left out).
// A criterion undefined on those nodes (ΔEO where a group has no
// positive node) has no entry in Criteria, whatever opt.AllowUndefined
// says: drift is then measured on the others. It returns an error for
// the input errors Bootstrap refuses.
//
// For classes > 2 the baseline is that of c classes (Classes = c): every
// class's per-group rates against the rest in ClassGroups (opt.Positive
// is not used) and the criteria for c classes with [BootstrapClasses]'
// intervals in Criteria; it returns the input errors BootstrapClasses
// refuses. For two classes (or one column of P(y = 1)) it is the
// baseline of class opt.Positive, as it always was.
func NewBaseline(probs []float64, classes int, labels, sens, nodes []int, opt Options, cfg BootstrapConfig) (Baseline, error) {
	nodes = allIfNil(nodes, len(sens))
	opt.AllowUndefined = true
	if classes > 2 {
		return newClassBaseline(probs, classes, labels, sens, nodes, opt, cfg)
	}
	iv, err := Bootstrap(probs, classes, labels, sens, nodes, opt, cfg)
	if err != nil {
		return Baseline{}, fmt.Errorf("metrics: NewBaseline: %w", err)
	}
	groups, err := groupRates(probs, classes, labels, sens, nodes, opt, cfg.Level)
	if err != nil {
		return Baseline{}, fmt.Errorf("metrics: NewBaseline: %w", err)
	}
	return Baseline{Nodes: iv.Evaluated, Level: cfg.Level, Groups: groups, Criteria: iv.Criteria}, nil
}

// Validate checks a baseline read from a file: a level in (0, 1), rates
// and intervals in [0, 1] (criteria that are ratios too), groups in
// order, group names (when present) one per group, non-empty and
// distinct, and feature references (when present) as RecordFeatures
// makes them. A baseline without names or features (a file written
// before they existed) is valid.
func (b Baseline) Validate() error {
	if !(b.Level > 0 && b.Level < 1) {
		return fmt.Errorf("%w: Baseline.Level = %v, want (0, 1)", ErrValue, b.Level)
	}
	check := func(what string, i Interval) error {
		for _, v := range []float64{i.Point, i.Lo, i.Hi} {
			if !(v >= 0 && v <= 1) {
				return fmt.Errorf("%w: Baseline: %s = %v, want values in [0, 1]", ErrValue, what, i)
			}
		}
		if i.Lo > i.Hi {
			return fmt.Errorf("%w: Baseline: %s = %v, want lo ≤ hi", ErrValue, what, i)
		}
		return nil
	}
	checkGroups := func(groups []GroupRates, of string) error {
		for k, g := range groups {
			if g.Group < 0 || (k > 0 && g.Group <= groups[k-1].Group) || g.Count < 0 || g.Labelled < 0 || g.Labelled > g.Count {
				return fmt.Errorf("%w: Baseline: group entry %d%s (group %d, %d nodes, %d labelled), want groups ascending and counts ≥ 0", ErrValue, k, of, g.Group, g.Count, g.Labelled)
			}
			for name, iv := range map[string]*Interval{"selection rate": &g.Selection, "TPR": g.TPR, "FPR": g.FPR} {
				if iv != nil {
					if err := check(fmt.Sprintf("group %d's %s%s", g.Group, name, of), *iv); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	if err := checkGroups(b.Groups, ""); err != nil {
		return err
	}
	if err := b.validateClasses(func(k int) error { return checkGroups(b.ClassGroups[k], fmt.Sprintf(" of class %d", k)) }); err != nil {
		return err
	}
	for c, iv := range b.Criteria {
		if err := c.Validate(); err != nil {
			return err
		}
		if err := check(c.Name(), iv); err != nil {
			return err
		}
	}
	if b.GroupNames != nil {
		if groups := b.groups(); len(groups) > 0 && groups[len(groups)-1].Group >= len(b.GroupNames) {
			return fmt.Errorf("%w: Baseline.GroupNames has %d names for groups up to %d, want one per group", ErrValue, len(b.GroupNames), groups[len(groups)-1].Group)
		}
		if err := distinctNames("GroupNames", "group", "groups", b.GroupNames); err != nil {
			return err
		}
	}
	if len(b.Features) > MaxFeatureColumns || (b.Features != nil && b.FeatureColumns < len(b.Features)) || (b.Features == nil && b.FeatureColumns != 0) {
		return fmt.Errorf("%w: Baseline: %d feature references of %d columns, want at most %d references, and no more than the columns", ErrValue, len(b.Features), b.FeatureColumns, MaxFeatureColumns)
	}
	names := map[string]int{}
	for k, f := range b.Features {
		if err := f.validate(k); err != nil {
			return err
		}
		if j, ok := names[f.Name]; ok {
			return fmt.Errorf("%w: Baseline.Features[%d] and [%d] are both named %q", ErrValue, j, k, f.Name)
		}
		names[f.Name] = k
	}
	return nil
}

// groupRates returns each known group's rates on nodes: the selection
// rate over every node of the group, the TPR and FPR over its labelled
// ones.
func groupRates(probs []float64, classes int, labels, sens, nodes []int, opt Options, level float64) ([]GroupRates, error) {
	cols := classes
	if len(probs) != len(sens)*cols || len(labels) != len(sens) {
		return nil, fmt.Errorf("%w: %d probabilities, %d labels and %d groups, want n·classes, n and n", ErrLength, len(probs), len(labels), len(sens))
	}
	type counts struct{ n, lab, sel, pos, tp, neg, fp int }
	by := map[int]*counts{}
	for _, i := range nodes {
		if i < 0 || i >= len(sens) {
			return nil, fmt.Errorf("%w: node %d, want a node in 0..%d", ErrValue, i, len(sens)-1)
		}
		g := sens[i]
		if g < 0 {
			continue
		}
		c := by[g]
		if c == nil {
			c = &counts{}
			by[g] = c
		}
		d := decision(probs[i*cols:(i+1)*cols], opt) == opt.Positive
		c.n++
		if d {
			c.sel++
		}
		switch y := labels[i]; {
		case y < 0:
		case y == opt.Positive:
			c.lab++
			c.pos++
			if d {
				c.tp++
			}
		default:
			c.lab++
			c.neg++
			if d {
				c.fp++
			}
		}
	}
	keys := make([]int, 0, len(by))
	for g := range by {
		keys = append(keys, g)
	}
	slices.Sort(keys)
	out := make([]GroupRates, 0, len(keys))
	for _, g := range keys {
		c := by[g]
		r := GroupRates{Group: g, Count: c.n, Labelled: c.lab, Selection: wilson(c.sel, c.n, level)}
		if c.pos > 0 {
			iv := wilson(c.tp, c.pos, level)
			r.TPR = &iv
		}
		if c.neg > 0 {
			iv := wilson(c.fp, c.neg, level)
			r.FPR = &iv
		}
		out = append(out, r)
	}
	return out, nil
}

// wilson returns the Wilson score interval of k successes in n trials at
// the given level (Used is n).
func wilson(k, n int, level float64) Interval {
	p := float64(k) / float64(n)
	z := normalQuantile(0.5 + level/2)
	z2 := z * z
	nn := float64(n)
	centre := (p + z2/(2*nn)) / (1 + z2/nn)
	half := z / (1 + z2/nn) * math.Sqrt(p*(1-p)/nn+z2/(4*nn*nn))
	return Interval{Point: p, Lo: max(0, centre-half), Hi: min(1, centre+half), Used: n}
}

// normalQuantile returns the standard normal quantile of p in (0, 1)
// (Acklam's rational approximation, relative error below 1.2e-9).
func normalQuantile(p float64) float64 {
	a := [6]float64{-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02, 1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00}
	b := [5]float64{-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02, 6.680131188771972e+01, -1.328068155288572e+01}
	c := [6]float64{-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00, -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00}
	d := [4]float64{7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00}
	const lo = 0.02425
	switch {
	case p < lo:
		q := math.Sqrt(-2 * math.Log(p))
		return (((((c[0]*q+c[1])*q+c[2])*q+c[3])*q+c[4])*q + c[5]) / ((((d[0]*q+d[1])*q+d[2])*q+d[3])*q + 1)
	case p > 1-lo:
		q := math.Sqrt(-2 * math.Log(1-p))
		return -(((((c[0]*q+c[1])*q+c[2])*q+c[3])*q+c[4])*q + c[5]) / ((((d[0]*q+d[1])*q+d[2])*q+d[3])*q + 1)
	}
	q := p - 0.5
	r := q * q
	return (((((a[0]*r+a[1])*r+a[2])*r+a[3])*r+a[4])*r + a[5]) * q / (((((b[0]*r+b[1])*r+b[2])*r+b[3])*r+b[4])*r + 1)
}

// Drift compares the decisions on the scored nodes with a baseline: each
// group's rates and each criterion, now and then, with their intervals.
type Drift struct {
	// Nodes is the number of scored nodes of a known group; Labelled those
	// of them with a label (the rates that need labels use only these).
	Nodes    int `json:"nodes"`
	Labelled int `json:"labelled"`
	// Groups pairs each group's rates now with the baseline's (class
	// Options.Positive's against the rest); empty for a baseline of c > 2
	// classes, where Classes pairs them class by class.
	Groups []GroupDrift `json:"groups"`
	// Criteria pairs each criterion now with the baseline's, for the
	// criteria defined on both.
	Criteria []CriterionDrift `json:"criteria"`
	// GroupMix pairs each group's share of the scored nodes with its
	// share of the baseline's, labels or not.
	GroupMix []GroupShare `json:"group_mix"`
	// Features compares the scored nodes' features with the training
	// nodes' (Compare with Scored.X, against a baseline that recorded
	// them); nil otherwise. Its warnings and notes are in Warnings and
	// Notes too.
	Features *FeatureDrift `json:"features,omitempty"`
	// Classes, for a baseline of c > 2 classes, pairs every class's
	// per-group rates against the rest now with the baseline's, in class
	// order.
	Classes []ClassDrift `json:"classes,omitempty"`
	// Warnings say in words what left its baseline interval
	// significantly (the two intervals do not overlap), and what cannot
	// be compared.
	Warnings []string `json:"warnings"`
	// Notes say what left its baseline interval within noise (the
	// intervals overlap).
	Notes []string `json:"notes"`
}

// GroupShare is one group's share of the nodes of a known group, on the
// scored nodes (Now) and on the baseline's (Baseline), each with its
// Wilson interval at the baseline's level. Left: Now's point is outside
// Baseline's interval; Significant: the two intervals are disjoint (a
// warning; a share that left its interval within an overlap is a note).
type GroupShare struct {
	Group       int      `json:"group"`
	Name        string   `json:"name,omitempty"`
	Now         Interval `json:"now"`
	Baseline    Interval `json:"baseline"`
	Left        bool     `json:"left"`
	Significant bool     `json:"significant"`
}

// GroupDrift is one group's rates now and in the baseline.
type GroupDrift struct {
	Group    int         `json:"group"`
	Name     string      `json:"name,omitempty"`
	Now      GroupRates  `json:"now"`
	Baseline *GroupRates `json:"baseline"`
}

// CriterionDrift is one criterion now and in the baseline. Left: the value
// now is outside the baseline's interval; Significant: the two intervals
// do not overlap.
//
// For a baseline of c > 2 classes the criterion is the one for c classes
// (the worst class's, [ClassBreakdown.Criterion]) and Class the class
// attaining it on the scored nodes.
type CriterionDrift struct {
	Criterion   Criterion `json:"criterion"`
	Now         Interval  `json:"now"`
	Baseline    Interval  `json:"baseline"`
	Left        bool      `json:"left"`
	Significant bool      `json:"significant"`
	Class       *int      `json:"class,omitempty"`
}

// CompareBaseline measures the scored nodes as NewBaseline measures the
// validation nodes and compares them with b. The selection rates and the
// criteria that compare selection rates alone (ΔDP, the DP ratio) use
// every scored node of a known group, labelled or not; the true- and
// false-positive rates and their criteria use the labelled ones, when
// there are any. The intervals are at b's level; cfg gives the
// resamples and the seed.
//
// The group mix is compared without labels: each group's share of the
// scored nodes of a known group against its share of the baseline's
// (Groups' Count), with Wilson intervals at b's level on both, read as
// the rates are (disjoint intervals: a warning). Groups are named by
// b.GroupNames when the baseline has them. [Baseline.Compare] adds the
// features.
//
// A baseline of c > 2 classes (Baseline.Classes) is compared class by
// class: every class's per-group selection rate, TPR and FPR against the
// rest (Drift.Classes; messages name the class, by b.ClassNames when the
// baseline has them), and the criteria for c classes (the worst class's,
// with [BootstrapClasses]' intervals; CriterionDrift.Class is the class
// attaining each now), the selection-rate ones on every scored node of a
// known group, the others on the labelled ones, as for two classes.
// opt.Positive is then not used. Scores of another number of classes
// than the baseline's (c-class scores against a baseline of two classes,
// or one written before baselines recorded each class, or the reverse)
// are an error wrapping ErrClasses.
func CompareBaseline(b Baseline, probs []float64, classes int, labels, sens, nodes []int, opt Options, cfg BootstrapConfig) (Drift, error) {
	nodes = allIfNil(nodes, len(sens))
	if err := b.Validate(); err != nil {
		return Drift{}, err
	}
	if err := b.sameClasses(classes); err != nil {
		return Drift{}, fmt.Errorf("metrics: CompareBaseline: %w", err)
	}
	cfg.Level = b.Level
	if err := cfg.Validate(); err != nil {
		return Drift{}, err
	}
	// now[k] holds the groups' rates of the k-th class compared: class
	// opt.Positive alone for two classes, every class for more.
	positives := []int{opt.Positive}
	if b.Classes > 2 {
		positives = make([]int, b.Classes)
		for k := range positives {
			positives[k] = k
		}
	}
	now := make([][]GroupRates, len(positives))
	for k, pos := range positives {
		o := opt
		o.Positive = pos
		var err error
		if now[k], err = groupRates(probs, classes, labels, sens, nodes, o, b.Level); err != nil {
			return Drift{}, fmt.Errorf("metrics: CompareBaseline: %w", err)
		}
	}
	var dr Drift
	var known, labelled []int
	for _, i := range nodes {
		if sens[i] >= 0 {
			known = append(known, i)
			if labels[i] >= 0 {
				labelled = append(labelled, i)
			}
		}
	}
	dr.Nodes, dr.Labelled = len(known), len(labelled)
	if len(known) == 0 {
		dr.Warnings = append(dr.Warnings, "no scored node has a known group: nothing to compare with the baseline")
		return dr, nil
	}
	name := b.GroupName
	dr.GroupMix = groupMix(b, now[0], len(known))
	for _, gs := range dr.GroupMix {
		if gs.Left {
			dr.say(gs.Significant, fmt.Sprintf("%s is %s of the %d scored nodes of a known group, outside its validation-time share %s", name(gs.Group), pct(gs.Now), len(known), pct(gs.Baseline)))
		}
	}
	if b.Classes > 2 {
		for k := range now {
			cd := ClassDrift{Class: k, Groups: dr.compareGroups(b, now[k], b.ClassGroups[k], " of "+b.ClassName(k), k == 0)}
			if k < len(b.ClassNames) {
				cd.Name = b.ClassNames[k]
			}
			dr.Classes = append(dr.Classes, cd)
		}
	} else {
		dr.Groups = dr.compareGroups(b, now[0], b.Groups, "", true)
	}
	selOnly := func(c Criterion) bool {
		for _, r := range c.Rates() {
			if r != SelectionRate {
				return false
			}
		}
		return true
	}
	groupsIn := func(idx []int) int {
		seen := map[int]bool{}
		for _, i := range idx {
			seen[sens[i]] = true
		}
		return len(seen)
	}
	// The criteria now, and for c classes the class attaining each.
	var selIv, labIv map[Criterion]Interval
	var selAt, labAt map[Criterion]int
	haveSel, haveLab := groupsIn(known) >= 2, groupsIn(labelled) >= 2
	if haveSel {
		if b.Classes > 2 {
			var err error
			if selIv, selAt, err = classIntervals(probs, classes, labels, sens, known, opt, cfg, true); err != nil {
				return Drift{}, fmt.Errorf("metrics: CompareBaseline: %w", err)
			}
		} else {
			selIv = selectionIntervals(probs, classes, sens, known, opt, cfg)
		}
	} else {
		dr.Warnings = append(dr.Warnings, fmt.Sprintf("the %d scored nodes are all of one group: no criterion compares groups", len(known)))
	}
	if haveLab {
		var err error
		if b.Classes > 2 {
			labIv, labAt, err = classIntervals(probs, classes, labels, sens, labelled, opt, cfg, false)
		} else {
			var iv Intervals
			iv, err = Bootstrap(probs, classes, labels, sens, labelled, opt, cfg)
			labIv = iv.Criteria
		}
		if err != nil {
			dr.Warnings = append(dr.Warnings, fmt.Sprintf("the criteria that need labels are not compared on the %d labelled scored nodes: %v", len(labelled), err))
			haveLab = false
		}
	}
	for _, c := range Criteria() {
		was, ok := b.Criteria[c]
		if !ok {
			continue
		}
		var now Interval
		at, hasAt := 0, false
		switch {
		case selOnly(c) && haveSel:
			now, ok = selIv[c]
			at, hasAt = selAt[c]
		case !selOnly(c) && haveLab:
			now, ok = labIv[c]
			at, hasAt = labAt[c]
		default:
			ok = false
		}
		if !ok {
			continue
		}
		left, sig := leaves(now, was)
		cd := CriterionDrift{Criterion: c, Now: now, Baseline: was, Left: left, Significant: sig}
		title := c.Title()
		if hasAt {
			cd.Class = &at
			title = fmt.Sprintf("%s over the %d classes", c.Title(), b.Classes)
		}
		dr.Criteria = append(dr.Criteria, cd)
		if left {
			s := fmt.Sprintf("%s is %s on the scored nodes, outside its validation-time interval %s", title, pct(now), pct(was))
			if hasAt {
				s = fmt.Sprintf("%s is %s on the scored nodes (%s against the rest, the worst class now), outside its validation-time interval %s", title, pct(now), b.ClassName(at), pct(was))
			}
			dr.say(sig, s)
		}
	}
	if same := allSame(probs, classes, sens, known, opt); same >= 0 {
		dr.Warnings = append(dr.Warnings, fmt.Sprintf("every scored node is predicted %s: the fairness criteria are trivially at parity and say nothing of the model", className(b.ClassNames, same)))
	}
	return dr, nil
}

// pct writes an interval in percent: "12.5% [10.1, 14.9]".
func pct(i Interval) string {
	return fmt.Sprintf("%.1f%% [%.1f, %.1f]", Percent(i.Point), Percent(i.Lo), Percent(i.Hi))
}

// say adds s as a warning when significant, else as a note.
func (dr *Drift) say(significant bool, s string) {
	if significant {
		dr.Warnings = append(dr.Warnings, s)
	} else {
		dr.Notes = append(dr.Notes, s+" (the intervals overlap: within noise)")
	}
}

// compareGroups pairs each group's rates now with base's (those of one
// class against the rest; of names that class, " of class 2", or "" for
// two classes) and says which left their interval. missing: say which
// groups have no baseline entry (once for all classes).
func (dr *Drift) compareGroups(b Baseline, now, base []GroupRates, of string, missing bool) []GroupDrift {
	byGroup := map[int]*GroupRates{}
	for k := range base {
		byGroup[base[k].Group] = &base[k]
	}
	name := b.GroupName
	var out []GroupDrift
	for _, g := range now {
		gd := GroupDrift{Group: g.Group, Now: g, Baseline: byGroup[g.Group]}
		if g.Group < len(b.GroupNames) {
			gd.Name = b.GroupNames[g.Group]
		}
		out = append(out, gd)
		if gd.Baseline == nil {
			if missing {
				dr.Warnings = append(dr.Warnings, fmt.Sprintf("%s has %d scored nodes and none in the baseline: its rates cannot be compared", name(g.Group), g.Count))
			}
			continue
		}
		for _, r := range []struct {
			name     string
			now, was *Interval
		}{{"selection rate", &g.Selection, &gd.Baseline.Selection}, {"true-positive rate", g.TPR, gd.Baseline.TPR}, {"false-positive rate", g.FPR, gd.Baseline.FPR}} {
			if r.now == nil || r.was == nil {
				continue
			}
			if left, sig := leaves(*r.now, *r.was); left {
				dr.say(sig, fmt.Sprintf("%s's %s%s is %s on %d scored nodes, outside its validation-time interval %s", name(g.Group), r.name, of, pct(*r.now), r.now.Used, pct(*r.was)))
			}
		}
	}
	return out
}

// groupMix compares each group's share of the n scored nodes of a known
// group (now's Count) with its share of the baseline's, for every group
// in either, in group order.
func groupMix(b Baseline, now []GroupRates, n int) []GroupShare {
	total := 0
	was := map[int]int{}
	for _, g := range b.groups() {
		total += g.Count
		was[g.Group] = g.Count
	}
	cur := map[int]int{}
	for _, g := range now {
		cur[g.Group] = g.Count
	}
	if total == 0 || n == 0 {
		return nil
	}
	var ids []int
	for g := range was {
		ids = append(ids, g)
	}
	for g := range cur {
		if _, ok := was[g]; !ok {
			ids = append(ids, g)
		}
	}
	slices.Sort(ids)
	out := make([]GroupShare, 0, len(ids))
	for _, g := range ids {
		s := GroupShare{Group: g, Now: wilson(cur[g], n, b.Level), Baseline: wilson(was[g], total, b.Level)}
		if g < len(b.GroupNames) {
			s.Name = b.GroupNames[g]
		}
		s.Left, s.Significant = leaves(s.Now, s.Baseline)
		out = append(out, s)
	}
	return out
}

// Scored is what [Baseline.Compare] compares with a baseline: the
// decisions on the scored nodes and, optionally, their features.
type Scored struct {
	// Probs holds n × Classes class probabilities, row-major.
	Probs   []float64
	Classes int
	// Labels (nil: none known) and Sens hold n entries (−1: unknown).
	Labels, Sens []int
	// Nodes are the scored rows (nil: all n).
	Nodes []int
	// X, if not nil, holds the n rows' features, D values per row
	// (row-major, the model's columns); the rows Nodes are compared with
	// the baseline's feature references.
	X []float64
	D int
}

// Compare is the one call of drift: CompareBaseline's outcomes and group
// mix, and, when s.X is given, CompareFeatures' feature drift
// (Drift.Features, its warnings and notes added to the Drift's). A
// baseline without feature references (saved before RecordFeatures
// existed, or without it) gives a note saying so, not an error. It
// returns CompareBaseline's and CompareFeatures' errors.
func (b Baseline) Compare(s Scored, opt Options, cfg BootstrapConfig) (Drift, error) {
	labels := s.Labels
	if labels == nil {
		labels = make([]int, len(s.Sens))
		for i := range labels {
			labels[i] = -1
		}
	}
	dr, err := CompareBaseline(b, s.Probs, s.Classes, labels, s.Sens, s.Nodes, opt, cfg)
	if err != nil || s.X == nil {
		return dr, err
	}
	if len(b.Features) == 0 {
		dr.Notes = append(dr.Notes, "the baseline records no features (Baseline.RecordFeatures before saving it): feature drift is not measured")
		return dr, nil
	}
	if s.D > 0 && len(s.X) != len(s.Sens)*s.D {
		return Drift{}, fmt.Errorf("%w: Compare: %d feature values for %d nodes of %d features, want n·D", ErrLength, len(s.X), len(s.Sens), s.D)
	}
	fd, err := b.CompareFeatures(s.X, s.D, s.Nodes)
	if err != nil {
		return Drift{}, fmt.Errorf("metrics: Compare: %w", err)
	}
	dr.Features = &fd
	dr.Warnings = append(dr.Warnings, fd.Warnings...)
	dr.Notes = append(dr.Notes, fd.Notes...)
	return dr, nil
}

// String gives the warnings and notes, one per line ("no drift" without
// any).
func (d Drift) String() string {
	if len(d.Warnings)+len(d.Notes) == 0 {
		return "no drift: every rate, criterion and group share is within its validation-time interval"
	}
	return strings.Join(append(append([]string(nil), d.Warnings...), d.Notes...), "\n")
}

// leaves reports whether now's point is outside was, and whether the
// two intervals are disjoint. Each interval is taken with its point (a
// difference's bootstrap interval may lie above its point; see
// Interval), so that a baseline compared with itself never leaves.
func leaves(now, was Interval) (left, significant bool) {
	wLo, wHi := min(was.Lo, was.Point), max(was.Hi, was.Point)
	nLo, nHi := min(now.Lo, now.Point), max(now.Hi, now.Point)
	left = now.Point < wLo || now.Point > wHi
	return left, nLo > wHi || nHi < wLo
}

// allSame returns the class every node of idx is predicted, or −1 when
// two differ.
func allSame(probs []float64, classes int, sens, idx []int, opt Options) int {
	cols := classes
	first := -1
	for k, i := range idx {
		d := decision(probs[i*cols:(i+1)*cols], opt)
		if k == 0 {
			first = d
		} else if d != first {
			return -1
		}
	}
	return first
}

// allIfNil returns nodes, or every node 0..n−1 when nodes is nil.
func allIfNil(nodes []int, n int) []int {
	if nodes != nil {
		return nodes
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	return all
}

// selectionIntervals returns the bootstrap intervals of the criteria
// that compare selection rates alone, on nodes whose labels are not
// read: Bootstrap's stratified resampling over the groups present in
// nodes (at least two), with every node coded by its decision alone.
func selectionIntervals(probs []float64, classes int, sens, nodes []int, opt Options, cfg BootstrapConfig) map[Criterion]Interval {
	ids, keys := renumberGroups(sens, nodes)
	b := &bootstrapper{members: make([][]uint8, len(keys))}
	for _, i := range nodes {
		var c uint8
		if decision(probs[i*classes:(i+1)*classes], opt) == opt.Positive {
			c = codeSelected
		}
		g := ids[sens[i]]
		b.members[g] = append(b.members[g], c)
	}
	cnt := make([]codeCounts, len(keys))
	for g, m := range b.members {
		for _, c := range m {
			cnt[g][c]++
		}
	}
	point := statsOf(cnt)
	var vals [numCriteria][]float64
	rng := rand.New(rand.NewSource(cfg.Seed))
	for range cfg.Resamples {
		b.resample(rng, cnt)
		st := statsOf(cnt)
		for c := range vals {
			if st.ok[c] {
				vals[c] = append(vals[c], st.vals[c])
			}
		}
	}
	out := map[Criterion]Interval{}
	for _, c := range Criteria() {
		only := true
		for _, r := range c.Rates() {
			only = only && r == SelectionRate
		}
		if only && point.ok[c] && len(vals[c]) > 0 {
			out[c] = unitInterval(vals[c], point.vals[c], cfg.Level)
		}
	}
	return out
}

// renumberGroups numbers the groups present among nodes 0, 1, ... in
// ascending order of their ids: ids maps a group id to its number, keys
// lists the group ids in that order.
func renumberGroups(sens, nodes []int) (ids map[int]int, keys []int) {
	ids = map[int]int{}
	for _, i := range nodes {
		ids[sens[i]] = 0
	}
	keys = make([]int, 0, len(ids))
	for g := range ids {
		keys = append(keys, g)
	}
	slices.Sort(keys)
	for k, g := range keys {
		ids[g] = k
	}
	return ids, keys
}
