// Package cli holds the small command-line helpers that fairmp's commands
// share (the own-data command, serve, fmpbeam and the lab's research
// drivers): parsing comma-separated flag values, the rule flags, the
// trusted keys of -trusted-keys, and the node-table flags of a graph of
// your own (NodeTable) with the words that tell the loader's errors in
// them (FlagWords), and the output rule (ResolvePath before writing,
// ReplaceFile to replace only a file the command wrote, ClaimDir for a
// folder of them).
package cli

import (
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/fairmp/fairmp/metrics"
	"github.com/fairmp/fairmp/metrics/selection"
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

// RuleFlags are the rule flags the commands share: -criterion, and
// either -max-acc-loss (accuracy points) or -bound (points for a
// difference, a ratio for a ratio). Set reports which were on the
// command line.
type RuleFlags struct {
	Criterion         string
	MaxAccLoss, Bound float64
	SetMaxAccLoss     bool
	SetBound          bool
}

// Rule builds the rule the flags ask for: the most accurate within
// -bound when it is set, the fairest within -max-acc-loss otherwise. Its
// errors name the flags.
func Rule(f RuleFlags) (selection.Rule, error) {
	crit, err := metrics.ParseCriterion(f.Criterion)
	if err != nil {
		return selection.Rule{}, fmt.Errorf("-criterion %q, want one of %s", f.Criterion, strings.Join(metrics.CriterionNames(), ", "))
	}
	switch {
	case f.SetBound && f.SetMaxAccLoss:
		return selection.Rule{}, errors.New("-bound and -max-acc-loss are two rules, want one: the fairest within an accuracy loss, or the most accurate within a bound")
	case f.SetBound && crit.IsRatio():
		if !(f.Bound > 0 && f.Bound <= 1) {
			return selection.Rule{}, fmt.Errorf("-bound %v for -criterion %s, want the smallest allowed ratio in (0, 1], e.g. 0.8", f.Bound, crit)
		}
		return selection.MostAccurateWithin(crit, f.Bound), nil
	case f.SetBound:
		if !(f.Bound >= 0 && f.Bound <= 100) {
			return selection.Rule{}, fmt.Errorf("-bound %v for -criterion %s, want the largest allowed difference in points, in [0, 100]", f.Bound, crit)
		}
		return selection.MostAccurateWithin(crit, f.Bound/100), nil
	}
	if !(f.MaxAccLoss > 0 && f.MaxAccLoss < 50) {
		return selection.Rule{}, fmt.Errorf("-max-acc-loss %v, want accuracy points in (0, 50): 1 is one point", f.MaxAccLoss)
	}
	return selection.FairestWithin(crit, f.MaxAccLoss/100), nil
}

// TrustedKeys reads the files of a -trusted-keys flag: comma-separated
// file names, each file holding one ed25519 public key as 64 hexadecimal
// digits (white space around it ignored, at most 4 KiB). Its errors name
// the flag and the file; the commands return them as bad input.
func TrustedKeys(list string) ([]ed25519.PublicKey, error) {
	var keys []ed25519.PublicKey
	for _, path := range strings.Split(list, ",") {
		if path == "" {
			return nil, fmt.Errorf("-trusted-keys %q: an empty file name, want FILE[,FILE...]", list)
		}
		b, err := readBounded(path, 4096)
		if err != nil {
			return nil, fmt.Errorf("-trusted-keys %s: %v", path, err)
		}
		k, err := hex.DecodeString(strings.TrimSpace(string(b)))
		if err != nil || len(k) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("-trusted-keys %s: want an ed25519 public key as %d hexadecimal digits (hex.EncodeToString of the 32-byte key) and nothing else", path, 2*ed25519.PublicKeySize)
		}
		keys = append(keys, ed25519.PublicKey(k))
	}
	return keys, nil
}

// readBounded reads at most max bytes of a file, refusing a longer one.
func readBounded(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("longer than %d bytes: not a key file", max)
	}
	return b, nil
}
