//go:build !amd64

package spkern

var kernels = false

func spmmRow64(n int, idx *int32, val *float32, x *float32, ldx int, out *float32) {
	panic("spkern: no kernel on this architecture")
}

func spmmRow8(n int, idx *int32, val *float32, x *float32, ldx int, out *float32) {
	panic("spkern: no kernel on this architecture")
}
