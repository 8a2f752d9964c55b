package layers

// The aggregations of a hop other than the weighted sum (Hop.Aggr): the
// mean, a product with the matrix whose row i holds 1/(entries of row i)
// at the row's entries (meanMatrix), and the element-wise maximum over a
// row's entries (maxAggOp, its gradient maxAggGradOp, and maxRows for
// plain Go). Propagate's implementations (prim_propagate.go) call them.

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/opkit"
)

// meanMatrix returns the matrix with a's entries, each of row i's
// replaced by 1/(the number of entries of row i): its product with h is
// the mean of h over each row's entries (aggrMean). A row without
// entries stays empty, so that its mean is 0.
func meanMatrix(a *graph.Matrix) (*graph.Matrix, error) {
	rows, cols := a.Dims()
	indptr := a.Indptr()
	val := make([]float64, a.NNZ())
	for i := 0; i < rows; i++ {
		lo, hi := indptr[i], indptr[i+1]
		for p := lo; p < hi; p++ {
			val[p] = 1 / float64(hi-lo)
		}
	}
	m, err := graph.NewMatrixCSR(rows, cols, indptr, a.Indices(), val)
	if err != nil {
		return nil, fmt.Errorf("layers: the mean of the matrix's rows: %w", err)
	}
	return m, nil
}

// Hop.Aggr's values (checkHop also takes "sum" for aggrSum).
const (
	aggrSum  = ""
	aggrMean = "mean"
	aggrMax  = "max"
)

// aggMatrix returns the matrix a hop multiplies by: a for the sum, its
// meanMatrix for the mean (kept in *cache, one per matrix). For the
// maximum it returns a, whose entries maxRows reads.
func aggMatrix(cache *map[*graph.Matrix]*graph.Matrix, a *graph.Matrix, aggr string) (*graph.Matrix, error) {
	if aggr != aggrMean {
		return a, nil
	}
	if m, ok := (*cache)[a]; ok {
		return m, nil
	}
	m, err := meanMatrix(a)
	if err != nil {
		return nil, err
	}
	if *cache == nil {
		*cache = map[*graph.Matrix]*graph.Matrix{}
	}
	(*cache)[a] = m
	return m, nil
}

// maxRows writes into out (rows × cols, rows = a's rows) the element-wise
// maximum of the rows of x (a's columns × cols) over the entries of each
// row of a; 0 for a row without entries.
func maxRows[T float32 | float64](a *graph.Matrix, out, x []T, cols int) {
	indptr, idx := a.Indptr(), a.Indices()
	rows, _ := a.Dims()
	for i := 0; i < rows; i++ {
		y := out[i*cols : (i+1)*cols]
		lo, hi := indptr[i], indptr[i+1]
		if lo == hi {
			clear(y)
			continue
		}
		copy(y, x[int(idx[lo])*cols:(int(idx[lo])+1)*cols])
		for p := lo + 1; p < hi; p++ {
			for c, v := range x[int(idx[p])*cols : (int(idx[p])+1)*cols] {
				if v > y[c] {
					y[c] = v
				}
			}
		}
	}
}

// maxRowsGrad adds into dx (a's columns × cols, zeroed by the caller) the
// gradient of maxRows: dy[i, c] goes to the first entry j of row i (in
// column order) where x[j, c] is the maximum.
func maxRowsGrad[T float32 | float64](a *graph.Matrix, dx, x, dy []T, cols int) {
	indptr, idx := a.Indptr(), a.Indices()
	rows, _ := a.Dims()
	arg := make([]int32, cols)
	best := make([]T, cols)
	for i := 0; i < rows; i++ {
		lo, hi := indptr[i], indptr[i+1]
		if lo == hi {
			continue
		}
		j0 := idx[lo]
		copy(best, x[int(j0)*cols:(int(j0)+1)*cols])
		for c := range arg {
			arg[c] = j0
		}
		for p := lo + 1; p < hi; p++ {
			j := idx[p]
			for c, v := range x[int(j)*cols : (int(j)+1)*cols] {
				if v > best[c] {
					best[c], arg[c] = v, j
				}
			}
		}
		for c, g := range dy[i*cols : (i+1)*cols] {
			dx[int(arg[c])*cols+c] += g
		}
	}
}

// maxAgg returns the node of maxRows over a's rows of x (aggrMax).
func maxAgg(a *graph.Matrix, x *G.Node) (*G.Node, error) {
	if err := checkSpMM(a, x); err != nil {
		return nil, fmt.Errorf("layers: max aggregation: %w", err)
	}
	return G.ApplyOp(&maxAggOp{a: a}, x)
}

// maxAggOp is maxRows as a gorgonia op; its gradient is maxAggGradOp of
// the input and the output's gradient.
type maxAggOp struct {
	opkit.Pure
	a *graph.Matrix
}

var _ G.SDOp = (*maxAggOp)(nil)

func (op *maxAggOp) Arity() int                { return 1 }
func (op *maxAggOp) Type() hm.Type             { return opkit.FnType(1) }
func (op *maxAggOp) DiffWRT(inputs int) []bool { return []bool{true} }
func (op *maxAggOp) String() string            { return fmt.Sprintf("MaxAgg(A#%d)", op.a.ID()) }
func (op *maxAggOp) WriteHash(h hash.Hash) {
	fmt.Fprint(h, "fairmp.MaxAgg")
	opkit.WriteU64(h, op.a.ID())
}
func (op *maxAggOp) Hashcode() uint32 { return opkit.Hash32(op.WriteHash) }
func (op *maxAggOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s, err := opkit.InputShapes(in, 1, op.String())
	if err != nil {
		return nil, err
	}
	rows, _ := op.a.Dims()
	return tensor.Shape{rows, s[0][1]}, nil
}

func (op *maxAggOp) Do(inputs ...G.Value) (G.Value, error) {
	in, sh, err := opkit.DenseInputs(op, 1, inputs)
	if err != nil {
		return nil, err
	}
	rows, cols := op.a.Dims()
	if sh[0][0] != cols {
		return nil, fmt.Errorf("%v: input of %d rows, want %d", op, sh[0][0], cols)
	}
	c := sh[0][1]
	out := opkit.Alloc(in[0].Dtype(), rows, c)
	switch x := in[0].Data().(type) {
	case []float64:
		maxRows(op.a, out.Data().([]float64), x, c)
	case []float32:
		maxRows(op.a, out.Data().([]float32), x, c)
	default:
		return nil, fmt.Errorf("%v: dtype %v, want float32 or float64", op, in[0].Dtype())
	}
	return out, nil
}

func (op *maxAggOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	dx, err := G.ApplyOp(&maxAggGradOp{a: op.a}, inputs[0], grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dx}, nil
}

// maxAggGradOp is maxRowsGrad: from x and dy, the gradient with respect
// to x of maxAggOp.
type maxAggGradOp struct {
	opkit.Pure
	a *graph.Matrix
}

func (op *maxAggGradOp) Arity() int    { return 2 }
func (op *maxAggGradOp) Type() hm.Type { return opkit.FnType(2) }
func (op *maxAggGradOp) String() string {
	return fmt.Sprintf("MaxAggGrad(A#%d)", op.a.ID())
}
func (op *maxAggGradOp) WriteHash(h hash.Hash) {
	fmt.Fprint(h, "fairmp.MaxAggGrad")
	opkit.WriteU64(h, op.a.ID())
}
func (op *maxAggGradOp) Hashcode() uint32 { return opkit.Hash32(op.WriteHash) }
func (op *maxAggGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s, err := opkit.InputShapes(in, 2, op.String())
	if err != nil {
		return nil, err
	}
	return s[0].Clone(), nil
}

func (op *maxAggGradOp) Do(inputs ...G.Value) (G.Value, error) {
	in, sh, err := opkit.DenseInputs(op, 2, inputs)
	if err != nil {
		return nil, err
	}
	rows, cols := op.a.Dims()
	if sh[0][0] != cols || sh[1][0] != rows || sh[0][1] != sh[1][1] || in[0].Dtype() != in[1].Dtype() {
		return nil, fmt.Errorf("%v: input %v and gradient %v, want %d and %d rows of equal width and dtype", op, sh[0], sh[1], cols, rows)
	}
	c := sh[0][1]
	out := opkit.Alloc(in[0].Dtype(), cols, c)
	switch x := in[0].Data().(type) {
	case []float64:
		maxRowsGrad(op.a, out.Data().([]float64), x, in[1].Data().([]float64), c)
	case []float32:
		maxRowsGrad(op.a, out.Data().([]float32), x, in[1].Data().([]float32), c)
	default:
		return nil, fmt.Errorf("%v: dtype %v, want float32 or float64", op, in[0].Dtype())
	}
	return out, nil
}
