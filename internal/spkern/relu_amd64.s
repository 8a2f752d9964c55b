//go:build !noasm

#include "textflag.h"

DATA absmask<>+0(SB)/4, $0x7fffffff
GLOBL absmask<>(SB), RODATA|NOPTR, $4

// func biasReLU8(n int, z *float32, b *float32)
// z[i] = max(z[i] + b[i], 0) for i < n (n a multiple of 8), as Go's
// max computes it: +0 for −0, NaN with its sign bit cleared.
TEXT ·biasReLU8(SB), NOSPLIT, $0-24
	MOVQ n+0(FP), CX
	MOVQ z+8(FP), DI
	MOVQ b+16(FP), SI
	VXORPS       Y0, Y0, Y0
	VBROADCASTSS absmask<>(SB), Y1
	SHRQ         $3, CX
	JZ           br8done
br8loop:
	VMOVUPS (DI), Y2
	VADDPS  (SI), Y2, Y2
	VMAXPS  Y2, Y0, Y2
	VANDPS  Y1, Y2, Y2
	VMOVUPS Y2, (DI)
	ADDQ    $32, DI
	ADDQ    $32, SI
	DECQ    CX
	JNZ     br8loop
br8done:
	VZEROUPPER
	RET

// func reLU8(n int, z *float32)
// z[i] = max(z[i], 0) for i < n (n a multiple of 8), as Go's max.
TEXT ·reLU8(SB), NOSPLIT, $0-16
	MOVQ n+0(FP), CX
	MOVQ z+8(FP), DI
	VXORPS       Y0, Y0, Y0
	VBROADCASTSS absmask<>(SB), Y1
	SHRQ         $3, CX
	JZ           r8done
r8loop:
	VMOVUPS (DI), Y2
	VMAXPS  Y2, Y0, Y2
	VANDPS  Y1, Y2, Y2
	VMOVUPS Y2, (DI)
	ADDQ    $32, DI
	DECQ    CX
	JNZ     r8loop
r8done:
	VZEROUPPER
	RET

// func reLUMask8(n int, out *float32, y *float32, dy *float32)
// out[i] = dy[i] where the bits of y[i], as an int32, are > 0 (y > 0,
// and NaN without the sign bit), else +0, for i < n (a multiple of 8).
TEXT ·reLUMask8(SB), NOSPLIT, $0-32
	MOVQ n+0(FP), CX
	MOVQ out+8(FP), DI
	MOVQ y+16(FP), SI
	MOVQ dy+24(FP), DX
	VPXOR Y0, Y0, Y0
	SHRQ  $3, CX
	JZ    m8done
m8loop:
	VMOVDQU  (SI), Y1
	VPCMPGTD Y0, Y1, Y1
	VPAND    (DX), Y1, Y1
	VMOVDQU  Y1, (DI)
	ADDQ     $32, DI
	ADDQ     $32, SI
	ADDQ     $32, DX
	DECQ     CX
	JNZ      m8loop
m8done:
	VZEROUPPER
	RET

// func colSumAdd4(rows, c int, x *float32, p *float64)
// p[j] += float64(x[r·c + j]) for r < rows, j < c (c a multiple of 4),
// four columns at a time, rows in order: each p[j] the same sum as
// `for r { p[j] += float64(x[r*c+j]) }`.
TEXT ·colSumAdd4(SB), NOSPLIT, $0-32
	MOVQ rows+0(FP), CX
	MOVQ c+8(FP), BX
	MOVQ x+16(FP), SI
	MOVQ p+24(FP), DI
	SHRQ $2, BX
	TESTQ CX, CX
	JZ   csdone
	TESTQ BX, BX
	JZ   csdone
csrow:
	MOVQ DI, R8
	MOVQ BX, DX
cscol:
	VCVTPS2PD (SI), Y0
	VADDPD    (R8), Y0, Y0
	VMOVUPD   Y0, (R8)
	ADDQ      $16, SI
	ADDQ      $32, R8
	DECQ      DX
	JNZ       cscol
	DECQ      CX
	JNZ       csrow
csdone:
	VZEROUPPER
	RET
