package exp

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// SplitList splits a comma-separated flag value into its trimmed, nonempty
// items ("a, b,,c" → [a b c]; "" → nil).
func SplitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// ParseFloats parses a comma-separated list of finite numbers, each at
// least min (math.Inf(-1) for no bound), in the order given. It returns
// an error naming the first bad item, or one for a list without values.
func ParseFloats(s string, min float64) ([]float64, error) {
	var out []float64
	for _, v := range SplitList(s) {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%q is not a finite number", v)
		}
		if f < min {
			return nil, fmt.Errorf("%q is below %g", v, min)
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		return nil, errors.New("no values")
	}
	return out, nil
}

// ParseInts is ParseFloats for integers.
func ParseInts(s string, min int) ([]int, error) {
	var out []int
	for _, v := range SplitList(s) {
		n, err := strconv.Atoi(v)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", v)
		}
		if n < min {
			return nil, fmt.Errorf("%q is below %d", v, min)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, errors.New("no values")
	}
	return out, nil
}
