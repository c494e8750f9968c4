package statefile

import (
	"errors"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// lockPath is the file that carries lock k: .lock for both, on different
// bytes.
func lockPath(dir string, _ lockKind) string { return filepath.Join(dir, LockFile) }

func ofd(f *os.File, cmd int, typ int16, k lockKind) (*unix.Flock_t, error) {
	lk := &unix.Flock_t{Type: typ, Whence: io.SeekStart, Start: int64(k), Len: 1}
	for {
		err := unix.FcntlFlock(f.Fd(), cmd, lk)
		if !errors.Is(err, unix.EINTR) {
			return lk, err
		}
	}
}

func tryLock(f *os.File, k lockKind) error {
	_, err := ofd(f, unix.F_OFD_SETLK, unix.F_WRLCK, k)
	if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) {
		return errBusy
	}
	return err
}

func waitLock(f *os.File, k lockKind) error {
	_, err := ofd(f, unix.F_OFD_SETLKW, unix.F_WRLCK, k)
	return err
}

func unlock(f *os.File, k lockKind) error {
	_, err := ofd(f, unix.F_OFD_SETLK, unix.F_UNLCK, k)
	return err
}

// isLocked asks the kernel whether an open file description other than f's
// holds lock k; f may be read-only.
func isLocked(f *os.File, k lockKind) (bool, error) {
	lk, err := ofd(f, unix.F_OFD_GETLK, unix.F_WRLCK, k)
	if err != nil {
		return false, err
	}
	return lk.Type != unix.F_UNLCK, nil
}
