package layers

import (
	"math/rand"
	"runtime"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/stretchr/testify/require"
)

// TestAddRowBias checks y + b and the gradients of sum(W ⊙ (y + b)) (dY = W,
// db = column sums of W) against plain loops, small (serial) and large
// (parallel, several workers), in both dtypes; and that repeated runs are
// bit-identical.
func TestAddRowBias(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	rng := rand.New(rand.NewSource(4))
	for _, sz := range [][2]int{{5, 3}, {20000, 7}} {
		n, c := sz[0], sz[1]
		yv := testutil.RandSlice(rng, n*c, -1, 1)
		bv := testutil.RandSlice(rng, c, -1, 1)
		wv := testutil.RandSlice(rng, n*c, -1, 1)
		want := make([]float64, n*c)
		wantDB := make([]float64, c)
		for i := 0; i < n; i++ {
			for k := 0; k < c; k++ {
				want[i*c+k] = yv[i*c+k] + bv[k]
				wantDB[k] += wv[i*c+k]
			}
		}
		for _, dt := range testutil.Dtypes {
			var first []float64
			for run := 0; run < 2; run++ {
				g := G.NewGraph()
				y := G.NewMatrix(g, dt, G.WithShape(n, c), G.WithName("y"), G.WithValue(testutil.Tensor(dt, yv, n, c)))
				b := G.NewMatrix(g, dt, G.WithShape(1, c), G.WithName("b"), G.WithValue(testutil.Tensor(dt, bv, 1, c)))
				w := G.NewMatrix(g, dt, G.WithShape(n, c), G.WithName("w"), G.WithValue(testutil.Tensor(dt, wv, n, c)))
				out, err := addRowBias(y, b)
				require.NoError(t, err)
				var ov G.Value
				G.Read(out, &ov)
				cost := G.Must(G.Sum(G.Must(G.HadamardProd(out, w))))
				if _, err := G.Grad(cost, y, b); err != nil {
					t.Fatal(err)
				}
				testutil.Run(t, g)
				atol, rtol := testutil.Tol(dt)
				got := testutil.ToF64(ov)
				testutil.AllClose(t, dt.String()+" y+b", got, want, atol, rtol)
				dy, _ := y.Grad()
				testutil.AllClose(t, dt.String()+" dy", testutil.ToF64(dy), wv, atol, rtol)
				db, _ := b.Grad()
				dbv := testutil.ToF64(db)
				testutil.AllClose(t, dt.String()+" db", dbv, wantDB, atol*float64(n), rtol)
				if run == 0 {
					first = append(got, dbv...)
				} else {
					for i, v := range append(got, dbv...) {
						if v != first[i] {
							t.Fatalf("%v %d×%d: value %d differs between runs", dt, n, c, i)
						}
					}
				}
			}
		}
	}
}

func TestAddRowBiasErrors(t *testing.T) {
	g := G.NewGraph()
	y := G.NewMatrix(g, tensor.Float64, G.WithShape(4, 3), G.WithName("y"))
	for name, b := range map[string]*G.Node{
		"wide":  G.NewMatrix(g, tensor.Float64, G.WithShape(1, 4), G.WithName("b1")),
		"tall":  G.NewMatrix(g, tensor.Float64, G.WithShape(2, 3), G.WithName("b2")),
		"dtype": G.NewMatrix(g, tensor.Float32, G.WithShape(1, 3), G.WithName("b3")),
	} {
		if _, err := addRowBias(y, b); err == nil {
			t.Errorf("%s bias accepted", name)
		}
	}
}
