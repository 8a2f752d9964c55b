//go:build unix

package features

import (
	"fmt"
	"os"
	"syscall"
	"unsafe"
)

// littleEndian reports whether this machine stores a uint32's low byte
// first, as the file does.
var littleEndian = func() bool {
	x := uint32(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// open maps the file read-only and checks it in one pass over the
// mapping; the values are a view of the mapping (no copy).
func open(path string) (*Matrix, error) {
	if !littleEndian {
		return openRead(path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close() // the mapping outlives the descriptor
	rows, cols, size, err := readHeader(f)
	if err != nil {
		return nil, err
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mmap of %d bytes: %w", size, err)
	}
	unmap := func() error { return syscall.Munmap(b) }
	nv := rows * cols
	// The mapping starts on a page boundary and headerSize is a multiple
	// of 4, so the values are aligned for float32; check anyway.
	if uintptr(unsafe.Pointer(&b[headerSize]))%unsafe.Alignof(float32(0)) != 0 {
		_ = unmap()
		return nil, fmt.Errorf("mapping at %p is not aligned for float32", &b[0])
	}
	if err := verify(b[headerSize:headerSize+4*nv], b[headerSize+4*nv:], cols); err != nil {
		_ = unmap()
		return nil, err
	}
	data := unsafe.Slice((*float32)(unsafe.Pointer(&b[headerSize])), nv)
	return &Matrix{path: path, rows: rows, cols: cols, data: data, unmap: unmap}, nil
}
