package orchestrator

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/statefile"
	"github.com/autoretry/orchestrator/issuequeue"
)

// begin opens a run for an external driver: the Auto-Retry State counters
// and the Run section start again, the breaker and auto_retry_enabled are
// kept, and run_started is recorded under the new run's id.
func TestBegin(t *testing.T) {
	o := newTestOrchestrator(t)
	o.Now = func() time.Time { return testNow }
	state := strings.Replace(stateMD(7, false), "| last_retry_reason | null |", "| last_retry_reason | ISSUE-20261122-001 failed |", 1) +
		"\n## Run\n\n| Field | Value |\n|---|---|\n| run_id | 20261121T080000Z-1 |\n| started_at | 2026-11-21T08:00:00Z |\n| finished_at | 2026-11-21T08:30:00Z |\n| loops | 6 |\n| outcome | stopped |\n" +
		breakerMD("open", 3, "2026-11-22T10:00:00Z")
	if err := os.WriteFile(o.paths().State(), []byte(state), 0o644); err != nil {
		t.Fatal(err)
	}
	id, err := o.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := NewRunID(testNow, os.Getpid()); id != want {
		t.Errorf("run id %q, want %q", id, want)
	}
	st := loadState(t, o)
	if st.TotalAutoRetries != 0 || st.LastRetryReason != "" && st.LastRetryReason != issuequeue.Null {
		t.Errorf("counters %d, %q; want 0, null", st.TotalAutoRetries, st.LastRetryReason)
	}
	if st.RunID != id || !st.StartedAt.Equal(testNow) || !st.FinishedAt.IsZero() || st.Loops != 0 || st.Outcome != "running" {
		t.Errorf("run section: %s %v %v %d %s", st.RunID, st.StartedAt, st.FinishedAt, st.Loops, st.Outcome)
	}
	if st.AutoRetryEnabled || st.Breaker != issuequeue.BreakerOpen || st.ConsecutiveFailures != 3 {
		t.Errorf("kept: enabled %v, breaker %s, %d failures; want false, open, 3", st.AutoRetryEnabled, st.Breaker, st.ConsecutiveFailures)
	}
	evs, err := readLedgerSince(o.paths().Ledger(), time.Time{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Event != EvRunStarted || evs[0].RunID != id || evs[0].Reason != "begin" {
		t.Errorf("events %+v, want one run_started of %s", evs, id)
	}
	if _, held, _ := statefile.RunHolder(o.Dir); held {
		t.Error("begin kept the run lock")
	}
}

// begin is refused while a run holds the run lock, and names a missing
// state directory.
func TestBeginRefused(t *testing.T) {
	o := newTestOrchestrator(t)
	before, _ := os.ReadFile(o.paths().State())
	lk, err := statefile.TryRunLock(o.Dir, statefile.Owner{PID: 4242, Command: "run"})
	if err != nil {
		t.Fatal(err)
	}
	var busy *statefile.BusyError
	if _, err := o.Begin(context.Background()); !errors.As(err, &busy) {
		t.Errorf("Begin during a run = %v, want a BusyError", err)
	}
	lk.Unlock()
	if after, _ := os.ReadFile(o.paths().State()); string(after) != string(before) {
		t.Error("a refused begin changed session_state.md")
	}
	o.Dir = filepath.Join(o.Dir, "missing")
	var nd *issuequeue.NoStateDirError
	if _, err := o.Begin(context.Background()); !errors.As(err, &nd) {
		t.Errorf("Begin of a missing directory = %v, want a NoStateDirError", err)
	}
}

// Last gives the last n bytes written and whether anything came before
// them, whether that was dropped already or is still held.
func TestTailBufferLast(t *testing.T) {
	tb := &TailBuffer{Max: 8}
	if b, cut := tb.Last(4); len(b) != 0 || cut {
		t.Errorf("empty: %q, %v", b, cut)
	}
	tb.Write([]byte("abc"))
	if b, cut := tb.Last(3); string(b) != "abc" || cut {
		t.Errorf("all of it: %q, %v; want abc, false", b, cut)
	}
	if b, cut := tb.Last(2); string(b) != "bc" || !cut {
		t.Errorf("the end: %q, %v; want bc, true", b, cut)
	}
	tb.Write([]byte("defghijklmnopqrstuvwxyz"))
	if b, cut := tb.Last(100); !strings.HasSuffix("abcdefghijklmnopqrstuvwxyz", string(b)) || len(b) < 8 || !cut {
		t.Errorf("after dropping: %q, %v; want the kept end and true", b, cut)
	}
}
