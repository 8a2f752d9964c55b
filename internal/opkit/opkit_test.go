package opkit

import (
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// naiveSoftmax is the textbook definition, without max-subtraction.
func naiveSoftmax(x []float64, invT float64) []float64 {
	p := make([]float64, len(x))
	s := 0.0
	for j, v := range x {
		p[j] = math.Exp(v * invT)
		s += p[j]
	}
	for j := range p {
		p[j] /= s
	}
	return p
}

func TestSoftmaxRow(t *testing.T) {
	for _, c := range []struct {
		x    []float64
		invT float64
	}{
		{[]float64{0, 0}, 1},
		{[]float64{1, 2, 3}, 1},
		{[]float64{-0.5, 0.25, 2, -3}, 2},
		{[]float64{3}, 0.5},
	} {
		want := naiveSoftmax(c.x, c.invT)
		p := make([]float64, len(c.x))
		SoftmaxRow(c.x, p, c.invT)
		assert.InDeltaSlice(t, want, p, 1e-15, "float64 %v", c.x)
		x32 := make([]float32, len(c.x))
		for i, v := range c.x {
			x32[i] = float32(v)
		}
		SoftmaxRow(x32, p, c.invT)
		assert.InDeltaSlice(t, want, p, 1e-7, "float32 %v", c.x)
	}
	// Stable where the naive form overflows: logits of ±1e4.
	p := make([]float64, 3)
	SoftmaxRow([]float64{1e4, -1e4, 1e4 - math.Log(3)}, p, 1)
	assert.InDeltaSlice(t, []float64{0.75, 0, 0.25}, p, 1e-12)
	SoftmaxRow([]float32{-1e4, -1e4}, p[:2], 1)
	assert.Equal(t, []float64{0.5, 0.5}, p[:2])
}

// The two-class path takes one exp and gives the general path's bits.
func TestSoftmaxRowTwoClassesBitIdentical(t *testing.T) {
	vals := []float64{0, -0, 1, -1, 0.3, -2.5, 1e-300, 40, -745, 710, 1e4, -1e4, math.SmallestNonzeroFloat64}
	p, q := make([]float64, 2), make([]float64, 2)
	for _, a := range vals {
		for _, b := range vals {
			for _, invT := range []float64{1, 2, 0.1, 7.3} {
				SoftmaxRow([]float64{a, b}, p, invT)
				softmaxGeneral([]float64{a, b}, q, invT)
				require.Equal(t, math.Float64bits(q[0]), math.Float64bits(p[0]), "%v %v %v", a, b, invT)
				require.Equal(t, math.Float64bits(q[1]), math.Float64bits(p[1]), "%v %v %v", a, b, invT)
				SoftmaxRow([]float32{float32(a), float32(b)}, p, invT)
				softmaxGeneral([]float32{float32(a), float32(b)}, q, invT)
				require.Equal(t, q, p)
			}
		}
	}
}

func TestArgmaxMeanCE(t *testing.T) {
	assert.Equal(t, 1, Argmax([]float64{0, 3, 3, 1}), "first of the ties")
	assert.Equal(t, 0, Argmax([]float32{5}))
	z := []float64{0, 0, 2, 0, 0, 1}
	// Rows 0 and 2 with labels 0 and 1: ln 2 and ln(1+e)−1.
	want := (math.Ln2 + math.Log(1+math.E) - 1) / 2
	assert.InDelta(t, want, MeanCE(z, []int{0, 9, 1}, []int{0, 2}, 2), 1e-15)
}

func TestScalarAndUniqueName(t *testing.T) {
	v, err := Scalar(G.NewF32(2.5))
	require.NoError(t, err)
	assert.Equal(t, 2.5, v)
	_, err = Scalar(tensor.New(tensor.WithShape(2), tensor.WithBacking([]float64{1, 2})))
	assert.ErrorContains(t, err, "want a scalar")
	g := G.NewGraph()
	G.NewScalar(g, tensor.Float64, G.WithName("w"))
	assert.ErrorContains(t, UniqueName(g, "w"), `"w" is already used`)
	assert.NoError(t, UniqueName(g, "v"))
}

// TestMeanCEParallelSameSum checks MeanCE on enough nodes to run in
// parallel against the one-loop sum, bit for bit.
func TestMeanCEParallelSameSum(t *testing.T) {
	const n, c = 20000, 3
	z := make([]float32, n*c)
	labels := make([]int, n)
	idx := make([]int, 0, n)
	for i := range z {
		z[i] = float32(math.Sin(float64(i)) * 4)
	}
	for i := 0; i < n; i++ {
		labels[i] = i % c
		if i%7 != 3 {
			idx = append(idx, (i*7919)%n)
		}
	}
	var total float64
	for _, i := range idx {
		row := z[i*c : (i+1)*c]
		m := math.Inf(-1)
		for _, v := range row {
			m = math.Max(m, float64(v))
		}
		var s float64
		for _, v := range row {
			s += math.Exp(float64(v) - m)
		}
		total += m + math.Log(s) - float64(row[labels[i]])
	}
	require.Greater(t, len(idx), 2*ceGrain)
	assert.Equal(t, math.Float64bits(total/float64(len(idx))), math.Float64bits(MeanCE(z, labels, idx, c)))
}

// TestDropout: the mask holds 0 or 1/(1−p); with x, out is x·mask from
// the same draws as the mask alone; the same seed draws the same mask.
func TestDropout(t *testing.T) {
	x := []float32{1, 2, 3, 4, 5, 6, 7, 8}
	m1, out := make([]float32, len(x)), make([]float32, len(x))
	Dropout(rand.New(rand.NewSource(3)), 0.5, m1, x, out)
	m2 := make([]float32, len(x))
	Dropout(rand.New(rand.NewSource(3)), 0.5, m2, nil, nil)
	assert.Equal(t, m1, m2)
	kept := 0
	for i := range x {
		assert.Contains(t, []float32{0, 2}, m1[i])
		assert.Equal(t, x[i]*m1[i], out[i])
		if m1[i] != 0 {
			kept++
		}
	}
	assert.Positive(t, kept)
	assert.Less(t, kept, len(x))
	m64 := make([]float64, 4)
	Dropout(rand.New(rand.NewSource(3)), 0, m64, nil, nil)
	assert.Equal(t, []float64{1, 1, 1, 1}, m64, "p = 0 keeps every element")
}
