//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/autoretry/orchestrator/internal/statefile"
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

// skipShort skips, under -short (the race detector's run), a test that
// counts kills landing at random instants or holds a command to a wall-clock
// bound ("exits at once"): the detector's slowdown changes what such a test
// can count or time, not what it proves, and the plain run keeps them.
func skipShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short (the race detector's run): a storm test whose counts depend on speed")
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

// A process as /proc/PID/stat describes it.
type procStat struct {
	state      byte
	pgrp, sid  int
	startTicks uint64 // start time after boot: tells a reused pid apart
}

func readProcStat(pid int) (procStat, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, false
	}
	// The command name is in parentheses and may hold anything.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return procStat{}, false
	}
	var s procStat
	s.state = f[0][0]
	s.pgrp, _ = strconv.Atoi(f[2])
	s.sid, _ = strconv.Atoi(f[3])
	s.startTicks, _ = strconv.ParseUint(f[19], 10, 64)
	return s, true
}

// watched is a process that a test checks on, and kills when it ends if the
// product left it running.
type watched struct {
	pid  int
	stat procStat
	// exited is closed when the process exits; died is then the time on
	// the boot clock (monotonic, counting suspend).
	exited chan struct{}
	died   time.Duration
}

func watch(t *testing.T, pid int) *watched {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		t.Fatalf("process %d: %v", pid, err)
	}
	s, ok := readProcStat(pid)
	if !ok {
		unix.Close(fd)
		t.Fatalf("process %d is not running", pid)
	}
	w := &watched{pid: pid, stat: s, exited: make(chan struct{})}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			n, err := unix.Poll(fds, 100)
			if n > 0 || err != nil && err != unix.EINTR {
				w.died = bootNow()
				close(w.exited)
				return
			}
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	t.Cleanup(func() {
		close(stop)
		<-done
		if w.running() {
			unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
		}
		unix.Close(fd)
	})
	return w
}

// bootNow reads the boot clock.
func bootNow() time.Duration {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts)
	return time.Duration(ts.Nano())
}

// running reports whether the process still runs: same pid, same start
// time, and not a zombie (a zombie has exited; only its parent's wait is
// missing).
func (w *watched) running() bool {
	s, ok := readProcStat(w.pid)
	return ok && s.startTicks == w.stat.startTicks && s.state != 'Z' && s.state != 'X'
}

// groupMembers returns the live processes in process group pgrp.
func groupMembers(pgrp int) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if s, ok := readProcStat(pid); ok && s.pgrp == pgrp && s.state != 'Z' && s.state != 'X' {
			pids = append(pids, pid)
		}
	}
	return pids
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

// TestProcessConcurrentRuns proves: a second run while one
// holds the lock exits 4 at once, names the holder's pid and start time,
// runs nothing and writes nothing; the first run is not disturbed.
func TestProcessConcurrentRuns(t *testing.T) {
	skipShort(t)
	ctx := testContext(t, 30*time.Second)
	c := shLoopCLI(t, ctx, "1m", `echo x >> loops
echo started
read answer < release
echo "released $answer"
`)
	c.fifo("release")
	fifo := c.path("release")

	before := time.Now().UTC().Truncate(time.Second)
	first := c.start(ctx, nil, "run")
	first.waitLine(ctx, "started")
	state := c.read(".orchestrator/session_state.md")

	second := c.run(ctx, nil, "run")
	if got, want := second.code, 4; got != want {
		t.Fatalf("second run: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", got, want, second.stdout, second.stderr)
	}
	if second.wall >= time.Second {
		t.Errorf("second run took %v to give up; it must exit at once", second.wall)
	}
	if !regexp.MustCompile(fmt.Sprintf(`\bpid %d\b`, first.pid())).MatchString(second.stderr) {
		t.Errorf("second run's stderr does not name the holder's pid %d:\n%s", first.pid(), second.stderr)
	}
	m := regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d)`).FindString(second.stderr)
	since, err := time.Parse(time.RFC3339, m)
	if err != nil {
		t.Errorf("second run's stderr does not give the holder's start time:\n%s", second.stderr)
	} else if since.Before(before) || since.After(time.Now()) {
		t.Errorf("holder's start time %s is not when the first run started (after %s)", since, before)
	}
	if got := c.read(".orchestrator/session_state.md"); !bytes.Equal(got, state) {
		t.Errorf("the refused run changed session_state.md:\n%s", got)
	}

	writeFifo(ctx, t, fifo, "go\n")
	r := first.wait(ctx)
	if r.code != 0 {
		t.Fatalf("first run: exit %d, want 0\nstderr:\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "released go") {
		t.Errorf("first run's loop did not finish normally:\n%s", r.stdout)
	}
	if got, want := strings.Count(string(c.read("loops")), "x"), 1; got != want {
		t.Errorf("the loop ran %d times, want %d (the refused run must run nothing)", got, want)
	}
	t.Logf("refused run took %v", second.wall)
}

// TestProcessKilledRunLeavesNoLock proves that a run killed with SIGKILL
// leaves no stale lock (the kernel drops it with the process): the next run
// runs at once instead of exiting 4.
func TestProcessKilledRunLeavesNoLock(t *testing.T) {
	ctx := testContext(t, 30*time.Second)
	c := shLoopCLI(t, ctx, "1m", `echo x >> loops
if [ ! -e blocked-once ]; then
	: > blocked-once
	echo "started $$"
	read answer < release
fi
`)
	c.fifo("release")
	first := c.start(ctx, nil, "run")
	pid, _ := strconv.Atoi(strings.Fields(first.waitLine(ctx, "started "))[1])
	// Nothing can stop the loop of a run killed with SIGKILL; the test ends
	// it (watch kills it at the end).
	watch(t, pid)
	if err := first.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if r := first.wait(ctx); r.signal != "killed" {
		t.Fatalf("first run: exit %d (%s), want killed", r.code, r.signal)
	}
	r := c.run(ctx, nil, "run")
	if r.code != 0 {
		t.Fatalf("run after a killed run: exit %d, want 0\nstderr:\n%s", r.code, r.stderr)
	}
	if got, want := strings.Count(string(c.read("loops")), "x"), 2; got != want {
		t.Errorf("the loop ran %d times, want %d", got, want)
	}
	if got, want := c.state().Outcome, "completed"; got != want {
		t.Errorf("session_state.md outcome = %q, want %q", got, want)
	}
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

// TestProcessStopRun proves: SIGTERM to a run,
// or orchestrator abort from another process, during an auto-retry loop
// ends the loop's whole process group, puts the issue being retried back to
// pending, records the outcome "aborted" and exits 3.
func TestProcessStopRun(t *testing.T) {
	for _, how := range []string{"sigterm", "abort"} {
		t.Run(how, func(t *testing.T) {
			ctx := testContext(t, 30*time.Second)
			c := shLoopCLI(t, ctx, "5m", `if [ "$ORCHESTRATOR_LOOP_KIND" = regular ]; then
	orchestrator add --summary "server fails to start" --priority critical --auto-retry
	exit 0
fi
sleep 1000 &
echo "ready $$ $! $ORCHESTRATOR_LOOP_KIND $ORCHESTRATOR_ISSUES"
wait
`)
			run := c.start(ctx, nil, "run")
			f := strings.Fields(run.waitLine(ctx, "ready "))
			if len(f) != 5 || f[3] != "auto_retry" {
				t.Fatalf("want the auto-retry loop's ready line, got %q", f)
			}
			shPid, _ := strconv.Atoi(f[1])
			sleepPid, _ := strconv.Atoi(f[2])
			id := f[4]
			sh, sleep := watch(t, shPid), watch(t, sleepPid)
			pgrp := sh.stat.pgrp
			if !slices.Contains(groupMembers(pgrp), sleepPid) {
				t.Fatalf("the loop's background child %d is not in its process group %d", sleepPid, pgrp)
			}
			if is := c.queue().Issue(id); is == nil || is.Status != issuequeue.StatusInProgress {
				t.Fatalf("%s is not in_progress during its retry loop", id)
			}

			stopAt := time.Now()
			if how == "sigterm" {
				if err := run.cmd.Process.Signal(syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
			} else {
				a := c.run(ctx, nil, "abort")
				if a.code != 0 || !regexp.MustCompile(fmt.Sprintf(`\bpid %d\b`, run.pid())).MatchString(a.stdout) {
					t.Fatalf("orchestrator abort: exit %d, want 0 naming pid %d\nstdout:\n%s\nstderr:\n%s", a.code, run.pid(), a.stdout, a.stderr)
				}
			}
			r := run.wait(ctx)
			stopped := time.Since(stopAt)
			if r.code != 3 {
				t.Errorf("run: exit %d (%s), want 3\nstderr:\n%s", r.code, r.signal, r.stderr)
			}
			if !strings.Contains(r.stderr, "aborted") {
				t.Errorf("run's stderr does not say it was aborted:\n%s", r.stderr)
			}
			for _, w := range []*watched{sh, sleep} {
				if w.running() {
					t.Errorf("process %d of the loop survived the run", w.pid)
				}
			}
			if pids := groupMembers(pgrp); len(pids) > 0 {
				t.Errorf("processes %v of the loop's process group survived the run", pids)
			}
			c.checkAborted(ctx, id, "the interrupted attempt counts")
			t.Logf("run exited %v after the stop was asked for", stopped)
		})
	}
}

// TestProcessStopBetweenLoops proves abort for a SIGTERM that
// arrives after an auto-retry loop has ended and before the next one
// starts, while the run records the loop: the run starts no further loop
// and uses no further retry, the issue is pending, the outcome "aborted"
// and the exit status 3. The test holds the write lock while the loop
// ends, so that the run is certainly between loops, waiting to record it,
// when the signal comes.
func TestProcessStopBetweenLoops(t *testing.T) {
	ctx := testContext(t, 40*time.Second)
	c := shLoopCLI(t, ctx, "5m", `echo x >> loops
if [ "$ORCHESTRATOR_LOOP_KIND" = regular ]; then
	orchestrator add --summary "server fails to start" --priority critical --auto-retry
	exit 0
fi
echo "ready $$ $ORCHESTRATOR_ISSUES"
read answer < release
`)
	c.fifo("release")
	run := c.start(ctx, nil, "run")
	f := strings.Fields(run.waitLine(ctx, "ready "))
	shPid, _ := strconv.Atoi(f[1])
	id := f[2]
	sh := watch(t, shPid)

	lk, err := statefile.LockWrite(ctx, c.dir(), 10*time.Second, statefile.Owner{Command: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Unlock()
	writeFifo(ctx, t, c.path("release"), "go\n")
	select {
	case <-sh.exited:
	case <-ctx.Done():
		t.Fatal("the loop did not end")
	}
	waitLockWaiter(ctx, t, filepath.Join(c.dir(), statefile.LockFile))
	if err := run.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := lk.Unlock(); err != nil {
		t.Fatal(err)
	}

	r := run.wait(ctx)
	if r.code != 3 || !strings.Contains(r.stderr, "abort") {
		t.Errorf("run: exit %d (%s), want 3 saying it was aborted\nstderr:\n%s", r.code, r.signal, r.stderr)
	}
	if got, want := strings.Count(string(c.read("loops")), "x"), 2; got != want {
		t.Errorf("the loop ran %d times, want %d", got, want)
	}
	c.checkAborted(ctx, id, "one retry loop ran")
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

// waitLockWaiter waits until a process is blocked waiting for a lock on the
// lock file at path, as /proc/locks shows it ("->" lines).
func waitLockWaiter(ctx context.Context, t *testing.T, path string) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	ino := strconv.FormatUint(fi.Sys().(*syscall.Stat_t).Ino, 10)
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		b, err := os.ReadFile("/proc/locks")
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) > 6 && f[1] == "->" && strings.HasSuffix(f[6], ":"+ino) {
				return
			}
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("no process waited for a lock on %s by the deadline:\n%s", path, b)
		}
	}
}

// TestProcessNoGrandchildSurvives proves:
// not one that left the loop's process group with setsid, whether the loop
// ends on its own or by its timeout, and not one that also ignores SIGTERM:
// that one gets SIGKILL after the 10 s grace. Each grandchild's death is
// timed from the death of the loop's shell, which the same SIGTERM ends, on
// the kernel's clock, so that a loaded machine does not make the times lie.
func TestProcessNoGrandchildSurvives(t *testing.T) {
	t.Parallel()
	const escape = `setsid sh -c '%secho $$ > grandchild; exec sleep 1000' &
read pid < grandchild
echo "grandchild $pid $$"
`
	for _, tc := range []struct {
		name    string
		loop    string
		timeout string
		release bool // the loop waits for the test, then exits
		// From the loop shell's death to the grandchild's, as the test sees
		// them: either may be seen a little late on a loaded machine.
		min, max time.Duration
	}{
		{name: "loop_exits", loop: fmt.Sprintf(escape, "") + "read x < release\n", timeout: "1m", release: true,
			min: -5 * time.Second, max: 5 * time.Second},
		{name: "timeout", loop: fmt.Sprintf(escape, "") + "sleep 1000\n", timeout: "1s",
			min: -5 * time.Second, max: 5 * time.Second},
		{name: "timeout_ignores_sigterm", loop: fmt.Sprintf(escape, `trap "" TERM; `) + "sleep 1000\n", timeout: "1s",
			min: 9 * time.Second, max: 20 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := testContext(t, 60*time.Second)
			c := shLoopCLI(t, ctx, tc.timeout, tc.loop)
			c.fifo("grandchild")
			c.fifo("release")
			run := c.start(ctx, nil, "run")
			f := strings.Fields(run.waitLine(ctx, "grandchild "))
			pid, _ := strconv.Atoi(f[1])
			shPid, _ := strconv.Atoi(f[2])
			g, sh := watch(t, pid), watch(t, shPid)
			if g.stat.sid != pid || g.stat.pgrp != pid || sh.stat.pgrp == pid {
				t.Fatalf("the grandchild did not leave the loop's process group (pgrp %d, sid %d)", g.stat.pgrp, g.stat.sid)
			}
			if tc.release {
				writeFifo(ctx, t, c.path("release"), "go\n")
			}
			r := run.wait(ctx)
			if tc.release {
				if r.code != 0 {
					t.Errorf("run: exit %d (%s), want 0\nstderr:\n%s", r.code, r.signal, r.stderr)
				}
			} else {
				if !strings.Contains(r.stderr, "timed out") {
					t.Errorf("run's stderr does not report the timeout:\n%s", r.stderr)
				}
				if r.code != 0 && r.code != 3 {
					t.Errorf("run: exit %d (%s)\nstderr:\n%s", r.code, r.signal, r.stderr)
				}
			}
			for _, w := range []*watched{g, sh} {
				select {
				case <-w.exited:
				default:
					t.Fatalf("process %d survived the run", w.pid)
				}
			}
			if d := g.died - sh.died; d < tc.min || d > tc.max {
				t.Errorf("the grandchild died %v after the loop's shell, want between %v and %v", d, tc.min, tc.max)
			} else {
				t.Logf("the grandchild died %v after the loop's shell; the run took %v", d, r.wall)
			}
		})
	}
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

// TestProcessEightWriters proves: eight processes recording
// failures on eight different issues at once lose nothing. Each issue gets
// ten failures, two of each of five different outputs, so that every row,
// signature and counter of every issue is known.
func TestProcessEightWriters(t *testing.T) {
	skipShort(t)
	ctx := testContext(t, 50*time.Second)
	c := newCLI(t)
	ids := issueIDs(8)
	c.setup(ctx, "[loop]\ncommand = \"true\"\n", queueOf("", ids))
	words := []string{"alpha", "bravo", "charlie", "delta", "echo"}
	const attempts = 10
	output := func(w, k int) string {
		return fmt.Sprintf("FAIL: TestWriter%d: assertion %s failed", w, words[(k-1)/2])
	}

	start := time.Now()
	outcomes := raceFails(ctx, c, ids, attempts, output, nil)
	elapsed := time.Since(start)
	for _, o := range outcomes {
		r, repeat := o.res, 2-o.k%2
		if o.err != nil || r.code != 0 || !strings.Contains(r.stdout, fmt.Sprintf("repeat %d/3", repeat)) {
			t.Errorf("fail %s (attempt %d): exit %d (%v), want 0 and repeat %d/3\nstdout:\n%sstderr:\n%s",
				ids[o.w], o.k, r.code, o.err, repeat, r.stdout, r.stderr)
		}
	}

	q := c.queue()
	for w, id := range ids {
		is := q.Issue(id)
		if is == nil {
			t.Errorf("%s is gone", id)
			continue
		}
		_, rows, _ := is.Table(issuequeue.SectionAttemptHistory)
		if got, want := len(rows), attempts; got != want {
			t.Errorf("%s has %d Attempt History rows, want %d", id, got, want)
			continue
		}
		for k, row := range rows {
			if got, want := row[0], strconv.Itoa(k+1); got != want {
				t.Errorf("%s row %d: Attempt %q, want %q", id, k+1, got, want)
			}
			if got, want := row[4], strings.TrimSpace(output(w, k+1)); got != want {
				t.Errorf("%s row %d: Error %q, want %q", id, k+1, got, want)
			}
			// The two failures of each pair have one signature; pairs differ.
			if k%2 == 1 && row[3] != rows[k-1][3] {
				t.Errorf("%s rows %d and %d: signatures %s and %s differ for the same output", id, k, k+1, rows[k-1][3], row[3])
			}
			if k%2 == 0 && k > 0 && row[3] == rows[k-1][3] {
				t.Errorf("%s rows %d and %d: the same signature for different outputs", id, k, k+1)
			}
		}
		if got, want := is.SignatureRepeatCount, 2; got != want {
			t.Errorf("%s Signature-Repeat-Count = %d, want %d", id, got, want)
		}
		if !strings.HasPrefix(is.FailureSignature, rows[attempts-1][3]) || len(is.FailureSignature) != 64 {
			t.Errorf("%s Failure-Signature = %q, want the last row's %s…", id, is.FailureSignature, rows[attempts-1][3])
		}
		var wantPrev []string
		for k := 0; k < attempts-2; k += 2 {
			wantPrev = append(wantPrev, rows[k][3])
		}
		if len(is.PreviousSignatures) != len(wantPrev) {
			t.Errorf("%s Previous-Signatures = %v, want %d entries", id, is.PreviousSignatures, len(wantPrev))
		} else {
			for i, p := range is.PreviousSignatures {
				if !strings.HasPrefix(p, wantPrev[i]) {
					t.Errorf("%s Previous-Signatures[%d] = %s, want %s…", id, i, p, wantPrev[i])
				}
			}
		}
		if is.Status != issuequeue.StatusPending || is.Halted {
			t.Errorf("%s Status %q Halted %v, want pending and not halted", id, is.Status, is.Halted)
		}
	}

	// Every failure is in the event log once, on a line of its own.
	attemptsLogged := map[string][]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(c.read(".orchestrator/logs/retry.jsonl"))), "\n") {
		var ev struct {
			Event   string `json:"event"`
			IssueID string `json:"issue_id"`
			Attempt int    `json:"attempt"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Errorf("retry.jsonl: %v: %q", err, line)
			continue
		}
		if ev.Event == "attempt" {
			attemptsLogged[ev.IssueID] = append(attemptsLogged[ev.IssueID], ev.Attempt)
		}
	}
	for _, id := range ids {
		got := attemptsLogged[id]
		slices.Sort(got)
		if want := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}; !slices.Equal(got, want) {
			t.Errorf("retry.jsonl attempts of %s = %v, want %v", id, got, want)
		}
	}
	c.lint(ctx)
	t.Logf("%d failures recorded by 8 processes in %v", len(ids)*attempts, elapsed)
}

// TestProcessEditorSaveNotLost proves: a person's save that
// lands while commands are writing is not lost, and neither are the
// commands' changes.
//
// The editor saves as vim does: it reads the file, appends a word to a line
// of the preamble, writes a new file beside it, checks that the file was
// not changed since it read it, and renames the new file over it. It saves
// once during each fail's hold of the write lock, so that nearly every fail
// finds the file changed under it and must re-apply its change. Editors
// take no lock, so a command may still commit in the instant between the
// check and the rename, and the editor then overwrites it, as vim would.
// To account for that precisely the rename is an exchange, which leaves the
// replaced file at the temporary name: the test sees exactly what each save
// replaced, and the rows such a save threw away are the editor's doing.
// Everything else must be in the final file: every word the editor saved,
// and the row of every fail that reported success. A fail that reported an
// error must have written nothing.
func TestProcessEditorSaveNotLost(t *testing.T) {
	skipShort(t)
	ctx := testContext(t, 50*time.Second)
	c, ids := cliWithNotes(t, ctx, 8)
	const attempts = 8
	ed := &editor{t: t, path: filepath.Join(c.dir(), issuequeue.QueueFile), notes: notesLine, lostRows: map[string]bool{}}
	outcomes := raceFails(ctx, c, ids, attempts, failRow, func(stop <-chan struct{}) { ed.run(ctx, stop) })

	final := c.read(".orchestrator/issue_queue.md")
	present := rowsOf(final)
	reported, raced := 0, false
	for _, o := range outcomes {
		switch {
		case o.err != nil:
			t.Error(o.err)
		case o.res.code == 0:
			if present[o.row] == 0 && !ed.lostRows[o.row] {
				t.Errorf("%q: fail reported success, but its row is not in the queue", o.row)
			}
			if present[o.row] > 1 {
				t.Errorf("%q: the row is in the queue %d times", o.row, present[o.row])
			}
		case o.res.code == 2 && (strings.Contains(o.res.stderr, "changed meanwhile") || strings.Contains(o.res.stderr, "changed since it was read")):
			reported++
			if present[o.row] > 0 {
				t.Errorf("%q: fail reported a conflict, but its row is in the queue", o.row)
			}
		case o.res.code == 2 && strings.Contains(o.res.stderr, "raced"):
			// Two saves within microseconds of each other (statefile's
			// documented limit): the write is refused and the other save
			// kept beside the file.
			reported++
			raced = true
			if present[o.row] > 0 {
				t.Errorf("%q: fail reported a race, but its row is in the queue", o.row)
			}
		default:
			t.Errorf("%q: fail: exit %d\n%s", o.row, o.res.code, o.res.stderr)
		}
		delete(present, o.row)
	}
	for row := range present {
		t.Errorf("the queue holds a row no fail reported: %q", row)
	}

	words := notesWords(final, notesLine)
	if raced {
		// The save that raced is in a .saved file, which a person merges.
		var kept [][]byte
		saved, _ := filepath.Glob(filepath.Join(c.dir(), issuequeue.QueueFile+".saved-*"))
		for _, s := range saved {
			b, _ := os.ReadFile(s)
			kept = append(kept, b)
		}
		for _, w := range ed.placed {
			found := slices.Contains(words, w)
			for _, b := range kept {
				found = found || slices.Contains(notesWords(b, notesLine), w)
			}
			if !found {
				t.Errorf("the editor's saved word %q is neither in the queue nor in %v", w, saved)
			}
		}
	} else {
		if !slices.Equal(words, ed.placed) {
			t.Errorf("the final preamble holds the words %v, want the editor's saves %v", words, ed.placed)
		}
		for _, w := range ed.lostWords {
			if !slices.Contains(words, w) {
				t.Errorf("a command's write dropped the editor's saved word %q", w)
			}
		}
	}
	c.lint(ctx)
	t.Logf("%d fails, %d editor saves (%d in the middle of a command's write), %d saves displaced a command's commit (%d rows), %d fails reported a conflict",
		len(outcomes), ed.saves, ed.duringWrite, ed.clobbers, len(ed.lostRows), reported)
	if ed.duringWrite == 0 {
		t.Errorf("no editor save landed in the middle of a command's write")
	}
}

// notesLine is the preamble line the editors of the race tests append their
// words to.
const notesLine = "Notes:"

// cliWithNotes sets up a CLI whose queue holds n issues below the preamble
// line notesLine; it returns the CLI and the issues' IDs.
func cliWithNotes(t *testing.T, ctx context.Context, n int) (*cli, []string) {
	t.Helper()
	c := newCLI(t)
	ids := issueIDs(n)
	c.setup(ctx, "[loop]\ncommand = \"true\"\n", queueOf(notesLine+"\n", ids))
	return c, ids
}

// editor plays a person saving issue_queue.md while commands write it.
type editor struct {
	t     *testing.T
	path  string
	notes string // the preamble line it appends words to

	placed    []string        // the words of the line in its last save
	lostWords []string        // words it had saved that a later read lacked
	lostRows  map[string]bool // rows its own saves overwrote
	saves     int
	clobbers  int
	// saves made while the command that held the write lock before the
	// save still held it after
	duringWrite int
}

// run saves once while each command holds the write lock, so that the
// saves land in the middle of the commands' writes, until stop is closed.
func (e *editor) run(ctx context.Context, stop <-chan struct{}) {
	tmp := filepath.Join(filepath.Dir(e.path), ".issue_queue.md.editor")
	e.duringWrite = saveDuringWrites(ctx, e.t, stop, filepath.Dir(e.path), func(n int) (bool, error) {
		cur, err := os.ReadFile(e.path)
		if err != nil {
			return false, err
		}
		next := appendWord(cur, e.notes, fmt.Sprintf("edit%03d", n))
		if err := os.WriteFile(tmp, next, 0o644); err != nil {
			return false, err
		}
		if now, _ := os.ReadFile(e.path); !bytes.Equal(now, cur) {
			return false, nil // changed since reading: read it again
		}
		if err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, e.path, unix.RENAME_EXCHANGE); err != nil {
			return false, err
		}
		displaced, err := os.ReadFile(tmp)
		if err != nil {
			return false, err
		}
		os.Remove(tmp)
		// A word of an earlier save missing from what the editor read, and
		// from what its save replaced, was dropped by a command.
		for _, w := range e.placed {
			if !slices.Contains(notesWords(cur, e.notes), w) && !slices.Contains(notesWords(displaced, e.notes), w) {
				e.lostWords = append(e.lostWords, w)
			}
		}
		if clobbered(e.lostRows, cur, next, displaced) {
			e.clobbers++
		}
		e.placed = notesWords(next, e.notes)
		e.saves++
		return true, nil
	})
}

// saveDuringWrites calls save once while each command holds the write lock
// of the state directory dir, so that saves land in the middle of the
// commands' writes, until stop is closed; save(n) is the nth save, and
// returns false to be called again for the same command (the file changed
// under it). It only looks at the lock (as F_OFD_GETLK does, without taking
// it) to time the saves; the saves themselves ignore it, as editors do. It
// returns how many saves ended while the command holding the lock when they
// began still held it.
func saveDuringWrites(ctx context.Context, t *testing.T, stop <-chan struct{}, dir string, save func(n int) (bool, error)) (duringWrite int) {
	savedDuring := map[int]bool{} // holders' pids
	tick := time.NewTicker(500 * time.Microsecond)
	defer tick.Stop()
	for n := 1; ; {
		select {
		case <-stop:
			return duringWrite
		case <-ctx.Done():
			return duringWrite
		case <-tick.C:
		}
		holder, held, err := statefile.WriteHolder(dir)
		if err != nil {
			t.Errorf("editor: %v", err)
			return duringWrite
		}
		if !held || holder.PID == 0 || savedDuring[holder.PID] {
			continue
		}
		ok, err := save(n)
		if err != nil {
			t.Errorf("editor: %v", err)
			return duringWrite
		}
		if !ok {
			continue
		}
		if h, held, _ := statefile.WriteHolder(dir); held && h.PID == holder.PID {
			duringWrite++
		}
		savedDuring[holder.PID] = true
		n++
	}
}

// clobbered reports whether a vim-style save of next, checked against cur,
// displaced something else: a command committed after the check, and the
// save overwrote it, as vim would have. The rows it threw away go into
// lostRows.
func clobbered(lostRows map[string]bool, cur, next, displaced []byte) bool {
	if bytes.Equal(displaced, cur) {
		return false
	}
	kept := rowsOf(next)
	for r := range rowsOf(displaced) {
		if kept[r] == 0 {
			lostRows[r] = true
		}
	}
	return true
}

// appendWord appends " word" to the first line of src that starts with
// prefix.
func appendWord(src []byte, prefix, word string) []byte {
	i := bytes.Index(src, []byte("\n"+prefix))
	if i < 0 {
		return src
	}
	end := i + 1 + bytes.IndexByte(src[i+1:], '\n')
	out := append([]byte(nil), src[:end]...)
	out = append(out, " "+word...)
	return append(out, src[end:]...)
}

// notesWords returns the words after prefix on the first line of src that
// starts with it.
func notesWords(src []byte, prefix string) []string {
	i := bytes.Index(src, []byte("\n"+prefix))
	if i < 0 {
		return nil
	}
	line := src[i+1+len(prefix):]
	if j := bytes.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	return strings.Fields(string(line))
}

// rowsOf counts the Error cells of the Attempt History rows; in these tests
// each fail's is unique.
func rowsOf(src []byte) map[string]int {
	q := issuequeue.ParseQueue(issuequeue.QueueFile, src)
	rows := map[string]int{}
	for _, is := range q.Issues {
		_, rs, _ := is.Table(issuequeue.SectionAttemptHistory)
		for _, r := range rs {
			if len(r) > 4 {
				rows[r[4]]++
			}
		}
	}
	return rows
}

// TestProcessKillMidWrite proves: a kill -9 at any instant of a
// real command leaves the queue either as it was or as the command would
// have left it, byte for byte, never torn, and so does the next command,
// which completes a change the kill interrupted. The queue is about 5 MB so that
// writing it takes time. What the command would have left is computed by
// running the same command, unkilled, on a copy of the state directory.
// Half the kills land at a random instant of the whole command; the other
// half at a random instant after its temporary file appears, mid-write.
func TestProcessKillMidWrite(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 120*time.Second)
	const budget = 15 * time.Second
	c := newCLI(t)
	oracle := newCLI(t)
	// A fixed clock makes the command's result the same in both places.
	env := []string{"ORCHESTRATOR_NOW=2026-11-22T10:15:00Z"}
	queue := bigQueue(5 << 20)
	c.setup(ctx, "[loop]\ncommand = \"true\"\n", queue)
	oracle.setup(ctx, "[loop]\ncommand = \"true\"\n", queue)
	c.lint(ctx)
	const id = "ISSUE-20261122-001"
	queuePath := filepath.Join(c.dir(), issuequeue.QueueFile)

	prev := []byte(queue)
	start := time.Now()
	var kills, targetedKills, old, advanced, midWrite int
	for i := 0; time.Since(start) < budget && i < 40; i++ {
		out := c.path(fmt.Sprintf("out-%d.txt", i))
		if err := os.WriteFile(out, fmt.Appendf(nil, "FAIL: iteration %s broke the build\n", strings.Repeat("x", i+1)), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(oracle.dir(), issuequeue.QueueFile), prev, 0o644); err != nil {
			t.Fatal(err)
		}
		want := oracle.run(ctx, env, "fail", id, "--output", out)
		if want.code != 0 {
			t.Fatalf("fail (unkilled): exit %d\n%s", want.code, want.stderr)
		}
		next := oracle.read(".orchestrator/issue_queue.md")

		var r result
		var killed bool
		targeted := i%2 == 0
		if targeted {
			r, killed = killWithin(ctx, t, c, env, 20*time.Millisecond, func(base string) bool {
				return strings.HasPrefix(base, ".issue_queue.md.tmp-")
			}, "fail", id, "--output", out)
		} else {
			r, killed = killWithin(ctx, t, c, env, want.wall+want.wall/5, nil, "fail", id, "--output", out)
		}
		got, err := os.ReadFile(queuePath)
		if err != nil {
			t.Fatalf("after kill %d: %v", i, err)
		}
		switch {
		case r.signal == "killed":
			kills++
			if targeted {
				targetedKills++
			}
			switch {
			case bytes.Equal(got, prev):
				old++
			case bytes.Equal(got, next):
				advanced++
			default:
				t.Fatalf("kill %d: the queue is neither the old nor the new content (%d bytes; old %d, new %d)", i, len(got), len(prev), len(next))
			}
		case r.code == 0:
			if !bytes.Equal(got, next) {
				t.Fatalf("iteration %d: fail succeeded but the queue differs from the unkilled run's", i)
			}
		default:
			t.Fatalf("iteration %d: fail: exit %d (killed: %v)\n%s", i, r.code, killed, r.stderr)
		}
		temps, _ := filepath.Glob(filepath.Join(c.dir(), ".issue_queue.md.tmp-*"))
		if len(temps) > 1 {
			t.Errorf("kill %d left %d temporary files, want at most one", i, len(temps))
		}
		if len(temps) > 0 {
			midWrite++
		}
		// Leftover temporaries are removed only after a minute; each holds
		// 5 MB, so the test removes them itself.
		for _, tmp := range temps {
			os.Remove(tmp)
		}
		// A kill between the intent record and the end of the change has
		// the next command complete it (lint does so first): the queue
		// is then the new content.
		c.lint(ctx)
		if got = c.read(".orchestrator/issue_queue.md"); !bytes.Equal(got, prev) && !bytes.Equal(got, next) {
			t.Fatalf("kill %d: after the next command the queue is neither the old nor the new content", i)
		}
		prev = got
	}
	t.Logf("%d kills in %v: %d left the old queue, %d the new one; %d killed mid-write (temporary file left)",
		kills, time.Since(start).Round(time.Millisecond), old, advanced, midWrite)
	// A kill shortly after the temporary file appears lands while the new
	// queue is being written, unless the machine is very fast.
	if targetedKills >= 2 && midWrite == 0 {
		t.Errorf("none of %d kills aimed at the write landed while the new queue was being written", targetedKills)
	}
}

// bigQueue returns a queue of about size bytes: the issue the test fails,
// and an issue whose Failure Details hold a long build log.
func bigQueue(size int) string {
	var b strings.Builder
	b.WriteString(queueOf("", []string{"ISSUE-20261122-001"}))
	b.WriteString("\n## ISSUE-20261122-002\n\n| Field | Value |\n|-------|-------|\n| Priority | low |\n\n### Summary\nslow build\n\n### Failure Details\n```\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "2026-11-22T10:00:%02dZ step %d: compiling example.com/mod/pkg%d ... ok\n", i%60, i, i%97)
	}
	b.WriteString("```\n")
	return b.String()
}

// TestProcessBreakerAcrossRuns proves: the circuit breaker
// counts failed loops across runs, opens at the third, keeps the next run
// from running the loop at all while it cools down, and after the cooldown
// lets one trial loop close it. Each run whose loop failed says so with
// exit 3 (loop_failed) before the breaker opens, so that cron mails it.
func TestProcessBreakerAcrossRuns(t *testing.T) {
	skipShort(t)
	ctx := testContext(t, 30*time.Second)
	c := newCLI(t)
	c.setup(ctx, "[loop]\ncommand = \"sh loop.sh\"\n", emptyQueue)
	c.write("loop.sh", `echo x >> loops
[ -e fixed ]
`)
	loops := func() int {
		b, err := os.ReadFile(c.path("loops"))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		return bytes.Count(b, []byte("x"))
	}
	now := []string{"ORCHESTRATOR_NOW=2026-11-22T10:15:00Z"}
	for i := 1; i <= 3; i++ {
		r := c.run(ctx, now, "run")
		st := c.state()
		if got, want := st.ConsecutiveFailures, i; got != want {
			t.Fatalf("run %d: consecutive_failures = %d, want %d", i, got, want)
		}
		if got, want := loops(), i; got != want {
			t.Fatalf("run %d: the loop ran %d times in all, want %d", i, got, want)
		}
		if i < 3 {
			if r.code != 3 || !strings.Contains(r.stderr, "stopped (loop_failed): the loop command failed in loop 1 (exited with status 1)") {
				t.Fatalf("run %d: exit %d before the breaker opened, want 3 with loop_failed\n%s", i, r.code, r.stderr)
			}
			if st.Breaker != issuequeue.BreakerClosed {
				t.Fatalf("run %d: breaker %q, want closed", i, st.Breaker)
			}
			continue
		}
		if r.code != 3 || !strings.Contains(r.stderr, "circuit breaker opened") {
			t.Fatalf("run 3: exit %d, want 3 with \"circuit breaker opened\"\n%s", r.code, r.stderr)
		}
		if st.Breaker != issuequeue.BreakerOpen || st.OpenedAt.IsZero() {
			t.Fatalf("run 3: breaker %q opened_at %v, want open with a time", st.Breaker, st.OpenedAt)
		}
	}
	openedAt := c.state().OpenedAt

	at := func(d time.Duration) []string {
		return []string{"ORCHESTRATOR_NOW=" + openedAt.Add(d).Format(time.RFC3339)}
	}
	r := c.run(ctx, at(29*time.Minute), "run")
	if r.code != 3 || !regexp.MustCompile(`circuit breaker (is )?open\b`).MatchString(r.stderr) {
		t.Fatalf("run inside the cooldown: exit %d, want 3 naming the open breaker\n%s", r.code, r.stderr)
	}
	if r.wall >= time.Second {
		t.Errorf("run inside the cooldown took %v; it must exit at once", r.wall)
	}
	if got, want := loops(), 3; got != want {
		t.Fatalf("run inside the cooldown ran the loop (%d runs of it in all, want %d)", got, want)
	}

	c.write("fixed", "")
	r = c.run(ctx, at(31*time.Minute), "run")
	if r.code != 0 {
		t.Fatalf("run after the cooldown: exit %d, want 0\n%s", r.code, r.stderr)
	}
	if got, want := loops(), 4; got != want {
		t.Errorf("run after the cooldown ran the loop %d times, want 1 trial", got-3)
	}
	st := c.state()
	if st.Breaker != issuequeue.BreakerClosed || st.ConsecutiveFailures != 0 || !st.OpenedAt.IsZero() {
		t.Errorf("after the trial loop: breaker %q, consecutive_failures %d, opened_at %v; want closed, 0, null",
			st.Breaker, st.ConsecutiveFailures, st.OpenedAt)
	}
	c.lint(ctx)
}
