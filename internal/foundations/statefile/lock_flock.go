//go:build unix && !linux

package statefile

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// lockPath is the file that carries lock k. Without open-file-description
// record locks each lock needs a file of its own for flock(2).
func lockPath(dir string, k lockKind) string {
	if k == runLock {
		return filepath.Join(dir, LockFile)
	}
	return filepath.Join(dir, LockFile+".write")
}

func flock(f *os.File, how int) error {
	for {
		err := unix.Flock(int(f.Fd()), how)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

func tryLock(f *os.File, _ lockKind) error {
	err := flock(f, unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return errBusy
	}
	return err
}

func waitLock(f *os.File, _ lockKind) error { return flock(f, unix.LOCK_EX) }

func unlock(f *os.File, _ lockKind) error { return flock(f, unix.LOCK_UN) }
