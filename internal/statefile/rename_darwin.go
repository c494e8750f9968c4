package statefile

import (
	"errors"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// renameat renames from to to within the directory dirfd with
// renameatx_np's flags.
func renameat(dirfd int, from, to string, flags uint32) error {
	return unix.RenameatxNp(dirfd, from, dirfd, to, flags)
}

const (
	renameExchange  = unix.RENAME_SWAP
	renameExclusive = unix.RENAME_EXCL
)

func unsupported(err error) bool {
	return errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.ENOSYS)
}

func changeTime(fi os.FileInfo) time.Time { return fi.ModTime() }
