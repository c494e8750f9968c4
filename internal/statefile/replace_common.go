package statefile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ErrChanged reports that a file changed after it was read and the change
// could not be re-applied: no rebase function was given, the file was
// deleted, or it kept changing.
var ErrChanged = errors.New("changed since it was read")

// ErrDeleted reports that a file was deleted after it was read; it is an
// ErrChanged.
var ErrDeleted = fmt.Errorf("deleted while being written: %w", ErrChanged)

// UnsafeFileError reports a state file that cannot be replaced safely:
// a symbolic link, a hard-linked file or not a regular file.
type UnsafeFileError struct {
	Path   string
	Reason string // why, and what to do, e.g. "is a symbolic link: …"
}

func (e *UnsafeFileError) Error() string { return e.Path + " " + e.Reason }

// The reasons of an *UnsafeFileError, worded once for every way a file is
// read or written.
const (
	reasonSymlink    = "is a symbolic link: the tool does not write through links; remove the link, or point the tool at the real file"
	reasonHardLinked = "has more than one hard link: the tool does not write a file that has other names; replace it with a copy of its own"
	reasonNotRegular = "is not a regular file"
)

// checkFile returns an *UnsafeFileError if fi, path's Lstat or the Stat of
// a descriptor opened without following links, is a symbolic link, not a
// regular file, or a file with more than one hard link: the files the tool
// reads and writes, it reads and writes only as themselves.
func checkFile(path string, fi os.FileInfo) error {
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		return &UnsafeFileError{Path: path, Reason: reasonSymlink}
	case !fi.Mode().IsRegular():
		return &UnsafeFileError{Path: path, Reason: reasonNotRegular}
	case hardLinks(fi) > 1:
		return &UnsafeFileError{Path: path, Reason: reasonHardLinked}
	}
	return nil
}

// ReplaceOptions are what a caller of ReplaceWith may add to Replace.
type ReplaceOptions struct {
	// Prepared, if not nil, is next written ahead by Prepare for the same
	// path: Replace puts it in place, or removes it if next has to change
	// (a rebase) or nothing is written, instead of writing next itself.
	// It must have been prepared with next itself, not a copy; otherwise it
	// is removed and next written as without it.
	Prepared *Prepared
	// Unchanged, if not nil, reports whether the file fi describes cannot
	// have changed since Replace opened it to compare it with what it
	// should hold: for a caller that holds a read lease on it, taken
	// before, which no process opened it for writing since. After the
	// swap, the file it displaced is then not read again when it is the
	// one Replace compared.
	Unchanged func(fi os.FileInfo) bool
}

// Replace gives the files it puts in place a modification time whose
// nanoseconds within the microsecond are 1 + the file's size modulo 999
// (see MarkWhole), so that a reader can tell a file put in place whole
// from one that someone may still be writing in place: a write in place
// changes the time or the size, and the file no longer matches. The mark
// is never 0, the nanoseconds of every time a file system that keeps
// times to the microsecond or coarser reports. Windows keeps times to 100
// nanoseconds, so there the mark is not written.

// MarkWhole returns the modification time Replace gives a file of size
// bytes it puts in place at t: the mark WrittenWhole looks for.
func MarkWhole(t time.Time, size int64) time.Time {
	return t.Truncate(time.Microsecond).Add(time.Duration(1 + size%999))
}

// WrittenWhole reports whether the file fi describes was last written by
// Replace, which puts whole files in place, rather than in place by
// someone who may not be done. A file system that keeps times to the
// microsecond or coarser loses the mark: its files, empty ones included,
// count as written in place. One file in a thousand written in place has
// the mark by chance.
func WrittenWhole(fi os.FileInfo) bool {
	return int64(fi.ModTime().Nanosecond()%1000) == 1+fi.Size()%999
}

const (
	maxRebases  = 5
	tempMarker  = ".tmp-"
	savedMarker = ".saved-"
	staleAge    = time.Minute
	newMode     = 0o644
)

// tempTarget reports whether name is one of Replace's temporary files,
// ".<target>.tmp-<16 hex digits>", and for which target.
func tempTarget(name string) (string, bool) {
	i := strings.LastIndex(name, tempMarker)
	if i < 2 || name[0] != '.' {
		return "", false
	}
	if !isRandomHex(name[i+len(tempMarker):]) {
		return "", false
	}
	return name[1:i], true
}

// isRandomHex reports whether s is what randomHex returns: 16 lower-case
// hex digits.
func isRandomHex(s string) bool {
	if len(s) != 16 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// savedName returns a new name beside path for a save that could not be
// put in place: "<name>.saved-<hex>", which Cleanup leaves alone.
func savedName(path string) string { return path + savedMarker + randomHex() }

// SetAsideBeside returns the saves kept beside path, named as savedName
// names them (by SetAside, or by Replace when two saves raced with it), in
// the order of their names.
func SetAsideBeside(path string) []string {
	dir, name := splitPath(path)
	entries, _ := os.ReadDir(dir) // sorted by name; unreadable: none found
	var out []string
	for _, e := range entries {
		if hex, ok := strings.CutPrefix(e.Name(), name+savedMarker); ok && isRandomHex(hex) {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out
}

// SetAside writes data, durably, to a new file beside path named as
// savedName says, and returns its name: it keeps someone's save that
// could not be put in place, for a person to merge by hand.
func SetAside(path string, data []byte) (string, error) {
	saved := savedName(path)
	err := WriteNew(saved, data)
	if errors.Is(err, os.ErrExist) { // 64 random bits taken: someone made the name
		saved = savedName(path)
		err = WriteNew(saved, data)
	}
	return saved, err
}

func randomHex() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// splitPath returns the directory (".", not "", for a bare name) and the
// name of path.
func splitPath(path string) (dir, name string) {
	dir, name = filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	return dir, name
}
