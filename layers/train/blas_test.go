package train

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/fairmp/fairmp/internal/blas"
	"github.com/fairmp/fairmp/internal/problem"
	"github.com/fairmp/fairmp/layers"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/blas/gonum"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// blasScenarioEnv names, in a child process of the test binary, the
// scenario TestEntryPointsChooseBLAS runs from a fresh start.
const blasScenarioEnv = "FAIRMP_TRAIN_BLAS_SCENARIO"

// TestMain calls blas.Default first, as a program's main and the entry
// points do, so that every test runs on fairmp's BLAS whatever the order
// of the tests (except in TestEntryPointsChooseBLAS's fresh children).
func TestMain(m *testing.M) {
	if os.Getenv(blasScenarioEnv) == "" {
		blas.Default()
	}
	os.Exit(m.Run())
}

// probeBLAS is a BLAS of the program's own, for gorgonia.Use.
type probeBLAS struct{ gonum.Implementation }

// TestEntryPointsChooseBLAS checks, each in a fresh process, that Predict
// and Fit (through NewTrainer) install fairmp's BLAS when the program
// chose none (gorgonia's is gonum's until then), and keep the one the
// program set with gorgonia.Use or blas.Use.
func TestEntryPointsChooseBLAS(t *testing.T) {
	s := os.Getenv(blasScenarioEnv)
	if s == "" {
		for _, s := range []string{"predict", "fit", "program-gorgonia-use", "program-blas-use"} {
			cmd := exec.Command(os.Args[0], "-test.run=^TestEntryPointsChooseBLAS$", "-test.count=1")
			cmd.Env = append(os.Environ(), blasScenarioEnv+"="+s)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("scenario %s: %v\n%s", s, err, out)
			}
		}
		return
	}
	p := problem.New(t, 5, 80, 4, 2, 100, 0.5)
	task := newTask(t, p, tensor.Float32, layers.NewPhase())
	mc := layers.DefaultMLPConfig(p.D, p.C)
	mc.Hidden, mc.Dtype = 16, tensor.Float32
	m, err := layers.NewMLP(task.Graph, nil, mc, task.Phase)
	require.NoError(t, err)
	_, isGonum := G.WhichBLAS().(gonum.Implementation)
	require.True(t, isGonum, "before any entry point: gorgonia's BLAS is %T, want gonum's (nothing may call blas.Default earlier)", G.WhichBLAS())
	run := func() {
		if s == "fit" {
			_, err := Fit(context.Background(), m, task, fastTrain(2))
			require.NoError(t, err)
			return
		}
		_, err := Predict(m, task, nil)
		require.NoError(t, err)
	}
	switch s {
	case "predict", "fit":
		run()
		name := blas.Name()
		if !strings.HasPrefix(name, "fastblas") && name != "openblas" {
			t.Fatalf("%s with nothing chosen: BLAS %q (%T), want fairmp's default (fastblas, or openblas with -tags openblas)", s, name, G.WhichBLAS())
		}
	case "program-gorgonia-use":
		G.Use(probeBLAS{})
		run()
		_, ok := G.WhichBLAS().(probeBLAS)
		require.True(t, ok, "after Predict: %T, want the program's gorgonia.Use", G.WhichBLAS())
	case "program-blas-use":
		blas.Use(blas.Gonum())
		run()
		require.Equal(t, "gonum", blas.Name(), "after Predict: want the program's blas.Use(blas.Gonum())")
	default:
		t.Fatalf("unknown scenario %q", s)
	}
}
