package statefile

import (
	"errors"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// swap exchanges the names a and b in the directory dirfd atomically.
func swap(dirfd int, a, b string) error {
	err := unix.RenameatxNp(dirfd, a, dirfd, b, unix.RENAME_SWAP)
	if unsupported(err) {
		return errUnsupported
	}
	return err
}

// renameNoReplace renames from to to unless to exists (EEXIST).
func renameNoReplace(dirfd int, from, to string) error {
	err := unix.RenameatxNp(dirfd, from, dirfd, to, unix.RENAME_EXCL)
	if unsupported(err) {
		return linkNoReplace(dirfd, from, to)
	}
	return err
}

func unsupported(err error) bool {
	return errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.ENOSYS)
}

func changeTime(fi os.FileInfo) time.Time { return fi.ModTime() }
