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

// ORDROW(k, off) loads row order[k] of the group: its start into off,
// its end into 8k(SP), r−base into 32+8k(SP).
#define ORDROW(k, off) \
	MOVLQSX (k*4)(SI), BX \
	MOVQ    BX, DX \
	SUBQ    base+56(FP), DX \
	MOVQ    DX, (32+k*8)(SP) \
	MOVQ    indptr+16(FP), DX \
	LEAQ    (DX)(BX*8), DX \
	MOVQ    0(DX), off \
	MOVQ    8(DX), DX \
	MOVQ    DX, (k*8)(SP)

// ORDMIN sets DX to row 0's start plus the shortest length of the four.
#define ORDMIN \
	MOVQ    0(SP), DX \
	SUBQ    R11, DX \
	MOVQ    8(SP), BX \
	SUBQ    R12, BX \
	CMPQ    BX, DX \
	CMOVQLT BX, DX \
	MOVQ    16(SP), BX \
	SUBQ    R13, BX \
	CMPQ    BX, DX \
	CMOVQLT BX, DX \
	MOVQ    24(SP), BX \
	SUBQ    AX, BX \
	CMPQ    BX, DX \
	CMOVQLT BX, DX \
	ADDQ    R11, DX

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

// The ordered two-column products: the rows are order[0..n), four at a
// time, and row r's sums go to out[2(r−base) : +2]. CSR.Cols2Rows32 and
// 64 pass the rows of whole windows sorted by length (longest first), so
// the four rows summed side by side have nearly the same length and the
// single-row tails, where each add waits on the one before, are short.
// Each row is summed exactly as cols2Rows32/64 sum it.
//
// Frame: 0(SP)..24(SP) the four rows' ends, 32(SP)..56(SP) their out
// offsets (r−base).

// func cols2Order32(n int, order *int32, indptr *int, idx *int32, val *float32, x *float32, out *float32, base int)
TEXT ·cols2Order32(SB), NOSPLIT, $64-64
	MOVQ n+0(FP), CX
	MOVQ order+8(FP), SI
	MOVQ idx+24(FP), R8
	MOVQ val+32(FP), R9
	MOVQ x+40(FP), R10
	MOVQ out+48(FP), DI

o32:
	CMPQ CX, $4
	JLT  os32
	ORDROW(0, R11)
	ORDROW(1, R12)
	ORDROW(2, R13)
	ORDROW(3, AX)
	ORDMIN
	VXORPS X0, X0, X0
	VXORPS X1, X1, X1
	VXORPS X2, X2, X2
	VXORPS X3, X3, X3

o32loop:
	CMPQ R11, DX
	JGE  o32t0
	STEP32(R11, X0)
	STEP32(R12, X1)
	STEP32(R13, X2)
	STEP32(AX, X3)
	JMP  o32loop

o32t0:
	MOVQ 0(SP), DX
o32t0l:
	CMPQ R11, DX
	JGE  o32t1
	STEP32(R11, X0)
	JMP  o32t0l

o32t1:
	MOVQ 8(SP), DX
o32t1l:
	CMPQ R12, DX
	JGE  o32t2
	STEP32(R12, X1)
	JMP  o32t1l

o32t2:
	MOVQ 16(SP), DX
o32t2l:
	CMPQ R13, DX
	JGE  o32t3
	STEP32(R13, X2)
	JMP  o32t2l

o32t3:
	MOVQ 24(SP), DX
o32t3l:
	CMPQ AX, DX
	JGE  o32st
	STEP32(AX, X3)
	JMP  o32t3l

o32st:
	MOVQ   32(SP), BX
	VMOVSD X0, (DI)(BX*8)
	MOVQ   40(SP), BX
	VMOVSD X1, (DI)(BX*8)
	MOVQ   48(SP), BX
	VMOVSD X2, (DI)(BX*8)
	MOVQ   56(SP), BX
	VMOVSD X3, (DI)(BX*8)
	ADDQ   $16, SI
	SUBQ   $4, CX
	JMP    o32

os32:
	TESTQ CX, CX
	JZ    od32
	ORDROW(0, R11)
	MOVQ  0(SP), DX
	VXORPS X0, X0, X0
os32l:
	CMPQ R11, DX
	JGE  os32st
	STEP32(R11, X0)
	JMP  os32l
os32st:
	MOVQ   32(SP), BX
	VMOVSD X0, (DI)(BX*8)
	ADDQ   $4, SI
	DECQ   CX
	JMP    os32

od32:
	RET

// func cols2Order64(n int, order *int32, indptr *int, idx *int32, val *float64, x *float64, out *float64, base int)
// cols2Order32 in float64: out rows of 16 bytes.
TEXT ·cols2Order64(SB), NOSPLIT, $64-64
	MOVQ n+0(FP), CX
	MOVQ order+8(FP), SI
	MOVQ idx+24(FP), R8
	MOVQ val+32(FP), R9
	MOVQ x+40(FP), R10
	MOVQ out+48(FP), DI

o64:
	CMPQ CX, $4
	JLT  os64
	ORDROW(0, R11)
	ORDROW(1, R12)
	ORDROW(2, R13)
	ORDROW(3, AX)
	ORDMIN
	VXORPD X0, X0, X0
	VXORPD X1, X1, X1
	VXORPD X2, X2, X2
	VXORPD X3, X3, X3

o64loop:
	CMPQ R11, DX
	JGE  o64t0
	STEP64(R11, X0)
	STEP64(R12, X1)
	STEP64(R13, X2)
	STEP64(AX, X3)
	JMP  o64loop

o64t0:
	MOVQ 0(SP), DX
o64t0l:
	CMPQ R11, DX
	JGE  o64t1
	STEP64(R11, X0)
	JMP  o64t0l

o64t1:
	MOVQ 8(SP), DX
o64t1l:
	CMPQ R12, DX
	JGE  o64t2
	STEP64(R12, X1)
	JMP  o64t1l

o64t2:
	MOVQ 16(SP), DX
o64t2l:
	CMPQ R13, DX
	JGE  o64t3
	STEP64(R13, X2)
	JMP  o64t2l

o64t3:
	MOVQ 24(SP), DX
o64t3l:
	CMPQ AX, DX
	JGE  o64st
	STEP64(AX, X3)
	JMP  o64t3l

o64st:
	MOVQ    32(SP), BX
	SHLQ    $4, BX
	VMOVUPD X0, (DI)(BX*1)
	MOVQ    40(SP), BX
	SHLQ    $4, BX
	VMOVUPD X1, (DI)(BX*1)
	MOVQ    48(SP), BX
	SHLQ    $4, BX
	VMOVUPD X2, (DI)(BX*1)
	MOVQ    56(SP), BX
	SHLQ    $4, BX
	VMOVUPD X3, (DI)(BX*1)
	ADDQ    $16, SI
	SUBQ    $4, CX
	JMP     o64

os64:
	TESTQ CX, CX
	JZ    od64
	ORDROW(0, R11)
	MOVQ  0(SP), DX
	VXORPD X0, X0, X0
os64l:
	CMPQ R11, DX
	JGE  os64st
	STEP64(R11, X0)
	JMP  os64l
os64st:
	MOVQ    32(SP), BX
	SHLQ    $4, BX
	VMOVUPD X0, (DI)(BX*1)
	ADDQ    $4, SI
	DECQ    CX
	JMP     os64

od64:
	RET
