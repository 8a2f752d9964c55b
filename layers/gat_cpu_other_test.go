//go:build !unix

package layers

import "time"

// gatCPUTime is not measured on this platform: the benchmark's cpu-ms/op
// metric then reads 0.
func gatCPUTime() time.Duration { return 0 }
