//go:build unix

package statefile

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The test binary re-executes itself as a child process in one of these
// roles when STATEFILE_CHILD is set.
const childEnv = "STATEFILE_CHILD"

func TestMain(m *testing.M) {
	if role := os.Getenv(childEnv); role != "" {
		if err := runChild(role); err != nil {
			fmt.Fprintf(os.Stderr, "child %s: %v\n", role, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func runChild(role string) error {
	dir := os.Getenv("STATEFILE_DIR")
	switch role {
	case "replace-loop":
		return childReplaceLoop(os.Getenv("STATEFILE_PATH"))
	case "counter":
		i, _ := strconv.Atoi(os.Getenv("STATEFILE_INDEX"))
		n, _ := strconv.Atoi(os.Getenv("STATEFILE_N"))
		return childCounter(dir, i, n)
	case "hold-run":
		l, err := TryRunLock(dir, Owner{Command: "run", RunID: "run-1"})
		if err != nil {
			return err
		}
		return holdUntilStdinCloses(l)
	case "hold-write":
		l, err := LockWrite(context.Background(), dir, 10*time.Second, Owner{Command: "fail"})
		if err != nil {
			return err
		}
		return holdUntilStdinCloses(l)
	case "try-run":
		start := time.Now()
		l, err := TryRunLock(dir, Owner{Command: "run"})
		res := tryRunResult{Elapsed: time.Since(start)}
		var busy *BusyError
		switch {
		case errors.As(err, &busy):
			res.Busy, res.PID, res.Msg = true, busy.Owner.PID, busy.Error()
		case err != nil:
			return err
		default:
			l.Unlock()
		}
		return json.NewEncoder(os.Stdout).Encode(res)
	case "block":
		_, err := io.Copy(io.Discard, os.Stdin)
		return err
	}
	return fmt.Errorf("unknown role %q", role)
}

type tryRunResult struct {
	Busy    bool
	PID     int
	Msg     string
	Elapsed time.Duration
}

// holdUntilStdinCloses reports "locked" and holds l until the parent closes
// stdin or kills the process. With STATEFILE_GRANDCHILD set it first starts
// a grandchild that lives on, blocked reading fd 3, after this process dies.
func holdUntilStdinCloses(l *Lock) error {
	if os.Getenv("STATEFILE_GRANDCHILD") != "" {
		gc := exec.Command(os.Args[0], "-test.run=^$")
		gc.Env = append(os.Environ(), childEnv+"=block")
		gc.Stdin = os.NewFile(3, "grandchild stdin")
		if err := gc.Start(); err != nil {
			return err
		}
	}
	fmt.Println("locked")
	if _, err := io.Copy(io.Discard, os.Stdin); err != nil {
		return err
	}
	return l.Unlock()
}

// childReplaceLoop flips the file at path between the two big contents as
// fast as it can, writing one byte to stdout as each replacement starts, until
// it is killed (or, bounded, after 60 s). It starts when it reads a byte
// from stdin.
func childReplaceLoop(path string) error {
	a, b := bigContents()
	// Started ahead of time; wait for the parent's go.
	if _, err := os.Stdin.Read(make([]byte, 1)); err != nil {
		return err
	}
	cur, err := ReadFile(path)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(60 * time.Second)
	for i := 0; i < 100000 && time.Now().Before(deadline); i++ {
		if _, err := os.Stdout.Write([]byte{'.'}); err != nil {
			return err
		}
		next := a
		if bytes.Equal(cur, a) {
			next = b
		}
		if _, err := Replace(context.Background(), path, cur, next, nil); err != nil {
			return err
		}
		cur = next
	}
	return nil
}

// childCounter increments line i of the counters file n times, each under
// the write lock.
func childCounter(dir string, i, n int) error {
	path := filepath.Join(dir, "counters.md")
	for range n {
		l, err := LockWrite(context.Background(), dir, 30*time.Second, Owner{Command: "counter"})
		if err != nil {
			return err
		}
		orig, err := ReadFile(path)
		if err != nil {
			return err
		}
		lines := strings.Split(string(orig), "\n")
		prefix := fmt.Sprintf("child %d: ", i)
		if !strings.HasPrefix(lines[i], prefix) {
			return fmt.Errorf("line %d is %q", i, lines[i])
		}
		v, err := strconv.Atoi(strings.TrimPrefix(lines[i], prefix))
		if err != nil {
			return err
		}
		lines[i] = prefix + strconv.Itoa(v+1)
		if _, err := Replace(context.Background(), path, orig, []byte(strings.Join(lines, "\n")), nil); err != nil {
			return err
		}
		if err := l.Unlock(); err != nil {
			return err
		}
	}
	return nil
}

// bigContents returns the two contents the replace loop flips between:
// different sizes, both over 1 MiB, so that a torn file cannot equal either.
func bigContents() (a, b []byte) {
	gen := func(tag string, lines int) []byte {
		var buf bytes.Buffer
		for i := range lines {
			fmt.Fprintf(&buf, "| %s | line %07d | some cell text that makes the line longer |\n", tag, i)
		}
		return buf.Bytes()
	}
	return gen("old", 16000), gen("new", 19000)
}

// child is a running child process of the test binary.
type child struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *os.File
	r      *bufio.Reader
	stderr *lockedBuffer
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startChild runs the test binary in role, with extra environment and
// files (fd 3 on). The child is killed when the test ends.
func startChild(t testing.TB, role string, env []string, extra ...*os.File) *child {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(append(os.Environ(), childEnv+"="+role), env...)
	cmd.ExtraFiles = extra
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = w
	c := &child{cmd: cmd, stdin: stdin, stdout: r, r: bufio.NewReader(r), stderr: &lockedBuffer{}}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() {
		c.kill()
		r.Close()
	})
	return c
}

// kill SIGKILLs the child and waits for it to be gone.
func (c *child) kill() {
	if c.cmd.ProcessState == nil {
		c.cmd.Process.Signal(syscall.SIGKILL)
		c.cmd.Wait()
	}
}

// readLine returns the child's next line of output, failing the test if
// none comes within 30 s.
func (c *child) readLine(t testing.TB) string {
	t.Helper()
	c.stdout.SetReadDeadline(time.Now().Add(30 * time.Second))
	line, err := c.r.ReadString('\n')
	if err != nil {
		t.Fatalf("reading from child: %v; its stderr: %s", err, c.stderr)
	}
	return strings.TrimSuffix(line, "\n")
}

// waitLocked waits for a holding child to say it holds its lock, failing
// the test if it says anything else.
func (c *child) waitLocked(t testing.TB) {
	t.Helper()
	if got := c.readLine(t); got != "locked" {
		t.Fatalf("holder said %q", got)
	}
}

// readBytes consumes n bytes of the child's output, failing the test if they
// do not come within 30 s.
func (c *child) readBytes(t testing.TB, n int) {
	t.Helper()
	c.stdout.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.ReadFull(c.r, make([]byte, n)); err != nil {
		t.Fatalf("reading from child: %v; its stderr: %s", err, c.stderr)
	}
}

// wait waits for the child to exit by itself, failing the test if it fails
// or takes more than limit.
func (c *child) wait(t testing.TB, limit time.Duration) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("child failed: %v; its stderr: %s", err, c.stderr)
		}
	case <-time.After(limit):
		c.cmd.Process.Signal(syscall.SIGKILL)
		<-done
		t.Fatalf("child still running after %s; its stderr: %s", limit, c.stderr)
	}
}
