package blas_test

import (
	"fmt"
	"os"
	"os/exec"
	"testing"

	fb "github.com/fairmp/fairmp/internal/blas"
	"github.com/fairmp/fairmp/internal/fastblas"
	"gonum.org/v1/gonum/blas/gonum"
	G "gorgonia.org/gorgonia"
)

// freshEnv names, in a child process of the test binary, the scenario it
// runs from a fresh start (nothing chosen, Default not yet called).
const freshEnv = "FAIRMP_BLAS_TEST_SCENARIO"

// TestMain runs a scenario and exits when freshEnv is set; otherwise it
// calls Default, as fairmp's entry points do, and runs the tests on the
// build's default BLAS.
func TestMain(m *testing.M) {
	if s := os.Getenv(freshEnv); s != "" {
		if err := scenario(s); err != nil {
			fmt.Fprintf(os.Stderr, "scenario %s: %v\n", s, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	fb.Default()
	os.Exit(m.Run())
}

// probe is a BLAS of the program's own, for gorgonia.Use.
type probe struct{ gonum.Implementation }

// scenario runs one scenario in a fresh process.
func scenario(s string) error {
	want := func(what string, ok bool) error {
		if !ok {
			return fmt.Errorf("%s: gorgonia.WhichBLAS() = %T, Name() = %q", what, G.WhichBLAS(), fb.Name())
		}
		return nil
	}
	switch s {
	case "import":
		_, ok := G.WhichBLAS().(gonum.Implementation)
		return want("importing internal/blas must leave gorgonia's default (gonum)", ok && fb.Name() == "gonum")
	case "default":
		fb.Default()
		return want("Default with nothing chosen must install "+defaultName(), isDefault(G.WhichBLAS()) && fb.Name() == defaultName())
	case "gorgonia-use":
		G.Use(probe{})
		fb.Default()
		_, ok := G.WhichBLAS().(probe)
		return want("Default must keep the program's gorgonia.Use", ok && fb.Name() == "blas_test.probe")
	case "use-gonum":
		fb.Use(fb.Gonum())
		fb.Default()
		_, ok := G.WhichBLAS().(gonum.Implementation)
		return want("Default must keep the program's Use(Gonum())", ok && fb.Name() == "gonum")
	case "use-fast":
		fb.Use(fb.Fast())
		fb.Default()
		_, ok := G.WhichBLAS().(fastblas.Implementation)
		return want("Use(Fast()) must install fastblas", ok && (fb.Name() == "fastblas" || fb.Name() == "fastblas (gonum only: no AVX2/FMA)"))
	case "use-after-default":
		fb.Default()
		fb.Use(fb.Gonum())
		fb.Default()
		_, ok := G.WhichBLAS().(gonum.Implementation)
		if err := want("a Use after Default must win", ok); err != nil {
			return err
		}
		G.Use(probe{})
		G.Use(gonum.Implementation{}) // gonum's value again, by gorgonia.Use
		fb.Default()
		_, ok = G.WhichBLAS().(gonum.Implementation)
		return want("only Default's first call acts", ok)
	}
	return fmt.Errorf("unknown scenario")
}

// runScenario runs the test binary again with freshEnv = s.
func runScenario(t *testing.T, s string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), freshEnv+"="+s)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

// TestImportLeavesGorgoniaAlone checks that importing internal/blas (this
// test binary imports nothing else of fairmp's that calls Default) leaves
// gorgonia's BLAS at gonum's.
func TestImportLeavesGorgoniaAlone(t *testing.T) { runScenario(t, "import") }

// TestDefaultInstallsFast checks that Default installs the build's
// default BLAS when the program chose nothing.
func TestDefaultInstallsFast(t *testing.T) { runScenario(t, "default") }

// TestDefaultKeepsGorgoniaUse checks that Default keeps a BLAS the
// program set with gorgonia.Use.
func TestDefaultKeepsGorgoniaUse(t *testing.T) { runScenario(t, "gorgonia-use") }

// TestDefaultKeepsUse checks that Default keeps gonum's BLAS when the
// program chose it with Use, and that Use(Fast()) installs fastblas.
func TestDefaultKeepsUse(t *testing.T) {
	runScenario(t, "use-gonum")
	runScenario(t, "use-fast")
}

// TestUseAfterDefault checks that a later Use wins over Default, and that
// only Default's first call acts.
func TestUseAfterDefault(t *testing.T) { runScenario(t, "use-after-default") }
