// Package named holds the one implementation of a package's list of
// named things (fairness methods, pre-processing methods): their names in
// order, and the lookup by name with an error that lists them. Each
// package keeps its own list and sentinel; this package only walks it.
package named

import (
	"fmt"
	"strings"
)

// Named is anything with a name a command takes.
type Named interface{ Name() string }

// Names returns the names of list, in order.
func Names[T Named](list []T) []string {
	out := make([]string, 0, len(list))
	for _, m := range list {
		out = append(out, m.Name())
	}
	return out
}

// Lookup returns the element of list named name, or an error wrapping
// unknown that quotes name and lists the names.
func Lookup[T Named](list []T, name string, unknown error) (T, error) {
	for _, m := range list {
		if m.Name() == name {
			return m, nil
		}
	}
	var zero T
	return zero, fmt.Errorf("%w %q, want one of %s", unknown, name, strings.Join(Names(list), ", "))
}
