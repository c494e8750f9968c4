//go:build unix

package statefile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// seams are what tests replace to play a concurrent writer at the instants
// where one matters, and file systems that lack an operation. The zero
// value, which Replace and Cleanup use, is the real thing: nil hooks are
// not called, and nil operations are the platform's.
type seams struct {
	beforeCheck func()           // temp written and synced; before the re-read
	beforeSwap  func()           // re-read matched; before the swap or create
	afterSwap   func(tmp string) // swapped; tmp names the displaced file

	swap   func(dirfd int, from, to string) error // nil: swap
	create func(dirfd int, from, to string) error // nil: renameNoReplace
	now    func() time.Time                       // nil: time.Now
}

func (h *seams) swapFiles(dirfd int, from, to string) error {
	if h.swap != nil {
		return h.swap(dirfd, from, to)
	}
	return swap(dirfd, from, to)
}

func (h *seams) createFile(dirfd int, from, to string) error {
	if h.create != nil {
		return h.create(dirfd, from, to)
	}
	return renameNoReplace(dirfd, from, to)
}

func (h *seams) timeNow() time.Time {
	if h.now != nil {
		return h.now()
	}
	return time.Now()
}

// errUnsupported is returned by swap when the file system cannot exchange.
var errUnsupported = errors.New("not supported by the file system")

// ReadFile returns the content of the state file at path. Like Replace it
// refuses symbolic links, hard-linked and non-regular files with an
// *UnsafeFileError. A missing file yields an error satisfying
// errors.Is(err, fs.ErrNotExist); an empty one a non-nil empty slice, so the
// result can be passed to Replace as orig.
func ReadFile(path string) ([]byte, error) {
	f, fi, err := openSafe(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := readAll(f, fi.Size())
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return data, nil
}

// Open opens the state file at path for reading, refusing it as ReadFile
// and Replace refuse it (a symbolic link, a hard-linked or a non-regular
// file: an *UnsafeFileError); what it checked is the file it opened. A
// missing file yields an error satisfying errors.Is(err, fs.ErrNotExist).
func Open(path string) (*os.File, error) {
	f, _, err := openSafe(path)
	return f, err
}

// Check refuses the file at path as ReadFile and Replace refuse it (a
// symbolic link, a hard-linked or a non-regular file: an *UnsafeFileError)
// without reading it. A missing file yields an error satisfying
// errors.Is(err, fs.ErrNotExist).
func Check(path string) error {
	f, _, err := openSafe(path)
	if err != nil {
		return err
	}
	return f.Close()
}

// WriteNew creates the file at path with data, durably, and fails with an
// error satisfying errors.Is(err, fs.ErrExist) if it exists, even if it
// appears while data is being written.
func WriteNew(path string, data []byte) error { return new(seams).writeNew(path, data) }

func (h *seams) writeNew(path string, data []byte) error {
	return h.replace(path, nil, data, func([]byte) ([]byte, error) {
		return nil, &fs.PathError{Op: "create", Path: path, Err: fs.ErrExist}
	})
}

// Replace replaces the content of the file at path with next, following the
// protocol in the package documentation. The caller holds the write lock,
// read the file as orig (nil: it did not exist) and computed next from it.
//
// If the file no longer holds orig when Replace is about to swap, rebase is
// called with what it holds now and must return the change re-applied to
// it, or an error if the change conflicts; Replace then writes rebase's
// result, or returns its error unchanged having written nothing. A nil
// rebase makes any change an ErrChanged. Replace writes nothing when the
// new content equals the file's.
func Replace(path string, orig, next []byte, rebase func(current []byte) ([]byte, error)) error {
	return new(seams).replace(path, orig, next, rebase)
}

// ReplaceWith is Replace with options.
func ReplaceWith(path string, orig, next []byte, rebase func(current []byte) ([]byte, error), opt ReplaceOptions) error {
	return new(seams).replaceWith(path, orig, next, rebase, opt)
}

func (h *seams) replace(path string, orig, next []byte, rebase func(current []byte) ([]byte, error)) error {
	return h.replaceWith(path, orig, next, rebase, ReplaceOptions{})
}

func (h *seams) replaceWith(path string, orig, next []byte, rebase func(current []byte) ([]byte, error), opt ReplaceOptions) error {
	pre := opt.Prepared
	if pre != nil && !pre.holds(path, next) {
		pre.Discard()
		pre = nil
	}
	if orig != nil && bytes.Equal(orig, next) {
		pre.Discard()
		return nil
	}
	dir, name := splitPath(path)
	d, err := os.Open(dir)
	if err != nil {
		pre.Discard()
		return fmt.Errorf("replacing %s: %w", path, err)
	}
	defer d.Close()
	r := &replacer{seams: h, path: path, dir: dir, name: name, d: d, dirfd: int(d.Fd()), unchanged: opt.Unchanged}
	_ = h.cleanup(dir, name) // best effort: leftovers cost only disk space; a prepared file is new

	base, want := orig, next
	for i := 0; ; i++ {
		changed, cur, err := r.attempt(base, want, pre)
		pre = nil // the first attempt puts it in place or removes it
		if err != nil || !changed {
			return err
		}
		switch {
		case i == maxRebases:
			return fmt.Errorf("%s changed %d times while being written: %w", path, i+1, ErrChanged)
		case cur == nil && base != nil:
			return fmt.Errorf("%s was %w", path, ErrDeleted)
		case cur == nil:
			continue // created and deleted again meanwhile: create it anew
		case rebase == nil:
			return fmt.Errorf("%s: %w", path, ErrChanged)
		}
		if want, err = rebase(cur); err != nil {
			return err
		}
		if base = cur; bytes.Equal(base, want) {
			return nil
		}
	}
}

type replacer struct {
	*seams
	path, dir, name string
	d               *os.File
	dirfd           int
	unchanged       func(os.FileInfo) bool // see ReplaceOptions
}

// attempt writes want in place of a file that should hold base (nil: not
// exist). If the file holds something else, it writes nothing and returns
// changed with what the file holds (nil: missing).
//
// pre, if not nil, is want written ahead (see Prepare): it is put in place
// or removed.
func (r *replacer) attempt(base, want []byte, pre *Prepared) (changed bool, cur []byte, err error) {
	if pre == nil {
		if pre, err = r.prepare(want); err != nil {
			return false, nil, err
		}
	}
	tmp, f, mode := pre.tmp, pre.f, pre.mode
	tmpPath := filepath.Join(r.dir, tmp)
	keep := false
	defer func() {
		f.Close()
		if !keep {
			os.Remove(tmpPath)
		}
	}()

	if r.beforeCheck != nil {
		r.beforeCheck()
	}
	same, cur, fi, err := r.check(base)
	if err != nil || !same {
		return !same, cur, err
	}
	if fi != nil && fi.Mode() != mode {
		if err := f.Chmod(fi.Mode()); err != nil {
			return false, nil, fmt.Errorf("replacing %s: %w", r.path, err)
		}
	}
	if r.beforeSwap != nil {
		r.beforeSwap()
	}

	if base == nil {
		err := r.createFile(r.dirfd, tmp, r.name)
		if errors.Is(err, fs.ErrExist) {
			_, cur, _, err := r.check(nil)
			return true, cur, err
		}
		if err != nil {
			return false, nil, fmt.Errorf("creating %s: %w", r.path, err)
		}
		keep = true // tmp is the file now
		return false, nil, r.syncDir()
	}

	err = r.swapFiles(r.dirfd, tmp, r.name)
	if errors.Is(err, errUnsupported) {
		if err := unix.Renameat(r.dirfd, tmp, r.dirfd, r.name); err != nil {
			return false, nil, fmt.Errorf("replacing %s: %w", r.path, err)
		}
		keep = true
		return false, nil, r.syncDir()
	}
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil, nil // renamed away since the re-read: deleted, or in the middle of a save
	}
	if err != nil {
		return false, nil, fmt.Errorf("replacing %s: %w", r.path, err)
	}
	// tmp names the displaced file now: it must be the one the change was
	// based on, or someone saved between the re-read and the swap.
	if r.afterSwap != nil {
		r.afterSwap(tmpPath)
	}
	same, displaced, err := r.compareDisplaced(tmpPath, fi, base)
	if err == nil && same {
		if err := os.Remove(tmpPath); err != nil {
			return false, nil, fmt.Errorf("replacing %s: %w", r.path, err)
		}
		return false, nil, r.syncDir()
	}
	keep = true
	if err := r.swapFiles(r.dirfd, tmp, r.name); err != nil {
		saved := r.preserve(tmp)
		return false, nil, fmt.Errorf("%s: a save raced with this write and putting it back failed (%w): it is in %s", r.path, err, saved)
	}
	if err != nil {
		keep = false
		return false, nil, fmt.Errorf("checking the replaced %s: %w", r.path, err)
	}
	// tmp names our file again; a save into it while it had the name must
	// not be dropped with it.
	if ours, _, err := compareFile(tmpPath, want); err != nil || !ours {
		saved := r.preserve(tmp)
		return false, nil, fmt.Errorf("%s: two saves raced with this write; one is in %s, the other in %s: merge them by hand: %w", r.path, r.path, saved, ErrChanged)
	}
	keep = false
	return true, displaced, nil
}

// Prepared is a state file's new content written ahead: a temporary file
// beside it, synced, with its mode and owner, as Replace writes it before
// it checks the file, so that the caller can do other work while the data
// goes to disk. ReplaceWith (see ReplaceOptions) puts it in place or
// removes it; one never handed to it must be discarded.
type Prepared struct {
	path string
	data []byte
	tmp  string // the temporary file's name, beside path
	f    *os.File
	mode os.FileMode
}

// Prepare writes next for the file at path, as Replace would first write
// it, and returns it for ReplaceWith. The caller holds the write lock.
func Prepare(path string, next []byte) (*Prepared, error) {
	dir, name := splitPath(path)
	r := &replacer{seams: new(seams), path: path, dir: dir, name: name}
	return r.prepare(next)
}

// prepare writes data to a temporary file beside r's file, synced, with
// the mode and owner the new file takes: the first step of every attempt,
// and all of Prepare.
func (r *replacer) prepare(data []byte) (*Prepared, error) {
	mode, owner, err := r.targetMode()
	if err != nil {
		return nil, err
	}
	tmp, f, err := r.writeTemp(data, mode, owner)
	if err != nil {
		return nil, err
	}
	return &Prepared{path: r.path, data: data, tmp: tmp, f: f, mode: mode}, nil
}

// holds reports whether p was prepared for path with next itself (the
// same slice, not a copy, so that no comparison of the content is needed).
func (p *Prepared) holds(path string, next []byte) bool {
	return p.path == path && len(p.data) == len(next) && unsafe.SliceData(p.data) == unsafe.SliceData(next)
}

// Discard removes a prepared file that will not be put in place. A nil
// Prepared is left alone.
func (p *Prepared) Discard() {
	if p == nil {
		return
	}
	p.f.Close()
	os.Remove(p.f.Name())
}

// targetMode returns the mode and owner the new file takes: the current
// file's, or newMode for a file being created (owner nil).
func (r *replacer) targetMode() (os.FileMode, *syscall.Stat_t, error) {
	f, fi, err := openSafe(r.path)
	if errors.Is(err, fs.ErrNotExist) {
		return newMode, nil, nil
	}
	if err != nil {
		return 0, nil, err
	}
	f.Close()
	st, _ := fi.Sys().(*syscall.Stat_t)
	return fi.Mode(), st, nil
}

// writeTemp writes data to a new temporary file beside the target, synced,
// with the given mode and owner, and returns its name and open file.
func (r *replacer) writeTemp(data []byte, mode os.FileMode, owner *syscall.Stat_t) (string, *os.File, error) {
	var (
		name string
		f    *os.File
		err  error
	)
	for range 10 {
		name = "." + r.name + tempMarker + randomHex()
		f, err = os.OpenFile(filepath.Join(r.dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, newMode)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return "", nil, fmt.Errorf("writing %s: %w", r.path, err)
	}
	fail := func(err error) (string, *os.File, error) {
		f.Close()
		os.Remove(f.Name())
		return "", nil, fmt.Errorf("writing %s: %w", r.path, err)
	}
	if owner != nil {
		// Keep the owner where this process may (root may; others may
		// only pick one of their groups); otherwise the writer owns it.
		_ = f.Chown(int(owner.Uid), int(owner.Gid))
		if err := f.Chmod(mode); err != nil {
			return fail(err)
		}
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := os.Chtimes(f.Name(), time.Time{}, MarkWhole(time.Now(), int64(len(data)))); err != nil {
		return fail(err)
	}
	return name, f, nil
}

// check re-reads the target and reports whether it still holds base (nil:
// missing), and if not, what it holds. fi is the target's if it exists.
func (r *replacer) check(base []byte) (same bool, cur []byte, fi os.FileInfo, err error) {
	f, fi, err := openSafe(r.path)
	if errors.Is(err, fs.ErrNotExist) {
		return base == nil, nil, nil, nil
	}
	if err != nil {
		return false, nil, nil, err
	}
	defer f.Close()
	if base == nil {
		cur, err = readAll(f, fi.Size())
	} else {
		same, cur, err = readCompare(f, fi.Size(), base)
	}
	if err != nil {
		return false, nil, nil, fmt.Errorf("re-reading %s: %w", r.path, err)
	}
	return same, cur, fi, nil
}

// compareDisplaced is compareFile for the file the swap displaced, now at
// tmpPath, which should hold base. When it is the file that check read as
// base (checked) and the caller vouches that it has not changed since (see
// ReplaceOptions.Unchanged), it is not read again.
func (r *replacer) compareDisplaced(tmpPath string, checked os.FileInfo, base []byte) (bool, []byte, error) {
	if r.unchanged != nil && checked != nil {
		if fi, err := os.Lstat(tmpPath); err == nil && os.SameFile(fi, checked) && r.unchanged(fi) {
			return true, nil, nil
		}
	}
	return compareFile(tmpPath, base)
}

// preserve gives a temporary file that holds someone's save a visible name
// that Cleanup leaves alone, and returns its path.
func (r *replacer) preserve(tmp string) string {
	saved := savedName(filepath.Join(r.dir, r.name))
	if err := os.Rename(filepath.Join(r.dir, tmp), saved); err != nil {
		return filepath.Join(r.dir, tmp)
	}
	_ = r.syncDir()
	return saved
}

func (r *replacer) syncDir() error {
	if err := r.d.Sync(); err != nil {
		return fmt.Errorf("syncing directory of %s: %w", r.path, err)
	}
	return nil
}

// openSafe opens path for reading after checking that replacing it by
// rename is safe: a regular file with one link, not a symbolic link.
func openSafe(path string) (*os.File, os.FileInfo, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, nil, err
	}
	if err := checkFile(path, fi); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, nil, &UnsafeFileError{Path: path, Reason: reasonSymlink}
	}
	if err != nil {
		return nil, nil, err
	}
	if fi, err = f.Stat(); err == nil {
		err = checkFile(path, fi)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// compareFile reports whether the file at path holds exactly base, and if
// not, what it holds.
func compareFile(path string, base []byte) (bool, []byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, nil, err
	}
	return readCompare(f, fi.Size(), base)
}

// SameAs reports whether f, read from where it stands to its end, holds
// exactly want. It reads in pieces: a copy of the file is made only when
// they differ.
func SameAs(f *os.File, want []byte) (bool, error) {
	fi, err := f.Stat()
	if err != nil || fi.Size() != int64(len(want)) {
		return false, err
	}
	same, _, err := readCompare(f, fi.Size(), want)
	return same, err
}

// readCompare reads f to the end and reports whether it holds exactly base;
// if not, it returns what f holds. It allocates only when they differ.
func readCompare(f *os.File, size int64, base []byte) (same bool, data []byte, err error) {
	if size != int64(len(base)) {
		data, err = readAll(f, size)
		return err == nil && bytes.Equal(data, base), data, err
	}
	buf := make([]byte, 256<<10)
	off := 0
	for {
		n, rerr := io.ReadFull(f, buf)
		chunk := buf[:n]
		if off+n > len(base) || !bytes.Equal(chunk, base[off:off+n]) {
			rest, err := io.ReadAll(f)
			data = append(append(append(make([]byte, 0, off+n+len(rest)), base[:off]...), chunk...), rest...)
			return false, data, err
		}
		off += n
		switch {
		case rerr == io.EOF || rerr == io.ErrUnexpectedEOF:
			if off == len(base) {
				return true, nil, nil
			}
			return false, append([]byte{}, base[:off]...), nil
		case rerr != nil:
			return false, nil, rerr
		}
	}
}

// readAll reads f to the end; the result is non-nil even when empty.
func readAll(f *os.File, size int64) ([]byte, error) {
	data := make([]byte, 0, size+512)
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
	}
}

// Cleanup removes temporary files that Replace left in dir when it was
// killed: those older than a minute, and those still linked to their
// target. The caller holds the write lock.
func Cleanup(dir string) error { return new(seams).cleanupAll(dir) }

func (h *seams) cleanupAll(dir string) error {
	if err := h.cleanup(dir, ""); err != nil {
		return fmt.Errorf("cleaning up %s: %w", dir, err)
	}
	return nil
}

// cleanup removes stale temporary files of the file named only, or of all
// files if only is empty.
func (h *seams) cleanup(dir, only string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	now := h.timeNow()
	var errs []error
	for _, e := range entries {
		target, ok := tempTarget(e.Name())
		if !ok || only != "" && target != only {
			continue
		}
		p := filepath.Join(dir, e.Name())
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		stale := now.Sub(changeTime(fi)) > staleAge
		if tfi, err := os.Lstat(filepath.Join(dir, target)); err == nil && os.SameFile(fi, tfi) {
			stale = true // a link to the target left by a create without RENAME_NOREPLACE
		}
		if stale {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// linkNoReplace puts from in place at to unless to exists, for file systems
// without an atomic create-by-rename. A crash between the two calls leaves
// from linked to the file; Cleanup removes it.
func linkNoReplace(dirfd int, from, to string) error {
	if err := unix.Linkat(dirfd, from, dirfd, to, 0); err != nil {
		return err
	}
	return unix.Unlinkat(dirfd, from, 0)
}
