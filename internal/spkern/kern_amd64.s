//go:build !noasm

#include "textflag.h"

// func spmmRow64(n int, idx *int32, val *float32, x *float32, ldx int, out *float32)
// out[0:64] = Σ_{p<n} val[p] * x[idx[p]*ldx : idx[p]*ldx+64]
TEXT ·spmmRow64(SB), NOSPLIT, $0-48
	MOVQ n+0(FP), CX
	MOVQ idx+8(FP), SI
	MOVQ val+16(FP), DI
	MOVQ x+24(FP), R8
	MOVQ ldx+32(FP), R9
	MOVQ out+40(FP), DX
	SHLQ $2, R9
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	// The first n−8 steps prefetch the x row of step p+8 (its 4 lines).
	MOVQ CX, BX
	SUBQ $8, BX
	JLE  r64tail
	MOVQ $8, CX

r64pf:
	MOVLQSX      32(SI), R10
	IMULQ        R9, R10
	ADDQ         R8, R10
	PREFETCHT0   (R10)
	PREFETCHT0   64(R10)
	PREFETCHT0   128(R10)
	PREFETCHT0   192(R10)
	MOVLQSX      (SI), AX
	IMULQ        R9, AX
	ADDQ         R8, AX
	VBROADCASTSS (DI), Y8
	VFMADD231PS  (AX), Y8, Y0
	VFMADD231PS  32(AX), Y8, Y1
	VFMADD231PS  64(AX), Y8, Y2
	VFMADD231PS  96(AX), Y8, Y3
	VFMADD231PS  128(AX), Y8, Y4
	VFMADD231PS  160(AX), Y8, Y5
	VFMADD231PS  192(AX), Y8, Y6
	VFMADD231PS  224(AX), Y8, Y7
	ADDQ         $4, SI
	ADDQ         $4, DI
	DECQ         BX
	JNZ          r64pf

r64tail:
	TESTQ CX, CX
	JZ   r64done

r64loop:
	MOVLQSX      (SI), AX
	IMULQ        R9, AX
	ADDQ         R8, AX
	VBROADCASTSS (DI), Y8
	VFMADD231PS  (AX), Y8, Y0
	VFMADD231PS  32(AX), Y8, Y1
	VFMADD231PS  64(AX), Y8, Y2
	VFMADD231PS  96(AX), Y8, Y3
	VFMADD231PS  128(AX), Y8, Y4
	VFMADD231PS  160(AX), Y8, Y5
	VFMADD231PS  192(AX), Y8, Y6
	VFMADD231PS  224(AX), Y8, Y7
	ADDQ         $4, SI
	ADDQ         $4, DI
	DECQ         CX
	JNZ          r64loop

r64done:
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	VMOVUPS Y2, 64(DX)
	VMOVUPS Y3, 96(DX)
	VMOVUPS Y4, 128(DX)
	VMOVUPS Y5, 160(DX)
	VMOVUPS Y6, 192(DX)
	VMOVUPS Y7, 224(DX)
	VZEROUPPER
	RET

// func spmmRow8(n int, idx *int32, val *float32, x *float32, ldx int, out *float32)
// out[0:8] = Σ_{p<n} val[p] * x[idx[p]*ldx : idx[p]*ldx+8]
TEXT ·spmmRow8(SB), NOSPLIT, $0-48
	MOVQ n+0(FP), CX
	MOVQ idx+8(FP), SI
	MOVQ val+16(FP), DI
	MOVQ x+24(FP), R8
	MOVQ ldx+32(FP), R9
	MOVQ out+40(FP), DX
	SHLQ $2, R9
	VXORPS Y0, Y0, Y0
	TESTQ CX, CX
	JZ   r8done

r8loop:
	MOVLQSX      (SI), AX
	IMULQ        R9, AX
	ADDQ         R8, AX
	VBROADCASTSS (DI), Y8
	VFMADD231PS  (AX), Y8, Y0
	ADDQ         $4, SI
	ADDQ         $4, DI
	DECQ         CX
	JNZ          r8loop

r8done:
	VMOVUPS Y0, (DX)
	VZEROUPPER
	RET

// func heads4x16Row(n int, idx *int32, alpha *float32, x *float32, ldx int, out *float32)
// out[16k:16k+16] = Σ_{p<n} alpha[4p+k] * x[idx[p]*ldx+16k : +16], k < 4.
TEXT ·heads4x16Row(SB), NOSPLIT, $0-48
	MOVQ n+0(FP), CX
	MOVQ idx+8(FP), SI
	MOVQ alpha+16(FP), DI
	MOVQ x+24(FP), R8
	MOVQ ldx+32(FP), R9
	MOVQ out+40(FP), DX
	SHLQ $2, R9
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	TESTQ CX, CX
	JZ   hrdone

hrloop:
	MOVLQSX      (SI), AX
	IMULQ        R9, AX
	ADDQ         R8, AX
	VBROADCASTSS (DI), Y8
	VBROADCASTSS 4(DI), Y9
	VBROADCASTSS 8(DI), Y10
	VBROADCASTSS 12(DI), Y11
	VFMADD231PS  (AX), Y8, Y0
	VFMADD231PS  32(AX), Y8, Y1
	VFMADD231PS  64(AX), Y9, Y2
	VFMADD231PS  96(AX), Y9, Y3
	VFMADD231PS  128(AX), Y10, Y4
	VFMADD231PS  160(AX), Y10, Y5
	VFMADD231PS  192(AX), Y11, Y6
	VFMADD231PS  224(AX), Y11, Y7
	ADDQ         $4, SI
	ADDQ         $16, DI
	DECQ         CX
	JNZ          hrloop

hrdone:
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	VMOVUPS Y2, 64(DX)
	VMOVUPS Y3, 96(DX)
	VMOVUPS Y4, 128(DX)
	VMOVUPS Y5, 160(DX)
	VMOVUPS Y6, 192(DX)
	VMOVUPS Y7, 224(DX)
	VZEROUPPER
	RET

// func heads4x16RowIdx(n int, idx *int32, arow *int32, alpha *float32, x *float32, ldx int, out *float32)
// As heads4x16Row with the weights of step p in alpha[4*arow[p] : +4].
TEXT ·heads4x16RowIdx(SB), NOSPLIT, $0-56
	MOVQ n+0(FP), CX
	MOVQ idx+8(FP), SI
	MOVQ arow+16(FP), R10
	MOVQ alpha+24(FP), DI
	MOVQ x+32(FP), R8
	MOVQ ldx+40(FP), R9
	MOVQ out+48(FP), DX
	SHLQ $2, R9
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	TESTQ CX, CX
	JZ   hidone

hiloop:
	MOVLQSX      (SI), AX
	IMULQ        R9, AX
	ADDQ         R8, AX
	MOVLQSX      (R10), BX
	SHLQ         $4, BX
	ADDQ         DI, BX
	VBROADCASTSS (BX), Y8
	VBROADCASTSS 4(BX), Y9
	VBROADCASTSS 8(BX), Y10
	VBROADCASTSS 12(BX), Y11
	VFMADD231PS  (AX), Y8, Y0
	VFMADD231PS  32(AX), Y8, Y1
	VFMADD231PS  64(AX), Y9, Y2
	VFMADD231PS  96(AX), Y9, Y3
	VFMADD231PS  128(AX), Y10, Y4
	VFMADD231PS  160(AX), Y10, Y5
	VFMADD231PS  192(AX), Y11, Y6
	VFMADD231PS  224(AX), Y11, Y7
	ADDQ         $4, SI
	ADDQ         $4, R10
	DECQ         CX
	JNZ          hiloop

hidone:
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	VMOVUPS Y2, 64(DX)
	VMOVUPS Y3, 96(DX)
	VMOVUPS Y4, 128(DX)
	VMOVUPS Y5, 160(DX)
	VMOVUPS Y6, 192(DX)
	VMOVUPS Y7, 224(DX)
	VZEROUPPER
	RET

// func heads4x16Dot(n int, idx *int32, x *float32, ldx int, d *float32, out *float32, scale float32)
// out[4p+k] = scale * Σ_{q<16} x[idx[p]*ldx+16k+q] * d[16k+q], k < 4.
TEXT ·heads4x16Dot(SB), NOSPLIT, $0-52
	MOVQ n+0(FP), CX
	MOVQ idx+8(FP), SI
	MOVQ x+16(FP), R8
	MOVQ ldx+24(FP), R9
	MOVQ d+32(FP), DI
	MOVQ out+40(FP), DX
	SHLQ $2, R9
	VMOVUPS      (DI), Y8
	VMOVUPS      32(DI), Y9
	VMOVUPS      64(DI), Y10
	VMOVUPS      96(DI), Y11
	VMOVUPS      128(DI), Y12
	VMOVUPS      160(DI), Y13
	VMOVUPS      192(DI), Y14
	VMOVUPS      224(DI), Y15
	VBROADCASTSS scale+48(FP), X4
	TESTQ        CX, CX
	JZ           hddone

hdloop:
	MOVLQSX     (SI), AX
	IMULQ       R9, AX
	ADDQ        R8, AX
	VMULPS      (AX), Y8, Y0
	VFMADD231PS 32(AX), Y9, Y0
	VMULPS      64(AX), Y10, Y1
	VFMADD231PS 96(AX), Y11, Y1
	VMULPS      128(AX), Y12, Y2
	VFMADD231PS 160(AX), Y13, Y2
	VMULPS      192(AX), Y14, Y3
	VFMADD231PS 224(AX), Y15, Y3
	VHADDPS     Y1, Y0, Y0
	VHADDPS     Y3, Y2, Y2
	VHADDPS     Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS      X1, X0, X0
	VMULPS      X4, X0, X0
	VMOVUPS     X0, (DX)
	ADDQ        $4, SI
	ADDQ        $16, DX
	DECQ        CX
	JNZ         hdloop

hddone:
	VZEROUPPER
	RET

// func spmmRow32d(n int, idx *int32, val *float64, x *float64, ldx int, out *float64)
// out[0:32] = Σ_{p<n} val[p] * x[idx[p]*ldx : idx[p]*ldx+32], in float64.
// Each step is a multiply then an add (no fused multiply-add), in index
// order from +0, so every sum equals the plain Go loop's bit for bit.
TEXT ·spmmRow32d(SB), NOSPLIT, $0-48
	MOVQ n+0(FP), CX
	MOVQ idx+8(FP), SI
	MOVQ val+16(FP), DI
	MOVQ x+24(FP), R8
	MOVQ ldx+32(FP), R9
	MOVQ out+40(FP), DX
	SHLQ $3, R9
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	// The first n−8 steps prefetch the strip of step p+8 (its 4 lines).
	MOVQ CX, BX
	SUBQ $8, BX
	JLE  d32tail
	MOVQ $8, CX

d32pf:
	MOVLQSX      32(SI), R10
	IMULQ        R9, R10
	ADDQ         R8, R10
	PREFETCHT0   (R10)
	PREFETCHT0   64(R10)
	PREFETCHT0   128(R10)
	PREFETCHT0   192(R10)
	MOVLQSX      (SI), AX
	IMULQ        R9, AX
	ADDQ         R8, AX
	VBROADCASTSD (DI), Y8
	VMULPD       (AX), Y8, Y9
	VMULPD       32(AX), Y8, Y10
	VMULPD       64(AX), Y8, Y11
	VMULPD       96(AX), Y8, Y12
	VADDPD       Y9, Y0, Y0
	VADDPD       Y10, Y1, Y1
	VADDPD       Y11, Y2, Y2
	VADDPD       Y12, Y3, Y3
	VMULPD       128(AX), Y8, Y13
	VMULPD       160(AX), Y8, Y14
	VMULPD       192(AX), Y8, Y15
	VMULPD       224(AX), Y8, Y9
	VADDPD       Y13, Y4, Y4
	VADDPD       Y14, Y5, Y5
	VADDPD       Y15, Y6, Y6
	VADDPD       Y9, Y7, Y7
	ADDQ         $4, SI
	ADDQ         $8, DI
	DECQ         BX
	JNZ          d32pf

d32tail:
	TESTQ CX, CX
	JZ   d32done

d32loop:
	MOVLQSX      (SI), AX
	IMULQ        R9, AX
	ADDQ         R8, AX
	VBROADCASTSD (DI), Y8
	VMULPD       (AX), Y8, Y9
	VMULPD       32(AX), Y8, Y10
	VMULPD       64(AX), Y8, Y11
	VMULPD       96(AX), Y8, Y12
	VADDPD       Y9, Y0, Y0
	VADDPD       Y10, Y1, Y1
	VADDPD       Y11, Y2, Y2
	VADDPD       Y12, Y3, Y3
	VMULPD       128(AX), Y8, Y13
	VMULPD       160(AX), Y8, Y14
	VMULPD       192(AX), Y8, Y15
	VMULPD       224(AX), Y8, Y9
	VADDPD       Y13, Y4, Y4
	VADDPD       Y14, Y5, Y5
	VADDPD       Y15, Y6, Y6
	VADDPD       Y9, Y7, Y7
	ADDQ         $4, SI
	ADDQ         $8, DI
	DECQ         CX
	JNZ          d32loop

d32done:
	VMOVUPD Y0, (DX)
	VMOVUPD Y1, 32(DX)
	VMOVUPD Y2, 64(DX)
	VMOVUPD Y3, 96(DX)
	VMOVUPD Y4, 128(DX)
	VMOVUPD Y5, 160(DX)
	VMOVUPD Y6, 192(DX)
	VMOVUPD Y7, 224(DX)
	VZEROUPPER
	RET

// func spmmRow8d(n int, idx *int32, val *float64, x *float64, ldx int, out *float64)
// out[0:8] = Σ_{p<n} val[p] * x[idx[p]*ldx : idx[p]*ldx+8], in float64,
// multiply then add as spmmRow32d.
TEXT ·spmmRow8d(SB), NOSPLIT, $0-48
	MOVQ n+0(FP), CX
	MOVQ idx+8(FP), SI
	MOVQ val+16(FP), DI
	MOVQ x+24(FP), R8
	MOVQ ldx+32(FP), R9
	MOVQ out+40(FP), DX
	SHLQ $3, R9
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	TESTQ CX, CX
	JZ   d8done

d8loop:
	MOVLQSX      (SI), AX
	IMULQ        R9, AX
	ADDQ         R8, AX
	VBROADCASTSD (DI), Y8
	VMULPD       (AX), Y8, Y9
	VMULPD       32(AX), Y8, Y10
	VADDPD       Y9, Y0, Y0
	VADDPD       Y10, Y1, Y1
	ADDQ         $4, SI
	ADDQ         $8, DI
	DECQ         CX
	JNZ          d8loop

d8done:
	VMOVUPD Y0, (DX)
	VMOVUPD Y1, 32(DX)
	VZEROUPPER
	RET

// func heads2x16d(n int, idx *int32, arow *int32, alpha *float64, x *float64, ldx int, out *float64)
// Two heads of 16 float64 features: out[16k+q] = Σ_{p<n} w_p[k] *
// x[idx[p]*ldx+16k+q] for k < 2, q < 16, where w_p = alpha[4p : 4p+2], or
// alpha[4*arow[p] : +2] when arow is not nil. Multiply then add, in p
// order from +0: bit for bit the Go loop's sums.
TEXT ·heads2x16d(SB), NOSPLIT, $0-56
	MOVQ n+0(FP), CX
	MOVQ idx+8(FP), SI
	MOVQ arow+16(FP), R10
	MOVQ alpha+24(FP), DI
	MOVQ x+32(FP), R8
	MOVQ ldx+40(FP), R9
	MOVQ out+48(FP), DX
	SHLQ $3, R9
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	TESTQ CX, CX
	JZ   h2done
	TESTQ R10, R10
	JNZ  h2idx

h2seq:
	MOVLQSX      (SI), AX
	IMULQ        R9, AX
	ADDQ         R8, AX
	VBROADCASTSD (DI), Y8
	VBROADCASTSD 8(DI), Y9
	VMULPD       (AX), Y8, Y10
	VMULPD       32(AX), Y8, Y11
	VMULPD       64(AX), Y8, Y12
	VMULPD       96(AX), Y8, Y13
	VADDPD       Y10, Y0, Y0
	VADDPD       Y11, Y1, Y1
	VADDPD       Y12, Y2, Y2
	VADDPD       Y13, Y3, Y3
	VMULPD       128(AX), Y9, Y14
	VMULPD       160(AX), Y9, Y15
	VMULPD       192(AX), Y9, Y10
	VMULPD       224(AX), Y9, Y11
	VADDPD       Y14, Y4, Y4
	VADDPD       Y15, Y5, Y5
	VADDPD       Y10, Y6, Y6
	VADDPD       Y11, Y7, Y7
	ADDQ         $4, SI
	ADDQ         $32, DI
	DECQ         CX
	JNZ          h2seq
	JMP          h2done

h2idx:
	MOVLQSX      (SI), AX
	IMULQ        R9, AX
	ADDQ         R8, AX
	MOVLQSX      (R10), BX
	SHLQ         $5, BX
	ADDQ         DI, BX
	VBROADCASTSD (BX), Y8
	VBROADCASTSD 8(BX), Y9
	VMULPD       (AX), Y8, Y10
	VMULPD       32(AX), Y8, Y11
	VMULPD       64(AX), Y8, Y12
	VMULPD       96(AX), Y8, Y13
	VADDPD       Y10, Y0, Y0
	VADDPD       Y11, Y1, Y1
	VADDPD       Y12, Y2, Y2
	VADDPD       Y13, Y3, Y3
	VMULPD       128(AX), Y9, Y14
	VMULPD       160(AX), Y9, Y15
	VMULPD       192(AX), Y9, Y10
	VMULPD       224(AX), Y9, Y11
	VADDPD       Y14, Y4, Y4
	VADDPD       Y15, Y5, Y5
	VADDPD       Y10, Y6, Y6
	VADDPD       Y11, Y7, Y7
	ADDQ         $4, SI
	ADDQ         $4, R10
	DECQ         CX
	JNZ          h2idx

h2done:
	VMOVUPD Y0, (DX)
	VMOVUPD Y1, 32(DX)
	VMOVUPD Y2, 64(DX)
	VMOVUPD Y3, 96(DX)
	VMOVUPD Y4, 128(DX)
	VMOVUPD Y5, 160(DX)
	VMOVUPD Y6, 192(DX)
	VMOVUPD Y7, 224(DX)
	VZEROUPPER
	RET

// func heads4x16Dotd(n int, idx *int32, x *float64, ldx int, d *float64, out *float64, scale float64)
// out[4p+k] = scale * Σ_q x[idx[p]*ldx+16k+q] * d[16k+q], k < 4, q < 16, in
// float64, as the Go loop gatDot sums it: four lanes s_l over q = l, l+4,
// l+8, l+12 (from +0, multiply then add), then (s0+s1)+(s2+s3).
TEXT ·heads4x16Dotd(SB), NOSPLIT, $0-56
	MOVQ n+0(FP), CX
	MOVQ idx+8(FP), SI
	MOVQ x+16(FP), R8
	MOVQ ldx+24(FP), R9
	MOVQ d+32(FP), DI
	MOVQ out+40(FP), DX
	MOVSD scale+48(FP), X15
	SHLQ $3, R9
	TESTQ CX, CX
	JZ   hdddone

hddloop:
	MOVLQSX (SI), AX
	IMULQ   R9, AX
	ADDQ    R8, AX
	VXORPD  Y0, Y0, Y0
	VXORPD  Y1, Y1, Y1
	VXORPD  Y2, Y2, Y2
	VXORPD  Y3, Y3, Y3
	VMOVUPD 0(AX), Y4
	VMOVUPD 128(AX), Y5
	VMOVUPD 256(AX), Y6
	VMOVUPD 384(AX), Y7
	VMULPD  0(DI), Y4, Y4
	VMULPD  128(DI), Y5, Y5
	VMULPD  256(DI), Y6, Y6
	VMULPD  384(DI), Y7, Y7
	VADDPD  Y4, Y0, Y0
	VADDPD  Y5, Y1, Y1
	VADDPD  Y6, Y2, Y2
	VADDPD  Y7, Y3, Y3
	VMOVUPD 32(AX), Y4
	VMOVUPD 160(AX), Y5
	VMOVUPD 288(AX), Y6
	VMOVUPD 416(AX), Y7
	VMULPD  32(DI), Y4, Y4
	VMULPD  160(DI), Y5, Y5
	VMULPD  288(DI), Y6, Y6
	VMULPD  416(DI), Y7, Y7
	VADDPD  Y4, Y0, Y0
	VADDPD  Y5, Y1, Y1
	VADDPD  Y6, Y2, Y2
	VADDPD  Y7, Y3, Y3
	VMOVUPD 64(AX), Y4
	VMOVUPD 192(AX), Y5
	VMOVUPD 320(AX), Y6
	VMOVUPD 448(AX), Y7
	VMULPD  64(DI), Y4, Y4
	VMULPD  192(DI), Y5, Y5
	VMULPD  320(DI), Y6, Y6
	VMULPD  448(DI), Y7, Y7
	VADDPD  Y4, Y0, Y0
	VADDPD  Y5, Y1, Y1
	VADDPD  Y6, Y2, Y2
	VADDPD  Y7, Y3, Y3
	VMOVUPD 96(AX), Y4
	VMOVUPD 224(AX), Y5
	VMOVUPD 352(AX), Y6
	VMOVUPD 480(AX), Y7
	VMULPD  96(DI), Y4, Y4
	VMULPD  224(DI), Y5, Y5
	VMULPD  352(DI), Y6, Y6
	VMULPD  480(DI), Y7, Y7
	VADDPD  Y4, Y0, Y0
	VADDPD  Y5, Y1, Y1
	VADDPD  Y6, Y2, Y2
	VADDPD  Y7, Y3, Y3
	VEXTRACTF128 $1, Y0, X8
	VHADDPD X8, X0, X0
	VHADDPD X0, X0, X0
	VMULSD  X15, X0, X0
	VMOVSD  X0, 0(DX)
	VEXTRACTF128 $1, Y1, X9
	VHADDPD X9, X1, X1
	VHADDPD X1, X1, X1
	VMULSD  X15, X1, X1
	VMOVSD  X1, 8(DX)
	VEXTRACTF128 $1, Y2, X10
	VHADDPD X10, X2, X2
	VHADDPD X2, X2, X2
	VMULSD  X15, X2, X2
	VMOVSD  X2, 16(DX)
	VEXTRACTF128 $1, Y3, X11
	VHADDPD X11, X3, X3
	VHADDPD X3, X3, X3
	VMULSD  X15, X3, X3
	VMOVSD  X3, 24(DX)
	ADDQ $4, SI
	ADDQ $32, DX
	DECQ CX
	JNZ  hddloop

hdddone:
	VZEROUPPER
	RET
