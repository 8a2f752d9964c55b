//go:build !noasm

#include "textflag.h"

// Two-column sparse products, four rows at a time. Row r's two sums
// (columns 0 and 1) share one register; the four rows' chains are
// independent, so the adds of four rows overlap instead of waiting on
// one another. Each row is still summed from +0 over its non-zeros in
// index order with a rounded multiply then a rounded add: the result
// equals the plain Go loop's bit for bit.

// STEP32 adds val[off]·x[2·idx[off] : +2] to acc and advances off.
#define STEP32(off, acc) \
	MOVLQSX      (R8)(off*4), BX \
	VMOVSD       (R10)(BX*8), X4 \
	VBROADCASTSS (R9)(off*4), X5 \
	VMULPS       X5, X4, X4 \
	VADDPS       X4, acc, acc \
	INCQ         off

// STEP64 is STEP32 in float64: x rows of 16 bytes.
#define STEP64(off, acc) \
	MOVLQSX      (R8)(off*4), BX \
	SHLQ         $4, BX \
	VMOVUPD      (R10)(BX*1), X4 \
	VMOVDDUP     (R9)(off*8), X5 \
	VMULPD       X5, X4, X4 \
	VADDPD       X4, acc, acc \
	INCQ         off

// func cols2Rows32(rows int, indptr *int, idx *int32, val *float32, x *float32, out *float32)
// out[2i : 2i+2] = Σ_{p ∈ [indptr[i], indptr[i+1])} val[p]·x[2·idx[p] : +2], i < rows.
TEXT ·cols2Rows32(SB), NOSPLIT, $0-48
	MOVQ rows+0(FP), CX
	MOVQ indptr+8(FP), SI
	MOVQ idx+16(FP), R8
	MOVQ val+24(FP), R9
	MOVQ x+32(FP), R10
	MOVQ out+40(FP), DI

q32:
	CMPQ CX, $4
	JLT  s32
	MOVQ 0(SI), R11
	MOVQ 8(SI), R12
	MOVQ 16(SI), R13
	MOVQ 24(SI), AX
	// DX = the shortest of the four rows' lengths
	MOVQ R12, DX
	SUBQ R11, DX
	MOVQ R13, BX
	SUBQ R12, BX
	CMPQ BX, DX
	CMOVQLT BX, DX
	MOVQ AX, BX
	SUBQ R13, BX
	CMPQ BX, DX
	CMOVQLT BX, DX
	MOVQ 32(SI), BX
	SUBQ AX, BX
	CMPQ BX, DX
	CMOVQLT BX, DX
	ADDQ R11, DX // row 0's offset after the common steps
	VXORPS X0, X0, X0
	VXORPS X1, X1, X1
	VXORPS X2, X2, X2
	VXORPS X3, X3, X3

q32loop:
	CMPQ R11, DX
	JGE  q32t0
	STEP32(R11, X0)
	STEP32(R12, X1)
	STEP32(R13, X2)
	STEP32(AX, X3)
	JMP  q32loop

q32t0:
	MOVQ 8(SI), DX
q32t0l:
	CMPQ R11, DX
	JGE  q32t1
	STEP32(R11, X0)
	JMP  q32t0l

q32t1:
	MOVQ 16(SI), DX
q32t1l:
	CMPQ R12, DX
	JGE  q32t2
	STEP32(R12, X1)
	JMP  q32t1l

q32t2:
	MOVQ 24(SI), DX
q32t2l:
	CMPQ R13, DX
	JGE  q32t3
	STEP32(R13, X2)
	JMP  q32t2l

q32t3:
	MOVQ 32(SI), DX
q32t3l:
	CMPQ AX, DX
	JGE  q32st
	STEP32(AX, X3)
	JMP  q32t3l

q32st:
	VMOVSD X0, 0(DI)
	VMOVSD X1, 8(DI)
	VMOVSD X2, 16(DI)
	VMOVSD X3, 24(DI)
	ADDQ   $32, SI
	ADDQ   $32, DI
	SUBQ   $4, CX
	JMP    q32

s32:
	TESTQ CX, CX
	JZ    d32
	MOVQ  0(SI), R11
	MOVQ  8(SI), DX
	VXORPS X0, X0, X0
s32l:
	CMPQ R11, DX
	JGE  s32st
	STEP32(R11, X0)
	JMP  s32l
s32st:
	VMOVSD X0, 0(DI)
	ADDQ   $8, SI
	ADDQ   $8, DI
	DECQ   CX
	JMP    s32

d32:
	RET

// func cols2Rows64(rows int, indptr *int, idx *int32, val *float64, x *float64, out *float64)
// cols2Rows32 in float64.
TEXT ·cols2Rows64(SB), NOSPLIT, $0-48
	MOVQ rows+0(FP), CX
	MOVQ indptr+8(FP), SI
	MOVQ idx+16(FP), R8
	MOVQ val+24(FP), R9
	MOVQ x+32(FP), R10
	MOVQ out+40(FP), DI

q64:
	CMPQ CX, $4
	JLT  s64
	MOVQ 0(SI), R11
	MOVQ 8(SI), R12
	MOVQ 16(SI), R13
	MOVQ 24(SI), AX
	MOVQ R12, DX
	SUBQ R11, DX
	MOVQ R13, BX
	SUBQ R12, BX
	CMPQ BX, DX
	CMOVQLT BX, DX
	MOVQ AX, BX
	SUBQ R13, BX
	CMPQ BX, DX
	CMOVQLT BX, DX
	MOVQ 32(SI), BX
	SUBQ AX, BX
	CMPQ BX, DX
	CMOVQLT BX, DX
	ADDQ R11, DX
	VXORPD X0, X0, X0
	VXORPD X1, X1, X1
	VXORPD X2, X2, X2
	VXORPD X3, X3, X3

q64loop:
	CMPQ R11, DX
	JGE  q64t0
	STEP64(R11, X0)
	STEP64(R12, X1)
	STEP64(R13, X2)
	STEP64(AX, X3)
	JMP  q64loop

q64t0:
	MOVQ 8(SI), DX
q64t0l:
	CMPQ R11, DX
	JGE  q64t1
	STEP64(R11, X0)
	JMP  q64t0l

q64t1:
	MOVQ 16(SI), DX
q64t1l:
	CMPQ R12, DX
	JGE  q64t2
	STEP64(R12, X1)
	JMP  q64t1l

q64t2:
	MOVQ 24(SI), DX
q64t2l:
	CMPQ R13, DX
	JGE  q64t3
	STEP64(R13, X2)
	JMP  q64t2l

q64t3:
	MOVQ 32(SI), DX
q64t3l:
	CMPQ AX, DX
	JGE  q64st
	STEP64(AX, X3)
	JMP  q64t3l

q64st:
	VMOVUPD X0, 0(DI)
	VMOVUPD X1, 16(DI)
	VMOVUPD X2, 32(DI)
	VMOVUPD X3, 48(DI)
	ADDQ    $32, SI
	ADDQ    $64, DI
	SUBQ    $4, CX
	JMP     q64

s64:
	TESTQ CX, CX
	JZ    d64
	MOVQ  0(SI), R11
	MOVQ  8(SI), DX
	VXORPD X0, X0, X0
s64l:
	CMPQ R11, DX
	JGE  s64st
	STEP64(R11, X0)
	JMP  s64l
s64st:
	VMOVUPD X0, 0(DI)
	ADDQ    $8, SI
	ADDQ    $16, DI
	DECQ    CX
	JMP     s64

d64:
	RET
