package fairtrain

import (
	"fmt"
	"math"
	"math/rand"

	"github.com/fairmp/fairmp/internal/opkit"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// mixSampler draws, on every call of draw, m nodes of each of two groups
// (without replacement within a draw), pairs them in drawn order, and a
// mixing weight λ ~ Beta(a, b), all from its own seeded source.
type mixSampler struct {
	g0, g1 []int // the two groups' nodes (shuffled in place by draw)
	m      int
	a, b   float64
	rng    *rand.Rand

	// The latest draw: pairs (i0[k], i1[k]) and λ.
	i0, i1 []int
	lambda float64
	draws  int
}

func newMixSampler(g0, g1 []int, m int, a, b float64, seed int64) *mixSampler {
	return &mixSampler{g0: append([]int(nil), g0...), g1: append([]int(nil), g1...), m: m, a: a, b: b,
		rng: rand.New(rand.NewSource(seed)), i0: make([]int, m), i1: make([]int, m)}
}

func (s *mixSampler) draw() {
	pick(s.rng, s.g0, s.i0)
	pick(s.rng, s.g1, s.i1)
	s.lambda = betaSample(s.rng, s.a, s.b)
	s.draws++
}

// pick fills out with len(out) distinct elements of pool (a partial
// Fisher–Yates shuffle of pool, which it reorders).
func pick(rng *rand.Rand, pool, out []int) {
	for k := range out {
		j := k + rng.Intn(len(pool)-k)
		pool[k], pool[j] = pool[j], pool[k]
		out[k] = pool[k]
	}
}

// betaSample draws from Beta(a, b) as X/(X+Y) with X ~ Gamma(a), Y ~
// Gamma(b).
func betaSample(rng *rand.Rand, a, b float64) float64 {
	x := gammaSample(rng, a)
	y := gammaSample(rng, b)
	return x / (x + y)
}

// gammaSample draws from Gamma(k, 1) by Marsaglia and Tsang's method
// (k < 1 through Gamma(k+1)·U^(1/k)).
func gammaSample(rng *rand.Rand, k float64) float64 {
	if k < 1 {
		return gammaSample(rng, k+1) * math.Pow(rng.Float64(), 1/k)
	}
	d := k - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

// mixOp holds the parameters of the op (mixSpec) that maps the n × c
// logits z to the 2m × c matrix whose first m rows are the mixed logits
// λ z[i0_k] + (1−λ) z[i1_k] and whose last m rows are the path directions
// z[i0_k] − z[i1_k], for a fresh draw of the sampler on every forward run.
// It is linear in z; its gradient (mixTSpec) applies the transpose of the
// same run's map.
type mixOp struct {
	s    *mixSampler
	n, c int
	id   uint64
}

var mixSpec = &opkit.Spec[*mixOp]{
	ID:   "fairmp.fair.Mixup",
	Name: func(op *mixOp) string { return fmt.Sprintf("Mixup#%d(m=%d)", op.id, op.s.m) },
	Sig:  func(*mixOp) opkit.Sig { return opkit.Mats(1) },
	Shape: func(op *mixOp, in []tensor.Shape) (tensor.Shape, error) {
		return tensor.Shape{2 * op.s.m, op.c}, logitsShape(in[0], op.n, op.c)
	},
	Hash: func(op *mixOp, h opkit.Hasher) { h.U64(op.id) },
	F32: func(op *mixOp, a opkit.Args[float32]) error {
		op.s.draw()
		mixForward(op.s, op.c, a.Out, a.In[0])
		return nil
	},
	F64: func(op *mixOp, a opkit.Args[float64]) error {
		op.s.draw()
		mixForward(op.s, op.c, a.Out, a.In[0])
		return nil
	},
	Grad: func(o *opkit.Op[*mixOp], _ G.Nodes, _, grad *G.Node) (G.Nodes, error) {
		d, err := opkit.Apply(mixTSpec, o.P, grad)
		if err != nil {
			return nil, err
		}
		return G.Nodes{d}, nil
	},
}

// mixTSpec applies the transpose of the latest forward run's mixing map
// to the 2m × c gradient.
var mixTSpec = &opkit.Spec[*mixOp]{
	ID:   "fairmp.fair.MixupT",
	Name: func(op *mixOp) string { return fmt.Sprintf("MixupT#%d", op.id) },
	Sig:  func(*mixOp) opkit.Sig { return opkit.Mats(1) },
	Shape: func(op *mixOp, in []tensor.Shape) (tensor.Shape, error) {
		return tensor.Shape{op.n, op.c}, logitsShape(in[0], 2*op.s.m, op.c)
	},
	Hash: func(op *mixOp, h opkit.Hasher) { h.U64(op.id) },
	F32:  mixTFwd[float32],
	F64:  mixTFwd[float64],
}

func mixTFwd[T float32 | float64](op *mixOp, a opkit.Args[T]) error {
	if op.s.draws == 0 {
		return fmt.Errorf("gradient before any forward run")
	}
	mixBackward(op.s, op.c, a.Out, a.In[0])
	return nil
}

func mixForward[T float32 | float64](s *mixSampler, c int, out, z []T) {
	l := s.lambda
	for k := 0; k < s.m; k++ {
		a := z[s.i0[k]*c : (s.i0[k]+1)*c]
		b := z[s.i1[k]*c : (s.i1[k]+1)*c]
		mix := out[k*c : (k+1)*c]
		dir := out[(s.m+k)*c : (s.m+k+1)*c]
		for j := range mix {
			mix[j] = T(l*float64(a[j]) + (1-l)*float64(b[j]))
			dir[j] = a[j] - b[j]
		}
	}
}

func mixBackward[T float32 | float64](s *mixSampler, c int, out, g []T) {
	l := s.lambda
	for k := 0; k < s.m; k++ {
		gm := g[k*c : (k+1)*c]
		gd := g[(s.m+k)*c : (s.m+k+1)*c]
		a := out[s.i0[k]*c : (s.i0[k]+1)*c]
		b := out[s.i1[k]*c : (s.i1[k]+1)*c]
		for j := range gm {
			a[j] += T(l*float64(gm[j])) + gd[j]
			b[j] += T((1-l)*float64(gm[j])) - gd[j]
		}
	}
}
