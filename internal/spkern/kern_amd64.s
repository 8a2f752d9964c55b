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
