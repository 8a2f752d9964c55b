// Package opkit is where fairmp's custom gorgonia ops are declared, and
// the helpers they share. It is internal: the ops themselves are the
// public surface.
//
// # Declaring an op
//
// An op is a [Spec] (its name, signature, shape rule, hashed fields, a
// forward pass for float32 and float64, an optional gradient builder and
// whether it keeps its output buffer) and a value of its parameters;
// [Apply] puts it into a graph. [Op] implements gorgonia's Op, SDOp and
// UsePreallocDoer once for every Spec: the input count, element types and
// shapes are checked there, at graph construction and on every run, and
// wrong inputs are errors wrapping [ErrInput], never panics. A gradient
// that is built from an op of the same spec uses [Op.Apply]; code that
// needs to recognise an op in a graph uses [ParamsOf].
//
// # Helpers
//
// [Buf] keeps an op's output between runs of a tape machine
// ([ReleaseGraph] drops the kept buffers; [KeepBuffersIn] switches the
// reuse of a graph's ops off, for tests, and [FollowBuffers] extends
// that to the ops added since); [SoftmaxRow], [MeanCE], [Dropout] and
// [Argmax] are the one row softmax, cross-entropy, dropout mask and
// argmax of fairmp's ops, kernels and predictions. WriteU64 and
// WriteF64 write integers and floats to a hash, as Hasher does, for keys
// computed outside an op.
package opkit

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"math"
	"math/rand"

	"github.com/fairmp/fairmp/internal/par"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Dense returns v as a dense tensor with contiguous, materialised backing.
// Views (from Slice) are copied.
func Dense(v G.Value) (*tensor.Dense, error) {
	d, ok := v.(*tensor.Dense)
	if !ok {
		return nil, fmt.Errorf("want a *tensor.Dense, got %T", v)
	}
	if d.IsMaterializable() {
		return d.Materialize().(*tensor.Dense), nil
	}
	return d, nil
}

// Shape2 returns the rows and columns of a 2-d value; a 1-d value of
// length n is read as n × 1.
func Shape2(v G.Value) (int, int, error) {
	s := v.Shape()
	switch len(s) {
	case 2:
		return s[0], s[1], nil
	case 1:
		return s[0], 1, nil
	case 0:
		return 1, 1, nil
	}
	return 0, 0, fmt.Errorf("want a matrix, got shape %v", s)
}

// Alloc returns a new zeroed dense tensor of the given dtype and shape.
func Alloc(dt tensor.Dtype, shape ...int) *tensor.Dense {
	return tensor.New(tensor.Of(dt), tensor.WithShape(shape...))
}

// Buf keeps an op's output between runs of a tape machine. A tape
// machine's Reset drops its registers, so after it every op would
// allocate (and the runtime zero) a fresh output each run: on a graph of
// thousands of nodes that is the bulk of an epoch's garbage. An op that
// embeds a Buf and takes its output from Get allocates once.
//
// Reusing the buffer is safe because a tape machine runs each op once
// per run and only hands an op's output on through its registers (Read
// copies it): when the op runs again, nothing still in use holds its
// previous output. The same op may run in several machines (a trainer's
// training and evaluation tapes share the forward ops) one after the
// other, never at the same time: the documented rule that one model's
// machines do not run concurrently. Ops built by SymDiff or ApplyOp are
// distinct values, each with its own Buf; never share one op value
// between two nodes.
//
// KeepBuffers switches the reuse off (every Get without a fitting
// prealloc allocates, as before Buf), for tests that check that reuse
// changes no result; KeepBuffersIn switches every op of a graph.
type Buf struct {
	t     *tensor.Dense
	fresh bool // reuse switched off
}

// Get returns prealloc when it is a dense tensor of dtype dt and the
// given shape (the machine's register, whose previous value is dead),
// else the kept buffer when it fits, else a new one, which it keeps. The
// contents are not zeroed: the op must write every element.
func (b *Buf) Get(prealloc G.Value, dt tensor.Dtype, shape ...int) *tensor.Dense {
	if d, ok := prealloc.(*tensor.Dense); ok && fits(d, dt, shape) {
		return d
	}
	if b.fresh {
		return Alloc(dt, shape...)
	}
	if b.t != nil && fits(b.t, dt, shape) {
		return b.t
	}
	b.t = Alloc(dt, shape...)
	return b.t
}

// KeepBuffers switches the reuse on (the default) or off; off drops the
// kept buffer.
func (b *Buf) KeepBuffers(on bool) {
	b.fresh = !on
	if !on {
		b.t = nil
	}
}

// KeepsBuffers reports whether the reuse is on (see KeepBuffers).
func (b *Buf) KeepsBuffers() bool { return !b.fresh }

// Keeper is an op whose buffer reuse can be switched (see Buf).
type Keeper interface {
	KeepBuffers(on bool)
	KeepsBuffers() bool
}

// KeepBuffersIn switches the buffer reuse of every op of g (ops that
// implement Keeper) on or off. Ops added to g later have it on: code
// that adds ops to a graph the caller switched off (a trainer's
// gradients) switches them with FollowBuffers.
func KeepBuffersIn(g *G.ExprGraph, on bool) {
	for _, n := range g.AllNodes() {
		if k, ok := n.Op().(Keeper); ok {
			k.KeepBuffers(on)
		}
	}
}

// FollowBuffers switches the reuse of every op of g off when it is off
// for some op of g: after KeepBuffersIn(g, false), the ops added since
// (a gradient's, a new forward's) are switched off too. Call it after
// adding ops to a graph, before compiling a machine.
func FollowBuffers(g *G.ExprGraph) {
	for _, n := range g.AllNodes() {
		if k, ok := n.Op().(Keeper); ok && !k.KeepsBuffers() {
			KeepBuffersIn(g, false)
			return
		}
	}
}

// ReleaseBuffers drops the kept buffer (the next Get allocates). Ops
// that embed a Buf get the method, and ReleaseGraph calls it.
func (b *Buf) ReleaseBuffers() { b.t = nil }

// Releaser is an op that keeps buffers between runs (see Buf).
type Releaser interface{ ReleaseBuffers() }

// ReleaseGraph drops the buffers every op of g keeps (ops that implement
// Releaser): after training, the memory an epoch's intermediates held is
// returned, as it was when every run allocated afresh. Call it when no
// machine of g runs.
func ReleaseGraph(g *G.ExprGraph) {
	for _, n := range g.AllNodes() {
		if r, ok := n.Op().(Releaser); ok {
			r.ReleaseBuffers()
		}
	}
}

func fits(d *tensor.Dense, dt tensor.Dtype, shape []int) bool {
	return d.Dtype() == dt && d.Shape().Eq(tensor.Shape(shape)) && !d.IsMaterializable()
}

// CheckFloat returns an error unless dt is Float32 or Float64.
func CheckFloat(dt tensor.Dtype) error {
	if dt != tensor.Float64 && dt != tensor.Float32 {
		return fmt.Errorf("want float32 or float64, got %v", dt)
	}
	return nil
}

// DescribeNode names a node for error messages: its name, id, dtype and
// shape ("nil" for a nil node).
func DescribeNode(n *G.Node) string {
	if n == nil {
		return "nil"
	}
	return fmt.Sprintf("%q (node %d, %v, shape %v)", n.Name(), n.ID(), n.Dtype(), n.Shape())
}

// Argmax returns the index of the largest value of row (the first on
// ties).
func Argmax[T float32 | float64](row []T) int {
	b := 0
	for j, v := range row {
		if v > row[b] {
			b = j
		}
	}
	return b
}

// Scalar returns the value of a scalar (or one-element) gorgonia value.
func Scalar(v G.Value) (float64, error) {
	switch d := v.Data().(type) {
	case float64:
		return d, nil
	case float32:
		return float64(d), nil
	case []float64:
		if len(d) == 1 {
			return d[0], nil
		}
	case []float32:
		if len(d) == 1 {
			return float64(d[0]), nil
		}
	}
	return 0, fmt.Errorf("want a scalar, got %v of shape %v", v.Dtype(), v.Shape())
}

// MeanCE returns the mean cross-entropy of the n × c logits z (row-major)
// over the nodes idx with the given labels, accumulated in float64.
//
// On many nodes the terms (an exponential per class and a logarithm per
// node) are computed in parallel and then added in idx order: the same
// sum, bit for bit, as one loop.
func MeanCE[T float32 | float64](z []T, labels, idx []int, c int) float64 {
	term := func(i int) float64 {
		row := z[i*c : (i+1)*c]
		m := math.Inf(-1)
		for _, v := range row {
			m = math.Max(m, float64(v))
		}
		var s float64
		for _, v := range row {
			s += math.Exp(float64(v) - m)
		}
		return m + math.Log(s) - float64(row[labels[i]])
	}
	var total float64
	if len(idx) < 2*ceGrain {
		for _, i := range idx {
			total += term(i)
		}
		return total / float64(len(idx))
	}
	terms := make([]float64, len(idx))
	par.Chunks(len(idx), ceGrain, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			terms[k] = term(idx[k])
		}
	})
	for _, t := range terms {
		total += t
	}
	return total / float64(len(idx))
}

// ceGrain is the number of nodes per parallel chunk of the cross-entropy.
const ceGrain = 4096

// UniqueName returns an error if g already holds a node called name.
// gorgonia merges input nodes with equal name, type and shape into one
// node, so two layers with the same parameter names would silently share
// their parameters.
func UniqueName(g *G.ExprGraph, name string) error {
	if len(g.ByName(name)) > 0 {
		return fmt.Errorf("parameter name %q is already used in this graph: give each layer or model a distinct Name", name)
	}
	return nil
}

// SoftmaxRow writes into p the softmax of the row x at inverse
// temperature invT, computed in float64 with the maximum subtracted:
// p_j = exp((x_j − max x)·invT) / Σ_k exp((x_k − max x)·invT). It is the
// one row softmax of fairmp's ops, kernels and predictions. len(p) must
// be len(x).
func SoftmaxRow[T float32 | float64](x []T, p []float64, invT float64) {
	if len(x) == 2 {
		p[0], p[1] = Softmax2(float64(x[0]), float64(x[1]), invT)
		return
	}
	softmaxGeneral(x, p, invT)
}

// Softmax2 is SoftmaxRow of the two-entry row (a, b): one exp, the same
// operations as the general path (the larger entry's exp(0) = 1
// exactly), so the result is bit-identical to it.
func Softmax2(a, b, invT float64) (p0, p1 float64) {
	if a >= b {
		e := math.Exp((b - a) * invT)
		sum := 1 + e
		return 1 / sum, e / sum
	}
	e := math.Exp((a - b) * invT)
	sum := e + 1
	return e / sum, 1 / sum
}

// softmaxGeneral is SoftmaxRow for any number of entries.
func softmaxGeneral[T float32 | float64](x []T, p []float64, invT float64) {
	m := math.Inf(-1)
	for _, v := range x {
		if float64(v) > m {
			m = float64(v)
		}
	}
	sum := 0.0
	for j, v := range x {
		e := math.Exp((float64(v) - m) * invT)
		p[j] = e
		sum += e
	}
	for j := range p {
		p[j] /= sum
	}
}

var errNoDiff = errors.New("opkit: the op is not differentiable (second-order gradients are not implemented)")

// WriteU64 writes v to h, little-endian.
func WriteU64(h hash.Hash, v uint64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	h.Write(b[:])
}

// WriteF64 writes the bits of v to h.
func WriteF64(h hash.Hash, v float64) { WriteU64(h, math.Float64bits(v)) }

// SelectionGap is ΔDP of the argmax decisions on the nodes idx: the
// largest minus the smallest rate at which a group's nodes are predicted
// as class 1, over the groups with nodes in idx (nodes of unknown group
// left out); 0 with fewer than two such groups.
func SelectionGap(z *tensor.Dense, sens, idx []int, c int) float64 {
	var count, sel []int
	for _, i := range idx {
		g := sens[i]
		if g < 0 {
			continue
		}
		for len(count) <= g {
			count, sel = append(count, 0), append(sel, 0)
		}
		count[g]++
		var k int
		switch s := z.Data().(type) {
		case []float64:
			k = Argmax(s[i*c : (i+1)*c])
		case []float32:
			k = Argmax(s[i*c : (i+1)*c])
		}
		if k == 1 {
			sel[g]++
		}
	}
	lo, hi, groups := 1.0, 0.0, 0
	for g := range count {
		if count[g] == 0 {
			continue
		}
		r := float64(sel[g]) / float64(count[g])
		lo, hi, groups = min(lo, r), max(hi, r), groups+1
	}
	if groups < 2 {
		return 0
	}
	return hi - lo
}

// EvalIdx returns the accuracy and the mean cross-entropy of the n × c
// logits z on the nodes idx.
func EvalIdx(z *tensor.Dense, labels, idx []int, c int) (acc, loss float64) {
	acc = AccIdx(z, labels, idx, c)
	switch s := z.Data().(type) {
	case []float64:
		loss = MeanCE(s, labels, idx, c)
	case []float32:
		loss = MeanCE(s, labels, idx, c)
	}
	return acc, loss
}

// AccIdx returns the accuracy of the n × c logits z on the nodes idx
// (EvalIdx without the cross-entropy, whose logarithms cost more than the
// rest of an evaluation pass on a small model).
func AccIdx(z *tensor.Dense, labels, idx []int, c int) float64 {
	correct := 0
	switch s := z.Data().(type) {
	case []float64:
		for _, i := range idx {
			if Argmax(s[i*c:(i+1)*c]) == labels[i] {
				correct++
			}
		}
	case []float32:
		for _, i := range idx {
			if Argmax(s[i*c:(i+1)*c]) == labels[i] {
				correct++
			}
		}
	}
	return float64(correct) / float64(len(idx))
}

// Dropout draws a dropout mask into mask, the one rule of the library's
// dropout ops (layers.Dropout, FairVGNN's shared dropout): an element is
// kept, with the value 1/(1−p), when a uniform 53-bit integer from rng
// (rng.Uint64() >> 11) is at least p·2^53, and dropped (0) otherwise,
// one draw per element in order. With x and out (mask's length), it also
// writes out[i] = x[i]·mask[i] in the same pass; pass nil for both to
// draw the mask alone.
func Dropout[T float32 | float64](rng *rand.Rand, p float64, mask, x, out []T) {
	scale := T(1 / (1 - p))
	thr := uint64(p * (1 << 53))
	for i := range mask {
		if rng.Uint64()>>11 >= thr {
			mask[i] = scale
		} else {
			mask[i] = 0
		}
		if x != nil {
			out[i] = x[i] * mask[i]
		}
	}
}
