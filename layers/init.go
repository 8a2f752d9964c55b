package layers

import (
	"fmt"
	"math"
	"math/rand"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/internal/opkit"
)

// GlorotUniform returns a rows × cols tensor of dtype dt drawn from
// U(−a, a), a = sqrt(6 / (rows + cols)) (Glorot & Bengio), using rng.
// fairmp never uses gorgonia's initialisers, which are seeded from the clock.
func GlorotUniform(rng *rand.Rand, dt tensor.Dtype, rows, cols int) *tensor.Dense {
	a := math.Sqrt(6 / float64(rows+cols))
	t := opkit.Alloc(dt, rows, cols)
	switch d := t.Data().(type) {
	case []float64:
		for i := range d {
			d[i] = (2*rng.Float64() - 1) * a
		}
	case []float32:
		for i := range d {
			d[i] = float32((2*rng.Float64() - 1) * a)
		}
	}
	return t
}

// newWeight adds a learnable rows × cols matrix with Glorot-uniform values
// drawn from rng to g.
func newWeight(g *G.ExprGraph, dt tensor.Dtype, rows, cols int, name string, rng *rand.Rand) (*G.Node, error) {
	if err := opkit.CheckFloat(dt); err != nil {
		return nil, fmt.Errorf("layers: %s: %w", name, err)
	}
	if rows <= 0 || cols <= 0 {
		return nil, fmt.Errorf("layers: %s: shape %d × %d, want both > 0", name, rows, cols)
	}
	if err := opkit.UniqueName(g, name); err != nil {
		return nil, fmt.Errorf("layers: %w", err)
	}
	return G.NewMatrix(g, dt, G.WithShape(rows, cols), G.WithName(name),
		G.WithValue(GlorotUniform(rng, dt, rows, cols))), nil
}

// newBias adds a learnable 1 × cols matrix of zeros to g. Biases are kept
// 2-d so that they broadcast over the rows of an n × cols node.
func newBias(g *G.ExprGraph, dt tensor.Dtype, cols int, name string) (*G.Node, error) {
	if err := opkit.CheckFloat(dt); err != nil {
		return nil, fmt.Errorf("layers: %s: %w", name, err)
	}
	if cols <= 0 {
		return nil, fmt.Errorf("layers: %s: %d columns, want > 0", name, cols)
	}
	if err := opkit.UniqueName(g, name); err != nil {
		return nil, fmt.Errorf("layers: %w", err)
	}
	return G.NewMatrix(g, dt, G.WithShape(1, cols), G.WithName(name),
		G.WithValue(opkit.Alloc(dt, 1, cols))), nil
}
