package statefile

import (
	"io"
	"os"
	"path/filepath"
)

// WriteAtomic replaces the file at path with what write writes. It is for
// files the tool generates (the report, the metrics textfile), not for state
// files, which people edit (see Replace): a temporary file in the same
// directory, named ".NAME.tmp-…" so that collectors matching *.prom or
// *.html skip it, is written, synced and renamed over path, then the
// directory is synced. A reader sees the old file or the new one, never
// half of one. The file gets mode 0644.
//
// A symbolic link, a file with more than one hard link or anything but a
// regular file at path is refused with an *UnsafeFileError and nothing is
// written: the rename would not write through the link, but it would
// silently cut it, and the same links are refused by every other write.
func WriteAtomic(path string, write func(io.Writer) error) error {
	if fi, err := os.Lstat(path); err == nil { // missing: the write reports any problem
		if err := checkFile(path, fi); err != nil {
			return err
		}
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	err = write(f)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync() // the rename is done; a failed directory sync only weakens durability
		d.Close()
	}
	return nil
}
