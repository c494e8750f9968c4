//go:build !linux

package statefile

import (
	"errors"
	"os"
)

// isLocked reports whether someone holds lock k by trying to take it on
// f's own open file description and dropping it at once: flock and Windows
// have no query.
func isLocked(f *os.File, k lockKind) (bool, error) {
	switch err := tryLock(f, k); {
	case errors.Is(err, errBusy):
		return true, nil
	case err != nil:
		return false, err
	}
	return false, unlock(f, k)
}
