package metrics

import (
	"errors"
	"math"
	"math/rand"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The four points of the hand-computed cases, in the plane:
//
//	x0 = (1, 0), x1 = (1, 1), x2 = (0, 1), x3 = (−1, 0)
//
// Cosines: cos(0,1) = cos(1,2) = 1/√2, cos(0,2) = cos(2,3) = 0,
// cos(0,3) = −1, cos(1,3) = −1/√2.
var handX = []float64{1, 0, 1, 1, 0, 1, -1, 0}

func TestCosineTopKByHand(t *testing.T) {
	r := 1 / math.Sqrt2
	// k = 1: 0 → 1; 1 → 0 (tied with 2 at 1/√2: the lower index wins);
	// 2 → 1; 3 → 2 at cosine 0, dropped. Union: {0,1}, {1,2}.
	s, err := CosineTopK(handX, 4, 2, 1, nil)
	require.NoError(t, err)
	assert.Equal(t, [][2]int{{0, 1}, {1, 2}}, s.Pairs)
	assert.InDeltaSlice(t, []float64{r, r}, s.Weights, 1e-15)
	assert.Equal(t, 4, s.N)
	// k = 2: 0 → 1, 2 (cos 0, dropped); 1 → 0, 2; 2 → 1, then 0 or 3 at
	// cosine 0, dropped; 3 → 2 (0) and 1 (−1/√2), both dropped. The same
	// two pairs, each chosen from both sides once.
	s, err = CosineTopK(handX, 4, 2, 2, nil)
	require.NoError(t, err)
	assert.Equal(t, [][2]int{{0, 1}, {1, 2}}, s.Pairs)
	assert.InDelta(t, 2*r, s.Weight(), 1e-15)
	// On the subset {1, 2, 3}: 1 → 2; 2 → 1; 3 → 2 at 0, dropped.
	s, err = CosineTopK(handX, 4, 2, 3, []int{3, 1, 2})
	require.NoError(t, err)
	assert.Equal(t, [][2]int{{1, 2}}, s.Pairs)
	assert.InDeltaSlice(t, []float64{r}, s.Weights, 1e-15)
}

func TestInFoRMBiasByHand(t *testing.T) {
	r := 1 / math.Sqrt2
	s := Similarity{N: 4, Pairs: [][2]int{{0, 1}, {1, 2}}, Weights: []float64{r, r}}
	probs := []float64{
		0.9, 0.1,
		0.6, 0.4,
		0.2, 0.8,
		0.5, 0.5, // node 3 has no similar node: it does not count
	}
	// ‖Y0 − Y1‖² = 0.3² + 0.3² = 0.18, ‖Y1 − Y2‖² = 0.4² + 0.4² = 0.32:
	// bias = (0.18 + 0.32)/√2 = 0.5/√2 ≈ 0.35355.
	got, err := InFoRMBias(probs, 2, s)
	require.NoError(t, err)
	assert.InDelta(t, 0.5*r, got, 1e-15)
	// The same as Tr(Yᵀ (D − S) Y) written out: D = diag(r, 2r, r, 0).
	assert.InDelta(t, traceForm(probs, 2, s), got, 1e-15)
	// Equal predictions for similar nodes: no bias, whatever node 3 gets.
	same := []float64{0.7, 0.3, 0.7, 0.3, 0.7, 0.3, 0, 1}
	got, err = InFoRMBias(same, 2, s)
	require.NoError(t, err)
	assert.Equal(t, 0.0, got)
}

// traceForm is Tr(Yᵀ L Y) with the dense Laplacian L = D − S.
func traceForm(probs []float64, c int, s Similarity) float64 {
	n := s.N
	S := make([]float64, n*n)
	for k, p := range s.Pairs {
		S[p[0]*n+p[1]] = s.Weights[k]
		S[p[1]*n+p[0]] = s.Weights[k]
	}
	L := make([]float64, n*n)
	for i := 0; i < n; i++ {
		deg := 0.0
		for j := 0; j < n; j++ {
			deg += S[i*n+j]
			L[i*n+j] = -S[i*n+j]
		}
		L[i*n+i] += deg
	}
	tr := 0.0
	for col := 0; col < c; col++ {
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				tr += probs[i*c+col] * L[i*n+j] * probs[j*c+col]
			}
		}
	}
	return tr
}

// naiveTopK is CosineTopK written plainly: the full cosine matrix, each
// row's other nodes sorted by cosine (stable: lower index first on ties),
// the first k of cosine > 0, symmetrised.
func naiveTopK(x []float64, n, d, k int) map[[2]int]float64 {
	cos := func(i, j int) float64 {
		var ab, aa, bb float64
		for c := 0; c < d; c++ {
			ab += x[i*d+c] * x[j*d+c]
			aa += x[i*d+c] * x[i*d+c]
			bb += x[j*d+c] * x[j*d+c]
		}
		if aa == 0 || bb == 0 {
			return 0
		}
		return ab / math.Sqrt(aa) / math.Sqrt(bb)
	}
	out := map[[2]int]float64{}
	for i := 0; i < n; i++ {
		var others []int
		for j := 0; j < n; j++ {
			if j != i {
				others = append(others, j)
			}
		}
		sort.SliceStable(others, func(a, b int) bool { return cos(i, others[a]) > cos(i, others[b]) })
		for _, j := range others[:k] {
			if w := cos(i, j); w > 0 {
				out[[2]int{min(i, j), max(i, j)}] = w
			}
		}
	}
	return out
}

func TestCosineTopKMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for _, c := range []struct {
		n, d, k int
		ints    bool
	}{{120, 4, 5, false}, {90, 3, 10, true}, {40, 2, 39, false}} {
		x := make([]float64, c.n*c.d)
		for i := range x {
			if c.ints {
				x[i] = float64(rng.Intn(3) - 1) // ties, duplicate and zero rows
			} else {
				x[i] = rng.NormFloat64()
			}
		}
		s, err := CosineTopK(x, c.n, c.d, c.k, nil)
		require.NoError(t, err)
		want := naiveTopK(x, c.n, c.d, c.k)
		require.Len(t, s.Pairs, len(want), "%+v", c)
		for p, pr := range s.Pairs {
			w, ok := want[pr]
			require.True(t, ok, "%+v: pair %v not in the naive graph", c, pr)
			assert.InDelta(t, w, s.Weights[p], 1e-12)
			if p > 0 {
				prev := s.Pairs[p-1]
				assert.True(t, prev[0] < pr[0] || (prev[0] == pr[0] && prev[1] < pr[1]), "pairs not sorted")
			}
		}
		// The bias equals the trace form on random probabilities.
		probs := make([]float64, c.n*3)
		for i := 0; i < c.n; i++ {
			a, b := rng.Float64(), rng.Float64()
			lo, hi := min(a, b), max(a, b)
			probs[3*i], probs[3*i+1], probs[3*i+2] = lo, hi-lo, 1-hi
		}
		got, err := InFoRMBias(probs, 3, s)
		require.NoError(t, err)
		assert.InDelta(t, traceForm(probs, 3, s), got, 1e-9)
	}
}

func TestIndividualErrors(t *testing.T) {
	_, err := CosineTopK(handX, 4, 2, 0, nil)
	assert.True(t, errors.Is(err, ErrValue))
	_, err = CosineTopK(handX, 3, 2, 1, nil)
	assert.True(t, errors.Is(err, ErrValue))
	_, err = CosineTopK([]float64{1, math.NaN(), 0, 1}, 2, 2, 1, nil)
	assert.ErrorContains(t, err, "x[1]")
	_, err = CosineTopK(handX, 4, 2, 1, []int{1, 1})
	assert.ErrorContains(t, err, "repeated")
	_, err = CosineTopK(handX, 4, 2, 1, []int{4})
	assert.True(t, errors.Is(err, ErrValue))
	_, err = CosineTopK(handX, 4, 2, 1, []int{2})
	assert.True(t, errors.Is(err, ErrEmpty))

	s := Similarity{N: 2, Pairs: [][2]int{{0, 1}}, Weights: []float64{1}}
	_, err = InFoRMBias([]float64{1, 0, 0}, 2, s)
	assert.True(t, errors.Is(err, ErrLength))
	_, err = InFoRMBias([]float64{1, 0, 1.5, 0}, 2, s)
	assert.ErrorContains(t, err, "probs[2]")
	_, err = InFoRMBias([]float64{1, 0, 0, 1}, 2, Similarity{N: 2, Pairs: [][2]int{{1, 0}}, Weights: []float64{1}})
	assert.ErrorContains(t, err, "want nodes i < j")
	_, err = InFoRMBias([]float64{1, 0, 0, 1}, 2, Similarity{N: 2, Pairs: [][2]int{{0, 1}}, Weights: []float64{-1}})
	assert.ErrorContains(t, err, "weight 0")
	got, err := InFoRMBias([]float64{1, 0, 0, 1}, 2, s)
	require.NoError(t, err)
	assert.Equal(t, 2.0, got, "one-hot rows of a pair of weight 1 differ by 2")
}
