package orchestrator

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/issuequeue"
)

func breakerRunner(t *testing.T, state string, failures int, openedAt string) (*Runner, *bytes.Buffer) {
	t.Helper()
	o := newTestOrchestrator(t)
	o.Now = func() time.Time { return testNow }
	if err := os.WriteFile(filepath.Join(o.Dir, "session_state.md"), []byte(stateMD(0, true)+breakerMD(state, failures, openedAt)), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	return &Runner{O: o, Terminal: io.Discard, Stderr: &stderr}, &stderr
}

func loadState(t *testing.T, o *Orchestrator) *issuequeue.State {
	t.Helper()
	_, st, err := o.paths().Load()
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	return st
}

// A loop's result in the circuit breaker: a success closes it and clears
// the count; a failure counts, and threshold (3) failed loops in a row, or
// one failed trial loop of a half-open breaker, open it for the cooldown
// (30 min) from now.
func TestBreakerAfter(t *testing.T) {
	opened := testNow.Add(-time.Hour).Format(time.RFC3339)
	tests := []struct {
		name     string
		state    string
		failures int
		openedAt string
		failed   bool
		halfOpen bool
		facts    BreakerFacts
		fail     int
		open     bool
	}{
		{"success clears the count", issuequeue.BreakerClosed, 2, "null", false, false,
			BreakerFacts{State: issuequeue.BreakerClosed}, 0, false},
		{"a successful trial closes it", issuequeue.BreakerOpen, 3, opened, false, true,
			BreakerFacts{State: issuequeue.BreakerClosed, HalfOpen: true}, 0, false},
		{"one below the threshold", issuequeue.BreakerClosed, 1, "null", true, false,
			BreakerFacts{State: issuequeue.BreakerClosed, Failures: 2}, 2, false},
		{"the threshold opens it", issuequeue.BreakerClosed, 2, "null", true, false,
			BreakerFacts{State: issuequeue.BreakerOpen, Opened: true, Failures: 3, Until: testNow.Add(30 * time.Minute)}, 3, true},
		{"a failed trial opens it at once", issuequeue.BreakerOpen, 0, opened, true, true,
			BreakerFacts{State: issuequeue.BreakerOpen, Opened: true, HalfOpen: true, Failures: 1, Until: testNow.Add(30 * time.Minute)}, 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, stderr := breakerRunner(t, tt.state, tt.failures, tt.openedAt)
			got, err := r.breakerAfter(context.Background(), tt.failed, tt.halfOpen)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.facts {
				t.Errorf("facts %+v, want %+v", got, tt.facts)
			}
			st := loadState(t, r.O)
			if st.ConsecutiveFailures != tt.fail {
				t.Errorf("consecutive_failures = %d, want %d", st.ConsecutiveFailures, tt.fail)
			}
			switch {
			case tt.open && (st.Breaker != issuequeue.BreakerOpen || !st.OpenedAt.Equal(testNow)):
				t.Errorf("breaker %s opened at %v, want open at %v", st.Breaker, st.OpenedAt, testNow)
			case !tt.failed && (st.Breaker != issuequeue.BreakerClosed || !st.OpenedAt.IsZero()):
				t.Errorf("breaker %s opened at %v, want closed, opened_at null", st.Breaker, st.OpenedAt)
			case tt.failed && !tt.open && st.Breaker != tt.state:
				t.Errorf("breaker %s, want it left %s", st.Breaker, tt.state)
			}
			if said := strings.Contains(stderr.String(), "circuit breaker closed: the trial loop succeeded"); said != (tt.halfOpen && !tt.failed) {
				t.Errorf("stderr %q: the closing of a half-open breaker is told, and only that", stderr.String())
			}
		})
	}
}

// breaker reset closes the breaker, clears its count and opened_at, says
// what it was, and records the person's answer in the event log.
func TestResetBreaker(t *testing.T) {
	r, _ := breakerRunner(t, issuequeue.BreakerOpen, 3, testNow.Add(-time.Minute).Format(time.RFC3339))
	was, err := r.O.ResetBreaker(context.Background())
	if err != nil || was != issuequeue.BreakerOpen {
		t.Fatalf("ResetBreaker = %q, %v; want it was open", was, err)
	}
	st := loadState(t, r.O)
	if st.Breaker != issuequeue.BreakerClosed || st.ConsecutiveFailures != 0 || !st.OpenedAt.IsZero() {
		t.Errorf("after reset: %s, %d failures, opened %v; want closed, 0, null", st.Breaker, st.ConsecutiveFailures, st.OpenedAt)
	}
	evs, err := readLedgerSince(r.O.paths().Ledger(), time.Time{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Event != EvUserResponse || evs[0].Response != "breaker_reset" || evs[0].Reason != "was open" || !evs[0].Time.Equal(testNow) {
		t.Errorf("events %+v, want one user_response breaker_reset, was open", evs)
	}
	if was, err := r.O.ResetBreaker(context.Background()); err != nil || was != issuequeue.BreakerClosed {
		t.Errorf("a second reset = %q, %v; want it was closed", was, err)
	}
}
