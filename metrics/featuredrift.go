package metrics

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// farTails is how many widths of the outer decile beyond the training
// range a value is far (a warning on its own).
const farTails = 10

// FeatureBins is the number of quantile bins a feature's reference has
// (fewer when the training values tie).
const FeatureBins = 10

// MaxFeatureColumns caps the features a Baseline records: the first
// MaxFeatureColumns columns (about 500 bytes of a model file's header
// each, which holds at most 1 MiB); Baseline.FeatureColumns keeps the
// model's total, and CompareFeatures says which columns were not
// compared.
const MaxFeatureColumns = 256

// driftAlpha is the false-alarm budget of the feature and group-mix
// tests, over all features.
const driftAlpha = 0.01

// FeatureRef is one feature's reference: its range and binned
// distribution on the training nodes.
type FeatureRef struct {
	// Name is the feature's column name ("x3" when none was given).
	Name string `json:"name"`
	// Nodes is the number of training nodes measured.
	Nodes int `json:"nodes"`
	// Min and Max are the training range.
	Min float64 `json:"min"`
	Max float64 `json:"max"`
	// Edges are the bins' interior edges, ascending (at most
	// FeatureBins − 1); Fractions the training nodes' share per bin,
	// len(Edges) + 1 of them, summing to 1.
	Edges     []float64 `json:"edges"`
	Fractions []float64 `json:"fractions"`
}

// Width returns the training range's width, Max − Min, or 1 for a
// constant feature: the unit of Beyond.
func (f FeatureRef) Width() float64 {
	if w := f.Max - f.Min; w > 0 {
		return w
	}
	return 1
}

// Beyond returns how far v lies outside the training range in
// multiples of Width (0 inside): 2 for v = 3 when the range is [0, 1].
// A service can refuse values beyond a stated multiple with it.
func (f FeatureRef) Beyond(v float64) float64 {
	switch {
	case v > f.Max:
		return (v - f.Max) / f.Width()
	case v < f.Min:
		return (f.Min - v) / f.Width()
	}
	return 0
}

// tail returns the width of the training distribution's outer decile on
// one side (Max − the last edge, or the first edge − Min), or Width when
// it is 0 (a binary or constant feature): the unit in which a value
// outside is far.
func (f FeatureRef) tail(upper bool) float64 {
	var t float64
	if len(f.Edges) > 0 {
		if upper {
			t = f.Max - f.Edges[len(f.Edges)-1]
		} else {
			t = f.Edges[0] - f.Min
		}
	}
	if t > 0 {
		return t
	}
	return f.Width()
}

// bin returns the bin of v: the number of edges below it.
func (f FeatureRef) bin(v float64) int {
	return sort.SearchFloat64s(f.Edges, v)
}

// validate checks a reference read from a file.
func (f FeatureRef) validate(k int) error {
	bad := func(what string) error {
		return fmt.Errorf("%w: Baseline.Features[%d] (%q): %s", ErrValue, k, f.Name, what)
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch {
	case f.Name == "":
		return bad("no name")
	case f.Nodes <= 0:
		return bad(fmt.Sprintf("%d nodes, want at least one", f.Nodes))
	case !finite(f.Min) || !finite(f.Max) || f.Min > f.Max:
		return bad(fmt.Sprintf("range [%v, %v], want finite min ≤ max", f.Min, f.Max))
	case len(f.Edges) >= FeatureBins || len(f.Fractions) != len(f.Edges)+1:
		return bad(fmt.Sprintf("%d edges and %d fractions, want at most %d edges and one fraction more", len(f.Edges), len(f.Fractions), FeatureBins-1))
	}
	for i, e := range f.Edges {
		if !finite(e) || e < f.Min || e > f.Max || (i > 0 && e <= f.Edges[i-1]) {
			return bad(fmt.Sprintf("edge %d = %v, want edges strictly ascending within [min, max]", i, e))
		}
	}
	sum := 0.0
	for i, p := range f.Fractions {
		if !(p >= 0 && p <= 1) {
			return bad(fmt.Sprintf("fraction %d = %v, want a share in [0, 1]", i, p))
		}
		sum += p
	}
	if math.Abs(sum-1) > 1e-9 {
		return bad(fmt.Sprintf("fractions summing to %v, want 1", sum))
	}
	return nil
}

// featureName returns names[j], or "x<j>" without names.
func featureName(names []string, j int) string {
	if names == nil {
		return fmt.Sprintf("x%d", j)
	}
	return names[j]
}

// checkMatrix checks x (n × d, row-major) and nodes, returning the rows.
func checkMatrix(fn string, x []float64, d int, nodes []int) ([]int, error) {
	if d <= 0 || len(x)%d != 0 {
		return nil, fmt.Errorf("%w: %s: %d feature values in rows of %d, want n × d", ErrLength, fn, len(x), d)
	}
	n := len(x) / d
	nodes = allIfNil(nodes, n)
	if len(nodes) == 0 {
		return nil, fmt.Errorf("%w: %s: no nodes", ErrEmpty, fn)
	}
	for k, i := range nodes {
		if i < 0 || i >= n {
			return nil, fmt.Errorf("%w: %s: nodes[%d] = %d, want a row in 0..%d", ErrValue, fn, k, i, n-1)
		}
	}
	return nodes, nil
}

// RecordFeatures records each feature's reference (range and quantile
// bins, see [FeatureRef]) from the training nodes' features: x holds n
// rows of d values (row-major), names the d column names (nil: x0, x1,
// …), nodes the training rows (nil: all). Only the first
// MaxFeatureColumns columns are recorded; FeatureColumns is set to d.
// It returns an error wrapping ErrLength, ErrValue (a node out of range,
// a non-finite value, names not one per column, empty or repeated) or
// ErrEmpty (no node), and leaves b unchanged then.
func (b *Baseline) RecordFeatures(x []float64, d int, names []string, nodes []int) error {
	nodes, err := checkMatrix("RecordFeatures", x, d, nodes)
	if err != nil {
		return err
	}
	if names != nil {
		if len(names) != d {
			return fmt.Errorf("%w: RecordFeatures: %d names for %d columns, want one per column (or nil)", ErrValue, len(names), d)
		}
		seen := map[string]int{}
		for j, s := range names {
			if s == "" {
				return fmt.Errorf("%w: RecordFeatures: column %d has an empty name", ErrValue, j)
			}
			if k, ok := seen[s]; ok {
				return fmt.Errorf("%w: RecordFeatures: columns %d and %d are both named %q", ErrValue, k, j, s)
			}
			seen[s] = j
		}
	}
	cols := min(d, MaxFeatureColumns)
	refs := make([]FeatureRef, cols)
	vals := make([]float64, len(nodes))
	for j := range cols {
		for k, i := range nodes {
			v := x[i*d+j]
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: RecordFeatures: node %d's %q is %v, want a finite value", ErrValue, i, featureName(names, j), v)
			}
			vals[k] = v
		}
		slices.Sort(vals)
		f := FeatureRef{Name: featureName(names, j), Nodes: len(vals), Min: vals[0], Max: vals[len(vals)-1]}
		for q := 1; q < FeatureBins; q++ {
			e := quantile(vals, float64(q)/FeatureBins)
			if len(f.Edges) == 0 || e > f.Edges[len(f.Edges)-1] {
				f.Edges = append(f.Edges, e)
			}
		}
		counts := make([]int, len(f.Edges)+1)
		for _, v := range vals {
			counts[f.bin(v)]++
		}
		f.Fractions = make([]float64, len(counts))
		for k, c := range counts {
			f.Fractions[k] = float64(c) / float64(len(vals))
		}
		refs[j] = f
	}
	b.Features, b.FeatureColumns = refs, d
	return nil
}

// FeatureDrift compares the scored nodes' features with the recorded
// references (CompareFeatures; Drift.Features).
//
// Each feature's reference is its training range [Min, Max] and its
// distribution over (at most) FeatureBins quantile bins: the interior
// edges are the training values' deciles (ties merged, so a 0/1 feature
// has two edges and three bins, the last one empty), value v falls in
// the bin of the number of edges below it ((−∞, e₁], (e₁, e₂], …,
// (e_k, ∞)), and Fractions are the training nodes' shares per bin.
//
// The distance is the population stability index over those bins,
// PSI = Σ (p − q) ln(p / q), p the scored shares and q the training
// shares, each with half a node added to every bin (Krichevsky–Trofimov:
// an empty bin does not give ∞, and 30 scored nodes in 10 bins are not
// read as nine empty bins of a major shift): the
// symmetric Kullback–Leibler divergence, read with the usual thresholds,
// below 0.1 no shift, 0.1–0.25 a moderate shift, 0.25 and more a major
// one. PSI rather than Kolmogorov–Smirnov because it needs only the bins
// (a model file keeps 21 numbers per feature, not the training values)
// and because it weighs the tails, where a shift that changes decisions
// usually is. PSI alone is sample-size blind: 30 scored nodes from the
// training population give a PSI above 0.1 most of the time. So a PSI
// of 0.1 or more is a warning only when it is also beyond sampling noise:
// PSI · n·m/(n + m) (n training, m scored nodes) is asymptotically χ²
// with bins − 1 degrees of freedom for two samples of one population,
// and the warning needs it above the χ² quantile at 1 − 0.01/F (F
// features compared: a Bonferroni bound of 1% on a false alarm over all
// features); otherwise it is a note.
//
// Out of range: the shares of scored nodes below Min and above Max, and
// how far the farthest is, in multiples of the training range
// (Max − Min; 1 for a constant feature). New nodes of the training
// population fall above the maximum of n training values with
// probability 1/(n + 1), and k of m all fall above it with probability
// C(m, k)/C(n + m, k) whatever the distribution; a share outside is a
// warning when that probability is below 0.01/(2F) (the same 1% budget,
// both sides of every feature), or when a single value is far outside:
// beyond the range by 10 times the width of the training's outer decile
// on its side (Max − the 9th decile; the range's width for a binary
// feature). For a standard normal feature of 2000 training nodes that is
// about 22 beyond a maximum of 3.5, for a uniform one on [0, 1] 1, and a
// log-normal tail, which makes the outer decile wide, reaches it by
// chance about once in a million nodes (at 2 widths it did in 5% of 1000
// nodes). Otherwise a note, which still says how far.
type FeatureDrift struct {
	// Nodes is the number of scored nodes compared.
	Nodes int `json:"nodes"`
	// Features holds one entry per recorded feature, in column order.
	Features []FeatureShift `json:"features"`
	// Warnings and Notes are as Drift's, each naming its feature.
	Warnings []string `json:"warnings"`
	Notes    []string `json:"notes"`
}

// FeatureShift is one feature on the scored nodes against its reference.
type FeatureShift struct {
	Name string `json:"name"`
	// Below and Above are the shares of scored nodes below the training
	// minimum and above the training maximum; Beyond the farthest of
	// them outside the range, in multiples of its width (0: none
	// outside).
	Below  float64 `json:"below"`
	Above  float64 `json:"above"`
	Beyond float64 `json:"beyond"`
	// PSI is the population stability index over the reference's bins;
	// Noise the value sampling noise alone stays below (the χ² bound of
	// the package's test); Shift says "none", "moderate" or "major"
	// (PSI below 0.1, below 0.25, above), and Significant whether PSI is
	// above Noise.
	PSI         float64 `json:"psi"`
	Noise       float64 `json:"noise"`
	Shift       string  `json:"shift"`
	Significant bool    `json:"significant"`
}

// CompareFeatures compares the features of the scored nodes (the rows
// nodes of x, n × d row-major; nil: all) with the references
// RecordFeatures recorded: for each recorded feature the shares outside
// its training range and the PSI over its bins, with warnings and notes
// naming it (a warning is beyond sampling noise, with a 1% false-alarm
// budget over all features: see [FeatureDrift]). It returns ErrNoFeatures when
// b records no features, and an error wrapping ErrValue when d differs
// from the recorded FeatureColumns, for a non-finite value or a node out
// of range.
func (b Baseline) CompareFeatures(x []float64, d int, nodes []int) (FeatureDrift, error) {
	if len(b.Features) == 0 {
		return FeatureDrift{}, fmt.Errorf("%w: record them with Baseline.RecordFeatures on the training nodes before saving the baseline", ErrNoFeatures)
	}
	if d != b.FeatureColumns {
		return FeatureDrift{}, fmt.Errorf("%w: CompareFeatures: rows of %d features, the baseline recorded %d columns", ErrValue, d, b.FeatureColumns)
	}
	nodes, err := checkMatrix("CompareFeatures", x, d, nodes)
	if err != nil {
		return FeatureDrift{}, err
	}
	m := len(nodes)
	out := FeatureDrift{Nodes: m}
	level := 1 - driftAlpha/float64(len(b.Features))
	for j, f := range b.Features {
		counts := make([]int, len(f.Fractions))
		below, above, down, up := 0, 0, 0.0, 0.0
		for _, i := range nodes {
			v := x[i*d+j]
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return FeatureDrift{}, fmt.Errorf("%w: CompareFeatures: node %d's feature %q is %v, want a finite value", ErrValue, i, f.Name, v)
			}
			counts[f.bin(v)]++
			switch {
			case v < f.Min:
				below++
				down = max(down, f.Min-v)
			case v > f.Max:
				above++
				up = max(up, v-f.Max)
			}
		}
		beyond := max(down, up) / f.Width()
		psi := 0.0
		half := 0.5 * float64(len(counts))
		for k, c := range counts {
			p := (float64(c) + 0.5) / (float64(m) + half)
			q := (f.Fractions[k]*float64(f.Nodes) + 0.5) / (float64(f.Nodes) + half)
			psi += (p - q) * math.Log(p/q)
		}
		nf, mf := float64(f.Nodes), float64(m)
		noise := 0.0
		if df := len(counts) - 1; df > 0 {
			noise = chiSquareQuantile(df, level) * (nf + mf) / (nf * mf)
		}
		s := FeatureShift{Name: f.Name, Below: float64(below) / mf, Above: float64(above) / mf, Beyond: beyond, PSI: psi, Noise: noise, Significant: psi > noise}
		switch {
		case psi >= 0.25:
			s.Shift = "major"
		case psi >= 0.1:
			s.Shift = "moderate"
		default:
			s.Shift = "none"
		}
		out.Features = append(out.Features, s)
		if s.Shift != "none" {
			msg := fmt.Sprintf("feature %q: its distribution on the %d scored nodes has a PSI of %.3g against the training nodes' (a %s shift: 0.1 is moderate, 0.25 major)", f.Name, m, psi, s.Shift)
			if s.Significant {
				out.Warnings = append(out.Warnings, msg)
			} else {
				out.Notes = append(out.Notes, fmt.Sprintf("%s, within the sampling noise of %d scored nodes (up to %.3g)", msg, m, noise))
			}
		}
		for _, side := range []struct {
			k          int
			where      string
			edge, dist float64
			tail       float64
		}{{below, "below its training minimum", f.Min, down, f.tail(false)}, {above, "above its training maximum", f.Max, up, f.tail(true)}} {
			if side.k == 0 {
				continue
			}
			msg := fmt.Sprintf("feature %q: %.1f%% of the %d scored nodes (%d) are %s %.4g (training range %.4g…%.4g), up to %.3g× the range's width beyond it", f.Name, Percent(float64(side.k)/mf), m, side.k, side.where, side.edge, f.Min, f.Max, side.dist/f.Width())
			far := side.dist >= farTails*side.tail
			if far || rankTail(side.k, m, f.Nodes) < driftAlpha/float64(2*len(b.Features)) {
				out.Warnings = append(out.Warnings, msg)
			} else {
				out.Notes = append(out.Notes, msg+fmt.Sprintf(": as many as new nodes of the training population give (each falls outside with probability about 1/%d)", f.Nodes+1))
			}
		}
	}
	if b.FeatureColumns > len(b.Features) {
		out.Notes = append(out.Notes, fmt.Sprintf("features %d to %d of %d are not compared: a baseline records the first %d columns", len(b.Features), b.FeatureColumns-1, b.FeatureColumns, MaxFeatureColumns))
	}
	return out, nil
}

// rankTail returns the probability that at least k of m new values
// exceed the maximum (or fall below the minimum) of n values of the same
// continuous population: that the k largest of the n + m are all new,
// C(m, k) / C(n + m, k), whatever the distribution (exchangeability). Ties
// (a discrete feature) only lower the true probability.
func rankTail(k, m, n int) float64 {
	p := 1.0
	for i := range k {
		p *= float64(m-i) / float64(n+m-i)
		if p < 1e-300 {
			return 0
		}
	}
	return p
}

// chiSquareQuantile returns the p quantile of χ² with df degrees of
// freedom (Wilson–Hilferty: relative error below 1% for df ≥ 1 and p in
// [0.9, 1 − 1e-9]).
func chiSquareQuantile(df int, p float64) float64 {
	k := float64(df)
	z := normalQuantile(p)
	c := 2 / (9 * k)
	return k * math.Pow(max(0, 1-c+z*math.Sqrt(c)), 3)
}

// String gives the warnings and notes, one per line.
func (f FeatureDrift) String() string {
	if len(f.Warnings)+len(f.Notes) == 0 {
		return "no feature drift"
	}
	return strings.Join(append(append([]string(nil), f.Warnings...), f.Notes...), "\n")
}
