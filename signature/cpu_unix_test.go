//go:build unix

package signature

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user and system) the process has used,
// on every thread.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
