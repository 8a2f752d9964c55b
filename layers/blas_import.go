package layers

// Importing layers selects fairmp's BLAS for gorgonia and tensor at
// program start (see package layers/blas).
import _ "github.com/fairmp/fairmp/layers/blas"
