package statefile

import (
	"errors"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// swap exchanges the names a and b in the directory dirfd atomically.
func swap(dirfd int, a, b string) error {
	err := unix.Renameat2(dirfd, a, dirfd, b, unix.RENAME_EXCHANGE)
	if unsupported(err) {
		return errUnsupported
	}
	return err
}

// renameNoReplace renames from to to unless to exists (EEXIST).
func renameNoReplace(dirfd int, from, to string) error {
	err := unix.Renameat2(dirfd, from, dirfd, to, unix.RENAME_NOREPLACE)
	if unsupported(err) {
		return linkNoReplace(dirfd, from, to)
	}
	return err
}

func unsupported(err error) bool {
	return errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP)
}

// changeTime is when the file's inode last changed (written, renamed,
// linked); unlike the modification time, nobody can set it back.
func changeTime(fi os.FileInfo) time.Time {
	t := fi.ModTime()
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		if c := time.Unix(st.Ctim.Unix()); c.After(t) {
			t = c
		}
	}
	return t
}
