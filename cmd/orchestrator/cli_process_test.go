//go:build linux

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/autoretry/orchestrator/issuequeue"
)

// These tests run the command line as real processes, for the promises
// that only real processes can break: the run lock, signals, process
// groups, concurrent writers and kill -9. The binary is
// the test binary itself, reached through a link named "orchestrator":
// TestMain hands it to testscript.Main, which runs Main when the base name
// of argv[0] is "orchestrator".

// cli runs orchestrator commands in one working directory, whose state
// directory is .orchestrator.
type cli struct {
	t    *testing.T
	bin  string // the link to the test binary
	work string
	env  []string
}

// skipShort skips, under -short, a test that counts kills landing at
// random instants or holds a command to a wall-clock bound ("exits at
// once"): a slowed run, such as the race detector's, changes what such a
// test can count or time, not what it proves, and the plain run keeps them.
func skipShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: a storm test whose counts depend on speed")
	}
}

func newCLI(t *testing.T) *cli {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	binDir := filepath.Join(t.TempDir(), "bin")
	if err := os.Mkdir(binDir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(binDir, "orchestrator")
	if err := os.Symlink(exe, bin); err != nil {
		t.Fatal(err)
	}
	// The children start from this environment without any ORCHESTRATOR_
	// setting of the enclosing one (not even a procgroup marker), with the
	// link first on PATH so that loop scripts can call orchestrator too.
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "ORCHESTRATOR_") || strings.HasPrefix(kv, "NO_COLOR=") || strings.HasPrefix(kv, "PATH=") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "NO_COLOR=1", "PATH="+binDir+string(filepath.ListSeparator)+os.Getenv("PATH"))
	return &cli{t: t, bin: bin, work: t.TempDir(), env: env}
}

// dir is the state directory.
func (c *cli) dir() string { return filepath.Join(c.work, ".orchestrator") }

func (c *cli) path(name string) string { return filepath.Join(c.work, name) }

// setup creates the state directory with orchestrator init and replaces
// its config and queue.
func (c *cli) setup(ctx context.Context, config, queue string) {
	c.t.Helper()
	if r := c.run(ctx, nil, "init"); r.code != 0 {
		c.t.Fatalf("orchestrator init: exit %d\n%s", r.code, r.stderr)
	}
	c.write(".orchestrator/config.toml", config)
	c.write(".orchestrator/issue_queue.md", queue)
}

// fifo makes a named pipe in the work directory: a loop that reads it waits
// until the test writes to it.
func (c *cli) fifo(name string) {
	c.t.Helper()
	if err := unix.Mkfifo(c.path(name), 0o600); err != nil {
		c.t.Fatal(err)
	}
}

func (c *cli) write(name, content string) {
	c.t.Helper()
	mode := os.FileMode(0o644)
	if strings.HasSuffix(name, ".sh") {
		mode = 0o755
	}
	if err := os.WriteFile(c.path(name), []byte(content), mode); err != nil {
		c.t.Fatal(err)
	}
}

func (c *cli) read(name string) []byte {
	c.t.Helper()
	b, err := os.ReadFile(c.path(name))
	if err != nil {
		c.t.Fatal(err)
	}
	return b
}

func (c *cli) queue() *issuequeue.Queue {
	c.t.Helper()
	return issuequeue.ParseQueue(issuequeue.QueueFile, c.read(".orchestrator/issue_queue.md"))
}

func (c *cli) state() *issuequeue.State {
	c.t.Helper()
	return issuequeue.ParseState(issuequeue.StateFile, c.read(".orchestrator/session_state.md"))
}

func (c *cli) command(ctx context.Context, env []string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, c.bin, args...)
	cmd.Dir = c.work
	cmd.Env = append(slices.Clone(c.env), env...)
	// At the deadline a run gets SIGTERM, so that it stops its loop as it
	// would for a person; SIGKILL follows if it does not exit in time.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 15 * time.Second
	return cmd
}

// result is how a command ended.
type result struct {
	stdout, stderr string
	code           int    // -1 when killed by a signal
	signal         string // the signal that killed it
	wall           time.Duration
}

func exitOf(err error) (code int, signal string, ok bool) {
	if err == nil {
		return 0, "", true
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return 0, "", false
	}
	if ws, isWS := ee.Sys().(syscall.WaitStatus); isWS && ws.Signaled() {
		return -1, ws.Signal().String(), true
	}
	return ee.ExitCode(), "", true
}

// run runs a command to its end.
func (c *cli) run(ctx context.Context, env []string, args ...string) result {
	c.t.Helper()
	r, err := c.try(ctx, env, args...)
	if err != nil {
		c.t.Fatal(err)
	}
	return r
}

// try runs a command to its end; unlike run it may be called from any
// goroutine. The error says why the command could not run or finish.
func (c *cli) try(ctx context.Context, env []string, args ...string) (result, error) {
	cmd := c.command(ctx, env, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String(), wall: time.Since(start)}
	var ok bool
	if r.code, r.signal, ok = exitOf(err); !ok {
		return r, fmt.Errorf("orchestrator %s: %w", strings.Join(args, " "), err)
	}
	if ctx.Err() != nil {
		return r, fmt.Errorf("orchestrator %s: still running at the test's deadline\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.stdout, r.stderr)
	}
	return r, nil
}

// proc is a command running in the background.
type proc struct {
	c      *cli
	args   []string
	cmd    *exec.Cmd
	out    *lineLog
	errOut *lineLog
	start  time.Time
	done   chan struct{}
	res    result
}

// start starts a command; the test ends it if it is still running.
func (c *cli) start(ctx context.Context, env []string, args ...string) *proc {
	c.t.Helper()
	p := &proc{c: c, args: args, cmd: c.command(ctx, env, args...), out: newLineLog(), errOut: newLineLog(), done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.errOut
	p.start = time.Now()
	if err := p.cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	go func() {
		err := p.cmd.Wait()
		p.res.wall = time.Since(p.start)
		p.res.code, p.res.signal, _ = exitOf(err)
		p.res.stdout, p.res.stderr = p.out.String(), p.errOut.String()
		close(p.done)
	}()
	c.t.Cleanup(func() {
		select {
		case <-p.done:
			return
		default:
		}
		p.cmd.Process.Signal(syscall.SIGTERM)
		t := time.NewTimer(15 * time.Second)
		defer t.Stop()
		select {
		case <-p.done:
		case <-t.C:
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// waitLine waits for a line of the command's stdout that starts with
// prefix and returns it.
func (p *proc) waitLine(ctx context.Context, prefix string) string {
	p.c.t.Helper()
	for {
		line, ok, changed := p.out.find(prefix)
		if ok {
			return line
		}
		select {
		case <-changed:
		case <-p.done:
			if line, ok, _ := p.out.find(prefix); ok {
				return line
			}
			p.c.t.Fatalf("orchestrator %s exited (%d) without printing a line starting %q\nstdout:\n%s\nstderr:\n%s",
				strings.Join(p.args, " "), p.res.code, prefix, p.res.stdout, p.res.stderr)
		case <-ctx.Done():
			p.c.t.Fatalf("no line starting %q from orchestrator %s by the deadline\nstdout:\n%s\nstderr:\n%s",
				prefix, strings.Join(p.args, " "), p.out.String(), p.errOut.String())
		}
	}
}

// wait waits for the command to end.
func (p *proc) wait(ctx context.Context) result {
	p.c.t.Helper()
	select {
	case <-p.done:
		return p.res
	case <-ctx.Done():
		p.c.t.Fatalf("orchestrator %s still running at the deadline\nstdout:\n%s\nstderr:\n%s",
			strings.Join(p.args, " "), p.out.String(), p.errOut.String())
		return result{}
	}
}

// lineLog collects a stream and lets waiters see each new line.
type lineLog struct {
	mu      sync.Mutex
	b       []byte
	changed chan struct{} // closed when more arrives
}

func newLineLog() *lineLog { return &lineLog{changed: make(chan struct{})} }

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b = append(l.b, p...)
	close(l.changed)
	l.changed = make(chan struct{})
	return len(p), nil
}

func (l *lineLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.b)
}

// find returns the first complete line starting with prefix, or a channel
// closed when more output arrives.
func (l *lineLog) find(prefix string) (string, bool, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	complete := l.b[:bytes.LastIndexByte(l.b, '\n')+1]
	for _, line := range strings.Split(string(complete), "\n") {
		if strings.HasPrefix(line, prefix) {
			return line, true, nil
		}
	}
	return "", false, l.changed
}

// lint runs orchestrator lint and fails the test unless both files are
// clean or have warnings only.
func (c *cli) lint(ctx context.Context) {
	c.t.Helper()
	r := c.run(ctx, nil, "lint")
	switch r.code {
	case 0:
		return
	case 1:
		for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
			if !strings.Contains(line, ": warning: ") {
				c.t.Errorf("orchestrator lint: %s", line)
			}
		}
	default:
		c.t.Errorf("orchestrator lint: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func testContext(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

const emptyQueue = "# Issue Queue\n"

// shLoopCLI sets up a CLI with an empty queue whose loop runs the shell
// script loop (as loop.sh) with the given timeout.
func shLoopCLI(t *testing.T, ctx context.Context, timeout, loop string) *cli {
	t.Helper()
	c := newCLI(t)
	c.setup(ctx, "[loop]\ncommand = \"sh loop.sh\"\ntimeout = \""+timeout+"\"\n", emptyQueue)
	c.write("loop.sh", loop)
	return c
}

// writeFifo writes data to a fifo once a reader has it open.
func writeFifo(ctx context.Context, t *testing.T, path, data string) {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			_, err = f.WriteString(data)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			return
		}
		if !errors.Is(err, syscall.ENXIO) {
			t.Fatal(err)
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("no reader opened %s by the deadline", path)
		}
	}
}

// checkAborted checks the state an aborted run leaves: outcome aborted, the
// retried issue id pending again with one retry counted (why says why), and
// both files valid.
func (c *cli) checkAborted(ctx context.Context, id, why string) {
	t := c.t
	t.Helper()
	if got, want := c.state().Outcome, "aborted"; got != want {
		t.Errorf("session_state.md outcome = %q, want %q", got, want)
	}
	is := c.queue().Issue(id)
	if is == nil {
		t.Fatalf("%s is gone from the queue", id)
	}
	if got, want := is.Status, issuequeue.StatusPending; got != want {
		t.Errorf("%s Status = %q, want %q", id, got, want)
	}
	if got, want := is.RetryCount, 1; got != want {
		t.Errorf("%s Retry-Count = %d, want %d (%s)", id, got, want, why)
	}
	c.lint(ctx)
}

// queueOf returns an issue queue with the given issues, each laid out as in
// the queue format, after a preamble.
func queueOf(preamble string, ids []string) string {
	var b strings.Builder
	b.WriteString("# Issue Queue\n\n" + preamble)
	for _, id := range ids {
		fmt.Fprintf(&b, `
## %s

| Field | Value |
|-------|-------|
| Type | test |
| Priority | high |
| Status | pending |
| Auto-Retry | true |
| Retry-Count | 0 |
| Max-Retries | 10 |
| Failure-Signature | |
| Previous-Signatures | [] |
| Signature-Repeat-Count | 0 |
| Halted | false |

### Summary
%s fails

### Failure Details

### Attempt History
| Attempt | Time | Type | Signature | Error |
|---|---|---|---|---|
`, id, id)
	}
	return b.String()
}

func issueIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("ISSUE-20261122-%03d", i+1)
	}
	return ids
}
