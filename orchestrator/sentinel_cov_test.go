package orchestrator

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/procgroup"
)

// signalWriter collects what is written to it, safely from any goroutine,
// and closes seen the first time the text holds want.
type signalWriter struct {
	mu   sync.Mutex
	b    strings.Builder
	want string
	seen chan struct{}
}

func newSignalWriter(want string) *signalWriter {
	return &signalWriter{want: want, seen: make(chan struct{})}
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	had := strings.Contains(w.b.String(), w.want)
	w.b.Write(p)
	if !had && strings.Contains(w.b.String(), w.want) {
		close(w.seen)
	}
	return len(p), nil
}

func (w *signalWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

const sentinelAppeared = "no_auto_retry appeared: the running loop finishes, no further loop starts"

// no_auto_retry created while a loop runs is noticed as it appears, while
// the loop still runs: the running loop finishes (it is not killed) and no
// further loop starts, although an issue waits for one; the run stops with
// the sentinel's code.
func TestSentinelDuringLoopNoticedAsItAppears(t *testing.T) {
	f := newFakeRunner(t)
	writeQueue(t, f.O, issueMD("ISSUE-20261122-001", "Type=test", "Status=pending", "Auto-Retry=true", "Retry-Count=0",
		"Created=2026-11-22T10:00:00Z"))
	stderr := newSignalWriter(sentinelAppeared)
	f.Stderr = stderr
	execs := 0
	f.Exec = func(ctx context.Context, s procgroup.Spec) (procgroup.Result, error) {
		execs++
		if execs > 1 {
			return procgroup.Result{}, errors.New("a loop started after no_auto_retry appeared")
		}
		if err := os.WriteFile(f.O.paths().Sentinel(), nil, 0o644); err != nil {
			return procgroup.Result{}, err
		}
		select { // the run notices it while the loop still runs
		case <-stderr.seen:
		case <-ctx.Done():
			return procgroup.Result{}, ctx.Err()
		case <-time.After(10 * time.Second):
			return procgroup.Result{}, errors.New("no_auto_retry was not noticed while the loop ran")
		}
		return procgroup.Result{}, nil
	}
	rep, err := f.Run(context.Background())
	var se *StopError
	if !errors.As(err, &se) || se.Code != CodeSentinel {
		t.Fatalf("run: %v (report %+v), want a stop with code %s; stderr:\n%s", err, rep, CodeSentinel, stderr)
	}
	if execs != 1 || rep.Loops != 1 {
		t.Errorf("%d executions, %d loops; want the one loop that was running, finished", execs, rep.Loops)
	}
	if is := loadQueue(t, f.O).Issue("ISSUE-20261122-001"); is.RetryCount != 0 {
		t.Errorf("Retry-Count %d: an auto-retry was claimed after no_auto_retry appeared", is.RetryCount)
	}
	if !f.O.paths().SentinelPresent() {
		t.Error("no_auto_retry is gone after the run")
	}
}

// A backoff before a transient failure is run again wakes as soon as
// no_auto_retry appears: the failure is not run again, and the run stops
// with the sentinel's code.
func TestSentinelWakesBackoff(t *testing.T) {
	f := newFakeRunner(t, failed("HTTP 503 Service Unavailable"), succeeded)
	sentinel := f.O.paths().Sentinel()
	var waited time.Duration
	f.Sleep = func(ctx context.Context, d time.Duration) error {
		waited = d
		if err := os.WriteFile(sentinel, nil, 0o644); err != nil {
			return err
		}
		select { // woken by the sentinel, not by the end of d
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Second):
			return nil
		}
	}
	rep, err := f.Run(context.Background())
	var se *StopError
	if !errors.As(err, &se) || se.Code != CodeSentinel {
		t.Fatalf("run: %v (report %+v), want a stop with code %s", err, rep, CodeSentinel)
	}
	if waited == 0 {
		t.Fatal("the transient failure did not back off")
	}
	if f.execs != 1 {
		t.Errorf("%d executions, want 1: the failure is not run again once no_auto_retry appeared", f.execs)
	}
}
