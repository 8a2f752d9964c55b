package spkern

import "github.com/fairmp/fairmp/internal/fastblas"

var kernels = fastblas.Enabled()

//go:noescape
func spmmRow64(n int, idx *int32, val *float32, x *float32, ldx int, out *float32)

//go:noescape
func spmmRow8(n int, idx *int32, val *float32, x *float32, ldx int, out *float32)

//go:noescape
func spmmRow32d(n int, idx *int32, val *float64, x *float64, ldx int, out *float64)

//go:noescape
func spmmRow8d(n int, idx *int32, val *float64, x *float64, ldx int, out *float64)

//go:noescape
func heads2x16d(n int, idx *int32, arow *int32, alpha *float64, x *float64, ldx int, out *float64)

//go:noescape
func heads4x16Dotd(n int, idx *int32, x *float64, ldx int, d *float64, out *float64, scale float64)

//go:noescape
func heads4x16Row(n int, idx *int32, alpha *float32, x *float32, ldx int, out *float32)

//go:noescape
func heads4x16RowIdx(n int, idx *int32, arow *int32, alpha *float32, x *float32, ldx int, out *float32)

//go:noescape
func heads4x16Dot(n int, idx *int32, x *float32, ldx int, d *float32, out *float32, scale float32)

//go:noescape
func cols2Rows32(rows int, indptr *int, idx *int32, val *float32, x *float32, out *float32)

//go:noescape
func cols2Rows64(rows int, indptr *int, idx *int32, val *float64, x *float64, out *float64)

//go:noescape
func biasReLU8(n int, z *float32, b *float32)

//go:noescape
func reLU8(n int, z *float32)

//go:noescape
func reLUMask8(n int, out *float32, y *float32, dy *float32)

//go:noescape
func colSumAdd4(rows, c int, x *float32, p *float64)
