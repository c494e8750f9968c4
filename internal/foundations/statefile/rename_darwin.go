package statefile

import "golang.org/x/sys/unix"

// renameat renames from to to within the directory dirfd with
// renameatx_np's flags.
func renameat(dirfd int, from, to string, flags uint32) error {
	return unix.RenameatxNp(dirfd, from, dirfd, to, flags)
}

const (
	renameExchange  = unix.RENAME_SWAP
	renameExclusive = unix.RENAME_EXCL
)
