#include "textflag.h"

// func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)
TEXT ·cpuid(SB), NOSPLIT, $0-24
	MOVL eaxArg+0(FP), AX
	MOVL ecxArg+4(FP), CX
	CPUID
	MOVL AX, eax+8(FP)
	MOVL BX, ebx+12(FP)
	MOVL CX, ecx+16(FP)
	MOVL DX, edx+20(FP)
	RET

// func xgetbv0() (eax uint32)
TEXT ·xgetbv0(SB), NOSPLIT, $0-4
	MOVL $0, CX
	XGETBV
	MOVL AX, eax+0(FP)
	RET

// func sgemm4x16(k int, a *float32, sr, sp int, b *float32, ldb int, c *float32, ldc int, alpha float32)
//
// For r in 0..3 and j in 0..15:
//   c[r*ldc+j] += alpha * Σ_{p<k} a[r*sr+p*sp] * b[p*ldb+j]
// summed in p order with fused multiply-adds. Strides are in elements.
TEXT ·sgemm4x16(SB), NOSPLIT, $0-68
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ sr+16(FP), R8
	MOVQ sp+24(FP), R9
	MOVQ b+32(FP), DI
	MOVQ ldb+40(FP), R10
	MOVQ c+48(FP), DX
	MOVQ ldc+56(FP), R11
	SHLQ $2, R8
	SHLQ $2, R9
	SHLQ $2, R10
	SHLQ $2, R11
	LEAQ (SI)(R8*1), R12
	LEAQ (SI)(R8*2), R13
	LEAQ (R12)(R8*2), R14
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	TESTQ CX, CX
	JZ   sdone

sloop:
	VMOVUPS      (DI), Y8
	VMOVUPS      32(DI), Y9
	VBROADCASTSS (SI), Y10
	VFMADD231PS  Y8, Y10, Y0
	VFMADD231PS  Y9, Y10, Y1
	VBROADCASTSS (R12), Y11
	VFMADD231PS  Y8, Y11, Y2
	VFMADD231PS  Y9, Y11, Y3
	VBROADCASTSS (R13), Y12
	VFMADD231PS  Y8, Y12, Y4
	VFMADD231PS  Y9, Y12, Y5
	VBROADCASTSS (R14), Y13
	VFMADD231PS  Y8, Y13, Y6
	VFMADD231PS  Y9, Y13, Y7
	ADDQ         R9, SI
	ADDQ         R9, R12
	ADDQ         R9, R13
	ADDQ         R9, R14
	ADDQ         R10, DI
	DECQ         CX
	JNZ          sloop

sdone:
	VBROADCASTSS alpha+64(FP), Y10
	VMOVUPS      (DX), Y8
	VMOVUPS      32(DX), Y9
	VFMADD231PS  Y0, Y10, Y8
	VFMADD231PS  Y1, Y10, Y9
	VMOVUPS      Y8, (DX)
	VMOVUPS      Y9, 32(DX)
	ADDQ         R11, DX
	VMOVUPS      (DX), Y8
	VMOVUPS      32(DX), Y9
	VFMADD231PS  Y2, Y10, Y8
	VFMADD231PS  Y3, Y10, Y9
	VMOVUPS      Y8, (DX)
	VMOVUPS      Y9, 32(DX)
	ADDQ         R11, DX
	VMOVUPS      (DX), Y8
	VMOVUPS      32(DX), Y9
	VFMADD231PS  Y4, Y10, Y8
	VFMADD231PS  Y5, Y10, Y9
	VMOVUPS      Y8, (DX)
	VMOVUPS      Y9, 32(DX)
	ADDQ         R11, DX
	VMOVUPS      (DX), Y8
	VMOVUPS      32(DX), Y9
	VFMADD231PS  Y6, Y10, Y8
	VFMADD231PS  Y7, Y10, Y9
	VMOVUPS      Y8, (DX)
	VMOVUPS      Y9, 32(DX)
	VZEROUPPER
	RET

// func dgemm4x8(k int, a *float64, sr, sp int, b *float64, ldb int, c *float64, ldc int, alpha float64)
//
// As sgemm4x16 for float64, 4 rows × 8 columns.
TEXT ·dgemm4x8(SB), NOSPLIT, $0-72
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ sr+16(FP), R8
	MOVQ sp+24(FP), R9
	MOVQ b+32(FP), DI
	MOVQ ldb+40(FP), R10
	MOVQ c+48(FP), DX
	MOVQ ldc+56(FP), R11
	SHLQ $3, R8
	SHLQ $3, R9
	SHLQ $3, R10
	SHLQ $3, R11
	LEAQ (SI)(R8*1), R12
	LEAQ (SI)(R8*2), R13
	LEAQ (R12)(R8*2), R14
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	TESTQ CX, CX
	JZ   ddone

dloop:
	VMOVUPD      (DI), Y8
	VMOVUPD      32(DI), Y9
	VBROADCASTSD (SI), Y10
	VFMADD231PD  Y8, Y10, Y0
	VFMADD231PD  Y9, Y10, Y1
	VBROADCASTSD (R12), Y11
	VFMADD231PD  Y8, Y11, Y2
	VFMADD231PD  Y9, Y11, Y3
	VBROADCASTSD (R13), Y12
	VFMADD231PD  Y8, Y12, Y4
	VFMADD231PD  Y9, Y12, Y5
	VBROADCASTSD (R14), Y13
	VFMADD231PD  Y8, Y13, Y6
	VFMADD231PD  Y9, Y13, Y7
	ADDQ         R9, SI
	ADDQ         R9, R12
	ADDQ         R9, R13
	ADDQ         R9, R14
	ADDQ         R10, DI
	DECQ         CX
	JNZ          dloop

ddone:
	VBROADCASTSD alpha+64(FP), Y10
	VMOVUPD      (DX), Y8
	VMOVUPD      32(DX), Y9
	VFMADD231PD  Y0, Y10, Y8
	VFMADD231PD  Y1, Y10, Y9
	VMOVUPD      Y8, (DX)
	VMOVUPD      Y9, 32(DX)
	ADDQ         R11, DX
	VMOVUPD      (DX), Y8
	VMOVUPD      32(DX), Y9
	VFMADD231PD  Y2, Y10, Y8
	VFMADD231PD  Y3, Y10, Y9
	VMOVUPD      Y8, (DX)
	VMOVUPD      Y9, 32(DX)
	ADDQ         R11, DX
	VMOVUPD      (DX), Y8
	VMOVUPD      32(DX), Y9
	VFMADD231PD  Y4, Y10, Y8
	VFMADD231PD  Y5, Y10, Y9
	VMOVUPD      Y8, (DX)
	VMOVUPD      Y9, 32(DX)
	ADDQ         R11, DX
	VMOVUPD      (DX), Y8
	VMOVUPD      32(DX), Y9
	VFMADD231PD  Y6, Y10, Y8
	VFMADD231PD  Y7, Y10, Y9
	VMOVUPD      Y8, (DX)
	VMOVUPD      Y9, 32(DX)
	VZEROUPPER
	RET
