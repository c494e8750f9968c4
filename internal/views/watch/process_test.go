package watch_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/internal/views/watch"
	"github.com/autoretry/orchestrator/issuequeue"
)

// childEnv selects what the test binary does when a test runs it as a
// child process.
const childEnv = "WATCH_TEST_CHILD"

func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "":
		os.Exit(m.Run())
	case "talk":
		fmt.Println("to stdout")
		fmt.Fprintln(os.Stderr, "to stderr")
		fmt.Print("no newline at the end")
		os.Exit(3)
	case "wait-term":
		// Like orchestrator run: SIGTERM ends it cleanly, after a word.
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGTERM)
		fmt.Println("ready")
		<-c
		fmt.Println("terminated")
		os.Exit(7)
	case "ignore-term":
		signal.Ignore(syscall.SIGTERM)
		fmt.Println("ready")
		time.Sleep(time.Hour) // hang until killed (a bare select{} would be reported as a deadlock)
		os.Exit(1)
	}
}

func child(t *testing.T, mode string) *watch.Process {
	t.Helper()
	t.Setenv(childEnv, mode)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return &watch.Process{Path: exe, Args: []string{"orchestrator", "run"}}
}

func exitCode(t *testing.T, err error) int {
	t.Helper()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("error %v, want an *exec.ExitError", err)
	}
	return ee.ExitCode()
}

func TestProcessOutputAndExitCode(t *testing.T) {
	p := child(t, "talk")
	var out, errOut bytes.Buffer
	p.Stderr = &errOut
	err := p.Run(context.Background(), &out)
	if got, want := exitCode(t, err), 3; got != want {
		t.Errorf("exit code %d, want %d", got, want)
	}
	if got, want := out.String(), "to stdout\nno newline at the end"; got != want {
		t.Errorf("stdout %q, want %q", got, want)
	}
	if got, want := errOut.String(), "to stderr\n"; got != want {
		t.Errorf("stderr %q, want %q", got, want)
	}

	// Without Stderr, both go to out.
	p.Stderr = nil
	out.Reset()
	_ = p.Run(context.Background(), &out)
	if got, want := out.String(), "to stdout\nto stderr\nno newline at the end"; got != want {
		t.Errorf("output %q, want %q", got, want)
	}
}

// cancelWhenReady runs p, waits for its ready line and cancels it; Run's
// result comes on done.
func cancelWhenReady(t *testing.T, p *watch.Process) (out *output, done <-chan error) {
	t.Helper()
	out = newOutput()
	ctx, cancel := context.WithCancel(context.Background())
	result := make(chan error, 1)
	go func() { result <- p.Run(ctx, out) }()
	out.find(t, 0, "^ready$")
	cancel()
	return out, result
}

// TestProcessCancelSendsSIGTERM proves that cancelling gives the command
// SIGTERM, which it can handle, and not an immediate kill.
func TestProcessCancelSendsSIGTERM(t *testing.T) {
	p := child(t, "wait-term")
	out, done := cancelWhenReady(t, p)
	select {
	case err := <-done:
		if got, want := exitCode(t, err), 7; got != want {
			t.Errorf("exit code %d, want %d (its SIGTERM handler)", got, want)
		}
	case <-time.After(deadline):
		t.Fatal("the command did not end after SIGTERM")
	}
	out.next(t, 1, "^terminated$")
}

// TestProcessKilledAfterGrace proves the backstop: a command that ignores
// SIGTERM is killed once Grace has passed.
func TestProcessKilledAfterGrace(t *testing.T) {
	p := child(t, "ignore-term")
	p.Grace = 100 * time.Millisecond
	_, done := cancelWhenReady(t, p)
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("error %v, want an *exec.ExitError", err)
		}
		ws, ok := ee.Sys().(syscall.WaitStatus)
		if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("ended with %v, want killed by SIGKILL", err)
		}
	case <-time.After(deadline):
		t.Fatal("the command was not killed after its grace period")
	}
}

// TestWatchStopsItsRunOnCancel runs a real child process as the run and
// cancels Watch while it runs: Watch returns nil only after the child has
// handled SIGTERM and ended.
func TestWatchStopsItsRunOnCancel(t *testing.T) {
	dir := stateDir(t)
	p := child(t, "wait-term")
	out, stop := start(t, watch.Options{Dir: dir, OnPending: p.Run})
	out.next(t, 0, okLine(dir, 1, 1))
	out.next(t, 1, `^10:15:00 starting a run: 1 issue\(s\) pending auto-retry$`)
	out.next(t, 2, "^ready$")
	if err := stop(); err != nil {
		t.Fatalf("Watch returned %v after cancel, want nil", err)
	}
	out.next(t, 3, "^terminated$")
	out.next(t, 4, "^10:15:00 run finished: exit status 7$")
	if got := out.len(); got != 5 {
		t.Fatalf("%d lines, want 5; output:\n%s", got, out)
	}
	if _, err := os.Stat(filepath.Join(dir, issuequeue.QueueFile)); err != nil {
		t.Fatal(err)
	}
}
