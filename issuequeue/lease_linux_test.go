package issuequeue

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/internal/statefile"
)

// A file being saved in place whose modification time carries the tool's
// mark by chance (one in a thousand do) is still seen as being saved where
// a lease can tell: the lease, not the mark, is the answer.
func TestLeaseOutranksAChanceMark(t *testing.T) {
	path := filepath.Join(t.TempDir(), QueueFile)
	half := []byte("# Issue Queue\n\n## ISSUE-20261126-001: half a sa")
	if err := os.WriteFile(path, half, 0o644); err != nil {
		t.Fatal(err)
	}
	// The editor still has the file open for writing.
	editor, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer editor.Close()
	now := time.Now()
	marked := statefile.MarkWhole(now, int64(len(half)))
	if err := os.Chtimes(path, marked, marked); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !statefile.WrittenWhole(fi) {
		t.Skip("this file system does not keep the mark (times coarser than a nanosecond)")
	}
	switch writers(path) {
	case leaseUnknown:
		t.Skip("no leases here (another user's file or a network file system)")
	case leaseIdle:
		t.Fatal("a lease was granted on a file open for writing")
	}
	s := newSettler()
	if !s.busy(path, half) {
		t.Error("busy: a file open for writing, changed a moment ago, counts as settled because of a chance mark")
	}
	// wait must not take the half save as final either: it waits until the
	// budget is spent, or the save ends. Here the save ends.
	done := make(chan bool)
	go func() { done <- s.wait(t.Context(), path, half) }()
	if _, err := editor.WriteAt([]byte("ve\n"), int64(len(half))); err != nil {
		t.Fatal(err)
	}
	editor.Close()
	if !<-done {
		t.Error("wait took the half save as final")
	}
}

// skipWithoutLeases skips the test where no lease can be taken on the
// file at path.
func skipWithoutLeases(t *testing.T, path string) {
	t.Helper()
	if writers(path) == leaseUnknown {
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
// stopped process) leaves it empty and unchanged for longer than a save
// takes, and still has it open for writing. Where a lease can tell, that
// is a save going on, whatever the modification time says: busy says so,
// and wait does not take the empty file as final until the budget is spent.
func TestStalledSaveIsASaveGoingOn(t *testing.T) {
	t.Parallel() // it waits out budgets: the others wait meanwhile
	path := filepath.Join(t.TempDir(), QueueFile)
	write(t, path, "")
	editor := openForWriting(t, path)
	s := newSettler()
	if !s.busy(path, []byte{}) {
		t.Error("busy: an empty file still open for writing counts as settled because it was truncated long ago")
	}
	const budget = 150 * time.Millisecond
	s = &settler{deadline: time.Now().Add(budget)}
	start := time.Now()
	if s.wait(t.Context(), path, []byte{}) {
		t.Fatal("wait reports a change that was not made")
	}
	if took := time.Since(start); took < budget {
		t.Errorf("wait took the empty file as final after %v, with the editor still writing and %v of budget left", took, budget-took)
	}
	// Once the save ends, wait sees it.
	s = newSettler()
	done := make(chan bool)
	go func() { done <- s.wait(t.Context(), path, []byte{}) }()
	if _, err := editor.Write([]byte(intentQueue)); err != nil {
		t.Fatal(err)
	}
	editor.Close()
	if !<-done {
		t.Error("wait took the empty file as final though the save ended")
	}
}

// A process that keeps a state file open for writing without writing (a
// shell's "exec 3>>issue_queue.md", a stalled editor) never lets a change
// be made safely: what it writes later would go into the replaced file.
// Update waits for it up to its budget and then refuses with a
// *SavingError, having written nothing; it does not spin.
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
				var se *SavingError
				if !errors.As(err, &se) || se.File != filepath.Join(s.Dir, file) {
					t.Errorf("Update: %v, want a *SavingError for %s", err, file)
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

// The rest of a change whose first write is made gets a wait of its own:
// a save of the state file that begins when the command's budget is spent
// is waited for, and the change made whole.
func TestUpdateWaitsAgainAfterItsFirstWrite(t *testing.T) {
	t.Parallel() // it waits out budgets: the others wait meanwhile
	s := newIntentStore(t)
	s.betweenWrites = func() error {
		holder := openForWriting(t, s.State())
		time.Sleep(SettleTime) // the budget of the first write is spent
		time.AfterFunc(SettleTime/10, func() { holder.Close() })
		return nil
	}
	if err := s.Update(t.Context(), retryChange); err != nil {
		t.Fatalf("Update: %v", err)
	}
	if !strings.Contains(read(t, s.Queue()), "| Retry-Count | 3 |") || !strings.Contains(read(t, s.State()), "| total_auto_retries | 3 |") {
		t.Errorf("the change was not made whole:\n%s\n%s", read(t, s.Queue()), read(t, s.State()))
	}
}

// An empty state file is more often an editor's save in place, truncated
// and not yet written, than what a person meant. Where no lease can tell,
// it counts as settled only once left alone for as long as a command
// waits, not after the few hundred milliseconds a save takes; where a
// lease tells that no one is writing it, it is taken at once. A
// modification time a little ahead of the clock (a file server's clock) is
// a save going on; one far ahead is another machine's clock.
func TestEmptyFileSettlesLateWithoutALease(t *testing.T) {
	dir := t.TempDir()
	empty, full := filepath.Join(dir, "empty.md"), filepath.Join(dir, "full.md")
	write(t, empty, "")
	write(t, full, intentQueue)
	now := time.Now()
	for _, tc := range []struct {
		path    string
		ago     time.Duration
		settled bool
	}{
		{empty, SettleTime / 2, false},
		{empty, 2 * SettleTime, true},
		{full, SettleTime / 2, true},
		// A file server's clock a little ahead: a save going on now.
		{empty, -SettleTime / 10, false},
		{full, -settleQuiet / 2, false},
		// Far ahead: another machine's clock, not a save going on now.
		{empty, -time.Hour, true},
		{full, -time.Hour, true},
	} {
		at := now.Add(-tc.ago)
		if err := os.Chtimes(tc.path, at, at); err != nil {
			t.Fatal(err)
		}
		st := stampOf(tc.path)
		if got := settled(now, st.settledAt(), st.quiet()); got != tc.settled {
			t.Errorf("%s, left alone for %v, where no lease tells: settled %v, want %v", filepath.Base(tc.path), tc.ago, got, tc.settled)
		}
	}
	at := now.Add(-SettleTime / 2)
	if err := os.Chtimes(empty, at, at); err != nil {
		t.Fatal(err)
	}
	skipWithoutLeases(t, empty)
	if newSettler().busy(empty, []byte{}) {
		t.Error("busy: an empty file no one has open for writing is waited for, though a lease tells")
	}
}

// emptyFileHelperDir names, to the helper process of
// TestEmptyFileWithoutALeaseIsRefused, the state directory it adds to.
const emptyFileHelperDir = "ISSUEQUEUE_TEST_EMPTY_FILE_DIR"

// Where no lease can tell whether an editor has the queue open for writing
// (here: another user's file), an empty queue may be a save in place that
// truncated the file and stalled before writing: a change built on it
// would replace the file, and what the editor then writes would go into
// the replaced file and be lost with the whole queue. A command refuses
// it, writing nothing. Root acts as another user, in a process of its own.
func TestEmptyFileWithoutALeaseIsRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("acting as another user, who cannot take a lease on the file, needs root")
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Skip(err)
	}
	uid, _ := strconv.Atoi(nobody.Uid)
	gid, _ := strconv.Atoi(nobody.Gid)
	dir, err := os.MkdirTemp("", "empty-queue-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	write(t, filepath.Join(dir, QueueFile), "")
	write(t, filepath.Join(dir, StateFile), intentState)
	old := time.Now().Add(-time.Hour) // long past any wait for quiet
	if err := os.Chtimes(filepath.Join(dir, QueueFile), old, old); err != nil {
		t.Fatal(err)
	}
	exe, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	helper := filepath.Join(dir, "helper.test")
	if err := os.WriteFile(helper, exe, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, filepath.Join(dir, QueueFile), filepath.Join(dir, StateFile)} {
		if err := os.Chmod(p, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	// The helper makes a log directory and a lock file of its own.
	cmd := exec.Command(helper, "-test.run=^TestEmptyFileHelperProcess$", "-test.v")
	cmd.Env = append(os.Environ(), emptyFileHelperDir+"="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "(empty file: true)") {
		t.Errorf("an empty queue another user owns was not refused as empty:\n%s", out)
	}
	if q := read(t, filepath.Join(dir, QueueFile)); q != "" {
		t.Errorf("the empty queue was written:\n%s", q)
	}
}

// TestEmptyFileHelperProcess is the process of another user in
// TestEmptyFileWithoutALeaseIsRefused; alone, it does nothing.
func TestEmptyFileHelperProcess(t *testing.T) {
	dir := os.Getenv(emptyFileHelperDir)
	if dir == "" {
		t.Skip("the helper process of TestEmptyFileWithoutALeaseIsRefused")
	}
	if writers(filepath.Join(dir, QueueFile)) != leaseUnknown {
		t.Fatal("this process can take a lease on the queue: the test does not reach the case it is for")
	}
	s := &Store{Paths: Paths{Dir: dir}, Command: "test"}
	err := s.Update(t.Context(), func(q *Queue, st *State) (Change, error) {
		return Change{Queue: []Edit{AppendIssue("ISSUE-20261126-009", "## ISSUE-20261126-009\n\n| Field | Value |\n|-------|-------|\n| Status | pending |\n")}}, nil
	})
	var ee *EmptyFileError
	fmt.Printf("refused: %T %v (empty file: %v)\n", err, err, errors.As(err, &ee))
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
	err := s.Recover(t.Context())
	var re *RecoveryError
	var se *SavingError
	if !errors.As(err, &re) || !errors.As(err, &se) {
		t.Fatalf("Recover: %v, want a *RecoveryError of a *SavingError", err)
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
