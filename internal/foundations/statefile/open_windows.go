package statefile

import "os"

// nonBlock is 0: Windows has no FIFOs that an open waits on.
const nonBlock = 0

// OpenNoLink opens path with flag, refusing a symbolic link (checked before
// opening: Windows has no O_NOFOLLOW).
func OpenNoLink(path string, flag int, perm os.FileMode) (*os.File, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return nil, &UnsafeFileError{Path: path, Reason: reasonSymlink}
	}
	return os.OpenFile(path, flag, perm)
}

// hardLinks returns the number of hard links of the file fi describes,
// which os.FileInfo does not tell on Windows: 1.
func hardLinks(os.FileInfo) uint64 { return 1 }
