//go:build noasm || !amd64

package spkern

import "runtime"

// kernelPaths lists the kernel sets of this build: pure Go only, the
// assembly named so the tests say why they skip it.
var kernelPaths = []kernelPath{
	{name: "avx2", missing: "the assembly (built with the noasm tag or for GOARCH " + runtime.GOARCH + ")"},
	{name: "go", set: &goKernels},
}
