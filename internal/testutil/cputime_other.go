//go:build !unix

package testutil

import "time"

// CPUTime is not measured on this platform: the benchmark's cpu-ms/op
// metric then reads 0.
func CPUTime() time.Duration { return 0 }
