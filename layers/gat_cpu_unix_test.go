//go:build unix

package layers

import (
	"syscall"
	"time"
)

// gatCPUTime returns the process's user + system CPU time.
func gatCPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
