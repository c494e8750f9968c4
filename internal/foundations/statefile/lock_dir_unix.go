//go:build unix

package statefile

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// lockDir takes an exclusive flock(2) on the directory dir itself, without
// waiting; errBusy if another open file description holds it. Closing the
// returned file releases it.
func lockDir(dir string) (*os.File, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	for {
		err = unix.Flock(int(d.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		d.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, errBusy
		}
		return nil, err
	}
	return d, nil
}
