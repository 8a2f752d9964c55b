package layers_test

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/layers"
)

// Dropout is the identity in evaluation mode and zeroes about p of the
// elements, scaling the rest by 1/(1−p), in training mode.
func ExampleDropout() {
	g := G.NewGraph()
	ones := tensor.New(tensor.WithShape(2, 4), tensor.WithBacking([]float64{1, 1, 1, 1, 1, 1, 1, 1}))
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 4), G.WithName("x"), G.WithValue(ones))
	phase := layers.NewPhase()
	y, err := layers.Dropout(x, 0.5, 42, phase)
	if err != nil {
		panic(err)
	}
	var v G.Value
	G.Read(y, &v)
	m := G.NewTapeMachine(g)
	defer m.Close()
	for _, training := range []bool{false, true} {
		phase.SetTraining(training)
		if err := m.RunAll(); err != nil {
			panic(err)
		}
		fmt.Println(training, v.Data())
		m.Reset()
	}
	// Output:
	// false [1 1 1 1 1 1 1 1]
	// true [2 2 0 0 2 0 0 2]
}
