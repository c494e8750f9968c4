package statefile

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
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

// WritingError reports a state file that a process still had open for
// writing when a command had waited as long as it does: what it holds may
// be half a save, so nothing was written.
type WritingError struct {
	File string
	Wait time.Duration
}

func (e *WritingError) Error() string {
	return fmt.Sprintf("%s is being written by someone else and did not settle within %v; nothing was written", e.File, e.Wait)
}

// EmptyFileError reports an empty state file where no lease can tell
// whether someone has it open for writing: an editor that saves in place
// empties the file first, and one that stalled there would lose what it
// then writes if a change built on the empty file replaced it.
type EmptyFileError struct{ File string }

func (e *EmptyFileError) Error() string {
	return fmt.Sprintf("%s is empty, and this system cannot tell whether an editor is in the middle of saving it; nothing was written", e.File)
}

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

// OpenThrough opens the file at path for a command that only reads, and
// returns its Stat: a link is followed (lint reports it, and every write
// refuses it), and a file that is not a regular one, such as a FIFO that a
// plain open would wait on for ever, is refused with an *UnsafeFileError.
func OpenThrough(path string) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|nonBlock, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = &UnsafeFileError{Path: path, Reason: reasonNotRegular}
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// ReadThrough reads the file at path as OpenThrough opens it; an empty
// file reads as a non-nil empty slice.
func ReadThrough(path string) ([]byte, error) {
	f, fi, err := OpenThrough(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(f, fi.Size())
}

// readAll reads f to the end; the result is non-nil even when empty.
func readAll(f *os.File, size int64) ([]byte, error) {
	b := bytes.NewBuffer(make([]byte, 0, size+512))
	_, err := b.ReadFrom(io.NewSectionReader(f, 0, 1<<62))
	return b.Bytes(), err
}

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

const (
	// WriterWait bounds how long Read and Replace wait for a process that
	// has a state file open for writing to close it: a save takes
	// milliseconds.
	WriterWait = 2 * time.Second
	// settleQuiet is how long a file read without a lease, and changed
	// since the caller read it, must be left alone before Replace builds
	// on it: where the kernel cannot say whether a save is going on, a
	// save in place that is still writing is seen changing within it.
	settleQuiet = 100 * time.Millisecond
	// keepRebasing is how long Replace goes on re-applying a change onto
	// saves that overtake it before it gives up: a person saving again
	// and again is let finish, and the wait stays bounded.
	keepRebasing = 2 * time.Second
	tempMarker   = ".tmp-"
	savedMark    = ".saved-"
	staleAge     = time.Minute
	newMode      = 0o644
)

// tempTarget reports whether name is one of Replace's temporary files,
// ".<target>.tmp-<16 hex digits>", and for which target.
func tempTarget(name string) (string, bool) {
	i := strings.LastIndex(name, tempMarker)
	if i < 2 || name[0] != '.' || !isRandomHex(name[i+len(tempMarker):]) {
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

func randomHex() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// SetAsideBeside returns the saves Replace kept beside path
// ("<name>.saved-<16 hex digits>"), in the order of their names.
func SetAsideBeside(path string) []string {
	dir, name := splitPath(path)
	entries, _ := os.ReadDir(dir) // sorted by name; unreadable: none found
	var out []string
	for _, e := range entries {
		if hex, ok := strings.CutPrefix(e.Name(), name+savedMark); ok && isRandomHex(hex) {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out
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

// sleep waits for d, or until ctx is done; it reports whether ctx is not.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
