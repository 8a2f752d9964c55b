//go:build !unix

package main

import "os"

// lockFile does nothing where flock is not available: do not start two
// serve processes on one -log there.
func lockFile(f *os.File) error { return nil }
