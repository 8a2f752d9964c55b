package features

import (
	"fmt"
	"math"
)

// Schema describes the columns of a feature matrix as a model was trained
// on them: their names, in order, and the min-max scaling that mapped each
// raw column to [−1, 1] (nil when the values were used as they are). A
// model file records it (layers/modelio), and a loader given it
// (datasets.FilesConfig.Schema) puts new data in the same columns, in the
// same order, scaled the same way, instead of re-fitting the scaling on
// the new data.
type Schema struct {
	// Names are the column names, in the matrix's order, each unique.
	Names []string `json:"names"`
	// Scaling, if not nil, is the min-max scaling of every column.
	Scaling *MinMax `json:"scaling,omitempty"`
}

// MinMax is a min-max scaling: raw value x of column j becomes
// 2(x − Min[j])/(Max[j] − Min[j]) − 1, and 0 when Max[j] = Min[j] (a
// constant column). Values outside the fitted range map outside [−1, 1].
type MinMax struct {
	Min []float64 `json:"min"`
	Max []float64 `json:"max"`
}

// Validate checks that the names are non-empty and unique and that the
// scaling, if any, has one finite Min ≤ Max per column whose range is
// finite.
func (s Schema) Validate() error {
	seen := make(map[string]int, len(s.Names))
	for j, n := range s.Names {
		if n == "" {
			return fmt.Errorf("features: Schema: column %d has an empty name", j)
		}
		if k, ok := seen[n]; ok {
			return fmt.Errorf("features: Schema: column %d repeats the name %q of column %d", j, n, k)
		}
		seen[n] = j
	}
	if s.Scaling == nil {
		return nil
	}
	if len(s.Scaling.Min) != len(s.Names) || len(s.Scaling.Max) != len(s.Names) {
		return fmt.Errorf("features: Schema: %d names, %d minima and %d maxima, want one of each per column", len(s.Names), len(s.Scaling.Min), len(s.Scaling.Max))
	}
	for j := range s.Names {
		lo, hi := s.Scaling.Min[j], s.Scaling.Max[j]
		if math.IsNaN(lo) || math.IsInf(lo, 0) || math.IsNaN(hi) || math.IsInf(hi, 0) || lo > hi || math.IsInf(hi-lo, 0) {
			return fmt.Errorf("features: Schema: column %q has the range [%v, %v], want finite Min ≤ Max with a finite difference", s.Names[j], lo, hi)
		}
	}
	return nil
}

// Scale maps raw value x of column j with the schema's scaling (x itself
// without one).
func (s Schema) Scale(j int, x float64) float64 {
	if s.Scaling == nil {
		return x
	}
	lo, hi := s.Scaling.Min[j], s.Scaling.Max[j]
	if hi > lo {
		return 2*(x-lo)/(hi-lo) - 1
	}
	return 0
}

// Equal reports whether two schemas have the same names in the same
// order and the same scaling.
func (s Schema) Equal(o Schema) bool {
	if len(s.Names) != len(o.Names) || (s.Scaling == nil) != (o.Scaling == nil) {
		return false
	}
	for j := range s.Names {
		if s.Names[j] != o.Names[j] {
			return false
		}
		if s.Scaling != nil && (s.Scaling.Min[j] != o.Scaling.Min[j] || s.Scaling.Max[j] != o.Scaling.Max[j]) {
			return false
		}
	}
	return true
}
