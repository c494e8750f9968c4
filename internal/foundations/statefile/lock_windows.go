package statefile

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/windows"
)

// lockPath is the file that carries lock k: .lock for both, on different
// bytes, as on Linux.
func lockPath(dir string, _ lockKind) string { return filepath.Join(dir, LockFile) }

func lockFile(f *os.File, k lockKind, flags uint32) error {
	ol := &windows.Overlapped{Offset: uint32(k.offset())}
	err := windows.LockFileEx(windows.Handle(f.Fd()), flags|windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
		return errBusy
	}
	return err
}

func tryLock(f *os.File, k lockKind) error {
	return lockFile(f, k, windows.LOCKFILE_FAIL_IMMEDIATELY)
}

func waitLock(f *os.File, k lockKind) error { return lockFile(f, k, 0) }

func unlock(f *os.File, k lockKind) error {
	ol := &windows.Overlapped{Offset: uint32(k.offset())}
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, ol)
}

// lockDir does nothing on Windows, where a directory cannot be locked: the
// run lock is .lock alone there.
func lockDir(string) (*os.File, error) { return nil, nil }
