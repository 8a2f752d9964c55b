package valauc

import (
	"math"
	"math/rand"
	"testing"

	"github.com/fairmp/fairmp/metrics"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"
)

func logitsOf(dt tensor.Dtype, n, c int, v []float64) *tensor.Dense {
	if dt == tensor.Float32 {
		f := make([]float32, len(v))
		for i, x := range v {
			f[i] = float32(x)
		}
		return tensor.New(tensor.WithShape(n, c), tensor.WithBacking(f))
	}
	return tensor.New(tensor.WithShape(n, c), tensor.WithBacking(append([]float64(nil), v...)))
}

// TestValAUCBinaryHand: class 1's scores z1 − z0 of nodes 1..5 are
// 0.125, 0.25, 0.375, 0.75, 0.75 with labels 0 1 0 1 0 (node 0 left out):
// of the 6 (positive, negative) pairs, 0.25 beats 0.125; 0.75 beats 0.125
// and 0.375 and ties 0.75: (1 + 2.5)/6.
func TestValAUCBinaryHand(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		z := logitsOf(dt, 6, 2, []float64{9, -9, 0, 0.125, 1, 1.25, 0, 0.375, 0.25, 1, -0.5, 0.25})
		got, ok := Of(z, []int{1, 0, 1, 0, 1, 0}, []int{1, 2, 3, 4, 5}, 2)
		require.True(t, ok)
		assert.InDelta(t, 3.5/6, got, 1e-12, "%v", dt)
	}
}

// TestValAUCMacroOvR: for three classes, the mean over the classes of
// metrics.AUC of P(k) against the other classes (sklearn's macro
// one-vs-rest), on random logits.
func TestValAUCMacroOvR(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	n, c := 60, 3
	v := make([]float64, n*c)
	labels := make([]int, n)
	for i := range labels {
		labels[i] = i % c
		for k := 0; k < c; k++ {
			v[i*c+k] = rng.NormFloat64()
			if k == labels[i] {
				v[i*c+k] += 1.5
			}
		}
	}
	idx := rng.Perm(n)[:45]
	want := 0.0
	for k := 0; k < c; k++ {
		var p []float64
		var y []int
		for _, i := range idx {
			row := v[i*c : (i+1)*c]
			s := 0.0
			for _, x := range row {
				s += math.Exp(x)
			}
			p = append(p, math.Exp(row[k])/s)
			if labels[i] == k {
				y = append(y, 1)
			} else {
				y = append(y, 0)
			}
		}
		a, err := metrics.AUC(p, y)
		require.NoError(t, err)
		want += a / float64(c)
	}
	got, ok := Of(logitsOf(tensor.Float64, n, c, v), labels, idx, c)
	require.True(t, ok)
	assert.InDelta(t, want, got, 1e-12)
	assert.Greater(t, got, 0.6, "the true class's logit is raised")
}

// TestValAUCUndefined: a class without a node among idx (or with all of
// them) has no ROC curve.
func TestValAUCUndefined(t *testing.T) {
	z := logitsOf(tensor.Float64, 3, 3, []float64{1, 0, 0, 0, 1, 0, 0, 0, 1})
	_, ok := Of(z, []int{0, 1, 1}, []int{0, 1, 2}, 3)
	assert.False(t, ok, "no node of class 2")
	_, ok = Of(z, []int{1, 1, 0}, []int{0, 1}, 2)
	assert.False(t, ok, "every node of class 1")
}
