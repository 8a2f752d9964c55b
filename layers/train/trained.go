package train

import (
	"errors"
	"fmt"

	G "gorgonia.org/gorgonia"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/layers"
)

// ErrUntrained is returned (wrapped) where a model that was never trained
// would be debiased or saved as if it had been: its parameters are still
// those its configuration initialises (see Trained).
var ErrUntrained = errors.New("train: the model's parameters are its initialisation: train it first")

// placeholder is a one-node graph to build fresh copies of a model on:
// parameters do not depend on the graph.
var placeholder = func() *graph.Graph {
	g, err := graph.FromEdges(1, nil)
	if err != nil {
		panic(err) // a constant input: cannot fail
	}
	return g
}()

// Trained reports whether model's parameters differ from those its
// configuration initialises, that is whether anything (Fit, a mini-batch
// run's parameters, a loaded file) has set them since it was built. For a
// wrapper (fmp.Model) it reports on the backbone. It builds a fresh copy
// of the model's parameters to compare them, and returns an error for a
// model of no declared kind (layers.Declare).
func Trained(model layers.Model) (bool, error) {
	k, err := layers.KindOf(model)
	if err != nil {
		return false, err
	}
	if k.Wraps() {
		model = model.(layers.Wrapper).Backbone()
		if k, err = layers.KindOf(model); err != nil {
			return false, err
		}
	}
	cfg, err := k.ConfigOf(model)
	if err != nil {
		return false, err
	}
	fresh, err := k.Build(G.NewGraph(), placeholder, cfg, nil)
	if err != nil {
		return false, fmt.Errorf("train: Trained: rebuilding the %s model: %w", k.Name(), err)
	}
	got, init := model.Learnables(), fresh.Learnables()
	if len(got) != len(init) {
		return false, fmt.Errorf("train: Trained: the %s model has %d parameters, its configuration builds %d", k.Name(), len(got), len(init))
	}
	for i, p := range got {
		a, b := p.Value(), init[i].Value()
		if a == nil || b == nil {
			return true, nil
		}
		switch x := a.Data().(type) {
		case []float64:
			y, ok := b.Data().([]float64)
			if !ok || !equal(x, y) {
				return true, nil
			}
		case []float32:
			y, ok := b.Data().([]float32)
			if !ok || !equal(x, y) {
				return true, nil
			}
		default:
			return true, nil
		}
	}
	return false, nil
}

func equal[T float32 | float64](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
