//go:build unix

package statefile

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

var since = time.Date(2026, 11, 22, 10, 15, 0, 0, time.UTC)

// Open file descriptions, not processes, own the locks: a second lock in the
// same process is refused, and the run and write locks are independent.
func TestLocksExcludeWithinOneProcess(t *testing.T) {
	dir := t.TempDir()
	run, err := TryRunLock(dir, Owner{Command: "run", RunID: "20261122-101500", Since: since})
	if err != nil {
		t.Fatal(err)
	}
	_, err = TryRunLock(dir, Owner{Command: "run"})
	var busy *BusyError
	if !errors.As(err, &busy) {
		t.Fatalf("second TryRunLock: got %v, want a *BusyError", err)
	}
	want := Owner{PID: os.Getpid(), Since: since, Command: "run", RunID: "20261122-101500"}
	if got := busy.Owner; got != want {
		t.Errorf("BusyError.Owner = %+v, want %+v", got, want)
	}
	if got, want := busy.Error(), "another run (pid "+strconv.Itoa(os.Getpid())+", started 2026-11-22T10:15:00Z) holds "+filepath.Join(dir, ".lock"); got != want {
		t.Errorf("message = %q, want %q", got, want)
	}

	// The run takes the write lock for each of its writes.
	w, err := LockWrite(context.Background(), dir, 0, Owner{Command: "run"})
	if err != nil {
		t.Fatalf("write lock while holding the run lock: %v", err)
	}
	if _, err := LockWrite(context.Background(), dir, 0, Owner{Command: "fail"}); !errors.As(err, &busy) || busy.Lock != "write" {
		t.Fatalf("second write lock: got %v, want a write *BusyError", err)
	}
	if o, held, err := WriteHolder(dir); err != nil || !held || o.Command != "run" || o.PID != os.Getpid() {
		t.Errorf("WriteHolder = %+v, %v, %v; want held by this process's run", o, held, err)
	}
	if err := w.Unlock(); err != nil {
		t.Fatal(err)
	}
	if err := w.Unlock(); err != nil {
		t.Errorf("second Unlock: %v", err)
	}
	if _, held, err := WriteHolder(dir); err != nil || held {
		t.Errorf("WriteHolder after Unlock: held %v, err %v", held, err)
	}
	w2, err := LockWrite(context.Background(), dir, 0, Owner{})
	if err != nil {
		t.Fatalf("write lock after Unlock: %v", err)
	}
	w2.Unlock()

	if o, held, err := RunHolder(dir); err != nil || !held || o != want {
		t.Errorf("RunHolder = %+v, %v, %v; want %+v held", o, held, err, want)
	}
	if err := run.Unlock(); err != nil {
		t.Fatal(err)
	}
	if _, held, err := RunHolder(dir); err != nil || held {
		t.Errorf("RunHolder after Unlock: held %v, err %v", held, err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".lock")); err != nil {
		t.Errorf("the lock file must stay: %v", err)
	}
	assertRunLockFree(t, dir, "after Unlock")
}

func TestLockFileMode(t *testing.T) {
	dir := t.TempDir()
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	l, err := LockWrite(context.Background(), dir, 0, Owner{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	fi, err := os.Stat(filepath.Join(dir, ".lock"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fi.Mode().Perm(), os.FileMode(0o644); got != want {
		t.Errorf("mode of .lock = %v, want %v", got, want)
	}
}

// Text left in .lock by a holder that died means nothing.
func TestStaleHolderTextIsNotHeld(t *testing.T) {
	dir := t.TempDir()
	content := append(formatOwner(Owner{PID: 4242, Since: since, Command: "run"}, runLock),
		formatOwner(Owner{PID: 4243, Since: since, Command: "fail"}, writeLock)...)
	if err := os.WriteFile(filepath.Join(dir, ".lock"), content, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, fn := range map[string]func(string) (Owner, bool, error){"RunHolder": RunHolder, "WriteHolder": WriteHolder} {
		if o, held, err := fn(dir); err != nil || held || o != (Owner{}) {
			t.Errorf("%s = %+v, %v, %v; want not held", name, o, held, err)
		}
	}
}

func TestHolderWithoutLockFile(t *testing.T) {
	dir := t.TempDir()
	if _, held, err := RunHolder(dir); err != nil || held {
		t.Errorf("RunHolder = held %v, err %v; want not held", held, err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".lock")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("RunHolder must not create .lock: %v", err)
	}
}

func TestLockMissingDir(t *testing.T) {
	_, err := TryRunLock(filepath.Join(t.TempDir(), "missing"), Owner{})
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("got %v, want a not-exist error", err)
	}
}

func TestBusyErrorMessages(t *testing.T) {
	for _, tc := range []struct {
		err  BusyError
		want string
	}{
		{BusyError{Lock: "run", Path: ".orchestrator/.lock", Owner: Owner{PID: 4242, Since: since}},
			"another run (pid 4242, started 2026-11-22T10:15:00Z) holds .orchestrator/.lock"},
		{BusyError{Lock: "run", Path: ".orchestrator/.lock"},
			"another run holds .orchestrator/.lock"},
		{BusyError{Lock: "write", Path: ".orchestrator/.lock", Owner: Owner{PID: 4242, Since: since, Command: "fail"}, Waited: 10 * time.Second},
			"orchestrator fail (pid 4242, since 2026-11-22T10:15:00Z) holds the write lock on .orchestrator/.lock; gave up after 10s"},
		{BusyError{Lock: "write", Path: ".orchestrator/.lock", Owner: Owner{PID: 4242, Since: since}, Waited: 10 * time.Second},
			"orchestrator (pid 4242, since 2026-11-22T10:15:00Z) holds the write lock on .orchestrator/.lock; gave up after 10s"},
		{BusyError{Lock: "write", Path: ".orchestrator/.lock", Waited: 200 * time.Millisecond},
			"another orchestrator command holds the write lock on .orchestrator/.lock; gave up after 200ms"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
}

func TestOwnerLine(t *testing.T) {
	for _, tc := range []struct {
		in   Owner
		want Owner
	}{
		{Owner{PID: 1, Since: since}, Owner{PID: 1, Since: since}},
		{Owner{PID: 4242, Since: since.Add(500 * time.Millisecond), Command: "run", RunID: "20261122-101500"},
			Owner{PID: 4242, Since: since, Command: "run", RunID: "20261122-101500"}},
		{Owner{PID: 7, Since: since, Command: "a b=c\nd", RunID: strings.Repeat("x", 100)},
			Owner{PID: 7, Since: since, Command: "a_b_c_d", RunID: strings.Repeat("x", maxRunIDLen)}},
	} {
		for _, k := range []lockKind{runLock, writeLock} {
			line := formatOwner(normalize(tc.in), k)
			if got, want := len(line), ownerLineSize; got != want {
				t.Fatalf("line length %d, want %d", got, want)
			}
			got, ok := parseOwner(line, k)
			if !ok || got != tc.want {
				t.Errorf("%s line %q parsed to %+v, %v; want %+v", k, line, got, ok, tc.want)
			}
			if _, ok := parseOwner(line, 1-k); ok {
				t.Errorf("%s line parsed as the other lock's", k)
			}
		}
	}
	for _, bad := range []string{"", strings.Repeat(" ", 255) + "\n", "\x00\x00\x00", "run pid=12", "run pid=x since=2026-11-22T10:15:00Z", "run pid=12 since=yesterday", "run pid=-1 since=2026-11-22T10:15:00Z"} {
		if o, ok := parseOwner([]byte(bad), runLock); ok {
			t.Errorf("parseOwner(%q) = %+v, want not ok", bad, o)
		}
	}
}

func FuzzOwnerLine(f *testing.F) {
	f.Add([]byte("run pid=4242 since=2026-11-22T10:15:00Z cmd=run id=x"), 4242, int64(1795342500), "run", "20261122-101500")
	f.Add([]byte("write pid=1 since=2026-11-22T10:15:00Z"), 1, int64(0), "fail", "")
	f.Fuzz(func(t *testing.T, line []byte, pid int, sec int64, cmd, id string) {
		for _, k := range []lockKind{runLock, writeLock} {
			parseOwner(line, k) // must not panic
			if pid <= 0 || sec < 0 || sec > 253402300799 {
				continue // outside what a holder records (years 1970–9999)
			}
			o := normalize(Owner{PID: pid, Since: time.Unix(sec, 0), Command: cmd, RunID: id})
			got, ok := parseOwner(formatOwner(o, k), k)
			if !ok || got != o {
				t.Fatalf("%+v did not round-trip: got %+v, %v", o, got, ok)
			}
		}
	})
}

// The run lock across processes: a second run fails at once naming the
// first; the lock is free as soon as the holder is killed.
func TestRunLockAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	holder := startChild(t, "hold-run", []string{"STATEFILE_DIR=" + dir})
	holder.waitLocked(t)
	pid := holder.cmd.Process.Pid

	second := startChild(t, "try-run", []string{"STATEFILE_DIR=" + dir})
	var res tryRunResult
	if err := json.Unmarshal([]byte(second.readLine(t)), &res); err != nil {
		t.Fatal(err)
	}
	second.wait(t, 30*time.Second)
	if !res.Busy || res.PID != pid {
		t.Fatalf("second run: %+v; want busy, naming pid %d", res, pid)
	}
	if res.Elapsed >= time.Second {
		t.Errorf("TryRunLock took %s; it must not wait", res.Elapsed)
	}
	if want := "another run (pid " + strconv.Itoa(pid) + ", started "; !strings.HasPrefix(res.Msg, want) {
		t.Errorf("message %q, want it to start %q", res.Msg, want)
	}

	o, held, err := RunHolder(dir)
	if err != nil || !held || o.PID != pid || o.Command != "run" || o.RunID != "run-1" {
		t.Fatalf("RunHolder = %+v, %v, %v; want held by pid %d, run-1", o, held, err, pid)
	}
	if _, held, _ := WriteHolder(dir); held {
		t.Error("the run lock must not show as the write lock")
	}

	holder.kill()
	lock, _ := os.ReadFile(filepath.Join(dir, ".lock"))
	if !strings.Contains(string(lock), "pid="+strconv.Itoa(pid)) {
		t.Fatalf("expected the killed holder's line to be left in .lock, got %q", lock)
	}
	if _, held, err := RunHolder(dir); err != nil || held {
		t.Fatalf("after SIGKILL: RunHolder held %v, err %v; want free", held, err)
	}
	assertRunLockFree(t, dir, "after the holder was killed")
}

// A process the run starts (the loop command) must not inherit the lock:
// once the run is killed, the lock is free although its child lives on.
func TestRunLockNotInheritedByChildren(t *testing.T) {
	dir := t.TempDir()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close() // ends the grandchild
	holder := startChild(t, "hold-run", []string{"STATEFILE_DIR=" + dir, "STATEFILE_GRANDCHILD=1"}, r)
	r.Close()
	holder.waitLocked(t)
	holder.kill()
	// The grandchild is alive, blocked reading from w, until w is closed.
	assertRunLockFree(t, dir, "with the killed holder's child alive")
}

func TestLockWriteWaitsThenNamesHolder(t *testing.T) {
	dir := t.TempDir()
	holder := startChild(t, "hold-write", []string{"STATEFILE_DIR=" + dir})
	holder.waitLocked(t)
	pid := holder.cmd.Process.Pid

	_, err := LockWrite(context.Background(), dir, 200*time.Millisecond, Owner{Command: "skip"})
	var busy *BusyError
	if !errors.As(err, &busy) {
		t.Fatalf("got %v, want a *BusyError", err)
	}
	if busy.Lock != "write" || busy.Owner.PID != pid || busy.Owner.Command != "fail" || busy.Waited != 200*time.Millisecond {
		t.Errorf("BusyError = %+v; want write lock held by pid %d (fail), waited 200ms", busy, pid)
	}
	if want := "orchestrator fail (pid " + strconv.Itoa(pid) + ", since "; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("message %q, want it to start %q", err, want)
	}

	// Cancelling the context ends the wait.
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan error, 1)
	go func() {
		_, err := LockWrite(ctx, dir, time.Minute, Owner{})
		got <- err
	}()
	cancel()
	if err := <-got; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled LockWrite: got %v, want context.Canceled", err)
	}

	// A waiter gets the lock when the holder releases it. The waiters that
	// gave up above must not keep it either.
	type result struct {
		l   *Lock
		err error
	}
	waiter := make(chan result, 1)
	go func() {
		l, err := LockWrite(context.Background(), dir, 30*time.Second, Owner{Command: "resolve"})
		waiter <- result{l, err}
	}()
	holder.stdin.Close()
	holder.wait(t, 30*time.Second)
	res := <-waiter
	if res.err != nil {
		t.Fatalf("waiting LockWrite: %v", res.err)
	}
	if o, held, err := WriteHolder(dir); err != nil || !held || o.Command != "resolve" || o.PID != os.Getpid() {
		t.Errorf("WriteHolder = %+v, %v, %v; want this process's resolve", o, held, err)
	}
	res.l.Unlock()
	l, err := LockWrite(context.Background(), dir, 30*time.Second, Owner{})
	if err != nil {
		t.Fatalf("LockWrite after all waiters: %v", err)
	}
	l.Unlock()
}

// Eight processes each increment their own counter 50 times under the write
// lock: no increment may be lost.
func TestWriteLockSerializesProcesses(t *testing.T) {
	const procs, rounds = 8, 50
	dir := t.TempDir()
	var content strings.Builder
	for i := range procs {
		content.WriteString("child " + strconv.Itoa(i) + ": 0\n")
	}
	path := filepath.Join(dir, "counters.md")
	if err := WriteNew(path, []byte(content.String())); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	children := make([]*child, procs)
	for i := range children {
		children[i] = startChild(t, "counter", []string{"STATEFILE_DIR=" + dir,
			"STATEFILE_INDEX=" + strconv.Itoa(i), "STATEFILE_N=" + strconv.Itoa(rounds)})
	}
	for _, c := range children {
		c.wait(t, 50*time.Second)
	}
	t.Logf("%d locked replacements by %d processes in %s", procs*rounds, procs, time.Since(start))
	data, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if got, want := line, "child "+strconv.Itoa(i)+": "+strconv.Itoa(rounds); got != want {
			t.Errorf("line %d = %q, want %q", i, got, want)
		}
	}
	assertOnly(t, dir, ".lock", "counters.md")
}

// Deleting or replacing .lock while a run holds it does not let a second
// run start: the state directory itself is locked too.
func TestRunLockSurvivesDeletingTheLockFile(t *testing.T) {
	for _, replace := range []bool{false, true} {
		dir := t.TempDir()
		l, err := TryRunLock(dir, Owner{Command: "run"})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, LockFile)
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if replace {
			if err := os.WriteFile(path, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		var be *BusyError
		if l2, err := TryRunLock(dir, Owner{Command: "run"}); !errors.As(err, &be) {
			if l2 != nil {
				l2.Unlock()
			}
			t.Fatalf("replace=%v: a second run lock after .lock was removed: %v, want a busy error", replace, err)
		}
		if err := l.Unlock(); err != nil {
			t.Fatal(err)
		}
		l3, err := TryRunLock(dir, Owner{Command: "run"})
		if err != nil {
			t.Fatalf("after the first run ended: %v", err)
		}
		l3.Unlock()
	}
}

// assertRunLockFree checks that the run lock of dir can be taken now (when
// says at what moment), and releases it.
func assertRunLockFree(t *testing.T, dir, when string) {
	t.Helper()
	l, err := TryRunLock(dir, Owner{})
	if err != nil {
		t.Fatalf("TryRunLock %s: %v", when, err)
	}
	l.Unlock()
}
