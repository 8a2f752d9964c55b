//go:build !unix

package features

// open reads the file into memory with the same checks as the mapping of
// unix systems.
func open(path string) (*Matrix, error) { return openRead(path) }
