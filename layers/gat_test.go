package layers

import (
	"fmt"
	"math"
	"math/rand"
	"runtime"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/opkit"
	"github.com/fairmp/fairmp/internal/problem"
	"github.com/fairmp/fairmp/internal/spkern"
	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/stretchr/testify/require"
)

// gatTestGraph returns a random graph on n nodes with m random edges whose
// last `isolated` nodes have no edge.
func gatTestGraph(t testing.TB, rng *rand.Rand, n, m, isolated int) *graph.Graph {
	t.Helper()
	k := n - isolated
	edges := make([][2]int, m)
	for e := range edges {
		edges[e] = [2]int{rng.Intn(k), rng.Intn(k)}
	}
	gr, err := graph.FromEdges(n, edges)
	require.NoError(t, err)
	return gr
}

// gatNaiveParams holds a layer's parameters as float64 slices.
type gatNaiveParams struct {
	w, as, ad, b []float64
}

func gatParamsOf(l *GATConv) gatNaiveParams {
	p := gatNaiveParams{
		w:  testutil.ToF64(l.w.Value()),
		as: testutil.ToF64(l.attSrc.Value()),
		ad: testutil.ToF64(l.attDst.Value()),
	}
	if l.bias != nil {
		p.b = testutil.ToF64(l.bias.Value())
	}
	return p
}

// gatNaive is a dense plain-Go GAT layer. It returns the output and the
// dense attention att[k][i][j] (0 where j→i is not an edge).
func gatNaive(gr *graph.Graph, cfg GATConvConfig, x []float64, p gatNaiveParams) ([]float64, [][][]float64) {
	n := gr.N()
	adj := make([][]bool, n)
	for i := range adj {
		adj[i] = make([]bool, n)
		for _, j := range gr.Neighbors(i) {
			adj[i][j] = true
		}
		if cfg.AddSelfLoops {
			adj[i][i] = true
		}
	}
	return gatNaiveEdges(adj, n, cfg, x, p)
}

// gatNaiveEdges is gatNaive on rows destinations attending over the
// sources j with adj[i][j] (len(adj[i]) sources, the rows of x): the whole
// graph (rows = sources) or a block (the destinations are the first rows
// of the sources). Self-loops are whatever adj holds.
func gatNaiveEdges(adj [][]bool, rows int, cfg GATConvConfig, x []float64, p gatNaiveParams) ([]float64, [][][]float64) {
	n, in, heads, f := len(adj[0]), cfg.In, cfg.Heads, cfg.Out
	hf := heads * f
	h := make([]float64, n*hf)
	for i := 0; i < n; i++ {
		for c := 0; c < hf; c++ {
			for q := 0; q < in; q++ {
				h[i*hf+c] += x[i*in+q] * p.w[q*hf+c]
			}
		}
	}
	ow := cfg.outWidth()
	out := make([]float64, rows*ow)
	att := make([][][]float64, heads)
	for k := 0; k < heads; k++ {
		att[k] = make([][]float64, rows)
		for i := 0; i < rows; i++ {
			att[k][i] = make([]float64, n)
			e := make([]float64, n)
			mx := math.Inf(-1)
			for j := 0; j < n; j++ {
				if !adj[i][j] {
					continue
				}
				s := 0.0
				for q := 0; q < f; q++ {
					s += h[j*hf+k*f+q]*p.as[k*f+q] + h[i*hf+k*f+q]*p.ad[k*f+q]
				}
				if s < 0 {
					s *= cfg.NegativeSlope
				}
				e[j] = s
				mx = math.Max(mx, s)
			}
			sum := 0.0
			for j := 0; j < n; j++ {
				if adj[i][j] {
					sum += math.Exp(e[j] - mx)
				}
			}
			for j := 0; j < n; j++ {
				if !adj[i][j] {
					continue
				}
				a := math.Exp(e[j]-mx) / sum
				att[k][i][j] = a
				for q := 0; q < f; q++ {
					if cfg.Concat {
						out[i*ow+k*f+q] += a * h[j*hf+k*f+q]
					} else {
						out[i*ow+q] += a * h[j*hf+k*f+q] / float64(heads)
					}
				}
			}
		}
	}
	if p.b != nil {
		for i := 0; i < rows; i++ {
			for c := 0; c < ow; c++ {
				out[i*ow+c] += p.b[c]
			}
		}
	}
	return out, att
}

// gatCase is one layer configuration tested against the naive layer.
type gatCase struct {
	heads, out int
	concat     bool
	selfLoops  bool
	bias       bool
	slope      float64
}

var gatCases = []gatCase{
	{heads: 1, out: 3, concat: true, selfLoops: true, bias: true, slope: 0.2},
	{heads: 3, out: 2, concat: true, selfLoops: true, bias: true, slope: 0.2},
	{heads: 3, out: 2, concat: false, selfLoops: true, bias: true, slope: 0.2},
	{heads: 2, out: 4, concat: true, selfLoops: false, bias: false, slope: 0.5},
	{heads: 2, out: 1, concat: false, selfLoops: false, bias: true, slope: 0},
	// 4 heads × 16 concatenated: in float32 the assembly kernels of
	// internal/spkern (where the CPU has AVX2/FMA).
	{heads: 4, out: 16, concat: true, selfLoops: true, bias: true, slope: 0.2},
}

func (c gatCase) config(in int, dt tensor.Dtype, seed int64) GATConvConfig {
	cfg := DefaultGATConvConfig(in, c.out)
	cfg.Heads, cfg.Concat, cfg.AddSelfLoops, cfg.Bias, cfg.NegativeSlope = c.heads, c.concat, c.selfLoops, c.bias, c.slope
	cfg.Dtype, cfg.Seed = dt, seed
	return cfg
}

func (c gatCase) String() string {
	return fmt.Sprintf("heads=%d/out=%d/concat=%v/loops=%v/bias=%v", c.heads, c.out, c.concat, c.selfLoops, c.bias)
}

// gatRandomizeBias sets a layer's bias to random values, so that its
// gradient and its addition are tested with non-zero values.
func gatRandomizeBias(t *testing.T, l *GATConv, rng *rand.Rand) {
	t.Helper()
	if l.bias == nil {
		return
	}
	s := l.bias.Shape()
	if err := G.Let(l.bias, testutil.Tensor(l.cfg.Dtype, testutil.RandSlice(rng, s[0]*s[1], -1, 1), s...)); err != nil {
		t.Fatal(err)
	}
}

// TestGATForwardMatchesNaive compares the layer's output and attention
// with the dense implementation, and checks that each node's attention
// over its in-edges sums to 1 (isolated nodes included: their only
// in-edge is the self-loop).
func TestGATForwardMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	n, in := 13, 5
	gr := gatTestGraph(t, rng, n, 25, 3)
	if gr.Isolated() < 3 {
		t.Fatalf("test graph has %d isolated nodes, want >= 3", gr.Isolated())
	}
	for _, c := range gatCases {
		for _, dt := range testutil.Dtypes {
			t.Run(fmt.Sprintf("%v/%v", c, dt), func(t *testing.T) {
				cfg := c.config(in, dt, rng.Int63())
				xv := testutil.RandSlice(rng, n*in, -2, 2)
				g := G.NewGraph()
				x := G.NewMatrix(g, dt, G.WithShape(n, in), G.WithName("x"), G.WithValue(testutil.Tensor(dt, xv, n, in)))
				l, err := NewGATConv(g, gr, cfg, nil)
				require.NoError(t, err)
				gatRandomizeBias(t, l, rng)
				y, err := l.Forward(x)
				require.NoError(t, err)
				if want := (tensor.Shape{n, cfg.outWidth()}); !y.Shape().Eq(want) {
					t.Fatalf("output shape %v, want %v", y.Shape(), want)
				}
				var yv, av G.Value
				G.Read(y, &yv)
				G.Read(l.Attention(), &av)
				testutil.Run(t, g)
				want, att := gatNaive(gr, cfg, xv, gatParamsOf(l))
				atol, rtol := testutil.Tol(dt)
				testutil.AllClose(t, "out", testutil.ToF64(yv), want, atol, rtol)

				edges := l.AttentionEdges()
				got := testutil.ToF64(av)
				if len(got) != len(edges)*c.heads {
					t.Fatalf("attention has %d values, want %d edges × %d heads", len(got), len(edges), c.heads)
				}
				sums := make([]float64, n*c.heads)
				for p, e := range edges {
					for k := 0; k < c.heads; k++ {
						a := got[p*c.heads+k]
						if !testutil.Close(a, att[k][e[1]][e[0]], atol, rtol) {
							t.Errorf("α(%d→%d, head %d) = %g, want %g", e[0], e[1], k, a, att[k][e[1]][e[0]])
						}
						sums[e[1]*c.heads+k] += a
					}
				}
				for i := 0; i < n; i++ {
					for k := 0; k < c.heads; k++ {
						want := 1.0
						if !c.selfLoops && gr.Degree(i) == 0 {
							want = 0
						}
						if !testutil.Close(sums[i*c.heads+k], want, 10*atol, 0) {
							t.Errorf("node %d head %d: attention sums to %g, want %g", i, k, sums[i*c.heads+k], want)
						}
					}
				}
			})
		}
	}
}

// TestGATGradients checks the gradients of sum(R ⊙ GAT(X)) with respect to
// X, W, both attention vectors and the bias against central differences
// of the naive layer, in float64.
func TestGATGradients(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	n, in := 11, 4
	gr := gatTestGraph(t, rng, n, 20, 2)
	for _, c := range gatCases {
		t.Run(c.String(), func(t *testing.T) {
			dt := tensor.Float64
			cfg := c.config(in, dt, rng.Int63())
			xv := testutil.RandSlice(rng, n*in, -2, 2)
			rv := testutil.RandSlice(rng, n*cfg.outWidth(), -1, 1)
			g := G.NewGraph()
			x := G.NewMatrix(g, dt, G.WithShape(n, in), G.WithName("x"), G.WithValue(testutil.Tensor(dt, xv, n, in)))
			r := G.NewMatrix(g, dt, G.WithShape(n, cfg.outWidth()), G.WithName("r"), G.WithValue(testutil.Tensor(dt, rv, n, cfg.outWidth())))
			l, err := NewGATConv(g, gr, cfg, nil)
			require.NoError(t, err)
			gatRandomizeBias(t, l, rng)
			y, err := l.Forward(x)
			require.NoError(t, err)
			cost := G.Must(G.Sum(G.Must(G.HadamardProd(y, r))))
			wrt := append(G.Nodes{x}, l.Learnables()...)
			grads, err := G.Grad(cost, wrt...)
			require.NoError(t, err)
			testutil.Run(t, g)
			p := gatParamsOf(l)
			f := func() float64 {
				out, _ := gatNaive(gr, cfg, xv, p)
				s := 0.0
				for i := range out {
					s += out[i] * rv[i]
				}
				return s
			}
			vals := [][]float64{xv, p.w, p.as, p.ad, p.b}
			names := []string{"dX", "dW", "dAttSrc", "dAttDst", "dBias"}
			for k, gnode := range grads {
				num := testutil.NumGrad(f, vals[k], 1e-6)
				testutil.AllClose(t, names[k], testutil.ToF64(gnode.Value()), num, 1e-7, 1e-6)
			}
		})
	}
}

// TestGATBlockGradients: on a sampled block (rows destinations that are
// the first of more sources, some rows without in-edges, some sources
// without out-edges) the layer's output matches the dense layer, and
// every gradient matches central differences, in float64; float32 agrees
// with float64 to float32 rounding.
func TestGATBlockGradients(t *testing.T) {
	rng := rand.New(rand.NewSource(12))
	rows, cols, in := 6, 11, 4
	adj := make([][]bool, rows)
	indptr := []int{0}
	var indices []int32
	for i := range adj {
		adj[i] = make([]bool, cols)
		if i == 2 {
			indptr = append(indptr, len(indices)) // no in-edge: the output is the bias
			continue
		}
		for j := 0; j < cols-2; j++ { // the last two sources send nothing
			if j == i || rng.Intn(3) == 0 {
				adj[i][j] = true
				indices = append(indices, int32(j))
			}
		}
		indptr = append(indptr, len(indices))
	}
	for _, c := range gatCases {
		t.Run(c.String(), func(t *testing.T) {
			seed := rng.Int63()
			xv := testutil.RandSlice(rng, cols*in, -2, 2)
			var p gatNaiveParams
			var out64 []float64
			var grads64 [][]float64
			for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
				cfg := c.config(in, dt, seed)
				rv := testutil.RandSlice(rand.New(rand.NewSource(seed)), rows*cfg.outWidth(), -1, 1)
				g := G.NewGraph()
				x := G.NewMatrix(g, dt, G.WithShape(cols, in), G.WithName("x"), G.WithValue(testutil.Tensor(dt, xv, cols, in)))
				r := G.NewMatrix(g, dt, G.WithShape(rows, cfg.outWidth()), G.WithName("r"), G.WithValue(testutil.Tensor(dt, rv, rows, cfg.outWidth())))
				one, err := graph.FromEdges(1, nil)
				require.NoError(t, err)
				l, err := NewGATConv(g, one, cfg, nil)
				require.NoError(t, err)
				if dt == tensor.Float64 {
					gatRandomizeBias(t, l, rng)
					p = gatParamsOf(l)
				} else {
					for k, v := range [][]float64{p.w, p.as, p.ad, p.b} {
						if v != nil {
							node := l.Learnables()[k]
							require.NoError(t, G.Let(node, testutil.Tensor(dt, v, node.Shape()...)))
						}
					}
				}
				y, err := l.forwardWith(spkern.NewGATBlock(rows, cols, indptr, indices), x, "block")
				require.NoError(t, err)
				var yv G.Value
				G.Read(y, &yv)
				cost := G.Must(G.Sum(G.Must(G.HadamardProd(y, r))))
				wrt := append(G.Nodes{x}, l.Learnables()...)
				grads, err := G.Grad(cost, wrt...)
				require.NoError(t, err)
				testutil.Run(t, g)
				if dt == tensor.Float32 {
					atol, rtol := testutil.Tol(dt)
					testutil.AllClose(t, "float32 output", testutil.ToF64(yv), out64, atol, rtol)
					for k, gnode := range grads {
						testutil.AllClose(t, fmt.Sprintf("float32 gradient %d", k), testutil.ToF64(gnode.Value()), grads64[k], atol, rtol)
					}
					continue
				}
				want, _ := gatNaiveEdges(adj, rows, cfg, xv, p)
				out64 = testutil.ToF64(yv)
				testutil.AllClose(t, "output", out64, want, 1e-12, 1e-10)
				f := func() float64 {
					out, _ := gatNaiveEdges(adj, rows, cfg, xv, p)
					s := 0.0
					for i := range out {
						s += out[i] * rv[i]
					}
					return s
				}
				vals := [][]float64{xv, p.w, p.as, p.ad, p.b}
				names := []string{"dX", "dW", "dAttSrc", "dAttDst", "dBias"}
				for k, gnode := range grads {
					num := testutil.NumGrad(f, vals[k], 1e-6)
					testutil.AllClose(t, names[k], testutil.ToF64(gnode.Value()), num, 1e-7, 1e-6)
					grads64 = append(grads64, testutil.ToF64(gnode.Value()))
				}
			}
		})
	}
}

// gatRunLayer builds a GAT layer with cfg on gr, runs forward and the
// gradient of sum(R ⊙ out) and returns the output and every gradient
// (X, then the learnables) as float64.
func gatRunLayer(t *testing.T, gr *graph.Graph, cfg GATConvConfig, xv, rv []float64) (out []float64, grads [][]float64) {
	t.Helper()
	n, dt := gr.N(), cfg.Dtype
	g := G.NewGraph()
	x := G.NewMatrix(g, dt, G.WithShape(n, cfg.In), G.WithName("x"), G.WithValue(testutil.Tensor(dt, xv, n, cfg.In)))
	r := G.NewMatrix(g, dt, G.WithShape(n, cfg.outWidth()), G.WithName("r"), G.WithValue(testutil.Tensor(dt, rv, n, cfg.outWidth())))
	l, err := NewGATConv(g, gr, cfg, nil)
	require.NoError(t, err)
	y, err := l.Forward(x)
	require.NoError(t, err)
	var yv G.Value
	G.Read(y, &yv)
	cost := G.Must(G.Sum(G.Must(G.HadamardProd(y, r))))
	gs, err := G.Grad(cost, append(G.Nodes{x}, l.Learnables()...)...)
	require.NoError(t, err)
	testutil.Run(t, g)
	for _, gn := range gs {
		grads = append(grads, testutil.ToF64(gn.Value()))
	}
	return testutil.ToF64(yv), grads
}

// TestGATFloat32MatchesFloat64 runs the same layer (same seed, hence the
// same parameters up to rounding) in both dtypes, on a graph large enough
// to use the parallel kernels.
func TestGATFloat32MatchesFloat64(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	n, in := 3000, 8
	gr := gatTestGraph(t, rng, n, 12000, 10)
	xv := testutil.RandSlice(rng, n*in, -1, 1)
	for _, c := range []gatCase{gatCases[1], gatCases[2], gatCases[5]} {
		t.Run(c.String(), func(t *testing.T) {
			cfg := c.config(in, tensor.Float64, 5)
			rv := testutil.RandSlice(rng, n*cfg.outWidth(), -1, 1)
			o64, g64 := gatRunLayer(t, gr, cfg, xv, rv)
			cfg.Dtype = tensor.Float32
			o32, g32 := gatRunLayer(t, gr, cfg, xv, rv)
			testutil.AllClose(t, "out", o32, o64, 1e-5, 1e-4)
			for k := range g64 {
				// Parameter gradients sum over all n nodes: scale atol.
				atol := 1e-5 * math.Sqrt(float64(n))
				testutil.AllClose(t, fmt.Sprintf("grad %d", k), g32[k], g64[k], atol, 1e-4)
			}
		})
	}
}

// TestGATDeterministic checks bit-identical outputs and gradients over
// repeated runs of a graph large enough to use the parallel kernels, with
// two CPUs and with one.
func TestGATDeterministic(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	n, in := 4000, 6
	gr := gatTestGraph(t, rng, n, 20000, 0)
	cfg := gatCases[5].config(in, tensor.Float32, 9)
	xv := testutil.RandSlice(rng, n*in, -1, 1)
	rv := testutil.RandSlice(rng, n*cfg.outWidth(), -1, 1)
	o1, g1 := gatRunLayer(t, gr, cfg, xv, rv)
	for rep := 0; rep < 2; rep++ {
		if rep == 1 {
			// The results must not depend on the number of CPUs either.
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
		}
		o2, g2 := gatRunLayer(t, gr, cfg, xv, rv)
		testutil.AllClose(t, "out", o2, o1, 0, 0)
		for k := range g1 {
			testutil.AllClose(t, fmt.Sprintf("grad %d", k), g2[k], g1[k], 0, 0)
		}
	}
}

// gatNaiveModel is the dense two-layer model: GAT₂(ELU(GAT₁(x))).
func gatNaiveModel(gr *graph.Graph, m *GAT, x []float64, p1, p2 gatNaiveParams) []float64 {
	h, _ := gatNaive(gr, m.l1.cfg, x, p1)
	for i, v := range h {
		if v <= 0 {
			h[i] = math.Exp(v) - 1
		}
	}
	out, _ := gatNaive(gr, m.l2.cfg, h, p2)
	return out
}

// TestGAT checks the two-layer model's logits and the gradients of
// all its learnables against the dense implementation (float64), and its
// float32 logits against float64.
func TestGAT(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	n, in, classes := 10, 4, 3
	gr := gatTestGraph(t, rng, n, 16, 1)
	xv := testutil.RandSlice(rng, n*in, -1.5, 1.5)
	rv := testutil.RandSlice(rng, n*classes, -1, 1)
	var logits64 []float64
	for _, dt := range testutil.Dtypes {
		t.Run(dt.String(), func(t *testing.T) {
			cfg := DefaultGATConfig(in, classes)
			cfg.Heads, cfg.Hidden, cfg.Dtype, cfg.Seed = 2, 3, dt, 21
			g := G.NewGraph()
			x := G.NewMatrix(g, dt, G.WithShape(n, in), G.WithName("x"), G.WithValue(testutil.Tensor(dt, xv, n, in)))
			r := G.NewMatrix(g, dt, G.WithShape(n, classes), G.WithName("r"), G.WithValue(testutil.Tensor(dt, rv, n, classes)))
			m, err := NewGAT(g, gr, cfg, nil)
			require.NoError(t, err)
			brng := rand.New(rand.NewSource(99)) // same biases in both dtypes
			gatRandomizeBias(t, m.l1, brng)
			gatRandomizeBias(t, m.l2, brng)
			if got := len(m.Learnables()); got != 8 {
				t.Fatalf("%d learnables, want 8", got)
			}
			y, err := m.Forward(x)
			require.NoError(t, err)
			var yv G.Value
			G.Read(y, &yv)
			cost := G.Must(G.Sum(G.Must(G.HadamardProd(y, r))))
			grads, err := G.Grad(cost, m.Learnables()...)
			require.NoError(t, err)
			testutil.Run(t, g)
			p1, p2 := gatParamsOf(m.l1), gatParamsOf(m.l2)
			want := gatNaiveModel(gr, m, xv, p1, p2)
			atol, rtol := testutil.Tol(dt)
			testutil.AllClose(t, "logits", testutil.ToF64(yv), want, atol, rtol)
			if dt == tensor.Float32 {
				testutil.AllClose(t, "logits float32 vs float64", testutil.ToF64(yv), logits64, 1e-5, 1e-4)
				return
			}
			logits64 = testutil.ToF64(yv)
			f := func() float64 {
				out := gatNaiveModel(gr, m, xv, p1, p2)
				s := 0.0
				for i := range out {
					s += out[i] * rv[i]
				}
				return s
			}
			vals := [][]float64{p1.w, p1.as, p1.ad, p1.b, p2.w, p2.as, p2.ad, p2.b}
			for k, gn := range grads {
				num := testutil.NumGrad(f, vals[k], 1e-6)
				testutil.AllClose(t, m.Learnables()[k].Name(), testutil.ToF64(gn.Value()), num, 1e-7, 1e-6)
			}
		})
	}
}

// TestGATNames checks that a second layer with the same Name in one
// gorgonia graph is refused (gorgonia would merge the two layers'
// parameters), and that a distinct Name gives distinct parameters.
func TestGATNames(t *testing.T) {
	gr := mustGraph(t, 4, [][2]int{{0, 1}, {1, 2}})
	g := G.NewGraph()
	cfg := DefaultGATConvConfig(3, 2)
	a, err := NewGATConv(g, gr, cfg, nil)
	require.NoError(t, err)
	if _, err := NewGATConv(g, gr, cfg, nil); err == nil || !strings.Contains(err.Error(), "already used") {
		t.Errorf("second layer named %q: err = %v, want a name clash", cfg.Name, err)
	}
	cfg.Name = "other"
	b, err := NewGATConv(g, gr, cfg, nil)
	require.NoError(t, err)
	for k, p := range a.Learnables() {
		if p == b.Learnables()[k] {
			t.Errorf("learnable %d (%s) shared by two layers", k, p.Name())
		}
	}
	if _, err := NewGAT(g, gr, DefaultGATConfig(3, 2), nil); err != nil {
		t.Errorf("a model next to a layer: %v", err)
	}
}

func TestGATConfigErrors(t *testing.T) {
	ok := DefaultGATConvConfig(3, 2)
	if err := ok.Validate(); err != nil {
		t.Fatalf("default config: %v", err)
	}
	bad := map[string]func(c *GATConvConfig){
		"Name":           func(c *GATConvConfig) { c.Name = "" },
		"In":             func(c *GATConvConfig) { c.In = 0 },
		"Out":            func(c *GATConvConfig) { c.Out = -1 },
		"Heads":          func(c *GATConvConfig) { c.Heads = 0 },
		"NegativeSlope":  func(c *GATConvConfig) { c.NegativeSlope = math.NaN() },
		"NegativeSlope ": func(c *GATConvConfig) { c.NegativeSlope = -0.1 },
		"Dropout":        func(c *GATConvConfig) { c.Dropout = 1 },
		"Dtype":          func(c *GATConvConfig) { c.Dtype = tensor.Int },
	}
	for want, mod := range bad {
		c := ok
		mod(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), strings.TrimSpace(strings.Fields(want)[0])) {
			t.Errorf("%s: Validate() = %v, want an error naming it", want, err)
		}
	}
	mc := DefaultGATConfig(3, 2)
	if err := mc.Validate(); err != nil {
		t.Fatalf("default model config: %v", err)
	}
	badModel := map[string]func(c *GATConfig){
		"Name":             func(c *GATConfig) { c.Name = "" },
		"Hidden":           func(c *GATConfig) { c.Hidden = 0 },
		"Heads":            func(c *GATConfig) { c.Heads = -2 },
		"Out":              func(c *GATConfig) { c.Out = 0 },
		"InputDropout":     func(c *GATConfig) { c.InputDropout = 1 },
		"AttentionDropout": func(c *GATConfig) { c.AttentionDropout = -0.1 },
		"NegativeSlope":    func(c *GATConfig) { c.NegativeSlope = math.Inf(1) },
		"Dtype":            func(c *GATConfig) { c.Dtype = tensor.Int },
	}
	for want, mod := range badModel {
		c := mc
		mod(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: Validate() = %v, want an error naming it", want, err)
		}
	}
}

func TestGATConstructionErrors(t *testing.T) {
	gr := mustGraph(t, 4, [][2]int{{0, 1}, {1, 2}})
	g := G.NewGraph()
	cfg := DefaultGATConvConfig(3, 2)
	if _, err := NewGATConv(nil, gr, cfg, nil); err == nil {
		t.Error("NewGATConv accepted a nil expression graph")
	}
	if _, err := NewGATConv(g, nil, cfg, nil); err == nil {
		t.Error("NewGATConv accepted a nil graph")
	}
	if _, err := NewGAT(g, nil, DefaultGATConfig(3, 2), nil); err == nil {
		t.Error("NewGAT accepted a nil graph")
	}
	cfg.Heads = 0
	if _, err := NewGATConv(g, gr, cfg, nil); err == nil {
		t.Error("NewGATConv accepted Heads = 0")
	}
	if _, err := NewGAT(g, gr, GATConfig{}, nil); err == nil {
		t.Error("NewGAT accepted a zero config")
	}
	l, err := NewGATConv(g, gr, DefaultGATConvConfig(3, 2), nil)
	require.NoError(t, err)
	for name, x := range map[string]*G.Node{
		"rows":    G.NewMatrix(g, tensor.Float64, G.WithShape(5, 3), G.WithName("x_rows")),
		"columns": G.NewMatrix(g, tensor.Float64, G.WithShape(4, 2), G.WithName("x_cols")),
		"vector":  G.NewVector(g, tensor.Float64, G.WithShape(4), G.WithName("x_vec")),
		"dtype":   G.NewMatrix(g, tensor.Float32, G.WithShape(4, 3), G.WithName("x_f32")),
		"nil":     nil,
		"graph":   G.NewMatrix(G.NewGraph(), tensor.Float64, G.WithShape(4, 3), G.WithName("x_other")),
	} {
		if _, err := l.Forward(x); err == nil {
			t.Errorf("Forward accepted a bad input (%s)", name)
		}
	}
}

// TestGATLargeScores checks that the max-subtraction keeps the edge
// softmax finite when scores are far beyond exp's range in float32, and
// that the attention still sums to 1 over each node's in-edges.
func TestGATLargeScores(t *testing.T) {
	rng := rand.New(rand.NewSource(8))
	n, in := 9, 3
	gr := gatTestGraph(t, rng, n, 14, 1)
	for _, dt := range testutil.Dtypes {
		t.Run(dt.String(), func(t *testing.T) {
			cfg := gatCases[1].config(in, dt, 3)
			xv := testutil.RandSlice(rng, n*in, -1, 1)
			for i := range xv {
				xv[i] *= 1e4
			}
			g := G.NewGraph()
			x := G.NewMatrix(g, dt, G.WithShape(n, in), G.WithName("x"), G.WithValue(testutil.Tensor(dt, xv, n, in)))
			l, err := NewGATConv(g, gr, cfg, nil)
			require.NoError(t, err)
			y, err := l.Forward(x)
			require.NoError(t, err)
			var yv, av G.Value
			G.Read(y, &yv)
			G.Read(l.Attention(), &av)
			testutil.Run(t, g)
			want, _ := gatNaive(gr, cfg, xv, gatParamsOf(l))
			testutil.AllClose(t, "out", testutil.ToF64(yv), want, 1e-3, 1e-4)
			a := testutil.ToF64(av)
			sums := make([]float64, n*cfg.Heads)
			for p, e := range l.AttentionEdges() {
				for k := 0; k < cfg.Heads; k++ {
					if v := a[p*cfg.Heads+k]; math.IsNaN(v) || v < 0 || v > 1 {
						t.Fatalf("α(%d→%d) head %d = %v, want in [0, 1]", e[0], e[1], k, v)
					}
					sums[e[1]*cfg.Heads+k] += a[p*cfg.Heads+k]
				}
			}
			for i, s := range sums {
				if !testutil.Close(s, 1, 1e-5, 0) {
					t.Errorf("node %d head %d: attention sums to %v, want 1", i/cfg.Heads, i%cfg.Heads, s)
				}
			}
		})
	}
}

// TestGATAttentionDropout checks that attention dropout is the identity
// in evaluation (bit-identical to a layer without dropout), changes the
// output in training, and repeats exactly with the same seed.
func TestGATAttentionDropout(t *testing.T) {
	rng := rand.New(rand.NewSource(12))
	n, in := 30, 4
	gr := gatTestGraph(t, rng, n, 80, 2)
	xv := testutil.RandSlice(rng, n*in, -1, 1)
	run := func(p float64, training bool) []float64 {
		cfg := gatCases[1].config(in, tensor.Float64, 17)
		cfg.Dropout = p
		phase := NewPhase()
		phase.SetTraining(training)
		g := G.NewGraph()
		x := G.NewMatrix(g, cfg.Dtype, G.WithShape(n, in), G.WithName("x"), G.WithValue(testutil.Tensor(cfg.Dtype, xv, n, in)))
		l, err := NewGATConv(g, gr, cfg, phase)
		require.NoError(t, err)
		y, err := l.Forward(x)
		require.NoError(t, err)
		var yv G.Value
		G.Read(y, &yv)
		testutil.Run(t, g)
		return testutil.ToF64(yv)
	}
	plain := run(0, true)
	testutil.AllClose(t, "eval", run(0.5, false), plain, 0, 0)
	train := run(0.5, true)
	same := 0
	for i := range train {
		if math.IsNaN(train[i]) {
			t.Fatalf("training output %d is NaN", i)
		}
		if train[i] == plain[i] {
			same++
		}
	}
	if same > len(train)/4 {
		t.Errorf("attention dropout in training left %d of %d outputs unchanged", same, len(train))
	}
	testutil.AllClose(t, "training, same seed", run(0.5, true), train, 0, 0)
}

// TestGATTrainingGradients checks the gradients of the training
// cross-entropy of the two-layer GAT model (gorgonia's Grad through the
// GAT ops, in training mode) against central differences of the dense
// model's cross-entropy.
func TestGATTrainingGradients(t *testing.T) {
	p := problem.New(t, 5, 40, 5, 2, 100, 0.8)
	g, x := p.Features(t, tensor.Float64)
	phase := NewPhase()
	phase.SetTraining(true)
	c := DefaultGATConfig(p.D, p.C)
	c.Heads, c.Hidden, c.Dropout = 2, 3, 0
	m, err := NewGAT(g, p.Graph, c, phase)
	require.NoError(t, err)
	p1, p2 := gatParamsOf(m.l1), gatParamsOf(m.l2)
	logits, err := m.Forward(x)
	require.NoError(t, err)
	cen, err := CrossEntropy(logits, p.Labels, p.Train)
	require.NoError(t, err)
	grads, err := G.Grad(cen, m.Learnables()...)
	require.NoError(t, err)
	gvs := make([]G.Value, len(grads))
	for i := range grads {
		G.Read(grads[i], &gvs[i])
	}
	var cev G.Value
	G.Read(cen, &cev)
	testutil.Run(t, g)
	var st struct{ CE float64 }
	if st.CE, err = opkit.Scalar(cev); err != nil {
		t.Fatal(err)
	}
	ce := func() float64 {
		out := gatNaiveModel(p.Graph, m, p.X, p1, p2)
		s := 0.0
		for _, i := range p.Train {
			z0, z1 := out[i*2], out[i*2+1]
			mx := math.Max(z0, z1)
			s += mx + math.Log(math.Exp(z0-mx)+math.Exp(z1-mx)) - out[i*2+p.Labels[i]]
		}
		return s / float64(len(p.Train))
	}
	if want := ce(); !testutil.Close(st.CE, want, 1e-12, 1e-10) {
		t.Fatalf("trainer CE %.12g, dense model %.12g", st.CE, want)
	}
	vals := [][]float64{p1.w, p1.as, p1.ad, p1.b, p2.w, p2.as, p2.ad, p2.b}
	for k, pn := range m.Learnables() {
		testutil.AllClose(t, pn.Name(), testutil.ToF64(gvs[k]), testutil.NumGrad(ce, vals[k], 1e-6), 1e-7, 1e-5)
	}
}

// TestGATOpErrors checks that the custom ops return errors, never panic,
// on inputs of the wrong shape, dtype or count.
func TestGATOpErrors(t *testing.T) {
	gr := mustGraph(t, 4, [][2]int{{0, 1}, {1, 2}})
	c := newGATCSR(gr, true)
	op := opkit.New(gatSpec, gatParams{kind: gatKAttn, c: c, heads: 2, f: 3, slope: 0.2})
	h := testutil.Tensor(tensor.Float64, make([]float64, 4*6), 4, 6)
	a := testutil.Tensor(tensor.Float64, make([]float64, 6), 1, 6)
	if _, err := op.Do(h, a, a); err != nil {
		t.Fatalf("valid inputs: %v", err)
	}
	a32 := testutil.Tensor(tensor.Float32, make([]float64, 6), 1, 6)
	short := testutil.Tensor(tensor.Float64, make([]float64, 3*6), 3, 6)
	for name, in := range map[string][]G.Value{
		"count": {h, a},
		"dtype": {h, a32, a},
		"rows":  {short, a, a},
		"cols":  {a, a, a},
	} {
		if _, err := op.Do(in...); err == nil {
			t.Errorf("%s: Do accepted bad inputs", name)
		}
	}
	agg := opkit.New(gatSpec, op.P.with(gatKAgg))
	if _, err := agg.Do(h, h); err == nil {
		t.Error("aggregation accepted an n × heads·f attention matrix")
	}
	g := G.NewGraph()
	hn := G.NewMatrix(g, tensor.Float64, G.WithShape(5, 6), G.WithName("h"))
	an := G.NewMatrix(g, tensor.Float64, G.WithShape(1, 6), G.WithName("a"))
	if _, err := G.ApplyOp(op, hn, an, an); err == nil {
		t.Error("ApplyOp accepted H with 5 rows for a 4-node graph")
	}
}
