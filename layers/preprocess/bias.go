package preprocess

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/fairmp/fairmp/graph"
)

// Wasserstein1 returns the 1-Wasserstein (earth mover's) distance between
// the empirical distributions of the samples a and b, each value of a
// sample weighing 1/len: ∫ |F_a(t) − F_b(t)| dt over the two empirical
// distribution functions, computed exactly by sorting (scipy's
// wasserstein_distance). It returns an error for an empty sample or a
// value that is not finite.
func Wasserstein1(a, b []float64) (float64, error) {
	if len(a) == 0 || len(b) == 0 {
		return 0, fmt.Errorf("preprocess: Wasserstein1: samples of %d and %d values, want both non-empty", len(a), len(b))
	}
	for _, s := range [][]float64{a, b} {
		for i, v := range s {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, fmt.Errorf("preprocess: Wasserstein1: value %d is %v, want finite", i, v)
			}
		}
	}
	return wasserstein1(slices.Clone(a), slices.Clone(b)), nil
}

// wasserstein1 sorts a and b in place and integrates |F_a − F_b|.
func wasserstein1(a, b []float64) float64 {
	slices.Sort(a)
	slices.Sort(b)
	na, nb := float64(len(a)), float64(len(b))
	i, j := 0, 0
	var w float64
	prev := math.Min(a[0], b[0])
	for i < len(a) || j < len(b) {
		var t float64
		switch {
		case j == len(b) || (i < len(a) && a[i] <= b[j]):
			t = a[i]
		default:
			t = b[j]
		}
		w += math.Abs(float64(i)/na-float64(j)/nb) * (t - prev)
		prev = t
		for i < len(a) && a[i] == t {
			i++
		}
		for j < len(b) && b[j] == t {
			j++
		}
	}
	return w
}

// BiasConfig sets the propagation of the structural bias.
type BiasConfig struct {
	// Alpha is α of P = α·Â + (1 − α)·I, Â = D^-1/2 (A + I) D^-1/2
	// (D the degrees of A + I). The paper sets α = 1/λ_max = 0.5.
	Alpha float64
	// Betas are β_1..β_H of M_H = Σ_h β_h P^h: H = len(Betas) hops.
	// Default [1, 0.9] (the authors' 0.9^(h−1), H = 2). The authors' code
	// multiplies the features by P at every hop instead of by P^h, so
	// that its numbers are those of Betas = [1.9].
	Betas []float64
}

// DefaultBiasConfig returns α = 0.5 and β = [1, 0.9].
func DefaultBiasConfig() BiasConfig { return BiasConfig{Alpha: 0.5, Betas: []float64{1, 0.9}} }

// Validate checks α ∈ [0, 1] and at least one finite β.
func (c BiasConfig) Validate() error {
	if !(c.Alpha >= 0 && c.Alpha <= 1) {
		return fmt.Errorf("Alpha %v, want in [0, 1]", c.Alpha)
	}
	if len(c.Betas) == 0 {
		return errors.New("Betas is empty, want one weight per hop (default [1, 0.9])")
	}
	for h, b := range c.Betas {
		if math.IsNaN(b) || math.IsInf(b, 0) {
			return fmt.Errorf("Betas[%d] = %v, want finite", h, b)
		}
	}
	return nil
}

// DataBias is EDITS' measure of the bias in a graph's data.
type DataBias struct {
	// Attribute is b_attr, the mean of AttributeColumns.
	Attribute float64
	// Structural is b_stru, the mean of StructuralColumns.
	Structural float64
	// AttributeColumns holds, per feature column scaled to unit L2
	// norm, the 1-Wasserstein distance between the values of group 0
	// and of group 1.
	AttributeColumns []float64
	// StructuralColumns holds the same for the columns of M_H X.
	StructuralColumns []float64
}

// Bias measures EDITS' attribute and structural bias of the graph g with
// the n × d row-major features x, between the nodes of group 0 and those
// of group 1 (sens; −1 unknown, left out; other groups are an error:
// EDITS is defined for two). Each column is first divided by its L2 norm
// over all nodes (a zero column stays zero, its distance 0). Memory
// O(n·d + edges).
func Bias(g *graph.Graph, x []float64, d int, sens []int, cfg BiasConfig) (DataBias, error) {
	if err := cfg.Validate(); err != nil {
		return DataBias{}, fmt.Errorf("preprocess: Bias: %w", err)
	}
	if _, err := checkData(g, x, d, sens); err != nil {
		return DataBias{}, fmt.Errorf("preprocess: Bias: %w", err)
	}
	n := g.N()
	xn := make([]float64, len(x))
	copy(xn, x)
	for m, nrm := range columnNorms(x, n, d) {
		if nrm > 0 {
			for i := 0; i < n; i++ {
				xn[i*d+m] /= nrm
			}
		}
	}
	out := DataBias{AttributeColumns: groupDistances(xn, n, d, sens)}
	wg := newWGraph[float64](g, nil)
	w := wg.ones()
	deg, s := make([]float64, n), make([]float64, n)
	wg.scales(w, deg, s)
	r := make([]float64, len(x))
	cur, next := slices.Clone(xn), make([]float64, len(x))
	for _, b := range cfg.Betas {
		wg.applyRows(w, s, cfg.Alpha, cur, next, d)
		for k, v := range next {
			r[k] += b * v
		}
		cur, next = next, cur
	}
	out.StructuralColumns = groupDistances(r, n, d, sens)
	out.Attribute = mean(out.AttributeColumns)
	out.Structural = mean(out.StructuralColumns)
	return out, nil
}

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// groupDistances returns, per column of the n × d matrix x, the
// 1-Wasserstein distance between group 0's and group 1's values.
func groupDistances(x []float64, n, d int, sens []int) []float64 {
	out := make([]float64, d)
	var a, b []float64
	for m := 0; m < d; m++ {
		a, b = a[:0], b[:0]
		for i := 0; i < n; i++ {
			switch sens[i] {
			case 0:
				a = append(a, x[i*d+m])
			case 1:
				b = append(b, x[i*d+m])
			}
		}
		out[m] = wasserstein1(a, b)
	}
	return out
}

// columnNorms returns each column's L2 norm.
func columnNorms(x []float64, n, d int) []float64 {
	out := make([]float64, d)
	for i := 0; i < n; i++ {
		for m, v := range x[i*d : (i+1)*d] {
			out[m] += v * v
		}
	}
	for m := range out {
		out[m] = math.Sqrt(out[m])
	}
	return out
}

// checkData checks the shapes, the features' finiteness and the groups
// (0, 1 or −1, both 0 and 1 present), and returns the group sizes.
func checkData(g *graph.Graph, x []float64, d int, sens []int) ([2]int, error) {
	var cnt [2]int
	if g == nil {
		return cnt, errors.New("nil graph")
	}
	n := g.N()
	if d <= 0 {
		return cnt, fmt.Errorf("%d feature columns, want at least 1", d)
	}
	if len(x) != n*d {
		return cnt, fmt.Errorf("%d feature values, want %d nodes × %d columns = %d", len(x), n, d, n*d)
	}
	if len(sens) != n {
		return cnt, fmt.Errorf("%d sensitive groups, want one per node (%d)", len(sens), n)
	}
	for k, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return cnt, fmt.Errorf("feature of node %d, column %d is %v, want finite", k/d, k%d, v)
		}
	}
	for i, s := range sens {
		switch s {
		case -1:
		case 0, 1:
			cnt[s]++
		default:
			return cnt, fmt.Errorf("node %d is in group %d, want 0, 1 or −1 (unknown): EDITS compares two groups", i, s)
		}
	}
	if cnt[0] == 0 || cnt[1] == 0 {
		return cnt, fmt.Errorf("group 0 has %d known nodes and group 1 has %d, want both at least 1", cnt[0], cnt[1])
	}
	return cnt, nil
}
