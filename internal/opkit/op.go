package opkit

import (
	"errors"
	"fmt"
	"hash"
	"hash/fnv"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Spec declares a custom gorgonia op whose parameters are a value of
// type P: its name, signature, shape rule, hashed fields, forward pass
// (float32 and float64, ideally one generic function instantiated
// twice), gradient and output buffer. New and Apply turn a Spec and a P
// into an *Op, which implements gorgonia's Op, SDOp and UsePreallocDoer
// once for every op of fairmp: the input count, the element types (all
// inputs float32, or all float64) and the shapes (through Shape) are
// checked there, at graph construction (InferShape) and again on every
// run (Do), so a forward receives inputs it can trust.
//
// A Spec is declared once, as a package-level variable, and used by
// pointer: ParamsOf recognises the ops built from it.
type Spec[P any] struct {
	// ID names the op kind in its hash: a string no other Spec uses,
	// such as "fairmp.SpMM".
	ID string
	// Name returns the op's String for parameters p; errors from the op
	// begin with it. Nil: ID.
	Name func(p P) string
	// Sig returns the number of dimensions of each input and of the
	// output (0 for a scalar); the length of In is the op's arity.
	Sig func(p P) Sig
	// Shape returns the output shape from the input shapes, or an error
	// for inputs the op cannot take. It receives exactly Arity shapes,
	// each with the number of dimensions Sig gives (in Do, a matrix input
	// held as a vector of n elements is n × 1, as Shape2 reads it). It
	// may return one of them but must not keep or change them.
	Shape func(p P, in []tensor.Shape) (tensor.Shape, error)
	// Hash writes every field of p that changes the op's result (gorgonia
	// merges two nodes whose ops hash alike and whose inputs are the
	// same). Nil: the op has no such field.
	Hash func(p P, h Hasher)
	// F32 and F64 compute the output into a.Out. Unless Keep is set, a.Out
	// is zeroed; with Keep it holds an earlier output and every element
	// must be written.
	F32 func(p P, a Args[float32]) error
	F64 func(p P, a Args[float64]) error
	// Grad builds the gradients of op's inputs (one node per input, nil
	// where DiffWRT is false) from the inputs, the output and the
	// output's gradient; op.P holds the parameters and op.Apply builds
	// another op of the same spec. Nil: the op is not differentiable (a
	// backward op, or one whose output is a constant of training such as
	// a mask): it still is an SDOp, with no differentiable input, which
	// is what gorgonia's analysis needs to skip it; an op that is not one
	// makes every later gorgonia.Grad in the same graph fail ("being
	// unable to differentiate ... would leave a portion of the graph
	// unreachable"), so that a second model could not be trained in a
	// graph where a first one was.
	Grad func(op *Op[P], inputs G.Nodes, output, grad *G.Node) (G.Nodes, error)
	// DiffWRT reports which of n inputs are differentiable. Nil: every
	// input when Grad is set, none otherwise.
	DiffWRT func(p P, n int) []bool
	// Keep makes the op keep its output between runs (see Buf) and write
	// into the tape machine's preallocated register; without it every run
	// allocates a zeroed output.
	Keep bool
	// Release drops what p keeps between runs besides the op's output
	// (scratch buffers, state), when ReleaseGraph releases the op. Nil:
	// p keeps nothing.
	Release func(p P)
}

// Sig is an op's signature: the number of dimensions of each input and
// of its output, 0 for a scalar. All share one element type. In is read,
// never written: Same shares it between ops.
type Sig struct {
	In  []int
	Out int
}

// Same returns the signature of an op from n tensors of dims dimensions
// to one of dims dimensions.
func Same(dims, n int) Sig {
	if dims < len(sameIn) && n < len(sameIn[dims]) {
		return Sig{In: sameIn[dims][n], Out: dims}
	}
	return Sig{In: repeat(dims, n), Out: dims}
}

// Mats returns the signature of an op from n matrices to a matrix.
func Mats(n int) Sig { return Same(2, n) }

// sameIn[d][n] is Same(d, n)'s In for small d and n: built once, so that
// an op's Sig allocates nothing on every run.
var sameIn = func() [][][]int {
	t := make([][][]int, 5)
	for d := range t {
		t[d] = make([][]int, 8)
		for n := range t[d] {
			t[d][n] = repeat(d, n)
		}
	}
	return t
}()

func repeat(v, n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// Args is what a forward pass receives: the inputs' contiguous data (a
// scalar is one element), their shapes (as Spec.Shape received them),
// the inputs as tensors (nil for a scalar input), and the output's data
// and shape.
type Args[T float32 | float64] struct {
	In       [][]T
	Shape    []tensor.Shape
	Dense    []*tensor.Dense
	Out      []T
	OutShape tensor.Shape
	// OutDense is the output tensor (nil for a scalar output).
	OutDense *tensor.Dense
	// KeepBuffers reports whether the op keeps buffers between runs
	// (Buf.KeepsBuffers): a forward that keeps more than its output
	// (scratch, a memo of the last run) keeps it only then.
	KeepBuffers bool
}

// Hasher writes an op's fields to its hash (see Spec.Hash).
type Hasher struct{ h hash.Hash }

// Int writes integers.
func (h Hasher) Int(v ...int) {
	for _, x := range v {
		WriteU64(h.h, uint64(x))
	}
}

// Ints writes a slice of integers, with its length.
func (h Hasher) Ints(v []int) {
	WriteU64(h.h, uint64(len(v)))
	h.Int(v...)
}

// F64 writes the bits of floats.
func (h Hasher) F64(v ...float64) {
	for _, x := range v {
		WriteF64(h.h, x)
	}
}

// F64s writes a slice of floats, with its length.
func (h Hasher) F64s(v []float64) {
	WriteU64(h.h, uint64(len(v)))
	h.F64(v...)
}

// Bool writes booleans.
func (h Hasher) Bool(v ...bool) {
	for _, b := range v {
		if b {
			h.h.Write([]byte{1})
		} else {
			h.h.Write([]byte{0})
		}
	}
}

// Str writes a string, with its length.
func (h Hasher) Str(s string) {
	WriteU64(h.h, uint64(len(s)))
	h.h.Write([]byte(s))
}

// U64 writes unsigned integers (keys, identities).
func (h Hasher) U64(v ...uint64) {
	for _, x := range v {
		WriteU64(h.h, x)
	}
}

// Op is a gorgonia op declared by a Spec (build one with New or Apply).
// P holds its parameters; an op value belongs to one node (its output
// buffer is its own).
type Op[P any] struct {
	Buf
	spec *Spec[P]
	P    P
}

var (
	_ G.SDOp            = (*Op[int])(nil)
	_ G.UsePreallocDoer = (*Op[int])(nil)
	_ Keeper            = (*Op[int])(nil)
	_ Releaser          = (*Op[int])(nil)
)

// New returns the op of spec s with parameters p.
func New[P any](s *Spec[P], p P) *Op[P] { return &Op[P]{spec: s, P: p} }

// Apply puts the op of spec s with parameters p, applied to inputs, into
// their graph (gorgonia.ApplyOp). Wrong inputs (count, element type,
// shape) are an error.
func Apply[P any](s *Spec[P], p P, inputs ...*G.Node) (*G.Node, error) {
	return G.ApplyOp(New(s, p), inputs...)
}

// Apply puts an op of o's spec with parameters p, applied to inputs,
// into their graph: for gradients built from ops of the same spec.
func (o *Op[P]) Apply(p P, inputs ...*G.Node) (*G.Node, error) {
	return Apply(o.spec, p, inputs...)
}

// ParamsOf returns the parameters of op when it was built from spec s.
func ParamsOf[P any](s *Spec[P], op G.Op) (P, bool) {
	if o, ok := op.(*Op[P]); ok && o.spec == s {
		return o.P, true
	}
	var zero P
	return zero, false
}

// ErrInput is wrapped by the errors of an op given inputs it cannot take
// (count, element type or shape).
var ErrInput = errors.New("wrong op input")

// ReturnsPtr returns false: the op allocates its output or writes into
// a preallocated one.
func (o *Op[P]) ReturnsPtr() bool { return false }

// CallsExtern returns false: the op calls no external code.
func (o *Op[P]) CallsExtern() bool { return false }

// OverwritesInput returns -1: the op overwrites no input.
func (o *Op[P]) OverwritesInput() int { return -1 }

// Arity returns the number of inputs.
func (o *Op[P]) Arity() int { return len(o.spec.Sig(o.P).In) }

// Type returns the op's gorgonia type, built afresh on every call.
func (o *Op[P]) Type() hm.Type {
	s := o.spec.Sig(o.P)
	ts := make([]hm.Type, 0, len(s.In)+1)
	for _, d := range s.In {
		ts = append(ts, dimsType(d))
	}
	return hm.NewFnType(append(ts, dimsType(s.Out))...)
}

func dimsType(d int) hm.Type {
	if d == 0 {
		return hm.TypeVariable('a')
	}
	return &G.TensorType{Dims: d, Of: hm.TypeVariable('a')}
}

// String returns the spec's Name of the parameters.
func (o *Op[P]) String() string {
	if o.spec.Name == nil {
		return o.spec.ID
	}
	return o.spec.Name(o.P)
}

// WriteHash writes the spec's ID and the hashed fields.
func (o *Op[P]) WriteHash(h hash.Hash) {
	hh := Hasher{h}
	hh.Str(o.spec.ID)
	if o.spec.Hash != nil {
		o.spec.Hash(o.P, hh)
	}
}

// ReleaseBuffers drops the kept output and what the spec's Release
// drops (Releaser).
func (o *Op[P]) ReleaseBuffers() {
	o.Buf.ReleaseBuffers()
	if o.spec.Release != nil {
		o.spec.Release(o.P)
	}
}

// KeepBuffers switches the reuse of the op's buffers on or off (Keeper);
// off also drops what ReleaseBuffers drops.
func (o *Op[P]) KeepBuffers(on bool) {
	o.Buf.KeepBuffers(on)
	if !on {
		o.ReleaseBuffers()
	}
}

// Hashcode returns the 32-bit FNV-1a hash of WriteHash.
func (o *Op[P]) Hashcode() uint32 {
	h := fnv.New32a()
	o.WriteHash(h)
	return h.Sum32()
}

// InferShape checks the input count and dimensions and applies the
// spec's shape rule.
func (o *Op[P]) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	sig := o.spec.Sig(o.P)
	if len(in) != len(sig.In) {
		return nil, fmt.Errorf("%v: %d inputs, want %d: %w", o, len(in), len(sig.In), ErrInput)
	}
	sh := make([]tensor.Shape, len(in))
	for k, d := range in {
		s, ok := d.(tensor.Shape)
		if !ok {
			return nil, fmt.Errorf("%v: input %d: %v is not a shape: %w", o, k, d, ErrInput)
		}
		if err := checkDims(s, sig.In[k]); err != nil {
			return nil, fmt.Errorf("%v: input %d: %w", o, k, err)
		}
		sh[k] = s.Clone()
	}
	out, err := o.spec.Shape(o.P, sh)
	if err != nil {
		return nil, fmt.Errorf("%v: %w: %w", o, ErrInput, err)
	}
	return out, nil
}

// checkDims checks a graph-time shape against a signature's dimensions.
func checkDims(s tensor.Shape, dims int) error {
	if dims == 0 {
		if s.TotalSize() != 1 {
			return fmt.Errorf("shape %v, want a scalar: %w", s, ErrInput)
		}
		return nil
	}
	if len(s) != dims {
		return fmt.Errorf("shape %v, want %d dimensions: %w", s, dims, ErrInput)
	}
	return nil
}

// DiffWRT reports the differentiable inputs.
func (o *Op[P]) DiffWRT(n int) []bool {
	if o.spec.DiffWRT != nil {
		return o.spec.DiffWRT(o.P, n)
	}
	d := make([]bool, n)
	if o.spec.Grad != nil {
		for i := range d {
			d[i] = true
		}
	}
	return d
}

// SymDiff builds the gradients with the spec's Grad.
func (o *Op[P]) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	if o.spec.Grad == nil {
		return nil, fmt.Errorf("%v: %w", o, errNoDiff)
	}
	if n := o.Arity(); len(inputs) != n {
		return nil, fmt.Errorf("%v: SymDiff with %d inputs, want %d", o, len(inputs), n)
	}
	return o.spec.Grad(o, inputs, output, grad)
}

// Do runs the op into a new output (or, with Keep, the kept one).
func (o *Op[P]) Do(inputs ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, inputs...) }

// UsePreallocDo runs the op; with Keep it writes into prealloc when that
// fits (see Buf.Get).
func (o *Op[P]) UsePreallocDo(prealloc G.Value, inputs ...G.Value) (G.Value, error) {
	sig := o.spec.Sig(o.P)
	if len(inputs) != len(sig.In) {
		return nil, fmt.Errorf("%v: %d inputs, want %d: %w", o, len(inputs), len(sig.In), ErrInput)
	}
	ds := make([]*tensor.Dense, len(inputs))
	sh := make([]tensor.Shape, len(inputs))
	dims := make([]int, 2*len(inputs)) // the matrix inputs' shapes
	var dt tensor.Dtype
	for k, v := range inputs {
		if v == nil {
			return nil, fmt.Errorf("%v: input %d is nil: %w", o, k, ErrInput)
		}
		if err := CheckFloat(v.Dtype()); err != nil {
			return nil, fmt.Errorf("%v: input %d: %w: %w", o, k, ErrInput, err)
		}
		if k == 0 {
			dt = v.Dtype()
		} else if v.Dtype() != dt {
			return nil, fmt.Errorf("%v: input %d is %v, input 0 is %v: %w", o, k, v.Dtype(), dt, ErrInput)
		}
		if sig.In[k] == 0 {
			if v.Shape().TotalSize() != 1 {
				return nil, fmt.Errorf("%v: input %d shape %v, want a scalar: %w", o, k, v.Shape(), ErrInput)
			}
			sh[k] = tensor.ScalarShape()
			continue
		}
		d, err := Dense(v)
		if err != nil {
			return nil, fmt.Errorf("%v: input %d: %w: %w", o, k, ErrInput, err)
		}
		ds[k] = d
		if sig.In[k] == 2 {
			r, c, err := Shape2(d)
			if err != nil {
				return nil, fmt.Errorf("%v: input %d: %w: %w", o, k, ErrInput, err)
			}
			dims[2*k], dims[2*k+1] = r, c
			sh[k] = dims[2*k : 2*k+2 : 2*k+2]
		} else {
			if len(d.Shape()) != sig.In[k] {
				return nil, fmt.Errorf("%v: input %d shape %v, want %d dimensions: %w", o, k, d.Shape(), sig.In[k], ErrInput)
			}
			sh[k] = d.Shape().Clone()
		}
	}
	outShape, err := o.spec.Shape(o.P, sh)
	if err != nil {
		return nil, fmt.Errorf("%v: %w: %w", o, ErrInput, err)
	}
	var out *tensor.Dense
	if sig.Out != 0 {
		if o.spec.Keep {
			out = o.Get(prealloc, dt, outShape...)
		} else {
			out = Alloc(dt, outShape...)
		}
	}
	switch dt {
	case tensor.Float32:
		return run(o, o.spec.F32, inputs, ds, sh, out, outShape, func(v float32) G.Value { return G.NewF32(v) })
	default:
		return run(o, o.spec.F64, inputs, ds, sh, out, outShape, func(v float64) G.Value { return G.NewF64(v) })
	}
}

// run calls the typed forward f and returns the output value.
func run[P any, T float32 | float64](o *Op[P], f func(P, Args[T]) error, inputs []G.Value, ds []*tensor.Dense, sh []tensor.Shape,
	out *tensor.Dense, outShape tensor.Shape, scalar func(T) G.Value) (G.Value, error) {
	if f == nil {
		var z T
		return nil, fmt.Errorf("%v: no %T forward: %w", o, z, ErrInput)
	}
	a := Args[T]{In: make([][]T, len(inputs)), Shape: sh, Dense: ds, OutShape: outShape, OutDense: out, KeepBuffers: o.KeepsBuffers()}
	for k, v := range inputs {
		if len(sh[k]) != 0 {
			a.In[k] = ds[k].Data().([]T)
			continue
		}
		switch x := v.Data().(type) {
		case T:
			a.In[k] = []T{x}
		case []T:
			a.In[k] = x
		default:
			return nil, fmt.Errorf("%v: input %d holds %T: %w", o, k, x, ErrInput)
		}
	}
	if out != nil {
		a.Out = out.Data().([]T)
	} else {
		a.Out = make([]T, 1)
	}
	if err := f(o.P, a); err != nil {
		return nil, fmt.Errorf("%v: %w", o, err)
	}
	if out == nil {
		return scalar(a.Out[0]), nil
	}
	return out, nil
}
