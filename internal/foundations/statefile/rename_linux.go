package statefile

import (
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// renameat renames from to to within the directory dirfd with renameat2's
// flags.
func renameat(dirfd int, from, to string, flags uint) error {
	return unix.Renameat2(dirfd, from, dirfd, to, flags)
}

const (
	renameExchange  = unix.RENAME_EXCHANGE
	renameExclusive = unix.RENAME_NOREPLACE
)

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
