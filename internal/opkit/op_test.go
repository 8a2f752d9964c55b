package opkit

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/internal/testutil"
)

// scaleSpec is a toy op: y = k·x for a matrix x, k a hashed field; its
// gradient is the same op on the output's gradient.
var scaleSpec = &Spec[float64]{
	ID:    "opkit.test.Scale",
	Name:  func(k float64) string { return fmt.Sprintf("Scale(%g)", k) },
	Sig:   func(float64) Sig { return Mats(1) },
	Shape: func(_ float64, in []tensor.Shape) (tensor.Shape, error) { return in[0], nil },
	Hash:  func(k float64, h Hasher) { h.F64(k) },
	F32:   scaleFwd[float32],
	F64:   scaleFwd[float64],
	Grad: func(op *Op[float64], _ G.Nodes, _, grad *G.Node) (G.Nodes, error) {
		d, err := op.Apply(op.P, grad)
		return G.Nodes{d}, err
	},
	Keep: true,
}

func scaleFwd[T float32 | float64](k float64, a Args[T]) error {
	for i, v := range a.In[0] {
		a.Out[i] = T(k * float64(v))
	}
	return nil
}

// dotSpec is a toy op with a scalar output: k·Σ x⊙w for two matrices of
// one shape, whose gradient takes the scalar output gradient as input.
var dotSpec = &Spec[float64]{
	ID:  "opkit.test.Dot",
	Sig: func(float64) Sig { return Sig{In: []int{2, 2}, Out: 0} },
	Shape: func(_ float64, in []tensor.Shape) (tensor.Shape, error) {
		if !in[0].Eq(in[1]) {
			return nil, fmt.Errorf("shapes %v and %v differ", in[0], in[1])
		}
		return tensor.ScalarShape(), nil
	},
	Hash: func(k float64, h Hasher) { h.F64(k) },
	F32:  dotFwd[float32],
	F64:  dotFwd[float64],
	Grad: func(op *Op[float64], in G.Nodes, _, grad *G.Node) (G.Nodes, error) {
		dx, err := Apply(dotGradSpec, op.P, in[1], grad)
		if err != nil {
			return nil, err
		}
		dw, err := Apply(dotGradSpec, op.P, in[0], grad)
		return G.Nodes{dx, dw}, err
	},
}

func dotFwd[T float32 | float64](k float64, a Args[T]) error {
	s := 0.0
	for i, v := range a.In[0] {
		s += float64(v) * float64(a.In[1][i])
	}
	a.Out[0] = T(k * s)
	return nil
}

// dotGradSpec is dotSpec's gradient: k·g·other, from (other, g).
var dotGradSpec = &Spec[float64]{
	ID:    "opkit.test.DotGrad",
	Sig:   func(float64) Sig { return Sig{In: []int{2, 0}, Out: 2} },
	Shape: func(_ float64, in []tensor.Shape) (tensor.Shape, error) { return in[0], nil },
	Hash:  func(k float64, h Hasher) { h.F64(k) },
	F32:   dotGradFwd[float32],
	F64:   dotGradFwd[float64],
}

func dotGradFwd[T float32 | float64](k float64, a Args[T]) error {
	g := float64(a.In[1][0])
	for i, v := range a.In[0] {
		a.Out[i] = T(k * g * float64(v))
	}
	return nil
}

// TestOpForwardAndGradient runs cost = Dot_k2(Scale_k1(x), w) for
// float32 and float64: the forward against the naive sum, the gradients
// of x and w (through both ops' SymDiff) against central differences.
func TestOpForwardAndGradient(t *testing.T) {
	const r, c, k1, k2 = 3, 4, 1.5, -0.75
	rng := rand.New(rand.NewSource(1))
	xv := testutil.RandSlice(rng, r*c, -1, 1)
	wv := testutil.RandSlice(rng, r*c, -1, 1)
	naive := func() float64 {
		s := 0.0
		for i := range xv {
			s += k1 * xv[i] * wv[i]
		}
		return k2 * s
	}
	for _, dt := range testutil.Dtypes {
		t.Run(dt.String(), func(t *testing.T) {
			run := func() (float64, []float64, []float64) {
				g := G.NewGraph()
				x := G.NewMatrix(g, dt, G.WithShape(r, c), G.WithName("x"), G.WithValue(testutil.Tensor(dt, xv, r, c)))
				w := G.NewMatrix(g, dt, G.WithShape(r, c), G.WithName("w"), G.WithValue(testutil.Tensor(dt, wv, r, c)))
				y, err := Apply(scaleSpec, k1, x)
				require.NoError(t, err)
				cost, err := Apply(dotSpec, k2, y, w)
				require.NoError(t, err)
				_, err = G.Grad(cost, x, w)
				require.NoError(t, err)
				testutil.Run(t, g)
				gx, err := x.Grad()
				require.NoError(t, err)
				gw, err := w.Grad()
				require.NoError(t, err)
				return testutil.ToF64(cost.Value())[0], testutil.ToF64(gx), testutil.ToF64(gw)
			}
			atol, rtol := testutil.Tol(dt)
			got, gx, gw := run()
			assert.True(t, testutil.Close(got, naive(), atol, rtol), "cost %v, want %v", got, naive())
			gatol, grtol := 1e-7, 1e-6
			if dt == tensor.Float32 {
				gatol, grtol = 1e-4, 1e-3
			}
			testutil.AllClose(t, "dx", gx, testutil.NumGrad(naive, xv, 1e-6), gatol, grtol)
			testutil.AllClose(t, "dw", gw, testutil.NumGrad(naive, wv, 1e-6), gatol, grtol)
		})
	}
}

// TestOpHash: ops of one spec hash by their fields, ops of two specs
// with equal fields hash apart, and the hash is stable.
func TestOpHash(t *testing.T) {
	a, b := New(scaleSpec, 2), New(scaleSpec, 3)
	assert.NotEqual(t, a.Hashcode(), b.Hashcode(), "different fields")
	assert.Equal(t, a.Hashcode(), New(scaleSpec, 2).Hashcode(), "same fields")
	assert.NotEqual(t, a.Hashcode(), New(dotGradSpec, 2).Hashcode(), "same fields, other spec")
	assert.Equal(t, "Scale(2)", a.String())
	assert.Equal(t, "opkit.test.DotGrad", New(dotGradSpec, 2).String(), "no Name: the ID")
}

// TestOpDistinctNodes: gorgonia deduplicates nodes by op hash, so two
// ops of one spec with different fields on the same input must stay two
// nodes (and compute different values), while equal ones become one.
func TestOpDistinctNodes(t *testing.T) {
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(1, 2), G.WithName("x"), G.WithValue(testutil.Tensor(tensor.Float64, []float64{1, 2}, 1, 2)))
	y2, err := Apply(scaleSpec, 2, x)
	require.NoError(t, err)
	y3, err := Apply(scaleSpec, 3, x)
	require.NoError(t, err)
	y2b, err := Apply(scaleSpec, 2, x)
	require.NoError(t, err)
	assert.NotSame(t, y2, y3)
	assert.Same(t, y2, y2b)
	var v2, v3 G.Value
	G.Read(y2, &v2)
	G.Read(y3, &v3)
	testutil.Run(t, g)
	assert.Equal(t, []float64{2, 4}, testutil.ToF64(v2))
	assert.Equal(t, []float64{3, 6}, testutil.ToF64(v3))
}

// TestOpErrors: a wrong input count, element type or shape is an error
// wrapping ErrInput, at graph construction and in Do, never a panic.
func TestOpErrors(t *testing.T) {
	m := testutil.Tensor(tensor.Float64, make([]float64, 6), 2, 3)
	m2 := testutil.Tensor(tensor.Float64, make([]float64, 6), 3, 2)
	m32 := testutil.Tensor(tensor.Float32, make([]float64, 6), 2, 3)
	ints := tensor.New(tensor.WithShape(2, 3), tensor.WithBacking(make([]int, 6)))
	v3 := testutil.Tensor(tensor.Float64, make([]float64, 8), 2, 2, 2)
	dot := New(dotSpec, 1)
	for name, in := range map[string][]G.Value{
		"count":      {m},
		"too many":   {m, m, m},
		"mixed":      {m, m32},
		"ints":       {ints, ints},
		"shape rule": {m, m2},
		"dims":       {v3, v3},
		"nil":        {m, nil},
	} {
		_, err := dot.Do(in...)
		assert.ErrorIs(t, err, ErrInput, name)
	}
	grad := New(dotGradSpec, 1)
	_, err := grad.Do(m, m)
	assert.ErrorIs(t, err, ErrInput, "a matrix for a scalar input")
	v, err := grad.Do(m, G.NewF64(2))
	require.NoError(t, err)
	assert.Equal(t, []int{2, 3}, []int(v.Shape()))

	_, err = dot.InferShape(tensor.Shape{2, 3})
	assert.ErrorIs(t, err, ErrInput)
	_, err = dot.InferShape(tensor.Shape{2, 3}, tensor.Shape{3, 2})
	assert.ErrorIs(t, err, ErrInput)
	_, err = dot.InferShape(tensor.Shape{2, 3}, tensor.Shape{6})
	assert.ErrorIs(t, err, ErrInput)

	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 3), G.WithName("x"))
	y := G.NewMatrix(g, tensor.Float64, G.WithShape(3, 2), G.WithName("y"))
	_, err = Apply(dotSpec, 1, x, y)
	assert.ErrorContains(t, err, "shapes (2, 3) and (3, 2) differ")
	_, err = Apply(dotSpec, 1, x)
	assert.Error(t, err)
	vec := G.NewVector(g, tensor.Float64, G.WithShape(3), G.WithName("v"))
	_, err = Apply(scaleSpec, 2, vec)
	assert.Error(t, err, "a vector for a matrix input")
	x32 := G.NewMatrix(g, tensor.Float32, G.WithShape(2, 3), G.WithName("x32"))
	_, err = Apply(dotSpec, 1, x, x32)
	assert.Error(t, err, "two element types")

	// Not differentiable: no differentiable input, SymDiff an error.
	assert.Equal(t, []bool{false, false}, grad.DiffWRT(2))
	_, err = grad.SymDiff(nil, nil, nil)
	assert.ErrorIs(t, err, errNoDiff)
	_, err = dot.SymDiff(G.Nodes{x}, nil, nil)
	assert.ErrorContains(t, err, "SymDiff with 1 inputs, want 2")
}

// TestOpKeep: with Keep the op writes into a fitting preallocated value
// or its kept buffer; without, every run has a fresh zeroed output.
func TestOpKeep(t *testing.T) {
	x := testutil.Tensor(tensor.Float64, []float64{1, 2}, 1, 2)
	op := New(scaleSpec, 2)
	a, err := op.Do(x)
	require.NoError(t, err)
	b, err := op.Do(x)
	require.NoError(t, err)
	assert.Same(t, a, b, "kept buffer")
	pre := testutil.Tensor(tensor.Float64, []float64{9, 9}, 1, 2)
	c, err := op.UsePreallocDo(pre, x)
	require.NoError(t, err)
	assert.Same(t, pre, c)
	assert.Equal(t, []float64{2, 4}, pre.Data())

	gop := New(dotGradSpec, 1)
	a, err = gop.UsePreallocDo(pre, x, G.NewF64(1))
	require.NoError(t, err)
	b, err = gop.Do(x, G.NewF64(1))
	require.NoError(t, err)
	assert.NotSame(t, a, b)
	assert.NotSame(t, pre, a)
	assert.Equal(t, []float64{1, 2}, testutil.ToF64(a))
}

// TestParamsOf finds an op's parameters through its spec only.
func TestParamsOf(t *testing.T) {
	k, ok := ParamsOf(scaleSpec, New(scaleSpec, 2))
	assert.True(t, ok)
	assert.Equal(t, 2.0, k)
	_, ok = ParamsOf(scaleSpec, New(dotGradSpec, 2))
	assert.False(t, ok, "same parameter type, other spec")
}

// TestSame: the signatures from the shared table and beyond it.
func TestSame(t *testing.T) {
	assert.Equal(t, Sig{In: []int{2, 2, 2}, Out: 2}, Mats(3))
	assert.Equal(t, Sig{In: []int{1}, Out: 1}, Same(1, 1))
	assert.Equal(t, Sig{In: []int{3, 3, 3, 3, 3, 3, 3, 3, 3}, Out: 3}, Same(3, 9))
	assert.Equal(t, Sig{In: []int{7, 7}, Out: 7}, Same(7, 2))
	assert.Empty(t, Mats(0).In)
}

// keepProbe records what its op's forward and Release see.
type keepProbe struct {
	keep     bool // the last run's Args.KeepBuffers
	released int  // calls of Release
}

var probeSpec = &Spec[*keepProbe]{
	ID:    "opkit.test.Probe",
	Sig:   func(*keepProbe) Sig { return Mats(1) },
	Shape: func(_ *keepProbe, in []tensor.Shape) (tensor.Shape, error) { return in[0], nil },
	F32:   probeFwd[float32],
	F64:   probeFwd[float64],
	Keep:  true,
	Release: func(p *keepProbe) {
		p.released++
	},
}

func probeFwd[T float32 | float64](p *keepProbe, a Args[T]) error {
	p.keep = a.KeepBuffers
	copy(a.Out, a.In[0])
	return nil
}

// TestKeepBuffersIn: KeepBuffersIn switches the reuse of every op of a
// graph (off: every run a fresh output, Args.KeepBuffers false, the
// spec's Release called); FollowBuffers switches the ops added since
// when some op is off, and leaves a graph whose ops are all on alone;
// ReleaseGraph calls Release.
func TestKeepBuffersIn(t *testing.T) {
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(1, 2), G.WithName("x"))
	xv := testutil.Tensor(tensor.Float64, []float64{1, 2}, 1, 2)
	p := &keepProbe{}
	y, err := Apply(probeSpec, p, x)
	require.NoError(t, err)
	op := y.Op().(*Op[*keepProbe])
	runTwice := func(o G.Op) (G.Value, G.Value) {
		a, err := o.Do(xv)
		require.NoError(t, err)
		b, err := o.Do(xv)
		require.NoError(t, err)
		return a, b
	}

	a, b := runTwice(op)
	assert.Same(t, a, b, "on by default")
	assert.True(t, p.keep)
	FollowBuffers(g)
	assert.True(t, op.KeepsBuffers(), "FollowBuffers on a graph all on")

	KeepBuffersIn(g, false)
	assert.False(t, op.KeepsBuffers())
	assert.Equal(t, 1, p.released, "switching off releases")
	a, b = runTwice(op)
	assert.NotSame(t, a, b, "off: fresh outputs")
	assert.False(t, p.keep)
	assert.Equal(t, []float64{1, 2}, testutil.ToF64(b))

	z, err := Apply(scaleSpec, 3, y)
	require.NoError(t, err)
	zop := z.Op().(*Op[float64])
	assert.True(t, zop.KeepsBuffers(), "an op added later starts on")
	FollowBuffers(g)
	assert.False(t, zop.KeepsBuffers(), "FollowBuffers switches it off")
	assert.Equal(t, 2, p.released, "and the others off again")

	KeepBuffersIn(g, true)
	assert.True(t, op.KeepsBuffers())
	assert.True(t, zop.KeepsBuffers())
	a, b = runTwice(op)
	assert.Same(t, a, b)
	assert.True(t, p.keep)
	ReleaseGraph(g)
	assert.Equal(t, 3, p.released, "ReleaseGraph releases")
}
