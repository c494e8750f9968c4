//go:build linux

package handoff

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary act as a command run from inside the
// "run": HANDOFF_SEND names a socket to send an intent to.
func TestMain(m *testing.M) {
	if path := os.Getenv("HANDOFF_SEND"); path != "" {
		k, err := Begin(path, []byte(`{"x":1}`))
		if err != nil {
			os.Stdout.WriteString(err.Error())
			os.Exit(3)
		}
		if err := k.Commit(); err != nil {
			os.Stdout.WriteString(err.Error())
			os.Exit(4)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func okCheck([]byte) error { return nil }

// An outsider's intent and commit are taken; the run's own, and its
// descendants', are refused.
func TestPeers(t *testing.T) {
	dir := t.TempDir()
	// The "run" is a sleeping child: this test process does not descend
	// from it, so it is a person to it.
	run := exec.Command("sleep", "60")
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { run.Process.Kill(); run.Wait() }()
	path := filepath.Join(dir, SocketFile)
	s, err := Listen(path, run.Process.Pid, okCheck)
	if err != nil {
		t.Fatal(err)
	}
	k, err := Begin(path, []byte(`{"a":"b"}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Commit(); err != nil {
		t.Fatal(err)
	}
	got := s.Take(time.Second)
	if len(got) != 1 || string(got[0].Payload) != `{"a":"b"}` || got[0].PID != os.Getpid() {
		t.Fatalf("Take = %+v", got)
	}
	// An aborted intent is not kept.
	k, err = Begin(path, []byte(`{"a":"c"}`))
	if err != nil {
		t.Fatal(err)
	}
	k.Abort()
	if got := s.Take(5 * time.Second); len(got) != 0 {
		t.Fatalf("aborted intent kept: %+v", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Fatalf("socket left behind: %v", err)
	}
	if _, err := Begin(path, []byte(`{}`)); err != ErrNoRun {
		t.Fatalf("Begin without a run: %v, want ErrNoRun", err)
	}

	// Now this process is the run: it and its children are refused.
	s, err = Listen(path, os.Getpid(), okCheck)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := Begin(path, []byte(`{}`)); err == nil || !strings.Contains(err.Error(), "the run itself") {
		t.Fatalf("the run's own intent: %v", err)
	}
	exe, _ := os.Executable()
	child := exec.Command(exe)
	child.Env = append(os.Environ(), "HANDOFF_SEND="+path)
	out, err := child.Output()
	if err == nil || !strings.Contains(string(out), "inside the run's loop") {
		t.Fatalf("a descendant's intent: %v %q", err, out)
	}
	if got := s.Take(time.Second); len(got) != 0 {
		t.Fatalf("refused intents kept: %+v", got)
	}
}

// A stale socket is replaced; a message too long is refused; a payload
// the run's check rejects is refused.
func TestBounds(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, SocketFile)
	run := exec.Command("sleep", "60")
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { run.Process.Kill(); run.Wait() }()
	old, err := Listen(path, run.Process.Pid, okCheck)
	if err != nil {
		t.Fatal(err)
	}
	old.ln.(interface{ SetUnlinkOnClose(bool) }).SetUnlinkOnClose(false)
	old.ln.Close()
	old.wg.Wait()
	if _, err := Begin(path, []byte(`{}`)); err != ErrNoRun {
		t.Fatalf("stale socket: %v, want ErrNoRun", err)
	}
	s, err := Listen(path, run.Process.Pid, func(p []byte) error {
		if strings.Contains(string(p), "bad") {
			return os.ErrInvalid
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := Begin(path, []byte(`"bad"`)); err == nil {
		t.Fatal("a payload the check rejects was taken")
	}
	if _, err := Begin(path, []byte(`"`+strings.Repeat("x", MaxMessage)+`"`)); err == nil {
		t.Fatal("a message too long was sent")
	}
}

// Close does not wait for a command that sent its intent and never ends.
func TestCloseCutsConversations(t *testing.T) {
	run := exec.Command("sleep", "60")
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { run.Process.Kill(); run.Wait() }()
	path := filepath.Join(t.TempDir(), SocketFile)
	s, err := Listen(path, run.Process.Pid, okCheck)
	if err != nil {
		t.Fatal(err)
	}
	k, err := Begin(path, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if got := s.Take(50 * time.Millisecond); len(got) != 0 {
		t.Fatalf("an intent without commit was taken: %+v", got)
	}
	s.Close()
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Close waited %v for an open conversation", d)
	}
	if err := k.Commit(); err == nil {
		t.Error("a commit after Close was acked")
	}
}
