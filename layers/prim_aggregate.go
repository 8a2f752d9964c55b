package layers

// The aggregations of a hop other than the weighted sum (Hop.Aggr): the
// mean, a product with the matrix whose row i holds 1/(entries of row i)
// at the row's entries (meanMatrix), and the element-wise maximum over a
// row's entries (maxAggOp, its gradient maxAggGradOp, and maxRows for
// plain Go). Propagate's implementations (prim_propagate.go) call them.

import (
	"fmt"

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
	return opkit.Apply(maxAggSpec, a, x)
}

// maxAggSpec is maxRows over the rows of its parameter as a gorgonia op;
// its gradient is maxAggGradSpec of the input and the output's gradient.
var maxAggSpec = &opkit.Spec[*graph.Matrix]{
	ID:   "fairmp.MaxAgg",
	Name: func(a *graph.Matrix) string { return fmt.Sprintf("MaxAgg(A#%d)", a.ID()) },
	Sig:  func(*graph.Matrix) opkit.Sig { return opkit.Mats(1) },
	Shape: func(a *graph.Matrix, in []tensor.Shape) (tensor.Shape, error) {
		rows, cols := a.Dims()
		if in[0][0] != cols {
			return nil, fmt.Errorf("input of %d rows, want %d", in[0][0], cols)
		}
		return tensor.Shape{rows, in[0][1]}, nil
	},
	Hash: func(a *graph.Matrix, h opkit.Hasher) { h.U64(a.ID()) },
	F32:  maxAggFwd[float32],
	F64:  maxAggFwd[float64],
	Grad: func(op *opkit.Op[*graph.Matrix], inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
		dx, err := opkit.Apply(maxAggGradSpec, op.P, inputs[0], grad)
		if err != nil {
			return nil, err
		}
		return G.Nodes{dx}, nil
	},
	Keep: true,
}

func maxAggFwd[T float32 | float64](a *graph.Matrix, x opkit.Args[T]) error {
	maxRows(a, x.Out, x.In[0], x.Shape[0][1])
	return nil
}

// maxAggGradSpec is maxRowsGrad: from x and dy, the gradient with
// respect to x of maxAggSpec.
var maxAggGradSpec = &opkit.Spec[*graph.Matrix]{
	ID:   "fairmp.MaxAggGrad",
	Name: func(a *graph.Matrix) string { return fmt.Sprintf("MaxAggGrad(A#%d)", a.ID()) },
	Sig:  func(*graph.Matrix) opkit.Sig { return opkit.Mats(2) },
	Shape: func(a *graph.Matrix, in []tensor.Shape) (tensor.Shape, error) {
		rows, cols := a.Dims()
		if in[0][0] != cols || in[1][0] != rows || in[0][1] != in[1][1] {
			return nil, fmt.Errorf("input %v and gradient %v, want %d and %d rows of equal width", in[0], in[1], cols, rows)
		}
		return in[0], nil
	},
	Hash: func(a *graph.Matrix, h opkit.Hasher) { h.U64(a.ID()) },
	F32:  maxAggGradFwd[float32],
	F64:  maxAggGradFwd[float64],
	Keep: true,
}

func maxAggGradFwd[T float32 | float64](a *graph.Matrix, x opkit.Args[T]) error {
	clear(x.Out) // maxRowsGrad adds; a kept output holds the last run's
	maxRowsGrad(a, x.Out, x.In[0], x.In[1], x.Shape[0][1])
	return nil
}
