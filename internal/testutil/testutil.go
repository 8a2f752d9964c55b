// Package testutil holds numeric test helpers shared by fairmp's tests:
// tolerance comparisons, finite-difference gradients, seeded random data
// and a runner for graphs built in gorgonia.
package testutil

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/fairmp/fairmp/internal/blas"
	"github.com/fairmp/fairmp/internal/spkern"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TB is the subset of testing.TB the helpers need.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// Close reports whether got and want agree within atol + rtol·|want|.
func Close(got, want, atol, rtol float64) bool {
	if math.IsNaN(got) || math.IsNaN(want) {
		return false
	}
	return math.Abs(got-want) <= atol+rtol*math.Abs(want)
}

// AllClose fails t (with the first few offending indices) unless every
// got[i] is within atol + rtol·|want[i]| of want[i].
func AllClose(t TB, name string, got, want []float64, atol, rtol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: length %d, want %d", name, len(got), len(want))
		return
	}
	bad := 0
	for i := range got {
		if !Close(got[i], want[i], atol, rtol) {
			if bad < 5 {
				t.Errorf("%s[%d] = %.10g, want %.10g (diff %.3g, atol %g, rtol %g)", name, i, got[i], want[i], got[i]-want[i], atol, rtol)
			}
			bad++
		}
	}
	if bad > 5 {
		t.Errorf("%s: %d of %d values out of tolerance", name, bad, len(got))
	}
}

// ToF64 converts a float32 or float64 slice (or a gorgonia value holding
// one) to a new []float64.
func ToF64(v any) []float64 {
	switch s := v.(type) {
	case []float64:
		return append([]float64(nil), s...)
	case []float32:
		out := make([]float64, len(s))
		for i, x := range s {
			out[i] = float64(x)
		}
		return out
	case float64:
		return []float64{s}
	case float32:
		return []float64{float64(s)}
	case *tensor.Dense:
		if s.IsMaterializable() {
			return ToF64(s.Materialize().(*tensor.Dense).Data())
		}
		return ToF64(s.Data())
	case G.Value:
		return ToF64(s.Data())
	}
	panic("testutil.ToF64: unsupported type")
}

// NumGrad returns the central-difference gradient of f at x (modified in
// place during the evaluation and restored): (f(x+h e_i) − f(x−h e_i))/2h.
func NumGrad(f func() float64, x []float64, h float64) []float64 {
	g := make([]float64, len(x))
	for i := range x {
		old := x[i]
		x[i] = old + h
		fp := f()
		x[i] = old - h
		fm := f()
		x[i] = old
		g[i] = (fp - fm) / (2 * h)
	}
	return g
}

// RandSlice returns n values uniform in [lo, hi) from a seeded source.
func RandSlice(rng *rand.Rand, n int, lo, hi float64) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = lo + (hi-lo)*rng.Float64()
	}
	return s
}

// Tensor returns a dense tensor of dtype dt and the given shape holding vals
// (converted to float32 when dt is Float32).
func Tensor(dt tensor.Dtype, vals []float64, shape ...int) *tensor.Dense {
	if dt == tensor.Float32 {
		s := make([]float32, len(vals))
		for i, v := range vals {
			s[i] = float32(v)
		}
		return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(s))
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(append([]float64(nil), vals...)))
}

// Run compiles g into a TapeMachine, runs it once and closes it. It fails
// t on error. Like fairmp's entry points, it first calls blas.Default, so
// that tests run on fairmp's BLAS unless the test chose another.
func Run(t TB, g *G.ExprGraph) {
	t.Helper()
	blas.Default()
	m := G.NewTapeMachine(g)
	defer m.Close()
	if err := m.RunAll(); err != nil {
		t.Fatalf("RunAll: %v", err)
	}
}

// Dtypes lists the two element types every numeric test covers.
var Dtypes = []tensor.Dtype{tensor.Float64, tensor.Float32}

// Tol returns the (atol, rtol) pair used for forward-value comparisons
// in dtype dt.
func Tol(dt tensor.Dtype) (float64, float64) {
	if dt == tensor.Float32 {
		return 1e-5, 1e-4
	}
	return 1e-10, 1e-9
}

// Main is a test binary's TestMain: it calls blas.Default first, as a
// program's main and fairmp's entry points do, so that every test runs
// on fairmp's BLAS whatever the order of the tests, then runs them.
func Main(m *testing.M) {
	blas.Default()
	os.Exit(m.Run())
}

// BitsHash returns an FNV-1a hash of the bits of every value of ts (float32
// or float64 tensors), in order: two sets of parameters hash alike only if
// they are bit for bit equal (up to collisions).
func BitsHash(ts []*tensor.Dense) uint64 {
	h := fnv.New64a()
	var b [8]byte
	for _, t := range ts {
		switch s := t.Data().(type) {
		case []float64:
			for _, v := range s {
				binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
				h.Write(b[:])
			}
		case []float32:
			for _, v := range s {
				binary.LittleEndian.PutUint32(b[:4], math.Float32bits(v))
				h.Write(b[:4])
			}
		}
	}
	return h.Sum64()
}

// EpochLine formats one epoch's numbers exactly (Go's shortest repr of a
// float64 round-trips), for tests that pin a training history.
func EpochLine(epoch int, best bool, values ...float64) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%d", epoch)
	for _, v := range values {
		sb.WriteByte(' ')
		sb.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
	}
	fmt.Fprintf(&sb, " %v\n", best)
	return sb.String()
}

// SkipUnlessGoldenKernels skips a test whose golden numbers were recorded
// with fairmp's default kernels on amd64: the assembly dense and sparse
// products (blas.Name "fastblas", spkern.Enabled). The pure-Go build
// (-tags noasm), OpenBLAS, a CPU without AVX2/FMA or another
// architecture rounds differently.
func SkipUnlessGoldenKernels(t testing.TB) {
	t.Helper()
	if runtime.GOARCH != "amd64" || blas.Name() != "fastblas" || !spkern.Enabled() {
		t.Skipf("golden numbers recorded with the amd64 assembly kernels; here: %s on %s, sparse kernels in assembly %v", blas.Name(), runtime.GOARCH, spkern.Enabled())
	}
}

// BinaryProbs returns n × 2 probabilities, row i (1 − p1[i], p1[i]),
// from the probabilities of class 1.
func BinaryProbs(p1 []float64) []float64 {
	out := make([]float64, 0, 2*len(p1))
	for _, p := range p1 {
		out = append(out, 1-p, p)
	}
	return out
}
