// Package layering checks that the library's packages import only
// packages of their own layer or below:
//
//	graph, metrics  <  layers  <  layers/...  <  fmp  <  fmp/...  <  examples
//
// (internal packages are helpers, outside the order; a package may
// import its siblings of the same layer).
package layering

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/fairmp/fairmp/"

// rank is a package's layer, or −1 for a package outside the order.
func rank(path string) int {
	p, ok := strings.CutPrefix(path, module)
	switch {
	case !ok || strings.HasPrefix(p, "internal"):
		return -1
	case strings.HasPrefix(p, "graph"), strings.HasPrefix(p, "metrics"):
		return 1
	case p == "layers", strings.HasPrefix(p, "layers/internal"):
		return 2
	case strings.HasPrefix(p, "layers/"):
		return 3
	case p == "fmp":
		return 4
	case strings.HasPrefix(p, "fmp/"):
		return 5
	}
	return 9 // examples
}

func TestNoImportRunsUp(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}:{{join .Imports \" \"}}", module+"...").CombinedOutput()
	require.NoError(t, err, string(out))
	var up []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, ":")
		from := rank(pkg)
		if from < 0 {
			continue
		}
		for _, imp := range strings.Fields(imports) {
			if to := rank(imp); to > from {
				up = append(up, pkg+" imports "+imp)
			}
		}
	}
	require.Empty(t, up, "imports that run up the layers")
}
