//go:build unix

package statefile

import (
	"errors"
	"os"
	"syscall"
)

// nonBlock makes an open of a FIFO return at once instead of waiting for a
// writer; it changes nothing for a regular file.
const nonBlock = syscall.O_NONBLOCK

// OpenNoLink opens path with flag (O_CREATE and friends allowed) without
// following a symbolic link in its last element, and refuses a file with
// more than one hard link: the tool's logs and lock are written in place,
// so a link planted in the state directory must not make it write to a
// file elsewhere. The refusal is an *UnsafeFileError.
func OpenNoLink(path string, flag int, perm os.FileMode) (*os.File, error) {
	f, _, err := openNoLink(path, flag, perm)
	return f, err
}

// openNoLink is OpenNoLink that also returns the opened file's Stat.
func openNoLink(path string, flag int, perm os.FileMode) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NOFOLLOW, perm)
	if errors.Is(err, syscall.ELOOP) {
		return nil, nil, &UnsafeFileError{Path: path, Reason: reasonSymlink}
	}
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = checkFile(path, fi)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// hardLinks returns the number of hard links of the file fi describes.
func hardLinks(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
