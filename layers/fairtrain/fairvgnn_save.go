package fairtrain

import (
	"fmt"
	"slices"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/layers"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Folded returns an encoder that computes what m computes, with m's mask
// moved into its weights: the model to save, score and put FMP on. It is
// built in g on gr with phase, as Rebuild builds a copy (g must not be
// m's gorgonia graph, whose parameter names it would repeat); m is left
// as it is.
//
// At inference a MaskedEncoder reads x ⊙ p, p_j the probability that the
// generator keeps channel j: the clamped weights alone would read x. For
// a body whose path from the features to its first weight matrices is
// linear channel by channel (dropout, propagations without bias or
// activation, sums of such values, and their element-wise maximum, which
// p > 0 commutes with: every library kind), body(x ⊙ p) is body(x) with
// row j of each of those matrices multiplied by p_j. Folded multiplies
// them in the copy. The two computations are equal in exact arithmetic;
// in floating point they agree to rounding, not bit for bit.
//
// Without a learned mask (FeatureMask false) the copy is the encoder's.
// Folded returns the errors of Rebuild, and an error for a body whose
// features reach an activation, a biased or activated propagation, a
// concatenation, or a weight matrix that also reads other values, before
// their first weight matrices, or that is not a layers.BlockModel: its
// mask does not fold, and the model has no model-file form.
func (m *MaskedEncoder) Folded(g *G.ExprGraph, gr *graph.Graph, phase *layers.Phase) (*Encoder, error) {
	var p []float64
	if m.gen != nil {
		p = m.Keep()
		if _, err := maskWeights(m.enc.body, len(p)); err != nil {
			return nil, err
		}
	}
	c, err := m.enc.Rebuild(g, gr, phase)
	if err != nil {
		return nil, err
	}
	e := c.(*Encoder)
	if p == nil {
		return e, nil
	}
	ws, err := maskWeights(e.body, len(p))
	if err != nil {
		return nil, err
	}
	for _, w := range ws {
		d := w.Value().(*tensor.Dense)
		k := d.Shape()[1]
		switch x := d.Data().(type) {
		case []float64:
			scaleChannels(x, k, p)
		case []float32:
			scaleChannels(x, k, p)
		}
	}
	return e, nil
}

func scaleChannels[T float32 | float64](w []T, k int, p []float64) {
	for j, pj := range p {
		row := w[j*k : (j+1)*k]
		for i, v := range row {
			row[i] = T(float64(v) * pj)
		}
	}
}

// maskWeights returns the d-row weight matrices that read the body's
// input channels when the mask folds into them (see Fold), or an error
// saying why it does not.
func maskWeights(body layers.Model, d int) (G.Nodes, error) {
	bm, ok := body.(layers.BlockModel)
	if !ok {
		return nil, fmt.Errorf("fairtrain: fairvgnn: the mask cannot be folded into the %T body, which is not declared in a Flow's primitives (layers.BlockModel)", body)
	}
	f := &maskFlow{}
	out, err := bm.Compute(f, layers.NewValue(true, d, 0))
	if err == nil && perChannel(out) {
		err = fmt.Errorf("the features reach the output through no weight matrix")
	}
	if err == nil && len(f.ws) == 0 {
		err = fmt.Errorf("no weight matrix reads the features")
	}
	for _, w := range f.ws {
		if err == nil && slices.Contains(f.other, w) {
			err = fmt.Errorf("the weight %s reads the features and other values", w.Name())
		}
		if err == nil && (w.Dims() != 2 || w.Shape()[0] != d) {
			err = fmt.Errorf("the weight %s reading the %d features has shape %v", w.Name(), d, w.Shape())
		}
	}
	if err != nil {
		return nil, fmt.Errorf("fairtrain: fairvgnn: the mask cannot be folded into the %T body: %w", body, err)
	}
	return f.ws, nil
}

// maskFlow is a layers.Flow that runs nothing and records the weight
// matrices that read the features while they are still linear channel by
// channel (payload true: scaling channel j of the input scales channel j
// of the value alike); it returns an error where a value that is reaches
// a primitive that would not keep the scaling.
type maskFlow struct{ ws, other G.Nodes }

func (f *maskFlow) Dense(h layers.Value, w, b *G.Node, act layers.Activation) (layers.Value, error) {
	if w == nil || w.Dims() != 2 {
		return layers.Value{}, fmt.Errorf("fairtrain: Dense without a weight matrix")
	}
	if perChannel(h) {
		if !slices.Contains(f.ws, w) {
			f.ws = append(f.ws, w)
		}
	} else {
		f.other = append(f.other, w)
	}
	return layers.NewValue(false, w.Shape()[1], h.Level()), nil
}

func (f *maskFlow) Propagate(h layers.Value, p layers.Hop) (layers.Value, error) {
	if perChannel(h) && (p.Bias != nil || p.Act != (layers.Activation{})) {
		return layers.Value{}, fmt.Errorf("a propagation with a bias or an activation reads the features")
	}
	if perChannel(h) && p.Aggr == "max" {
		return layers.Value{}, fmt.Errorf("a max aggregation reads the features")
	}
	return layers.NewValue(perChannel(h), h.Cols(), h.Level()+1), nil
}

// Scale keeps the scaling of the channels.
func (f *maskFlow) Scale(h layers.Value, s *G.Node) (layers.Value, error) { return h, nil }

func (f *maskFlow) Activate(h layers.Value, act layers.Activation) (layers.Value, error) {
	if perChannel(h) {
		return layers.Value{}, fmt.Errorf("an activation reads the features")
	}
	return h, nil
}

func (f *maskFlow) Dropout(h layers.Value, rate float64, seed int64) (layers.Value, error) {
	return h, nil
}

func (f *maskFlow) Combine(coef []float64, vs ...layers.Value) (layers.Value, error) {
	if len(vs) == 0 {
		return layers.Value{}, fmt.Errorf("fairtrain: Combine of no value")
	}
	n, level := 0, 0
	for _, v := range vs {
		if perChannel(v) {
			n++
		}
		level = max(level, v.Level())
	}
	if n != 0 && n != len(vs) {
		return layers.Value{}, fmt.Errorf("a sum adds the features to other values")
	}
	return layers.NewValue(n > 0, vs[0].Cols(), level), nil
}

func (f *maskFlow) Jump(mode layers.JKMode, vs ...layers.Value) (layers.Value, error) {
	if len(vs) == 0 {
		return layers.Value{}, fmt.Errorf("fairtrain: Jump of no value")
	}
	n, level, cols := 0, 0, 0
	for _, v := range vs {
		if perChannel(v) {
			n++
		}
		level = max(level, v.Level())
		cols += v.Cols()
	}
	if mode == layers.JKMax {
		cols = vs[0].Cols()
	}
	if n > 0 && (mode != layers.JKMax || n != len(vs)) {
		return layers.Value{}, fmt.Errorf("a jumping-knowledge %s aggregation reads the features", string(mode))
	}
	return layers.NewValue(n > 0, cols, level), nil
}

func (f *maskFlow) Attend(h layers.Value, l *layers.GATConv) (layers.Value, error) {
	if l == nil || len(l.Learnables()) == 0 {
		return layers.Value{}, fmt.Errorf("fairtrain: Attend without a layer")
	}
	w := l.Learnables()[0]
	if perChannel(h) {
		if !slices.Contains(f.ws, w) {
			f.ws = append(f.ws, w)
		}
	} else {
		f.other = append(f.other, w)
	}
	c := l.Config()
	cols := c.Out
	if c.Concat {
		cols *= c.Heads
	}
	return layers.NewValue(false, cols, h.Level()+1), nil
}
