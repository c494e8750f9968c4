//go:build !windows

package handoff

import (
	"errors"
	"syscall"
)

// isRefused says whether a dial failed because nothing listens on the
// socket: a run that ended without removing it.
func isRefused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED)
}
