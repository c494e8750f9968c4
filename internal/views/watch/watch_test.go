package watch_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/statefile"
	"github.com/autoretry/orchestrator/internal/views/watch"
	"github.com/autoretry/orchestrator/issuequeue"
)

// deadline bounds every wait for output; reaching it fails the test.
const deadline = 10 * time.Second

var fixedNow = func() time.Time { return time.Date(2026, 11, 22, 10, 15, 0, 0, time.UTC) }

// issue returns an issue block with the given Retry-Count cell.
func issue(id, status, retryCount string) string {
	return "## " + id + `

| Field | Value |
|-------|-------|
| Type | build |
| Priority | critical |
| Status | ` + status + ` |
| Auto-Retry | true |
| Retry-Count | ` + retryCount + ` |
| Max-Retries | 3 |
| Halted | false |

### Summary
Server fails to start
`
}

var (
	queueOK  = "# Issue Queue\n\n" + issue("ISSUE-20261122-001", "pending", "0")
	queueBad = "# Issue Queue\n\n" + issue("ISSUE-20261122-001", "pending", "abc")
	// queueOK2 differs from queueOK and still has one issue pending.
	queueOK2  = "# Issue Queue\n\nEdited by hand.\n\n" + issue("ISSUE-20261122-001", "pending", "1")
	queueNone = "# Issue Queue\n\n" + issue("ISSUE-20261122-001", "resolved", "0")
)

// stateDir makes a state directory with a valid queue and session state.
func stateDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), ".orchestrator")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, issuequeue.QueueFile), queueOK)
	writeFile(t, filepath.Join(dir, issuequeue.StateFile), issuequeue.StateTemplate)
	return dir
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// replaceFile saves the way careful programs do: a temporary file in the
// same directory, renamed over the old one.
func replaceFile(t *testing.T, path, content string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp-1234")
	writeFile(t, tmp, content)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// vimSave saves the way vim does by default: swap file, a probe file named
// 4913, the original renamed to a backup, a new file written, the backup
// removed.
func vimSave(t *testing.T, path, content string) {
	t.Helper()
	dir, base := filepath.Dir(path), filepath.Base(path)
	swap := filepath.Join(dir, "."+base+".swp")
	writeFile(t, swap, "swap")
	probe := filepath.Join(dir, "4913")
	writeFile(t, probe, "")
	if err := os.Remove(probe); err != nil {
		t.Fatal(err)
	}
	backup := path + "~"
	if err := os.Rename(path, backup); errors.Is(err, os.ErrNotExist) {
		backup = "" // a new file
	} else if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, content)
	for _, p := range []string{backup, swap} {
		if p == "" {
			continue
		}
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
}

// output collects what Watch prints, line by line, and lets a test wait for
// a line instead of sleeping.
type output struct {
	mu      sync.Mutex
	lines   []string
	partial []byte
	more    chan struct{} // closed when a line arrives
}

func newOutput() *output { return &output{more: make(chan struct{})} }

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.partial = append(o.partial, p...)
	for {
		i := bytes.IndexByte(o.partial, '\n')
		if i < 0 {
			break
		}
		o.lines = append(o.lines, string(o.partial[:i]))
		o.partial = o.partial[i+1:]
		close(o.more)
		o.more = make(chan struct{})
	}
	return len(p), nil
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return strings.Join(o.lines, "\n")
}

func (o *output) len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.lines)
}

// find waits for the first line at index from or later that matches
// pattern and returns its index.
func (o *output) find(t *testing.T, from int, pattern string) int {
	t.Helper()
	re := regexp.MustCompile(pattern)
	timeout := time.After(deadline)
	for {
		o.mu.Lock()
		for i := from; i < len(o.lines); i++ {
			if re.MatchString(o.lines[i]) {
				o.mu.Unlock()
				return i
			}
		}
		more := o.more
		o.mu.Unlock()
		select {
		case <-more:
		case <-timeout:
			t.Fatalf("no line matching %q after line %d within %s; output:\n%s", pattern, from, deadline, o)
		}
	}
}

// next waits for line number i and requires it to match pattern: nothing
// else was printed before it.
func (o *output) next(t *testing.T, i int, pattern string) {
	t.Helper()
	o.find(t, i, ".")
	o.mu.Lock()
	line := o.lines[i]
	o.mu.Unlock()
	if !regexp.MustCompile(pattern).MatchString(line) {
		t.Fatalf("line %d = %q, want a match for %q; output:\n%s", i, line, pattern, o)
	}
}

// start runs Watch until the test ends, and checks that it then returns
// nil. stop cancels it and returns what Watch returned; it may be called
// more than once.
func start(t *testing.T, o watch.Options) (out *output, stop func() error) {
	t.Helper()
	out = newOutput()
	o.Out = out
	o.Now = fixedNow
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- watch.Watch(ctx, o) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-done:
			case <-time.After(deadline):
				err = errors.New("Watch did not return within " + deadline.String() + " of cancel")
			}
		})
		return err
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("Watch: %v", err)
		}
	})
	return out, stop
}

func okLine(dir string, issues, pending int) string {
	return "^10:15:00 ok: " + regexp.QuoteMeta(filepath.Join(dir, issuequeue.QueueFile)) +
		": " + itoa(issues) + ` issue\(s\), ` + itoa(pending) + " pending auto-retry$"
}

func itoa(n int) string { return string(rune('0' + n)) }

func TestLintsEveryEditorSave(t *testing.T) {
	dir := stateDir(t)
	queue := filepath.Join(dir, issuequeue.QueueFile)
	out, _ := start(t, watch.Options{Dir: dir})
	out.next(t, 0, okLine(dir, 1, 1))

	vimSave(t, queue, queueBad)
	bad := "^10:15:00 " + regexp.QuoteMeta(queue) + `:11:3: Retry-Count: "abc" is not a whole number$`
	i := out.find(t, 1, bad)

	replaceFile(t, queue, queueOK2)
	out.find(t, i+1, okLine(dir, 1, 1))
}

func TestSurvivesDeleteAndRecreate(t *testing.T) {
	dir := stateDir(t)
	queue := filepath.Join(dir, issuequeue.QueueFile)
	out, _ := start(t, watch.Options{Dir: dir})
	out.next(t, 0, okLine(dir, 1, 1))

	if err := os.Remove(queue); err != nil {
		t.Fatal(err)
	}
	out.next(t, 1, okLine(dir, 0, 0)) // a missing queue lints as empty, as for orchestrator lint
	// Created and then written: a lint may catch it empty in between.
	writeFile(t, queue, queueOK)
	out.find(t, 2, okLine(dir, 1, 1))
}

// TestSameContentPrintsNothing proves that what does not change the
// content of a linted file prints nothing: each step is followed by a
// sentinel change, and the sentinel's message must be the very next line.
func TestSameContentPrintsNothing(t *testing.T) {
	dir := stateDir(t)
	queue := filepath.Join(dir, issuequeue.QueueFile)
	sentinel := filepath.Join(dir, issuequeue.SentinelFile)
	out, _ := start(t, watch.Options{Dir: dir})
	out.next(t, 0, okLine(dir, 1, 1))

	steps := []struct {
		name string
		do   func()
	}{
		{"same bytes written again", func() { writeFile(t, queue, queueOK) }},
		{"same bytes renamed over", func() { replaceFile(t, queue, queueOK) }},
		{"same bytes saved by vim", func() { vimSave(t, queue, queueOK) }},
		{"chmod", func() {
			if err := os.Chmod(queue, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"other files", func() {
			for _, n := range []string{"history.csv", ".lock", "notes.md", "issue_queue.md.orig", ".issue_queue.md.tmp-99"} {
				writeFile(t, filepath.Join(dir, n), "x")
			}
			if err := os.Mkdir(filepath.Join(dir, "logs"), 0o755); err != nil {
				t.Fatal(err)
			}
		}},
	}
	line := 1
	for i, s := range steps {
		s.do()
		want := "^10:15:00 auto-retry disabled: no_auto_retry exists$"
		if i%2 == 0 {
			writeFile(t, sentinel, "")
		} else {
			if err := os.Remove(sentinel); err != nil {
				t.Fatal(err)
			}
			want = "^10:15:00 auto-retry enabled again$"
		}
		t.Logf("step %q", s.name)
		out.next(t, line, want)
		line++
	}
}

func TestAutoRetryEnabledFlag(t *testing.T) {
	dir := stateDir(t)
	state := filepath.Join(dir, issuequeue.StateFile)
	out, _ := start(t, watch.Options{Dir: dir})
	out.next(t, 0, okLine(dir, 1, 1))

	replaceFile(t, state, strings.Replace(issuequeue.StateTemplate, "| auto_retry_enabled | true |", "| auto_retry_enabled | false |", 1))
	out.next(t, 1, okLine(dir, 1, 1))
	out.next(t, 2, "^10:15:00 auto-retry disabled: auto_retry_enabled is false in "+regexp.QuoteMeta(state)+"$")

	replaceFile(t, state, issuequeue.StateTemplate)
	out.next(t, 3, okLine(dir, 1, 1))
	out.next(t, 4, "^10:15:00 auto-retry enabled again$")
}

func TestSentinelAtStart(t *testing.T) {
	dir := stateDir(t)
	writeFile(t, filepath.Join(dir, issuequeue.SentinelFile), "")
	out, _ := start(t, watch.Options{Dir: dir})
	out.next(t, 0, okLine(dir, 1, 1))
	out.next(t, 1, "^10:15:00 auto-retry disabled: no_auto_retry exists$")
}

func TestLintsConfigAndTemplates(t *testing.T) {
	dir := stateDir(t)
	cfg := filepath.Join(dir, "config.toml")
	out, _ := start(t, watch.Options{Dir: dir})
	out.next(t, 0, okLine(dir, 1, 1))

	vimSave(t, cfg, "[loop]\ncommand = \"./improve.sh\"\ntimout = \"5m\"\n")
	i := out.find(t, 1, "^10:15:00 "+regexp.QuoteMeta(cfg)+`:3:1: .*timout`)
	replaceFile(t, cfg, "[loop]\ncommand = \"./improve.sh\"\n")
	i = out.find(t, i+1, okLine(dir, 1, 1))

	// The templates directory is created after Watch started: it must be
	// watched from then on.
	tmpl := filepath.Join(dir, "templates")
	if err := os.Mkdir(tmpl, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(tmpl, "triggered.tmpl"), "line one\n{{.NoSuchField}}\n")
	i = out.find(t, i+1, "^10:15:00 "+regexp.QuoteMeta(filepath.Join(tmpl, "triggered.tmpl"))+`:2:.*NoSuchField`)
	replaceFile(t, filepath.Join(tmpl, "triggered.tmpl"), "{{/* nothing */}}\n")
	out.find(t, i+1, okLine(dir, 1, 1))
}

// TestLintsVerifyNames shows watch reporting an issue whose Verify names
// no [verify.NAME] check the way orchestrator lint does: at the field, with
// the nearest check's name.
func TestLintsVerifyNames(t *testing.T) {
	dir := stateDir(t)
	queue := filepath.Join(dir, issuequeue.QueueFile)
	writeFile(t, filepath.Join(dir, "config.toml"), "[loop]\ncommand = \"true\"\n\n[verify.build]\ncommand = \"go build ./...\"\n")
	withVerify := func(name string) string {
		return strings.Replace(queueOK, "| Halted | false |\n", "| Halted | false |\n| Verify | "+name+" |\n", 1)
	}
	out, _ := start(t, watch.Options{Dir: dir})
	out.next(t, 0, okLine(dir, 1, 1))

	replaceFile(t, queue, withVerify("biuld"))
	i := out.find(t, 1, "^10:15:00 "+regexp.QuoteMeta(queue)+`:14:3: Verify: "biuld" is not a \[verify.NAME\] check in config.toml \(checks: build\), so run never verifies ISSUE-20261122-001; did you mean "build"\?$`)
	replaceFile(t, queue, withVerify("build"))
	out.find(t, i+1, okLine(dir, 1, 1))
}

func TestConfigElsewhere(t *testing.T) {
	dir := stateDir(t)
	cfg := filepath.Join(t.TempDir(), "orchestrator.toml")
	writeFile(t, cfg, "[loop]\ncommand = \"true\"\n")
	out, _ := start(t, watch.Options{Dir: dir, ConfigPath: cfg})
	out.next(t, 0, okLine(dir, 1, 1))
	vimSave(t, cfg, "[loop]\ncommand = \"true\"\n[auto_retry]\nglobal_cap = -1\n")
	out.find(t, 1, "^10:15:00 "+regexp.QuoteMeta(cfg)+`:4:.*global_cap`)
}

func TestSurvivesDirectoryRemoval(t *testing.T) {
	dir := stateDir(t)
	out, _ := start(t, watch.Options{Dir: dir})
	out.next(t, 0, okLine(dir, 1, 1))

	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	i := out.find(t, 1, "^10:15:00 state directory "+regexp.QuoteMeta(dir)+" is gone; waiting for it to come back$")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, issuequeue.QueueFile), queueBad)
	i = out.find(t, i+1, "^10:15:00 state directory "+regexp.QuoteMeta(dir)+" is back$")
	i = out.find(t, i+1, `Retry-Count: "abc" is not a whole number$`)
	// Watching goes on in the new directory.
	replaceFile(t, filepath.Join(dir, issuequeue.QueueFile), queueOK)
	out.find(t, i+1, okLine(dir, 1, 1))
}

func TestMissingDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nothing")
	err := watch.Watch(context.Background(), watch.Options{Dir: dir, Out: io.Discard})
	var nd *issuequeue.NoStateDirError
	if !errors.As(err, &nd) {
		t.Fatalf("Watch on a missing directory: %v, want a *issuequeue.NoStateDirError", err)
	}
}

func TestCancelReturnsPromptly(t *testing.T) {
	dir := stateDir(t)
	out, stop := start(t, watch.Options{Dir: dir, Debounce: time.Hour})
	out.next(t, 0, okLine(dir, 1, 1))
	// A change waiting out a long debounce must not hold up the return.
	writeFile(t, filepath.Join(dir, issuequeue.QueueFile), queueBad)
	began := time.Now()
	if err := stop(); err != nil {
		t.Fatalf("Watch returned %v after cancel, want nil", err)
	}
	t.Logf("returned %s after cancel", time.Since(began))
	if got := out.len(); got != 1 {
		t.Fatalf("printed %d lines, want only the first; output:\n%s", got, out)
	}
}

// stubRun is an OnPending that counts its calls and blocks each until the
// test releases it with a function: what the run does last, and its result.
type stubRun struct {
	calls   atomic.Int32
	started chan struct{}
	release chan func() error
}

func newStubRun() *stubRun {
	return &stubRun{started: make(chan struct{}, 10), release: make(chan func() error)}
}

func succeed() error { return nil }

func (s *stubRun) run(ctx context.Context, out io.Writer) error {
	s.calls.Add(1)
	io.WriteString(out, "run output, ")
	io.WriteString(out, "one line\n")
	s.started <- struct{}{}
	select {
	case end := <-s.release:
		return end()
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *stubRun) wantCalls(t *testing.T, n int32) {
	t.Helper()
	if got := s.calls.Load(); got != n {
		t.Fatalf("OnPending called %d times, want %d", got, n)
	}
}

func TestRunOncePerChange(t *testing.T) {
	dir := stateDir(t)
	queue := filepath.Join(dir, issuequeue.QueueFile)
	stub := newStubRun()
	out, _ := start(t, watch.Options{Dir: dir, OnPending: stub.run})
	out.next(t, 0, okLine(dir, 1, 1))
	out.next(t, 1, `^10:15:00 starting a run: 1 issue\(s\) pending auto-retry$`)
	<-stub.started
	out.next(t, 2, "^run output, one line$")

	// While it runs, a change is linted but starts nothing.
	replaceFile(t, queue, queueOK2)
	out.next(t, 3, okLine(dir, 1, 1))
	stub.wantCalls(t, 1)

	// Like a real run, it writes the queue as it ends, leaving the issue
	// pending (say, out of retries for this run).
	stub.release <- func() error {
		tmp := queue + ".tmp-run"
		if err := os.WriteFile(tmp, []byte(queueOK), 0o644); err != nil {
			return err
		}
		if err := os.Rename(tmp, queue); err != nil {
			return err
		}
		return errors.New("exit status 3")
	}
	out.next(t, 4, "^10:15:00 run finished: exit status 3$")
	out.next(t, 5, okLine(dir, 1, 1))
	// What the run left behind is no new change: the next line must come
	// from the sentinel, not from a second run.
	writeFile(t, filepath.Join(dir, issuequeue.SentinelFile), "")
	out.next(t, 6, "^10:15:00 auto-retry disabled: no_auto_retry exists$")
	stub.wantCalls(t, 1)

	// Removing the sentinel enables auto-retry again: that is a change.
	if err := os.Remove(filepath.Join(dir, issuequeue.SentinelFile)); err != nil {
		t.Fatal(err)
	}
	out.next(t, 7, "^10:15:00 auto-retry enabled again$")
	out.next(t, 8, `^10:15:00 starting a run: 1 issue\(s\) pending auto-retry$`)
	<-stub.started
	stub.release <- succeed
	out.find(t, 9, "^10:15:00 run finished: ok$")

	// A change that leaves nothing pending starts nothing.
	i := out.len()
	replaceFile(t, queue, queueNone)
	out.next(t, i, okLine(dir, 1, 0))
	// A change that makes an issue pending again starts the next run.
	replaceFile(t, queue, queueOK)
	out.next(t, i+1, okLine(dir, 1, 1))
	out.next(t, i+2, `^10:15:00 starting a run: 1 issue\(s\) pending auto-retry$`)
	<-stub.started
	stub.wantCalls(t, 3)
	stub.release <- succeed
	out.find(t, i+3, "^10:15:00 run finished: ok$")
}

func TestNoRunWhenInvalidOrDisabled(t *testing.T) {
	dir := stateDir(t)
	queue := filepath.Join(dir, issuequeue.QueueFile)
	sentinel := filepath.Join(dir, issuequeue.SentinelFile)
	writeFile(t, sentinel, "")
	stub := newStubRun()
	out, _ := start(t, watch.Options{Dir: dir, OnPending: stub.run})
	out.next(t, 0, okLine(dir, 1, 1))
	out.next(t, 1, "^10:15:00 auto-retry disabled: no_auto_retry exists$")

	replaceFile(t, queue, queueOK2) // a change, but the sentinel is there
	out.next(t, 2, okLine(dir, 1, 1))
	replaceFile(t, queue, queueBad)
	out.next(t, 3, `Retry-Count: "abc" is not a whole number$`)
	if err := os.Remove(sentinel); err != nil {
		t.Fatal(err)
	}
	out.next(t, 4, "^10:15:00 auto-retry enabled again$") // enabled, but the queue is invalid
	writeFile(t, sentinel, "")
	out.next(t, 5, "^10:15:00 auto-retry disabled: no_auto_retry exists$")
	stub.wantCalls(t, 0)
}

func TestNoRunWhileAnotherHoldsTheLock(t *testing.T) {
	dir := stateDir(t)
	queue := filepath.Join(dir, issuequeue.QueueFile)
	lk, err := statefile.TryRunLock(dir, statefile.Owner{PID: 4242, Command: "run"})
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Unlock()
	stub := newStubRun()
	out, _ := start(t, watch.Options{Dir: dir, OnPending: stub.run})
	out.next(t, 0, okLine(dir, 1, 1))
	out.next(t, 1, `^10:15:00 not starting a run: another run \(pid 4242, started \d\d:\d\d:\d\d\) holds the lock$`)

	replaceFile(t, queue, queueOK2)
	out.next(t, 2, okLine(dir, 1, 1))
	out.next(t, 3, `^10:15:00 not starting a run: another run \(pid 4242`)

	if err := lk.Unlock(); err != nil {
		t.Fatal(err)
	}
	// What the other run left behind starts nothing ...
	out.next(t, 4, `^10:15:00 another run \(pid 4242\) has ended$`)
	stub.wantCalls(t, 0)
	// ... a change after it does.
	replaceFile(t, queue, queueOK)
	out.next(t, 5, okLine(dir, 1, 1))
	out.next(t, 6, `^10:15:00 starting a run: 1 issue\(s\) pending auto-retry$`)
	<-stub.started
	stub.wantCalls(t, 1)
	stub.release <- succeed
	out.find(t, 7, "^10:15:00 run finished: ok$")
}

// failingWriter accepts its first write, reports it on first, and fails
// the rest, like a closed pipe (orchestrator watch | head -1).
type failingWriter struct {
	writes atomic.Int32
	first  chan struct{}
}

func (f *failingWriter) Write(p []byte) (int, error) {
	switch f.writes.Add(1) {
	case 1:
		close(f.first)
		return len(p), nil
	}
	return 0, errors.New("broken pipe")
}

func TestStopsWhenOutputFails(t *testing.T) {
	dir := stateDir(t)
	fw := &failingWriter{first: make(chan struct{})}
	done := make(chan error, 1)
	go func() { done <- watch.Watch(context.Background(), watch.Options{Dir: dir, Out: fw}) }()
	select {
	case <-fw.first:
	case <-time.After(deadline):
		t.Fatal("no first line")
	}
	replaceFile(t, filepath.Join(dir, issuequeue.QueueFile), queueOK2)
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "writing output: broken pipe") {
			t.Fatalf("Watch returned %v, want a write error", err)
		}
	case <-time.After(deadline):
		t.Fatal("Watch did not end after its output failed")
	}
}
