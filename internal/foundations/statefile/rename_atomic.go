//go:build linux || darwin

package statefile

import (
	"errors"

	"golang.org/x/sys/unix"
)

// swap exchanges the names a and b in the directory dirfd atomically.
func swap(dirfd int, a, b string) error {
	err := renameat(dirfd, a, b, renameExchange)
	if unsupported(err) {
		return errUnsupported
	}
	return err
}

// renameNoReplace renames from to to unless to exists (EEXIST).
func renameNoReplace(dirfd int, from, to string) error {
	err := renameat(dirfd, from, to, renameExclusive)
	if unsupported(err) {
		return linkNoReplace(dirfd, from, to)
	}
	return err
}

// unsupported reports whether err says the system or the file system does
// not know renameat's flags. (On Linux, ENOTSUP is EOPNOTSUPP.)
func unsupported(err error) bool {
	return errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.ENOSYS)
}
