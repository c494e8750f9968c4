package orchestrator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/config"
	"github.com/autoretry/orchestrator/internal/foundations/procgroup"
	"github.com/autoretry/orchestrator/issuequeue"
)

// fakeRunner is a Runner whose loop command, clock, sleep and randomness are
// the test's: results are what the loop "does" try after try, sleeps records
// the waits, which advance the clock instead of passing.
type fakeRunner struct {
	*Runner
	results []procgroup.Result
	execs   int
	sleeps  []time.Duration
	now     time.Time
}

func newFakeRunner(t *testing.T, results ...procgroup.Result) *fakeRunner {
	t.Helper()
	o := newTestOrchestrator(t)
	if err := os.WriteFile(filepath.Join(o.Dir, "issue_queue.md"), []byte("# Issue Queue\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := &fakeRunner{results: results, now: time.Date(2026, 11, 22, 10, 15, 0, 0, time.UTC)}
	o.Now = func() time.Time { return f.now }
	o.Config.Loop = config.Loop{Command: "agent", Timeout: time.Minute, MaxLoops: 4, KillGrace: time.Second}
	f.Runner = &Runner{
		O: o, Terminal: io.Discard, Stderr: io.Discard, Environ: []string{},
		Exec: func(ctx context.Context, s procgroup.Spec) (procgroup.Result, error) {
			if f.execs >= len(f.results) {
				return procgroup.Result{}, errors.New("the loop ran more often than the test expected")
			}
			f.execs++
			f.now = f.now.Add(time.Second)
			return f.results[f.execs-1], nil
		},
		Sleep: func(ctx context.Context, d time.Duration) error {
			f.sleeps = append(f.sleeps, d)
			f.now = f.now.Add(d)
			return ctx.Err()
		},
		Rand: func() float64 { return 0.5 },
	}
	return f
}

func failed(tail string) procgroup.Result { return procgroup.Result{ExitCode: 1, Tail: []byte(tail)} }

var succeeded = procgroup.Result{}

// Transient failures run the loop again after backoff with
// jitter (1 s, ×2, +10 % × the random number), honour a longer "retry after"
// or "resets at" hint, give up after 3 tries (5 for rate limits), and use
// no issue retry — all without waiting.
func TestRunBackoff(t *testing.T) {
	jit := func(d time.Duration) time.Duration { return d + d/20 } // jitter 10 % × 0.5
	tests := []struct {
		name    string
		results []procgroup.Result
		sleeps  []time.Duration
		result  string
	}{
		{"503 twice, then fine", []procgroup.Result{failed("HTTP 503"), failed("HTTP 503"), succeeded},
			[]time.Duration{jit(time.Second), jit(2 * time.Second)}, ResultOK},
		{"503 three times: the loop failed", []procgroup.Result{failed("503"), failed("503"), failed("503")},
			[]time.Duration{jit(time.Second), jit(2 * time.Second)}, ResultFailed},
		{"rate limits get five tries", []procgroup.Result{failed("429"), failed("429"), failed("429"), failed("429"), failed("429")},
			[]time.Duration{jit(time.Second), jit(2 * time.Second), jit(4 * time.Second), jit(8 * time.Second)}, ResultFailed},
		{"a longer retry-after hint wins", []procgroup.Result{failed("429 Too Many Requests\nRetry-After: 40\n"), succeeded},
			[]time.Duration{40 * time.Second}, ResultOK},
		{"a shorter hint does not", []procgroup.Result{failed("rate limit; retry after 10ms"), succeeded},
			[]time.Duration{jit(time.Second)}, ResultOK},
		{"a reset within max_wait is slept", []procgroup.Result{failed("rate limit reached; resets at " + time.Date(2026, 11, 22, 10, 19, 0, 0, time.UTC).Local().Format("15:04")), succeeded},
			[]time.Duration{4*time.Minute - time.Second}, ResultOK},
		{"a permanent error is not retried", []procgroup.Result{failed("Error: invalid API key")}, nil, ResultPermanent},
		{"an ordinary failure is not retried", []procgroup.Result{failed("--- FAIL: TestX")}, nil, ResultFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeRunner(t, tt.results...)
			_, _ = f.Run(context.Background())
			if f.execs != len(tt.results) {
				t.Errorf("the loop ran %d times, want %d", f.execs, len(tt.results))
			}
			if !reflect.DeepEqual(f.sleeps, tt.sleeps) {
				t.Errorf("slept %v, want %v", f.sleeps, tt.sleeps)
			}
			h, errs := ReadHistory(f.O.Dir)
			if len(errs) > 0 || len(h) == 0 {
				t.Fatalf("history: %v, %d rows", errs, len(h))
			}
			if got := h[0]; got.Result != tt.result || got.TransientRetries != len(tt.sleeps) {
				t.Errorf("history row: result %q, %d transient retries; want %q, %d", got.Result, got.TransientRetries, tt.result, len(tt.sleeps))
			}
			st := f.state(t)
			if st.TotalAutoRetries != 0 {
				t.Errorf("total_auto_retries = %d: transient re-executions must not count", st.TotalAutoRetries)
			}
		})
	}
}

// A reset hint longer than [backoff] max_wait is not slept: it opens a
// rate-limit window in session_state.md, the run stops at once with exit 0
// (a wait, not an error), and every run before the window's end stops
// before running the agent; the first run after it runs.
func TestRateLimitWindow(t *testing.T) {
	f := newFakeRunner(t, failed("You've hit your limit · resets 3pm (Europe/Dublin)"), succeeded)
	_, err := f.Run(context.Background())
	var se *StopError
	if !errors.As(err, &se) || se.Code != CodeRateLimited || !se.Wait {
		t.Fatalf("run = %v, want a rate_limited wait", err)
	}
	if f.execs != 1 || len(f.sleeps) != 0 {
		t.Fatalf("ran %d times, slept %v; want 1 run and no sleep", f.execs, f.sleeps)
	}
	until := time.Date(2026, 11, 22, 15, 0, 0, 0, time.UTC)
	if st := f.state(t); !st.LimitedUntil.Equal(until) {
		t.Fatalf("limited_until = %v, want %v", st.LimitedUntil, until)
	}
	f.now = until.Add(-time.Minute)
	_, err = f.Run(context.Background())
	if !errors.As(err, &se) || se.Code != CodeRateLimited || f.execs != 1 {
		t.Fatalf("a run inside the window: %v after %d executions; want rate_limited without running the agent", err, f.execs)
	}
	f.now = until
	if _, err := f.Run(context.Background()); err != nil || f.execs != 2 {
		t.Fatalf("the run after the window: %v after %d executions; want it to run", err, f.execs)
	}
}

func (f *fakeRunner) state(t *testing.T) *issuequeue.State {
	t.Helper()
	_, st, err := f.O.paths().Load()
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// A verification's failure signature is of all its
// output, not only of the end that is kept: two failures that differ only in
// their first line, megabytes before the end, are different failures.
func TestVerifySignatureCoversAllOutput(t *testing.T) {
	f := newFakeRunner(t, succeeded, succeeded, succeeded)
	queue := "# Issue Queue\n\n## ISSUE-20261122-001\n\n| Field | Value |\n|---|---|\n| Priority | critical |\n| Status | pending |\n" +
		"| Auto-Retry | true |\n| Max-Retries | 5 |\n| Verify | check |\n\n### Summary\nbroken\n"
	if err := os.WriteFile(filepath.Join(f.O.Dir, "issue_queue.md"), []byte(queue), 0o644); err != nil {
		t.Fatal(err)
	}
	f.O.Config.Loop.MaxLoops = 3
	f.O.Config.Verification.Checks = map[string]config.Check{"check": {Name: "check", Command: "verify", Timeout: time.Minute}}
	body := bytes.Repeat([]byte("    same_test.go:12: the same line, again and again\n"), 80_000) // 4 MiB
	verifies := 0
	loop := f.Exec
	f.Exec = func(ctx context.Context, s procgroup.Spec) (procgroup.Result, error) {
		if s.Command != "verify" {
			return loop(ctx, s)
		}
		verifies++
		fmt.Fprintf(s.Output, "first line of attempt %c\n", 'A'+verifies-1)
		s.Output.Write(body)
		return procgroup.Result{ExitCode: 1}, nil
	}
	if _, err := f.Run(context.Background()); err == nil {
		t.Fatal("the run ended without error; want a stop at max loops")
	}
	if verifies != 2 {
		t.Fatalf("verified %d times, want 2", verifies)
	}
	q, _, err := f.O.paths().Load()
	if err != nil {
		t.Fatal(err)
	}
	is := q.Issue("ISSUE-20261122-001")
	if is.SignatureRepeatCount != 1 || len(is.PreviousSignatures) != 1 || is.PreviousSignatures[0] == is.FailureSignature {
		t.Errorf("repeat count %d, previous %v, now %s: want two different signatures", is.SignatureRepeatCount, is.PreviousSignatures, is.FailureSignature)
	}
	details, _ := is.Section(issuequeue.SectionFailureDetails)
	if !strings.Contains(details, "of the output were cut") || !strings.HasSuffix(strings.TrimRight(details, "`\n"), "[verify: verify exited with status 1]") {
		t.Errorf("Failure Details:\n%.300s…", details)
	}
}

// A loop's cost is read from the end of its output (the "total_cost_usd" of
// a coding agent's JSON result), or from the file it writes at
// $ORCHESTRATOR_COST_FILE, and the daily cost budget counts it: once spent,
// the next run stops before its loop, saying when the next loop is possible.
func TestLoopCostAndBudget(t *testing.T) {
	f := newFakeRunner(t, procgroup.Result{Tail: []byte(`{"type":"result","total_cost_usd": 0.42,"is_error":false}` + "\n")},
		succeeded, succeeded)
	f.O.Config.Budget.CostPerDay = 1
	exec := f.Exec
	f.Exec = func(ctx context.Context, s procgroup.Spec) (procgroup.Result, error) {
		if f.execs == 1 { // the second loop writes its cost to the file
			for _, kv := range s.Env {
				if p, ok := strings.CutPrefix(kv, "ORCHESTRATOR_COST_FILE="); ok {
					if err := os.WriteFile(p, []byte("0.6\n"), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		return exec(ctx, s)
	}
	for i := 0; i < 2; i++ {
		if _, err := f.Run(context.Background()); err != nil {
			t.Fatalf("run %d: %v", i+1, err)
		}
		f.now = f.now.Add(10 * time.Minute)
	}
	u, err := ReadUsage(f.O.Dir, f.now)
	if err != nil {
		t.Fatal(err)
	}
	if got := u.Cost(); got < 1.0199 || got > 1.0201 {
		t.Fatalf("cost in the window = %v, want 0.42 + 0.6", got)
	}
	_, err = f.Run(context.Background())
	var se *StopError
	if !errors.As(err, &se) || se.Code != CodeDailyCost || !strings.Contains(se.Reason, "next loop possible at") {
		t.Fatalf("third run: %v, want a daily_cost stop saying when the next loop is possible", err)
	}
	if f.execs != 2 {
		t.Errorf("the loop ran %d times, want 2: a spent budget stops before the loop", f.execs)
	}
}
