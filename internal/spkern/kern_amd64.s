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
