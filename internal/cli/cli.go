// Package cli holds the small command-line helpers that fairmp's commands
// share (the own-data command and the lab's research drivers): parsing
// comma-separated flag values.
package cli

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
	return parseList(s, min, "a finite number", func(v string) (float64, bool) {
		f, err := strconv.ParseFloat(v, 64)
		return f, err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
	})
}

// ParseInts is ParseFloats for integers.
func ParseInts(s string, min int) ([]int, error) {
	return parseList(s, min, "an integer", func(v string) (int, bool) {
		n, err := strconv.Atoi(v)
		return n, err == nil
	})
}

// parseList parses SplitList(s) with parse, which reports whether an
// item is a valid what, and checks each value against min.
func parseList[T int | float64](s string, min T, what string, parse func(string) (T, bool)) ([]T, error) {
	var out []T
	for _, v := range SplitList(s) {
		x, ok := parse(v)
		if !ok {
			return nil, fmt.Errorf("%q is not %s", v, what)
		}
		if x < min {
			return nil, fmt.Errorf("%q is below %v", v, min)
		}
		out = append(out, x)
	}
	if len(out) == 0 {
		return nil, errors.New("no values")
	}
	return out, nil
}
