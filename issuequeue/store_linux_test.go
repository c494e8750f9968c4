package issuequeue

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/statefile"
	"github.com/autoretry/orchestrator/internal/testkit/fifotest"
)

// skipWithoutLeases skips the test where no lease can be taken on the
// file at path.
func skipWithoutLeases(t *testing.T, path string) {
	t.Helper()
	if _, whole, err := statefile.Read(context.Background(), path, 0); err != nil || !whole {
		t.Skip("no leases here (another user's file or a network file system)")
	}
}

// openForWriting opens the file at path for writing, as an editor that has
// not finished its save holds it, with its modification time an hour ago:
// long enough ago that a save would have ended. It skips the test where no
// lease can be taken.
func openForWriting(t *testing.T, path string) *os.File {
	t.Helper()
	skipWithoutLeases(t, path)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	return f
}

// An editor that truncated the file and then stalled (a loaded machine, a
// stopped process) leaves it empty for longer than a save takes, and still
// has it open for writing. Where a lease can tell, that is a save going
// on: a change waits for it to end and is made on what it saved, not on
// the empty file.
func TestStalledSaveIsASaveGoingOn(t *testing.T) {
	s := newIntentStore(t)
	write(t, s.Queue(), "")
	editor := openForWriting(t, s.Queue())
	done := make(chan error, 1)
	go func() { done <- s.Update(t.Context(), retryChange) }()
	if _, err := editor.Write([]byte(intentQueue)); err != nil {
		t.Fatal(err)
	}
	editor.Close()
	if err := <-done; err != nil {
		t.Fatalf("Update: %v, want the change made on the editor's save", err)
	}
	if q := read(t, s.Queue()); !strings.Contains(q, "| Retry-Count | 3 |") || !strings.Contains(q, "Flaky test") {
		t.Errorf("the change was not made on the whole save:\n%s", q)
	}
}

// A process that keeps a state file open for writing without writing (a
// shell's "exec 3>>issue_queue.md", a stalled editor) never lets a change
// be made safely: what it writes later would go into the replaced file.
// Update waits for it up to its budget and then refuses with a
// *statefile.WritingError, having written nothing; it does not spin.
func TestUpdateRefusesAFileHeldOpenForWriting(t *testing.T) {
	t.Parallel() // it waits out budgets: the others wait meanwhile
	for _, file := range []string{QueueFile, StateFile} {
		t.Run(file, func(t *testing.T) {
			t.Parallel()
			s := newIntentStore(t)
			queue, state := read(t, s.Queue()), read(t, s.State())
			openForWriting(t, filepath.Join(s.Dir, file))
			done := make(chan error, 1)
			start := time.Now()
			go func() { done <- s.Update(t.Context(), retryChange) }()
			select {
			case err := <-done:
				var se *statefile.WritingError
				if !errors.As(err, &se) || se.File != filepath.Join(s.Dir, file) {
					t.Errorf("Update: %v, want a *statefile.WritingError for %s", err, file)
				}
				if took := time.Since(start); took < SettleTime {
					t.Errorf("Update refused after %v, before its budget of %v was spent", took, SettleTime)
				}
			case <-time.After(10 * SettleTime):
				t.Fatalf("Update did not return within %v of a budget of %v", 10*SettleTime, SettleTime)
			}
			wroteNothing(t, s, queue, state)
		})
	}
}

// wroteNothing checks that the queue and the state of s still hold queue
// and state, and that no intent record is left.
func wroteNothing(t *testing.T, s *Store, queue, state string) {
	t.Helper()
	if read(t, s.Queue()) != queue || read(t, s.State()) != state {
		t.Error("Update wrote a file, refused or interrupted")
	}
	if _, err := os.Stat(s.Intent()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an intent record was left behind: %v", err)
	}
}

// A change of the queue and the state that cannot write the state once the
// queue is written (a save of the state that does not end) is half made:
// it says so, and not "nothing was written", so that no one runs it again;
// the next command completes it, once.
func TestUpdateStoppedAfterItsFirstWriteSaysSo(t *testing.T) {
	t.Parallel() // it waits out budgets: the others wait meanwhile
	s := newIntentStore(t)
	var holder *os.File
	s.betweenWrites = func() error {
		holder = openForWriting(t, s.State())
		return nil
	}
	start := time.Now()
	err := s.Update(t.Context(), retryChange)
	var ue *UnfinishedError
	if !errors.As(err, &ue) {
		t.Fatalf("Update: %v, want an *UnfinishedError", err)
	}
	if strings.Contains(err.Error(), "nothing was written") {
		t.Errorf("Update says nothing was written, after writing the queue: %v", err)
	}
	if took := time.Since(start); took < SettleTime {
		t.Errorf("the state's save was given up after %v, before the %v the rest of a change gets", took, SettleTime)
	}
	if !strings.Contains(read(t, s.Queue()), "| Retry-Count | 3 |") {
		t.Fatal("the queue was not written first")
	}
	holder.Close()
	s.betweenWrites = nil
	mustRecover(t, s)
	if q := read(t, s.Queue()); !strings.Contains(q, "| Retry-Count | 3 |") || strings.Count(q, "| 2 | bang |") != 1 {
		t.Errorf("the queue after the change was completed:\n%s", q)
	}
	if st := read(t, s.State()); !strings.Contains(st, "| total_auto_retries | 3 |") {
		t.Errorf("the state was not completed:\n%s", st)
	}
}

// A command interrupted while it waits for a save to end stops: it gives
// the interruption, not a verdict on half a file (a queue that does not
// parse yet), and writes nothing.
func TestUpdateInterruptedWhileWaiting(t *testing.T) {
	t.Parallel() // it waits out budgets: the others wait meanwhile
	for name, queue := range map[string]string{"whole": intentQueue, "half written": intentQueue + "| Summary | caf\xc3"} {
		t.Run(name, func(t *testing.T) {
			s := newIntentStore(t)
			write(t, s.Queue(), queue)
			openForWriting(t, s.Queue())
			ctx, cancel := context.WithTimeout(t.Context(), SettleTime/20)
			defer cancel()
			start := time.Now()
			err := s.Update(ctx, retryChange)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Update: %v, want the context's end", err)
			}
			if took := time.Since(start); took >= SettleTime {
				t.Errorf("Update went on for %v after it was interrupted", took)
			}
			wroteNothing(t, s, queue, intentState)
		})
	}
}

// Where no lease can tell whether an editor has the queue open for writing
// (here: another user's file), an empty queue may be a save in place that
// truncated the file and stalled before writing: a change built on it
// would replace the file, and what the editor then writes would go into
// the replaced file and be lost with the whole queue. A command refuses
// it, writing nothing. Root acts as another user, in a process of its own.
func TestEmptyFileWithoutALeaseIsRefused(t *testing.T) {
	dir := noLeaseDir(t)
	write(t, filepath.Join(dir, QueueFile), "")
	old := time.Now().Add(-time.Hour) // long past any wait for quiet
	if err := os.Chtimes(filepath.Join(dir, QueueFile), old, old); err != nil {
		t.Fatal(err)
	}
	if out := asNobody(t, dir, "empty"); !strings.Contains(out, "(empty file: true)") {
		t.Errorf("an empty queue another user owns was not refused as empty:\n%s", out)
	}
	if q := read(t, filepath.Join(dir, QueueFile)); q != "" {
		t.Errorf("the empty queue was written:\n%s", q)
	}
}

// A change a killed command left half done that cannot be completed now
// (someone keeps the state file open for writing) is named as such: the
// command that found it wrote nothing of its own, and it does not claim
// that nothing of the killed command's change was written. Once the file
// is let go of, the next command completes the change.
func TestRecoveryHeldUpSaysWhatItIs(t *testing.T) {
	t.Parallel() // it waits out budgets: the others wait meanwhile
	s := newIntentStore(t)
	interrupted(t, s, retryChange)
	holder := openForWriting(t, s.State())
	err := s.recoverNow(t.Context())
	var re *RecoveryError
	var se *statefile.WritingError
	if !errors.As(err, &re) || !errors.As(err, &se) {
		t.Fatalf("recoverNow: %v, want a *RecoveryError of a *statefile.WritingError", err)
	}
	if strings.Contains(err.Error(), "nothing was written") {
		t.Errorf("Recover says nothing was written, with the killed command's queue written: %v", err)
	}
	holder.Close()
	mustRecover(t, s)
	if st := read(t, s.State()); !strings.Contains(st, "| total_auto_retries | 3 |") {
		t.Errorf("the state was not completed:\n%s", st)
	}
}

// TestLoadRefusesAFIFO proves: a queue that is a FIFO, which a plain read
// waits on until something writes to it, makes Load fail at once with an
// error naming it, so that status and lint say what is wrong instead of
// hanging.
func TestLoadRefusesAFIFO(t *testing.T) {
	p := Paths{Dir: t.TempDir()}
	err := fifotest.Run(t, p.Queue(), func() error { _, _, err := p.Load(); return err })
	var unsafe *statefile.UnsafeFileError
	if !errors.As(err, &unsafe) || !strings.Contains(err.Error(), p.Queue()) {
		t.Errorf("Load of a FIFO queue: %v; want an *UnsafeFileError naming it", err)
	}
}
