//go:build unix

package statefile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

var (
	// errUnsupported is returned by swap when the file system cannot exchange.
	errUnsupported = errors.New("not supported by the file system")
	// errWriting is returned by takeLease for a file open for writing.
	errWriting = errors.New("open for writing")
)

// Read returns the content of the state file at path, and whether the
// kernel vouched that no process had it open for writing while it was read
// (whole; see the package documentation). While a process has it open for
// writing, Read waits for it to close the file, up to wait (not at all if
// wait <= 0; then the file is read as it is, not whole), and fails with a
// *WritingError after that, or with ctx's error if ctx is done first.
// Where no lease can be taken the file is read as it is, not whole.
//
// Read refuses symbolic links, hard-linked and non-regular files with an
// *UnsafeFileError. A missing file yields an error satisfying
// errors.Is(err, fs.ErrNotExist); an empty one a non-nil empty slice.
func Read(ctx context.Context, path string, wait time.Duration) ([]byte, bool, error) {
	h, err := new(seams).hold(ctx, path, wait)
	if err != nil {
		return nil, false, err
	}
	if h == nil {
		return nil, false, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
	}
	defer h.close()
	return h.data, h.leased, nil
}

// ReadFile is Read without waiting, for commands that only read.
func ReadFile(path string) ([]byte, error) {
	b, _, err := Read(context.Background(), path, 0)
	return b, err
}

// Check refuses the file at path as Read and Replace refuse it (a symbolic
// link, a hard-linked or a non-regular file: an *UnsafeFileError) without
// reading it. A missing file yields an error satisfying
// errors.Is(err, fs.ErrNotExist).
func Check(path string) error {
	f, _, err := openSafe(path)
	if err != nil {
		return err
	}
	return f.Close()
}

// held is a state file open for reading, its content, and whether a read
// lease is held on it.
type held struct {
	f      *os.File
	fi     os.FileInfo
	data   []byte
	leased bool
}

func (h *held) close() {
	if h != nil {
		h.f.Close() // gives the lease up
	}
}

// broken reports whether a process opened the leased file for writing
// since the lease was taken: it is waiting for the lease to be given up.
func (h *held) broken() bool { return h.leased && leaseBroken(h.f) }

// hold opens the file at path, takes a read lease on it where one can be
// taken (waiting up to wait while a process has it open for writing), and
// reads it. A missing file yields nil and no error.
func (s *seams) hold(ctx context.Context, path string, wait time.Duration) (*held, error) {
	h, err := s.lease(ctx, path, wait)
	if h == nil || err != nil {
		return nil, err
	}
	if h.data, err = readAll(h.f, h.fi.Size()); err != nil {
		h.close()
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return h, nil
}

// lease is hold without the read.
func (s *seams) lease(ctx context.Context, path string, wait time.Duration) (*held, error) {
	by := time.Now().Add(wait)
	for poll := time.Millisecond; ; poll = min(2*poll, 25*time.Millisecond) {
		f, fi, err := openSafe(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		lerr := s.takeLease(f)
		if lerr != errWriting || wait <= 0 {
			return &held{f: f, fi: fi, leased: lerr == nil}, nil
		}
		f.Close()
		left := time.Until(by)
		if left <= 0 {
			return nil, &WritingError{File: path, Wait: wait}
		}
		if !sleep(ctx, min(poll, left)) {
			return nil, ctx.Err()
		}
	}
}

// Replace replaces the content of the file at path with next, following
// the protocol in the package documentation. The caller holds the write
// lock, read the file as orig (nil: it did not exist) and computed next
// from it.
//
// If the file holds something else by the time Replace reads it under its
// lease (someone saved since), rebase is called with what it holds and
// must return the change re-applied to it, or an error; Replace then
// writes rebase's result, or returns its error unchanged having written
// nothing. A nil rebase makes any change an ErrChanged. Replace writes
// nothing when the new content equals the file's.
//
// It returns the saves it kept beside the file (see SetAsideBeside): a
// save into the new file in the instant before Replace had to give the
// name back to an earlier save.
func Replace(ctx context.Context, path string, orig, next []byte, rebase func(current []byte) ([]byte, error)) ([]string, error) {
	return new(seams).replace(ctx, path, orig, next, rebase)
}

// WriteNew creates the file at path with data, durably, and fails with an
// error satisfying errors.Is(err, fs.ErrExist) if it exists, even if it
// appears while data is being written.
func WriteNew(path string, data []byte) error {
	_, err := new(seams).replace(context.Background(), path, nil, data, func([]byte) ([]byte, error) {
		return nil, &fs.PathError{Op: "create", Path: path, Err: fs.ErrExist}
	})
	return err
}

// seams are what tests replace to play a concurrent writer at the
// instants where one matters, and file systems that lack an operation. The
// zero value is the real thing.
type seams struct {
	beforeRead func()                                 // before each read of the file
	beforeSwap func()                                 // the new file is written; before the swap
	afterSwap  func(tmp string)                       // swapped; tmp names the displaced file
	swap       func(dirfd int, from, to string) error // nil: swap
	create     func(dirfd int, from, to string) error // nil: renameNoReplace
	now        func() time.Time                       // nil: time.Now
	leaseFn    func(*os.File) error                   // nil: takeLease
}

func (h *seams) takeLease(f *os.File) error {
	if h.leaseFn != nil {
		return h.leaseFn(f)
	}
	return takeLease(f)
}

func (h *seams) replace(ctx context.Context, path string, orig, next []byte, rebase func([]byte) ([]byte, error)) ([]string, error) {
	dir, name := splitPath(path)
	d, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("replacing %s: %w", path, err)
	}
	defer d.Close()
	r := &replacer{seams: h, path: path, dir: dir, name: name, d: d}
	_ = h.cleanup(dir, name) // best effort: leftovers cost only disk space

	var kept []string
	base, want := orig, next
	start := h.timeNow()
	more := func() bool { return h.timeNow().Sub(start) < keepRebasing }
	for i := 0; ; i++ {
		if h.beforeRead != nil {
			h.beforeRead()
		}
		cur, err := h.lease(ctx, path, WriterWait)
		if err != nil {
			return kept, err
		}
		if cur != nil {
			if cur.data, err = readSame(cur.f, cur.fi.Size(), base); err != nil {
				cur.close()
				return kept, fmt.Errorf("reading %s: %w", path, err)
			}
		}
		changed := cur == nil != (base == nil) || cur != nil && !sameSlice(cur.data, base)
		if changed && cur != nil && !cur.leased {
			// No lease says whether a save in place is going on: an empty
			// file is refused, and one still changing is waited for.
			if len(cur.data) == 0 && base != nil {
				cur.close()
				return kept, &EmptyFileError{File: path}
			}
			if more() && Changed(ctx, path, cur.data, settleQuiet) {
				cur.close()
				continue
			}
		}
		if changed {
			switch {
			case !more():
				err = fmt.Errorf("%s changed %d times in %s while being written: %w", path, i, keepRebasing, ErrChanged)
			case cur == nil && Changed(ctx, path, nil, WriterWait):
				continue // renamed away in the middle of a save: read the new file
			case cur == nil:
				err = fmt.Errorf("%s was %w", path, ErrDeleted)
			case rebase == nil:
				err = fmt.Errorf("%s: %w", path, ErrChanged)
			default:
				base = cur.data
				want, err = rebase(base)
			}
			if err != nil {
				cur.close()
				return kept, err
			}
		}
		if base != nil && bytes.Equal(base, want) {
			cur.close()
			return kept, nil
		}
		done, saved, err := r.swapIn(cur, base, want)
		cur.close()
		if saved != "" {
			kept = append(kept, saved)
		}
		if err != nil || done {
			return kept, err
		}
	}
}

type replacer struct {
	*seams
	path, dir, name string
	d               *os.File
}

func (r *replacer) dirfd() int { return int(r.d.Fd()) }

// swapIn puts want in place of cur, the file as Replace read it (nil:
// missing), which holds base. It reports done once want is in place; not
// done, having written nothing, when the file changed meanwhile or a
// process opened it for writing: then Replace reads it again. saved names
// a save it kept beside the file.
func (r *replacer) swapIn(cur *held, base, want []byte) (done bool, saved string, err error) {
	mode, owner := os.FileMode(newMode), (*syscall.Stat_t)(nil)
	if cur != nil {
		// Whoever may not write the file may not replace it either, even
		// where the directory would let them.
		switch err := unix.Access(r.path, unix.W_OK); {
		case errors.Is(err, unix.ENOENT):
			return false, "", nil // renamed away since the read: in the middle of a save
		case err != nil:
			return false, "", fmt.Errorf("replacing %s: %w", r.path, &fs.PathError{Op: "write", Path: r.path, Err: err})
		}
		mode = cur.fi.Mode()
		owner, _ = cur.fi.Sys().(*syscall.Stat_t)
	}
	tmp, ours, err := r.writeTemp(want, mode, owner)
	if err != nil {
		return false, "", err
	}
	tmpPath := filepath.Join(r.dir, tmp)
	defer func() { ours.close() }()
	if r.beforeSwap != nil {
		r.beforeSwap()
	}
	if cur == nil {
		err := r.createFile(r.dirfd(), tmp, r.name)
		if errors.Is(err, fs.ErrExist) {
			os.Remove(tmpPath)
			return false, "", nil // created meanwhile: read it
		}
		if err != nil {
			os.Remove(tmpPath)
			return false, "", fmt.Errorf("creating %s: %w", r.path, err)
		}
		return true, "", r.syncDir()
	}
	if cur.broken() {
		os.Remove(tmpPath)
		return false, "", nil // a save is about to begin: let it, then read it
	}
	err = r.swapFiles(r.dirfd(), tmp, r.name)
	switch {
	case errors.Is(err, errUnsupported):
		// No exchange on this file system: a plain rename, and a save
		// since the read is lost (see the package documentation).
		if err := unix.Renameat(r.dirfd(), tmp, r.dirfd(), r.name); err != nil {
			os.Remove(tmpPath)
			return false, "", fmt.Errorf("replacing %s: %w", r.path, err)
		}
		return true, "", r.syncDir()
	case errors.Is(err, fs.ErrNotExist):
		os.Remove(tmpPath)
		return false, "", nil // renamed away since the read: in the middle of a save
	case err != nil:
		os.Remove(tmpPath)
		return false, "", fmt.Errorf("replacing %s: %w", r.path, err)
	}
	// tmp names the displaced file now. It must be the file read, not
	// written to since; else someone saved between the read and the swap.
	if r.afterSwap != nil {
		r.afterSwap(tmpPath)
	}
	if r.untouched(tmpPath, cur, base) {
		if err := os.Remove(tmpPath); err != nil {
			return false, "", fmt.Errorf("replacing %s: %w", r.path, err)
		}
		return true, "", r.syncDir()
	}
	// Give the name back to their save, which goes on or is done.
	if err := r.swapFiles(r.dirfd(), tmp, r.name); err != nil {
		saved := r.keep(tmp)
		return false, "", fmt.Errorf("%s: a save raced with this write and putting it back failed (%w): it is in %s", r.path, err, saved)
	}
	// tmp names the new file again. A save that opened it while it had the
	// name goes on into it: it is kept, not dropped.
	if !ours.intact(tmpPath, want) {
		return false, r.keep(tmp), nil
	}
	return false, "", os.Remove(tmpPath)
}

// untouched reports whether the file at tmpPath is cur's file, and no
// process wrote to it since it was read: it held base, and it still does.
func (r *replacer) untouched(tmpPath string, cur *held, base []byte) bool {
	fi, err := os.Lstat(tmpPath)
	return err == nil && os.SameFile(fi, cur.fi) && cur.intact(tmpPath, base)
}

// intact reports whether nobody wrote to h's file, now at path, since it
// was opened: its lease did not break, or, without one, it still holds
// data.
func (h *held) intact(path string, data []byte) bool {
	if h.leased {
		return !h.broken()
	}
	same, _, err := compareFile(path, data)
	return err == nil && same
}

// writeTemp writes data to a new temporary file beside the target, synced,
// with the given mode and owner, and returns its name, open for reading
// under a read lease where one can be taken.
func (r *replacer) writeTemp(data []byte, mode os.FileMode, owner *syscall.Stat_t) (string, *held, error) {
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
	if owner != nil {
		// Keep the owner where this process may (root may; others may
		// only pick one of their groups); otherwise the writer owns it.
		_ = f.Chown(int(owner.Uid), int(owner.Gid))
	}
	err = f.Chmod(mode)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	var h *held
	if err == nil {
		h, err = r.lease(context.Background(), f.Name(), 0)
	}
	if err == nil && h == nil {
		err = errors.New("the file written beside it vanished")
	}
	if err != nil {
		os.Remove(f.Name())
		return "", nil, fmt.Errorf("writing %s: %w", r.path, err)
	}
	return name, h, nil
}

// keep gives a temporary file that holds someone's save a visible name
// that Cleanup leaves alone, "<name>.saved-<hex>", and returns its path.
func (r *replacer) keep(tmp string) string {
	saved := filepath.Join(r.dir, r.name+savedMark+randomHex())
	if err := os.Rename(filepath.Join(r.dir, tmp), saved); err != nil {
		return filepath.Join(r.dir, tmp)
	}
	_ = r.syncDir()
	return saved
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
	return openNoLink(path, os.O_RDONLY|nonBlock, 0)
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
	data, err := readAll(f, fi.Size())
	return err == nil && bytes.Equal(data, base), data, err
}

// readSame reads f, of the given size, and returns base itself if it holds
// exactly base: a file as large as a queue of thousands of issues is then
// compared in pieces, not copied.
func readSame(f *os.File, size int64, base []byte) ([]byte, error) {
	if base == nil || size != int64(len(base)) {
		return readAll(f, size)
	}
	buf := make([]byte, 256<<10)
	for off := 0; ; {
		n, err := f.ReadAt(buf, int64(off))
		if !bytes.Equal(buf[:n], base[off:min(off+n, len(base))]) || off+n > len(base) {
			return readAll(f, size)
		}
		off += n
		switch {
		case err == io.EOF && off == len(base):
			return base, nil
		case err == io.EOF:
			return readAll(f, size)
		case err != nil:
			return nil, err
		}
	}
}

// sameSlice reports whether a and b are the same bytes: b itself, or equal.
func sameSlice(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0] || bytes.Equal(a, b))
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
// from linked to the file; the next Replace of it removes it.
func linkNoReplace(dirfd int, from, to string) error {
	if err := unix.Linkat(dirfd, from, dirfd, to, 0); err != nil {
		return err
	}
	return unix.Unlinkat(dirfd, from, 0)
}
