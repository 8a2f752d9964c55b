package features

import (
	"fmt"
	"math"
)

// Schema describes the columns of a feature matrix as a model was trained
// on them: their names, in order, and the min-max scaling that mapped each
// raw column to [−1, 1] (nil when the values were used as they are). A
// model file records it (fmp/modelio), and a loader given it
// (datasets.FilesConfig.Schema) puts new data in the same columns, in the
// same order, scaled the same way, instead of re-fitting the scaling on
// the new data.
type Schema struct {
	// Names are the column names, in the matrix's order, each unique.
	Names []string `json:"names"`
	// Scaling, if not nil, is the min-max scaling of every column.
	Scaling *MinMax `json:"scaling,omitempty"`
	// Categorical lists the categorical columns that were one-hot encoded:
	// each level of each became a column of Names named OneHotName(column,
	// level), 1 for the rows of that level and 0 otherwise (scaled by the
	// identity: Min −1, Max 1). New data is encoded with these levels; a
	// level not among them is refused.
	Categorical []Categorical `json:"categorical,omitempty"`
}

// Categorical is a one-hot encoded column: its name in the table and its
// levels, in the order of their columns.
type Categorical struct {
	Column string   `json:"column"`
	Levels []string `json:"levels"`
}

// OneHotName is the name of the feature column of a categorical column's
// level: "column=level".
func OneHotName(column, level string) string { return column + "=" + level }

// MinMax is a min-max scaling: raw value x of column j becomes
// 2(x − Min[j])/(Max[j] − Min[j]) − 1, and 0 when Max[j] = Min[j] (a
// constant column). Values outside the fitted range map outside [−1, 1].
type MinMax struct {
	Min []float64 `json:"min"`
	Max []float64 `json:"max"`
}

// Validate checks that the names are non-empty and unique, that the
// scaling, if any, has one finite Min ≤ Max per column whose range is
// finite, and that every categorical column has a name, at least one
// level, no level twice and a column of Names per level.
func (s Schema) Validate() error {
	if err := s.validateCategorical(); err != nil {
		return err
	}
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

func (s Schema) validateCategorical() error {
	names := make(map[string]bool, len(s.Names))
	for _, n := range s.Names {
		names[n] = true
	}
	cols := map[string]bool{}
	for _, c := range s.Categorical {
		if c.Column == "" {
			return fmt.Errorf("features: Schema: a categorical column has an empty name")
		}
		if cols[c.Column] {
			return fmt.Errorf("features: Schema: categorical column %q is listed twice", c.Column)
		}
		cols[c.Column] = true
		if len(c.Levels) == 0 {
			return fmt.Errorf("features: Schema: categorical column %q has no level", c.Column)
		}
		seen := make(map[string]bool, len(c.Levels))
		for _, l := range c.Levels {
			if seen[l] {
				return fmt.Errorf("features: Schema: categorical column %q lists level %q twice", c.Column, l)
			}
			seen[l] = true
			if !names[OneHotName(c.Column, l)] {
				return fmt.Errorf("features: Schema: categorical column %q has level %q but no column %q", c.Column, l, OneHotName(c.Column, l))
			}
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
	return ScaleMinMax(x, s.Scaling.Min[j], s.Scaling.Max[j])
}

// ScaleMinMax maps x by the range lo to hi: lo to −1, hi to 1, linearly
// (0 when hi ≤ lo, a constant column). It computes (x − lo)/(hi − lo)·2 − 1,
// the same value as 2(x − lo)/(hi − lo) − 1 but without its overflow when
// hi − lo is finite and 2(x − lo) is not (0 to 1e308); x far outside the
// range can still give ±Inf (x − lo overflowing), which callers check.
func ScaleMinMax(x, lo, hi float64) float64 {
	if hi > lo {
		return (x-lo)/(hi-lo)*2 - 1
	}
	return 0
}

// Equal reports whether two schemas have the same names in the same
// order, the same scaling and the same categorical columns and levels.
func (s Schema) Equal(o Schema) bool {
	if len(s.Names) != len(o.Names) || (s.Scaling == nil) != (o.Scaling == nil) || len(s.Categorical) != len(o.Categorical) {
		return false
	}
	for k, c := range s.Categorical {
		d := o.Categorical[k]
		if c.Column != d.Column || len(c.Levels) != len(d.Levels) {
			return false
		}
		for j := range c.Levels {
			if c.Levels[j] != d.Levels[j] {
				return false
			}
		}
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
