//go:build linux

package statefile

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/autoretry/orchestrator/internal/testkit/fifotest"
)

// The tests here hold the write path to its promises where something goes
// wrong: a disk that refuses a write, a directory or file this process may
// not write, a file system call that fails, an editor caught half-way
// through a save. Each checks that no data is lost, nothing is written on a
// refusal, the error names the file, locks are released and no temporary
// file is left.

// nobody is the user the permission tests act as when they run as root.
const nobody = 65534

// asNobody runs fn with the file-system identity (fsuid, fsgid) of an
// ordinary user, so that permission bits stop it as they stop a person's
// process. Run as root, it changes the identity of this goroutine's thread
// only (setfsuid is per thread, and the thread is locked to the goroutine),
// so fn's file operations must stay on this goroutine. Not run as root, fn
// runs as this user.
func asNobody(t *testing.T, fn func()) {
	t.Helper()
	if os.Geteuid() != 0 {
		fn()
		return
	}
	runtime.LockOSThread()
	prevGID, _ := unix.SetfsgidRetGid(nobody)
	prevUID, _ := unix.SetfsuidRetUid(nobody)
	defer func() {
		unix.Setfsuid(prevUID)
		unix.Setfsgid(prevGID)
		// -1 changes nothing and returns the current fsuid. A thread whose
		// identity could not be put back stays locked: it ends with the
		// goroutine.
		uid, _ := unix.SetfsuidRetUid(-1)
		gid, _ := unix.SetfsgidRetGid(-1)
		if uid == prevUID && gid == prevGID {
			runtime.UnlockOSThread()
		}
	}()
	if cur, _ := unix.SetfsuidRetUid(-1); cur != nobody {
		t.Skipf("cannot take the file-system identity of uid %d (fsuid is %d)", nobody, cur)
	}
	fn()
}

// asRealNobody runs fn with the real uid of an ordinary user, which is the
// identity access(2) checks; the effective uid, and every other check, stay
// root's. Not run as root, fn runs as this user. The real uid is the
// process's: no other test runs meanwhile.
func asRealNobody(t *testing.T, fn func()) {
	t.Helper()
	if os.Geteuid() != 0 {
		fn()
		return
	}
	if err := syscall.Setresuid(nobody, -1, -1); err != nil {
		t.Skipf("cannot set the real uid: %v", err)
	}
	defer func() {
		if err := syscall.Setresuid(0, -1, -1); err != nil {
			panic("cannot restore the real uid: " + err.Error()) // the rest of the tests would be wrong
		}
	}()
	fn()
}

// openToAll lets any user reach dir, a new t.TempDir (whose parent is
// private), and read it.
func openToAll(t *testing.T, dir string) {
	t.Helper()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// giveToNobody makes the ordinary user own path when running as root,
// whose checks asNobody and asRealNobody then play; not as root, path is
// this user's already. Where that user cannot be given files, the test is
// skipped.
func giveToNobody(t *testing.T, path string) {
	t.Helper()
	if os.Geteuid() != 0 {
		return
	}
	if err := os.Chown(path, nobody, nobody); err != nil {
		t.Skipf("cannot give %s to uid %d: %v", path, nobody, err)
	}
}

// withFileSizeLimit runs fn with RLIMIT_FSIZE set to limit bytes: a write
// beyond it fails with EFBIG, as a write to a full disk fails with ENOSPC
// (Go ignores the SIGXFSZ that comes with it). The limit is the process's:
// no other test runs meanwhile, and fn writes nothing but what it tests.
func withFileSizeLimit(t *testing.T, limit uint64, fn func()) {
	t.Helper()
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	lim := old
	lim.Cur = limit
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Skipf("cannot limit the file size: %v", err)
	}
	defer func() {
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
			panic("cannot restore RLIMIT_FSIZE: " + err.Error())
		}
	}()
	fn()
}

// openDescriptors counts this process's open descriptors of the file at
// path: a lock refused must not leave one open.
func openDescriptors(t *testing.T, path string) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot list open descriptors: %v", err)
	}
	n := 0
	for _, e := range entries {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && target == path {
			n++
		}
	}
	return n
}

// noLease makes a seams without leases, as for another user's file.
func noLease() *seams {
	return &seams{leaseFn: func(*os.File) error { return errNoLeaseHere }}
}

// wantErrNaming fails the test unless err is a target error and its
// message names path.
func wantErrNaming(t *testing.T, err, target error, path string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("got %v, want %v", err, target)
	}
	if !strings.Contains(err.Error(), path) {
		t.Errorf("the error %q does not name %s", err, path)
	}
}

// A disk that refuses the new content (full, or over a size limit) leaves
// the state file as it was and no temporary file, and says which file and
// that failure alone, not a written file that vanished.
func TestReplaceWriteFailureLeavesFileAndNoTemp(t *testing.T) {
	dir, path := queueFile(t)
	var err error
	withFileSizeLimit(t, 0, func() {
		_, err = Replace(context.Background(), path, orig, next, nil)
	})
	wantErrNaming(t, err, syscall.EFBIG, path)
	if strings.Contains(err.Error(), "vanished") {
		t.Errorf("got %q; want the write's failure alone", err)
	}
	assertContent(t, path, orig)
	assertOnly(t, dir, "issue_queue.md")
}

// A lock whose holder cannot be recorded in .lock (a full disk) is not
// taken: the error names .lock, and the lock, with the run lock's lock on
// the directory, is free at once for the next command.
func TestLockNotRecordedIsReleased(t *testing.T) {
	for _, kind := range []string{"run", "write"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			take := func() (*Lock, error) {
				if kind == "run" {
					return TryRunLock(dir, Owner{Command: "run"})
				}
				return LockWrite(context.Background(), dir, 0, Owner{Command: "fail"})
			}
			var (
				l   *Lock
				err error
			)
			withFileSizeLimit(t, 0, func() { l, err = take() })
			if l != nil {
				l.Unlock()
				t.Fatal("got a lock whose holder was not recorded")
			}
			wantErrNaming(t, err, syscall.EFBIG, filepath.Join(dir, LockFile))
			if n := openDescriptors(t, filepath.Join(dir, LockFile)); n != 0 {
				t.Errorf("%d descriptors of .lock left open", n)
			}
			held := WriteHolder
			if kind == "run" {
				held = RunHolder
			}
			if _, h, err := held(dir); err != nil || h {
				t.Errorf("after the failure the %s lock is held %v (%v); want free", kind, h, err)
			}
			l, err = take()
			if err != nil {
				t.Fatalf("the next %s lock: %v", kind, err)
			}
			l.Unlock()
		})
	}
}

// A process that may not write the file may not replace it either, even
// where the directory would let it: refused, naming the file, nothing
// written and no temporary file left.
func TestReplaceRefusesFileItMayNotWrite(t *testing.T) {
	dir, path := queueFile(t)
	openToAll(t, dir)
	// The file is the ordinary user's, who could write it but for its
	// mode: the mode alone makes the refusal.
	giveToNobody(t, path)
	if err := os.Chmod(path, 0o444); err != nil {
		t.Fatal(err)
	}
	var err error
	asRealNobody(t, func() {
		_, err = Replace(context.Background(), path, orig, next, nil)
	})
	wantErrNaming(t, err, fs.ErrPermission, path)
	assertContent(t, path, orig)
	assertOnly(t, dir, "issue_queue.md")
}

// A directory this process may not write: every write fails with a
// permission error, the files in it are as they were, and nothing is
// created.
func TestWritesInADirectoryItMayNotWrite(t *testing.T) {
	dir, path := queueFile(t)
	openToAll(t, dir)
	if os.Geteuid() != 0 {
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(dir, 0o755) })
	}
	newPath := filepath.Join(dir, "session_state.md")
	var replaceErr, newErr, atomicErr error
	asNobody(t, func() {
		_, replaceErr = Replace(context.Background(), path, orig, next, nil)
		newErr = WriteNew(newPath, next)
		atomicErr = WriteAtomic(filepath.Join(dir, "report.html"), func(w io.Writer) error {
			_, err := io.WriteString(w, "report\n")
			return err
		})
	})
	wantErrNaming(t, replaceErr, fs.ErrPermission, path)
	wantErrNaming(t, newErr, fs.ErrPermission, newPath)
	wantErrNaming(t, atomicErr, fs.ErrPermission, dir)
	assertContent(t, path, orig)
	assertOnly(t, dir, "issue_queue.md")
}

// A run lock that cannot lock the directory as well is not left held: the
// error names the directory, and the next run takes the lock.
func TestRunLockReleasedWhenDirectoryCannotBeLocked(t *testing.T) {
	dir := t.TempDir()
	openToAll(t, dir)
	giveToNobody(t, dir)
	// Write and search but no read: .lock can be made, the directory not
	// opened.
	if err := os.Chmod(dir, 0o300); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	var (
		l   *Lock
		err error
	)
	asNobody(t, func() { l, err = TryRunLock(dir, Owner{Command: "run"}) })
	if l != nil {
		l.Unlock()
		t.Fatal("got a run lock without the directory's lock")
	}
	wantErrNaming(t, err, fs.ErrPermission, "locking "+dir)
	if n := openDescriptors(t, filepath.Join(dir, LockFile)); n != 0 {
		t.Errorf("%d descriptors of .lock left open", n)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	assertRunLockFree(t, dir, "after a run failed to lock the directory")
}

// A state file in a directory that does not exist is reported as missing,
// not as deleted by someone, and the directory is not made.
func TestWritesInAMissingDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "missing")
	path := filepath.Join(dir, "issue_queue.md")
	_, err := Replace(context.Background(), path, orig, next, nil)
	wantErrNaming(t, err, fs.ErrNotExist, path)
	if errors.Is(err, ErrChanged) {
		t.Errorf("got %v; a missing directory is not a file deleted meanwhile", err)
	}
	wantErrNaming(t, WriteNew(path, next), fs.ErrNotExist, path)
	err = WriteAtomic(filepath.Join(dir, "report.html"), func(io.Writer) error { return nil })
	wantErrNaming(t, err, fs.ErrNotExist, dir)
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the directory was made: %v", err)
	}
}

// Where no lease says whether a save in place is going on, an empty file
// that changed since the caller read it is refused, with nothing written:
// it may be an editor's save that has truncated and not yet written.
func TestEmptyFileWithoutALeaseIsRefused(t *testing.T) {
	dir, path := queueFile(t)
	h := noLease()
	h.beforeRead = once(func() { saveInPlace(t, path, nil) })
	rebase := func([]byte) ([]byte, error) { return next, nil } // would write
	_, err := h.replace(context.Background(), path, orig, next, rebase)
	var empty *EmptyFileError
	if !errors.As(err, &empty) {
		t.Fatalf("got %v, want an *EmptyFileError", err)
	}
	if msg := err.Error(); !strings.Contains(msg, path) || !strings.Contains(msg, "nothing was written") {
		t.Errorf("message %q: want it to name the file and say nothing was written", msg)
	}
	assertContent(t, path, []byte{})
	assertOnly(t, dir, "issue_queue.md")
}

// Where no lease says whether a save is going on, a file read while it was
// still changing is read again: the change is rebased onto the finished
// save only, never onto what the save had written so far.
func TestFileStillChangingWithoutALeaseIsReadAgain(t *testing.T) {
	dir, path := queueFile(t)
	half := []byte("a: 9\n") // a save in place, half written
	h := noLease()
	h.beforeRead = once(func() { saveInPlace(t, path, half) })
	// Once the half-written file is open, the save completes (by rename):
	// what Replace reads is already out of date.
	finish := once(func() { saveByRename(t, path, theirs) })
	h.leaseFn = func(*os.File) error { finish(); return errNoLeaseHere }
	replaceRebasedOntoTheirs(t, h, dir, path)
}

// An editor that renames the file away to save it, caught after Replace
// read it but before Replace looked whether it may write it or exchanged
// it, is waited for: the change is rebased onto its save, nothing is lost
// and no temporary file is left.
func TestRenamedAwayAfterTheRead(t *testing.T) {
	for _, when := range []string{"before the access check", "before swap"} {
		t.Run(when, func(t *testing.T) {
			dir, path := queueFile(t)
			backup := path + "~"
			renameAway := once(func() {
				if err := os.Rename(path, backup); err != nil {
					t.Fatal(err)
				}
			})
			h := new(seams)
			if when == "before swap" {
				h.beforeSwap = renameAway
			} else {
				h.leaseFn = func(f *os.File) error { renameAway(); return takeLease(f) }
			}
			reads := 0
			h.beforeRead = func() {
				if reads++; reads == 2 { // the editor finishes its save
					writeFile(t, path, theirs)
					if err := os.Remove(backup); err != nil {
						t.Fatal(err)
					}
				}
			}
			replaceRebasedOntoTheirs(t, h, dir, path)
			if reads != 2 {
				t.Errorf("the file was read %d times, want 2", reads)
			}
		})
	}
}

// A failing exchange, create or rename leaves the state file as it was,
// no temporary file, and an error naming the file.
func TestFailedRenamesLeaveNoTemp(t *testing.T) {
	eio := func(int, string, string) error { return syscall.EIO }
	t.Run("exchange", func(t *testing.T) {
		dir, path := queueFile(t)
		h := &seams{swap: eio}
		_, err := h.replace(context.Background(), path, orig, next, nil)
		wantErrNaming(t, err, syscall.EIO, path)
		assertContent(t, path, orig)
		assertOnly(t, dir, "issue_queue.md")
	})
	t.Run("create", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "issue_queue.md")
		h := &seams{create: eio}
		_, err := h.replace(context.Background(), path, nil, next, nil)
		wantErrNaming(t, err, syscall.EIO, path)
		assertOnly(t, dir)
	})
	// Without RENAME_EXCHANGE, a plain rename that fails: here the file
	// was replaced by a directory (with a file in it) meanwhile.
	t.Run("rename", func(t *testing.T) {
		dir, path := queueFile(t)
		h := &seams{swap: func(int, string, string) error {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			makeDir(t, path)
			writeFile(t, filepath.Join(path, "notes.md"), theirs)
			return errUnsupported
		}}
		_, err := h.replace(context.Background(), path, orig, next, nil)
		wantErrNaming(t, err, syscall.EISDIR, path)
		assertContent(t, filepath.Join(path, "notes.md"), theirs)
		assertOnly(t, dir, "issue_queue.md")
	})
}

// A save that raced with the exchange, when giving the name back to it
// fails, is kept beside the file under a name SetAsideBeside finds (not
// under the temporary name, which a later Replace removes), and the error
// says where it is.
func TestSaveKeptWhenExchangeBackFails(t *testing.T) {
	dir, path := queueFile(t)
	h := noLease()
	h.afterSwap = func(displaced string) {
		h.afterSwap = nil
		saveInPlace(t, displaced, theirs)
	}
	swaps := 0
	h.swap = func(dirfd int, from, to string) error {
		if swaps++; swaps == 2 {
			return syscall.EIO
		}
		return swap(dirfd, from, to)
	}
	_, err := h.replace(context.Background(), path, orig, next, rebaseB(new([][]byte)))
	wantErrNaming(t, err, syscall.EIO, path)
	saved := SetAsideBeside(path)
	if len(saved) != 1 {
		t.Fatalf("kept %q beside the file, want the save", saved)
	}
	assertContent(t, saved[0], theirs)
	if !strings.Contains(err.Error(), saved[0]) {
		t.Errorf("the error %q does not say the save is in %s", err, saved[0])
	}
	assertContent(t, path, next)
	assertOnly(t, dir, "issue_queue.md", filepath.Base(saved[0]))
}

// Replace's clean-up removes its own temporary files only: a directory or
// a symbolic link that merely has such a name stays.
func TestCleanupLeavesWhatIsNotAFile(t *testing.T) {
	dir, path := queueFile(t)
	const (
		asDir  = ".issue_queue.md.tmp-aaaaaaaaaaaaaaaa"
		asLink = ".issue_queue.md.tmp-bbbbbbbbbbbbbbbb"
	)
	makeDir(t, filepath.Join(dir, asDir))
	makeSymlink(t, "issue_queue.md", filepath.Join(dir, asLink))
	later := time.Now().Add(staleAge + time.Minute)
	h := &seams{now: func() time.Time { return later }}
	if _, err := h.replace(context.Background(), path, orig, next, nil); err != nil {
		t.Fatal(err)
	}
	assertContent(t, path, next)
	assertOnly(t, dir, "issue_queue.md", asDir, asLink)
}

// A temporary file is stale a minute after it got its name, whatever its
// modification time says: the file an exchange displaced keeps the old
// file's time, and may hold a save that raced with it.
func TestCleanupGoesByChangeTime(t *testing.T) {
	dir, path := queueFile(t)
	const displaced = ".issue_queue.md.tmp-0123456789abcdef"
	tmp := filepath.Join(dir, displaced)
	writeFile(t, tmp, theirs)
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(tmp, old, old); err != nil { // the inode changes now
		t.Fatal(err)
	}
	now := time.Now()
	h := &seams{now: func() time.Time { return now }}
	if _, err := h.replace(context.Background(), path, orig, next, nil); err != nil {
		t.Fatal(err)
	}
	assertContent(t, tmp, theirs)
	now = now.Add(staleAge + time.Second)
	if _, err := h.replace(context.Background(), path, next, orig, nil); err != nil {
		t.Fatal(err)
	}
	assertOnly(t, dir, "issue_queue.md")
}

// A file that shrank between its size was taken and its read (a save in
// place truncating it) is not taken for what the caller read.
func TestReadSameTruncatedFile(t *testing.T) {
	_, path := queueFile(t)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.Truncate(path, 4); err != nil {
		t.Fatal(err)
	}
	got, err := readSame(f, int64(len(orig)), orig)
	if err != nil || !bytes.Equal(got, orig[:4]) {
		t.Errorf("readSame = %q, %v; want %q", got, err, orig[:4])
	}
}

// changedWithin runs Changed, failing the test if it does not return
// within 30 s (its wait is far longer: it must return on its own account).
func changedWithin(t *testing.T, ctx context.Context, path string, seen []byte, wait time.Duration) bool {
	t.Helper()
	res := make(chan bool, 1)
	go func() { res <- Changed(ctx, path, seen, wait) }()
	select {
	case r := <-res:
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("Changed did not return")
		return false
	}
}

// Changed answers at once when the answer is known: the file already
// differs, its directory cannot be watched, or the caller gave up.
func TestChangedAnswersAtOnce(t *testing.T) {
	_, path := queueFile(t)
	if !changedWithin(t, context.Background(), path, theirs, time.Hour) {
		t.Error("a file that already differs: Changed = false")
	}
	missing := filepath.Join(t.TempDir(), "missing", "issue_queue.md")
	if changedWithin(t, context.Background(), missing, nil, time.Hour) {
		t.Error("a file missing, as seen, in a missing directory: Changed = true")
	}
	if !changedWithin(t, context.Background(), missing, orig, time.Hour) {
		t.Error("a file seen, now in a missing directory: Changed = false")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if changedWithin(t, ctx, path, orig, time.Hour) {
		t.Error("an interrupted wait for an unchanged file: Changed = true")
	}
}

// Check accepts a regular file of one link: it refuses only what Read and
// Replace refuse.
func TestCheckAcceptsAPlainFile(t *testing.T) {
	_, path := queueFile(t)
	if err := Check(path); err != nil {
		t.Errorf("Check = %v, want nil", err)
	}
}

// A Read that gave up on a writer says which file and that nothing was
// written.
func TestWritingErrorMessage(t *testing.T) {
	_, path := queueFile(t)
	w, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	_, _, err = Read(context.Background(), path, 10*time.Millisecond)
	var we *WritingError
	if !errors.As(err, &we) {
		t.Fatalf("got %v, want a *WritingError", err)
	}
	if msg := err.Error(); !strings.Contains(msg, path) || !strings.Contains(msg, "10ms") || !strings.Contains(msg, "nothing was written") {
		t.Errorf("message %q: want the file, the wait and that nothing was written", msg)
	}
}

// The write lock, like the run lock, is never taken through a symbolic
// link planted as .lock: nothing is written where it points.
func TestLockWriteRefusesALinkedLockFile(t *testing.T) {
	for _, dangling := range []bool{false, true} {
		dir, elsewhere := t.TempDir(), t.TempDir()
		outside := filepath.Join(elsewhere, "outside.txt")
		if !dangling {
			writeFile(t, outside, orig)
		}
		makeSymlink(t, outside, filepath.Join(dir, LockFile))
		l, err := LockWrite(context.Background(), dir, time.Second, Owner{Command: "fail"})
		if l != nil {
			l.Unlock()
		}
		var unsafe *UnsafeFileError
		if !errors.As(err, &unsafe) {
			t.Fatalf("dangling=%v: got %v, want an *UnsafeFileError", dangling, err)
		}
		if dangling {
			if _, err := os.Lstat(outside); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a file was made through the dangling link: %v", err)
			}
		} else {
			assertContent(t, outside, orig)
		}
	}
}

// A .lock that taking a lock refuses (here a link, to itself) makes
// RunHolder fail with the same refusal, naming it, rather than report the
// lock free.
func TestHolderOfAnUnopenableLockFile(t *testing.T) {
	dir := t.TempDir()
	makeSymlink(t, LockFile, filepath.Join(dir, LockFile)) // a loop
	_, held, err := RunHolder(dir)
	var unsafe *UnsafeFileError
	if !errors.As(err, &unsafe) || !strings.Contains(err.Error(), filepath.Join(dir, LockFile)) {
		t.Errorf("RunHolder: %v; want an *UnsafeFileError naming .lock", err)
	}
	if held {
		t.Error("held = true")
	}
}

// Lines in .lock that are not an owner's, whole, name no holder.
func TestOwnerLineForeign(t *testing.T) {
	for _, bad := range []string{
		"run pid=12 since=2026-11-22T10:15:00Z torn",
		"run since=2026-11-22T10:15:00Z cmd=run",
		"run pid=12 cmd=run id=x",
	} {
		if o, ok := parseOwner([]byte(bad), runLock); ok {
			t.Errorf("parseOwner(%q) = %+v, want not ok", bad, o)
		}
	}
}

// TestHolderOfAFIFOLockFile proves: a .lock that is a FIFO, which taking a
// lock refuses as not a regular file, is refused by RunHolder too, at once:
// an open of it would wait for a writer for ever, and every command that
// asks who holds the lock with it.
func TestHolderOfAFIFOLockFile(t *testing.T) {
	dir := t.TempDir()
	err := fifotest.Run(t, filepath.Join(dir, LockFile), func() error { _, _, err := RunHolder(dir); return err })
	var unsafe *UnsafeFileError
	if !errors.As(err, &unsafe) {
		t.Errorf("RunHolder of a FIFO .lock: %v; want an *UnsafeFileError", err)
	}
}
