package procgroup_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/procgroup"
	"golang.org/x/sys/unix"
)

// runBounded runs s and fails the test if Run does not return within 20 s.
func runBounded(t *testing.T, ctx context.Context, s procgroup.Spec) procgroup.Result {
	t.Helper()
	type ret struct {
		res procgroup.Result
		err error
	}
	done := make(chan ret, 1)
	go func() {
		res, err := procgroup.Run(ctx, s)
		done <- ret{res, err}
	}()
	watchdog := time.NewTimer(20 * time.Second)
	defer watchdog.Stop()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatalf("Run: %v", r.err)
		}
		return r.res
	case <-watchdog.C:
		t.Fatal("Run did not return within 20 s")
	}
	panic("unreachable")
}

const tagVar = "PROCGROUP_TEST_TAG"

// taggedEnv returns this process's environment plus a variable unique to the
// test, by which its processes can be found in /proc.
func taggedEnv(t *testing.T) (env []string, tag string) {
	tag = tagVar + "=" + rand.Text()
	return append(os.Environ(), tag), tag
}

// tagged lists the live processes whose environment holds tag.
func tagged(t *testing.T, tag string) []int {
	t.Helper()
	return procs(t, func(pid int) bool {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil {
			return false
		}
		for _, kv := range bytes.Split(b, []byte{0}) {
			if string(kv) == tag {
				return true
			}
		}
		return false
	})
}

// procs lists the processes in /proc for which keep is true.
func procs(t *testing.T, keep func(pid int) bool) []int {
	t.Helper()
	names, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, name := range names {
		if pid, err := strconv.Atoi(filepath.Base(name)); err == nil && keep(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// stat returns the state and parent of pid from /proc/PID/stat.
func stat(pid int) (state string, ppid int, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", 0, false
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	ppid, _ = strconv.Atoi(f[1])
	return f[0], ppid, true
}

// zombieChildren lists the unreaped children of this process.
func zombieChildren(t *testing.T) []int {
	t.Helper()
	return procs(t, func(pid int) bool {
		state, ppid, ok := stat(pid)
		return ok && ppid == os.Getpid() && state == "Z"
	})
}

// assertNothingLeft checks that no process with tag runs and no child of
// this process is left unreaped.
func assertNothingLeft(t *testing.T, tag string) {
	t.Helper()
	if pids := tagged(t, tag); len(pids) > 0 {
		t.Errorf("processes of the command still running: %v", pids)
	}
	if pids := zombieChildren(t); len(pids) > 0 {
		t.Errorf("zombie children left: %v", pids)
	}
}

// assertGone checks that pid no longer exists: killed and reaped.
func assertGone(t *testing.T, pid int) {
	t.Helper()
	if state, ppid, ok := stat(pid); ok {
		t.Errorf("process %d still exists (state %s, parent %d)", pid, state, ppid)
	}
}

func firstLinePid(t *testing.T, out []byte) int {
	t.Helper()
	line, _, _ := bytes.Cut(out, []byte("\n"))
	pid, err := strconv.Atoi(string(line))
	if err != nil || pid <= 0 {
		t.Fatalf("first line of output %q is not a pid", out)
	}
	return pid
}

// Escaping descendants below hand their pid over through a FIFO that they
// write only after setsid, so the leader exits only once they have left its
// process group and session.
const escapeScript = `mkfifo "$T/pid"
(setsid sh -c 'echo $$ > "$1"; exec sleep 1000' sh "$T/pid" &)
read pid < "$T/pid"
echo $pid
`

func TestRunExitCodes(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("echo hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		command string
		code    int
		signal  string
	}{
		{"exit 0", 0, ""},
		{"exit 1", 1, ""},
		{"exit 2", 2, ""},
		{"./notes.txt", 126, ""},
		{"no-such-command-for-procgroup", 127, ""},
		{"kill -TERM $$", 128 + 15, "SIGTERM"},
		{"kill -KILL $$", 128 + 9, "SIGKILL"},
	}
	for _, tt := range tests {
		t.Run(tt.command, func(t *testing.T) {
			res := runBounded(t, context.Background(), procgroup.Spec{Command: tt.command, Dir: dir})
			if got, want := res.ExitCode, tt.code; got != want {
				t.Errorf("ExitCode = %d, want %d", got, want)
			}
			if got, want := res.Signal, tt.signal; got != want {
				t.Errorf("Signal = %q, want %q", got, want)
			}
			if res.TimedOut || res.Idle || res.Canceled || res.StoppedBy != "" {
				t.Errorf("TimedOut, Idle, Canceled, StoppedBy = %v, %v, %v, %q; want none set",
					res.TimedOut, res.Idle, res.Canceled, res.StoppedBy)
			}
		})
	}
}

func TestRunMergesOutputInOrder(t *testing.T) {
	var want strings.Builder
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&want, "out %d\nerr %d\n", i, i)
	}
	var out bytes.Buffer
	res := runBounded(t, context.Background(), procgroup.Spec{
		Command: `i=1; while [ $i -le 300 ]; do echo "out $i"; echo "err $i" >&2; i=$((i+1)); done`,
		Output:  &out,
		Tail:    1 << 20,
	})
	if got := out.String(); got != want.String() {
		t.Errorf("Output differs from the interleaved stdout and stderr:\n%.200s…", got)
	}
	if got, want := string(res.Tail), want.String(); got != want {
		t.Errorf("Tail differs from the whole output:\n%.200s…", got)
	}
	if got, want := res.OutputBytes, int64(want.Len()); got != want {
		t.Errorf("OutputBytes = %d, want %d", got, want)
	}
}

func TestRunEnvironment(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	runBounded(t, context.Background(), procgroup.Spec{
		// cat would wait forever on a terminal; stdin is /dev/null.
		Command: `pwd -P; echo "$FOO"; echo "$` + procgroup.MarkerEnv + `"; readlink /proc/self/fd/0; cat; echo end`,
		Dir:     dir,
		Env:     []string{"FOO=bar", procgroup.MarkerEnv + "=outer"},
		Output:  &out,
	})
	lines := strings.Split(out.String(), "\n")
	if len(lines) != 6 {
		t.Fatalf("output %q: want 5 lines", out.String())
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := lines[0], realDir; got != want {
		t.Errorf("working directory = %q, want %q", got, want)
	}
	if got, want := lines[1], "bar"; got != want {
		t.Errorf("FOO = %q, want %q", got, want)
	}
	if outer, token, ok := strings.Cut(lines[2], ":"); !ok || outer != "outer" || token == "" {
		t.Errorf("%s = %q, want the inherited value, a colon and a token", procgroup.MarkerEnv, lines[2])
	}
	if got, want := lines[3], os.DevNull; got != want {
		t.Errorf("stdin = %q, want %q", got, want)
	}
	if got, want := lines[4], "end"; got != want {
		t.Errorf("after cat: %q, want %q", got, want)
	}
}

// seqOutput is what seq 1 n prints.
func seqOutput(n int) []byte {
	var b bytes.Buffer
	for i := 1; i <= n; i++ {
		b.WriteString(strconv.Itoa(i))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func TestRunBoundsTailAndLog(t *testing.T) {
	const lines = 500000 // 3.4 MB
	want := seqOutput(lines)
	if len(want) < 3<<20 {
		t.Fatalf("test output is %d bytes, want at least 3 MiB", len(want))
	}
	logPath := filepath.Join(t.TempDir(), "loop-1.log")
	var out bytes.Buffer
	res := runBounded(t, context.Background(), procgroup.Spec{
		Command: "seq 1 " + strconv.Itoa(lines),
		Output:  &out,
		Tail:    64 << 10,
		LogPath: logPath,
	})
	if !bytes.Equal(out.Bytes(), want) {
		t.Errorf("Output got %d bytes, not the %d bytes of seq", out.Len(), len(want))
	}
	if got, want := res.OutputBytes, int64(len(want)); got != want {
		t.Errorf("OutputBytes = %d, want %d", got, want)
	}
	if got, want := res.Tail, want[len(want)-64<<10:]; !bytes.Equal(got, want) {
		t.Errorf("Tail is %d bytes ending %q, want the last 64 KiB", len(got), got[max(0, len(got)-20):])
	}
	log, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	note := fmt.Sprintf("[%d bytes of earlier output cut; the last %d bytes follow]\n", len(want)-procgroup.DefaultLogLimit, procgroup.DefaultLogLimit)
	if got, want := string(log[:min(len(log), len(note))]), note; got != want {
		t.Errorf("log starts %q, want %q", got, want)
	}
	if got, want := log[min(len(log), len(note)):], want[len(want)-procgroup.DefaultLogLimit:]; !bytes.Equal(got, want) {
		t.Errorf("log holds %d bytes after the note, not the last 1 MiB of output", len(got))
	}
}

func TestRunLogWithoutCut(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "loop.log")
	runBounded(t, context.Background(), procgroup.Spec{Command: "echo one; echo two >&2", LogPath: logPath})
	got, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if want := "one\ntwo\n"; string(got) != want {
		t.Errorf("log = %q, want %q", got, want)
	}
}

// allocated returns the bytes Run allocates while the command prints n lines.
func allocated(t *testing.T, n int, logPath string) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res := runBounded(t, context.Background(), procgroup.Spec{
		Command: "seq 1 " + strconv.Itoa(n),
		Tail:    64 << 10,
		LogPath: logPath,
	})
	runtime.ReadMemStats(&after)
	if got, want := res.OutputBytes, int64(len(seqOutput(n))); got != want {
		t.Fatalf("OutputBytes = %d, want %d", got, want)
	}
	return after.TotalAlloc - before.TotalAlloc
}

func TestRunMemoryDoesNotGrowWithOutput(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "loop.log")
	small := allocated(t, 500000, logPath)  // 3.4 MB of output
	large := allocated(t, 2000000, logPath) // 14.9 MB of output
	t.Logf("allocated %d bytes for 3.4 MB of output, %d for 14.9 MB", small, large)
	if small > 1<<20 {
		t.Errorf("Run allocated %d bytes for 3.4 MB of output, want at most 1 MiB", small)
	}
	if large > small+256<<10 {
		t.Errorf("Run allocated %d bytes for 14.9 MB of output and %d for 3.4 MB: it grows with the output", large, small)
	}
}

func TestRunTimeoutTerminatesGroup(t *testing.T) {
	env, tag := taggedEnv(t)
	res := runBounded(t, context.Background(), procgroup.Spec{
		Command: "sleep 1000 & sleep 1000 & wait",
		Env:     env,
		Timeout: 200 * time.Millisecond,
		Grace:   200 * time.Millisecond,
	})
	if !res.TimedOut || res.Canceled {
		t.Errorf("TimedOut = %v, Canceled = %v; want true, false", res.TimedOut, res.Canceled)
	}
	if got, want := res.Signal, "SIGTERM"; got != want {
		t.Errorf("Signal = %q, want %q", got, want)
	}
	if got, want := res.ExitCode, 143; got != want {
		t.Errorf("ExitCode = %d, want %d", got, want)
	}
	assertNothingLeft(t, tag)
}

func TestRunTimeoutKillsWhatIgnoresTERM(t *testing.T) {
	// The timeout leaves the shell ample time to run trap first.
	const timeout, grace = 300 * time.Millisecond, 200 * time.Millisecond
	tests := []struct {
		name    string
		command string
		signal  string
	}{
		{"the shell ignores TERM", "trap '' TERM; sleep 1000; sleep 1000", "SIGKILL"},
		{"a child ignores TERM", "(trap '' TERM; sleep 1000; sleep 1000) & wait", "SIGTERM"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, tag := taggedEnv(t)
			res := runBounded(t, context.Background(), procgroup.Spec{
				Command: tt.command,
				Env:     env,
				Timeout: timeout,
				Grace:   grace,
			})
			if !res.TimedOut {
				t.Error("TimedOut = false, want true")
			}
			if got, want := res.Signal, tt.signal; got != want {
				t.Errorf("Signal = %q, want %q", got, want)
			}
			if res.Duration < timeout+grace {
				t.Errorf("Duration = %v, want at least timeout + grace = %v", res.Duration, timeout+grace)
			}
			assertNothingLeft(t, tag)
		})
	}
}

// onFirstLine records output and calls fn once the first line is complete.
type onFirstLine struct {
	bytes.Buffer
	fn   func()
	done bool
}

func (w *onFirstLine) Write(p []byte) (int, error) {
	n, err := w.Buffer.Write(p)
	if !w.done && bytes.IndexByte(w.Bytes(), '\n') >= 0 {
		w.done = true
		w.fn()
	}
	return n, err
}

func TestRunKillsEscapedDescendants(t *testing.T) {
	tests := []struct {
		name    string
		command string
		// cancel stops the command once it has printed the escaped pid.
		cancel bool
		// ignoresTERM: the escaped process must be given the grace period.
		ignoresTERM bool
	}{
		{"leader exits 0", escapeScript + "exit 0", false, false},
		{"leader exits, the escaped process ignores TERM",
			strings.Replace(escapeScript, "echo $$", `trap "" TERM; echo $$`, 1) + "exit 0", false, true},
		{"leader canceled", escapeScript + "sleep 1000", true, false},
		{"leader canceled while the escaped process is still its child",
			strings.Replace(escapeScript, "(setsid sh -c 'echo $$ > \"$1\"; exec sleep 1000' sh \"$T/pid\" &)",
				"setsid sh -c 'echo $$ > \"$1\"; exec sleep 1000' sh \"$T/pid\" &", 1) + "sleep 1000",
			true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const grace = 200 * time.Millisecond
			env, tag := taggedEnv(t)
			env = append(env, "T="+t.TempDir())
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			out := &onFirstLine{fn: func() {
				if tt.cancel {
					cancel()
				}
			}}
			res := runBounded(t, ctx, procgroup.Spec{
				Command: tt.command,
				Env:     env,
				Output:  out,
				Grace:   grace,
			})
			pid := firstLinePid(t, out.Bytes())
			if tt.ignoresTERM && res.Duration < grace {
				t.Errorf("Duration = %v, want at least the grace period %v", res.Duration, grace)
			}
			if got, want := res.Canceled, tt.cancel; got != want {
				t.Errorf("Canceled = %v, want %v", got, want)
			}
			if !tt.cancel && res.ExitCode != 0 {
				t.Errorf("ExitCode = %d, want 0", res.ExitCode)
			}
			assertGone(t, pid)
			assertNothingLeft(t, tag)
		})
	}
}

func TestRunCancel(t *testing.T) {
	env, tag := taggedEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	sawReady := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		ready := false
		for sc.Scan() {
			if sc.Text() == "ready" && !ready {
				ready = true
				cancel()
			}
		}
		sawReady <- ready
	}()
	res := runBounded(t, ctx, procgroup.Spec{
		Command: "sleep 1000 & echo ready; wait",
		Env:     env,
		Output:  pw,
		Grace:   200 * time.Millisecond,
	})
	pw.Close()
	if !<-sawReady {
		t.Fatal("the command never printed ready")
	}
	if !res.Canceled || res.TimedOut {
		t.Errorf("Canceled = %v, TimedOut = %v; want true, false", res.Canceled, res.TimedOut)
	}
	if got, want := res.Signal, "SIGTERM"; got != want {
		t.Errorf("Signal = %q, want %q", got, want)
	}
	assertNothingLeft(t, tag)
}

func TestRunCanceledBeforeStart(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := procgroup.Run(ctx, procgroup.Spec{Command: "touch started", Dir: dir})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want %v", err, context.Canceled)
	}
	if got, want := res.ExitCode, -1; got != want {
		t.Errorf("ExitCode = %d, want %d", got, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "started")); err == nil {
		t.Error("the command ran")
	}
}

func TestRunStartFailure(t *testing.T) {
	res, err := procgroup.Run(context.Background(), procgroup.Spec{
		Command: "true",
		Dir:     filepath.Join(t.TempDir(), "missing"),
	})
	if err == nil {
		t.Fatal("Run in a missing directory: no error")
	}
	if got, want := res.ExitCode, -1; got != want {
		t.Errorf("ExitCode = %d, want %d", got, want)
	}
}

func TestRunReturnsWhileAnEscapedProcessHoldsThePipe(t *testing.T) {
	// The escaped sleep keeps the output pipe open; Run kills it rather than
	// wait for it.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	env, tag := taggedEnv(t)
	env = append(env, "T="+t.TempDir())
	var out bytes.Buffer
	res := runBounded(t, ctx, procgroup.Spec{
		Command: escapeScript + "exit 0",
		Env:     env,
		Output:  &out,
		Grace:   200 * time.Millisecond,
	})
	if ctx.Err() != nil {
		t.Fatalf("Run returned after the 5 s deadline: %v", ctx.Err())
	}
	if res.DrainTimedOut {
		t.Error("DrainTimedOut = true: Run waited for a pipe it should have closed by killing its holder")
	}
	assertGone(t, firstLinePid(t, out.Bytes()))
	assertNothingLeft(t, tag)
}

// A descendant that leaves the group with setsid, drops the marker with
// env -i and is orphaned by a double fork is re-parented to the runner (its
// child subreaper): while one Run is in progress it is that Run's, and it is
// killed when the command ends; Run does not wait for the pipe it holds.
func TestRunKillsAnOrphanWithoutMarkerOrGroup(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var out bytes.Buffer
	res := runBounded(t, ctx, procgroup.Spec{
		Command: `mkfifo "$T/pid"
(env -i setsid sh -c 'echo $$ > "$1"; exec sleep 1000' sh "$T/pid" &)
read pid < "$T/pid"
echo $pid`,
		Env:    append(os.Environ(), "T="+t.TempDir()),
		Output: &out,
		Drain:  3 * time.Second,
	})
	pid := firstLinePid(t, out.Bytes())
	t.Cleanup(func() {
		unix.Kill(pid, unix.SIGKILL)
		var ws unix.WaitStatus
		unix.Wait4(pid, &ws, 0, nil)
	})
	if ctx.Err() != nil {
		t.Fatalf("Run returned after the 5 s deadline: %v", ctx.Err())
	}
	if res.DrainTimedOut {
		t.Error("DrainTimedOut = true: Run waited for a pipe whose holder it should have killed")
	}
	if got, want := res.ExitCode, 0; got != want {
		t.Errorf("ExitCode = %d, want %d", got, want)
	}
	assertGone(t, pid)
}

// BenchmarkRunOutput measures Run on 3.4 MB of output kept in a 64 KiB tail
// and a 1 MiB log; B/op stays near the fixed buffers whatever the output size.
func BenchmarkRunOutput(b *testing.B) {
	logPath := filepath.Join(b.TempDir(), "loop.log")
	b.SetBytes(int64(len(seqOutput(500000))))
	b.ReportAllocs()
	for b.Loop() {
		res, err := procgroup.Run(context.Background(), procgroup.Spec{
			Command: "seq 1 500000",
			Tail:    64 << 10,
			LogPath: logPath,
		})
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("Run: %+v, %v", res, err)
		}
	}
}
