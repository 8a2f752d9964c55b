package spkern

import "github.com/fairmp/fairmp/internal/fastblas"

var kernels = fastblas.Enabled()

//go:noescape
func spmmRow64(n int, idx *int32, val *float32, x *float32, ldx int, out *float32)

//go:noescape
func spmmRow8(n int, idx *int32, val *float32, x *float32, ldx int, out *float32)
