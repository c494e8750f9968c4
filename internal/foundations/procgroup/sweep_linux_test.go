package procgroup

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// signalOnLine closes ch when a line equal to line has been written.
type signalOnLine struct {
	buf  bytes.Buffer
	line string
	ch   chan struct{}
}

func (w *signalOnLine) Write(p []byte) (int, error) {
	w.buf.Write(p)
	if w.ch != nil && bytes.Contains(w.buf.Bytes(), []byte(w.line+"\n")) {
		close(w.ch)
		w.ch = nil
	}
	return len(p), nil
}

func TestSweepKillsLeftoversOfFinishedRunsOnly(t *testing.T) {
	// A process that carries the marker of a Run of this process that has
	// finished, as if it had survived that Run.
	leftover := exec.Command("sleep", "1000")
	leftover.Env = append(os.Environ(), MarkerEnv+"="+processPrefix()+".finished")
	leftover.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := leftover.Start(); err != nil {
		t.Fatal(err)
	}
	pid := leftover.Process.Pid
	t.Cleanup(func() { leftover.Process.Kill(); leftover.Wait() })

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan struct{})
	done := make(chan Result, 1)
	go func() {
		res, err := Run(ctx, Spec{
			Command: "echo ready; sleep 1000",
			Output:  &signalOnLine{line: "ready", ch: ready},
			Grace:   200 * time.Millisecond,
		})
		if err != nil {
			t.Errorf("Run: %v", err)
		}
		done <- res
	}()
	watchdog := time.NewTimer(20 * time.Second)
	defer watchdog.Stop()
	select {
	case <-ready:
	case <-watchdog.C:
		t.Fatal("the command did not print ready within 20 s")
	}

	if err := Sweep(); err != nil {
		t.Fatalf("Sweep: %v", err)
	}
	if p, err := readStat(pid); err == nil {
		t.Errorf("leftover %d still exists after Sweep (state %c)", pid, p.state)
	}

	cancel()
	select {
	case res := <-done:
		// Only the cancellation stopped the command of the Run in progress.
		if !res.Canceled || res.Signal != "SIGTERM" {
			t.Errorf("Canceled = %v, Signal = %q; want true, SIGTERM", res.Canceled, res.Signal)
		}
	case <-watchdog.C:
		t.Fatal("Run did not return within 20 s")
	}
}
