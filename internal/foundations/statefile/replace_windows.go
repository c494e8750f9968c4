package statefile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// On Windows a state file is replaced by writing a temporary file beside
// it, syncing it, checking the target against what was read, and renaming
// (MoveFileEx replaces the target). Windows has no way to exchange two
// names, so the window between the check and the rename, which the Unix
// implementation closes, stays open here; symbolic links are refused, hard
// links cannot be told apart and are not.

// Read returns the content of the state file at path, refusing symbolic
// links and non-regular files with an *UnsafeFileError. Windows has no
// leases: a read is never vouched whole, and nothing is waited for.
func Read(_ context.Context, path string, _ time.Duration) ([]byte, bool, error) {
	b, err := ReadFile(path)
	return b, false, err
}

// ReadFile is Read without waiting, for commands that only read.
func ReadFile(path string) ([]byte, error) {
	if err := Check(path); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if b == nil && err == nil {
		b = []byte{}
	}
	return b, err
}

// Check refuses the file at path as ReadFile and Replace refuse it,
// without reading it.
func Check(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	return checkFile(path, fi)
}

// WriteNew creates path with data; it fails if path exists.
func WriteNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, newMode)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Sync()
	}
	if err := f.Close(); werr == nil {
		werr = err
	}
	if werr != nil {
		os.Remove(path)
	}
	return werr
}

// Replace replaces the content of path, which was orig when read, with
// next. If the file changed meanwhile, rebase is called with its current
// content to re-apply the change; without rebase, or if the file keeps
// changing, nothing is written and the error wraps ErrChanged.
func Replace(_ context.Context, path string, orig, next []byte, rebase func(current []byte) ([]byte, error)) ([]string, error) {
	dir, name := splitPath(path)
	for start := time.Now(); time.Since(start) < keepRebasing; {
		cur, err := ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", path, ErrChanged)
		}
		if err != nil {
			return nil, err
		}
		if !bytes.Equal(cur, orig) {
			if rebase == nil {
				return nil, fmt.Errorf("%s: %w", path, ErrChanged)
			}
			if next, err = rebase(cur); err != nil {
				return nil, err
			}
			orig = cur
		}
		tmp := filepath.Join(dir, "."+name+tempMarker+randomHex())
		if err := WriteNew(tmp, next); err != nil {
			return nil, err
		}
		again, err := ReadFile(path)
		if err != nil || !bytes.Equal(again, orig) {
			os.Remove(tmp)
			if err != nil {
				return nil, err
			}
			continue // changed while the temporary file was written
		}
		if err := os.Rename(tmp, path); err != nil {
			os.Remove(tmp)
			return nil, err
		}
		return nil, nil
	}
	return nil, fmt.Errorf("%s: kept changing: %w", path, ErrChanged)
}
