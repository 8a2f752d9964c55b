//go:build !noasm

#include "textflag.h"

// func dot2s(n int, x *float32, y0 *float32, y1 *float32) (s0, s1 float32)
// The main loop of dot2 in float32, four steps at a time: lane r of X0
// (X1) holds Σ_{p ≡ r mod 4} x[p]·y0[p] (y1[p]), each product rounded
// then added, over p < n (a multiple of 4). Returns the partial sums
// combined as (lane0 + lane1) + (lane2 + lane3) by the caller: here the
// four lanes are returned packed as s0 = lanes of X0, s1 of X1 through
// memory (out).
TEXT ·dot2s(SB), NOSPLIT, $0-40
	MOVQ n+0(FP), CX
	MOVQ x+8(FP), SI
	MOVQ y0+16(FP), DI
	MOVQ y1+24(FP), DX
	MOVQ out+32(FP), R8
	XORPS X0, X0
	XORPS X1, X1
	SHRQ  $2, CX
	JZ    d2done
d2loop:
	MOVUPS (SI), X2
	MOVUPS (DI), X3
	MOVUPS (DX), X4
	MULPS  X2, X3
	MULPS  X2, X4
	ADDPS  X3, X0
	ADDPS  X4, X1
	ADDQ   $16, SI
	ADDQ   $16, DI
	ADDQ   $16, DX
	DECQ   CX
	JNZ    d2loop
d2done:
	MOVUPS X0, (R8)
	MOVUPS X1, 16(R8)
	RET

// func dot2d(n int, x *float64, y0 *float64, y1 *float64, out *float64)
// dot2s in float64: four lanes of Y0 and Y1 (AVX).
TEXT ·dot2d(SB), NOSPLIT, $0-40
	MOVQ n+0(FP), CX
	MOVQ x+8(FP), SI
	MOVQ y0+16(FP), DI
	MOVQ y1+24(FP), DX
	MOVQ out+32(FP), R8
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	SHRQ   $2, CX
	JZ     dd2done
dd2loop:
	VMOVUPD (SI), Y2
	VMULPD  (DI), Y2, Y3
	VMULPD  (DX), Y2, Y4
	VADDPD  Y3, Y0, Y0
	VADDPD  Y4, Y1, Y1
	ADDQ    $32, SI
	ADDQ    $32, DI
	ADDQ    $32, DX
	DECQ    CX
	JNZ     dd2loop
dd2done:
	VMOVUPD Y0, (R8)
	VMOVUPD Y1, 32(R8)
	VZEROUPPER
	RET
