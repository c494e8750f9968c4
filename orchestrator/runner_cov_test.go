package orchestrator

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/issuequeue"
)

// Each way an execution ends that is not a plain success or failure is
// told on stderr in one progress line; a loop that ended in a way that
// needs no telling (it passed, or failed as any loop may) prints nothing.
func TestTellExecSaysHowAnExecutionEnded(t *testing.T) {
	r := &Runner{O: newTestOrchestrator(t)}
	r.O.Config.Loop.Timeout = 30 * time.Minute
	budget := &Verdict{Rule: CodeDailyCost}
	tests := []struct {
		name string
		x    ExecFacts
		step ExecStep
		want string // "": nothing is told
	}{
		{"a rule met while it ran", ExecFacts{Stopped: budget}, ExecStep{Cut: &Cut{Rule: budget}},
			"orchestrator: loop 3 reached " + string(CodeDailyCost) + " while it ran; stopping it\n"},
		{"silent too long", ExecFacts{Idle: 5 * time.Minute}, ExecStep{Cut: &Cut{Hung: 5 * time.Minute}},
			"orchestrator: loop 3 printed nothing for 5m0s; stopping it\n"},
		{"timed out", ExecFacts{TimedOut: true}, ExecStep{Result: ResultTimeout},
			"orchestrator: loop 3 timed out after 30m0s\n"},
		{"a permanent error", ExecFacts{What: "invalid api key"}, ExecStep{Result: ResultPermanent},
			"orchestrator: loop 3 failed with a permanent error (invalid api key)\n"},
		{"a transient failure that persisted", ExecFacts{Try: 3, What: "503"}, ExecStep{Result: ResultFailed, Limit: 3},
			"orchestrator: loop 3: transient failure (503) persisted after 3 tries\n"},
		{"credentials refused", ExecFacts{}, ExecStep{Cut: &Cut{Auth: true}},
			"orchestrator: loop 3: the agent's provider refused its credentials\n"},
		{"provider still unavailable", ExecFacts{}, ExecStep{Cut: &Cut{Unavailable: "overloaded", Tries: 5}},
			"orchestrator: loop 3: the agent's provider was still overloaded after 5 tries\n"},
		{"run again after a backoff", ExecFacts{Try: 1, What: "503"}, ExecStep{Wait: 1050400 * time.Microsecond, Limit: 3},
			"orchestrator: loop 3: transient failure (503); running it again in 1.05s (try 2 of 3)\n"},
		{"passed", ExecFacts{}, ExecStep{Result: ResultOK}, ""},
		{"failed as loops do", ExecFacts{ExitCode: 1}, ExecStep{Result: ResultFailed}, ""},
		{"a rate-limit window", ExecFacts{}, ExecStep{Cut: &Cut{Limited: testNow.Add(time.Hour)}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			r.Stderr = &stderr
			r.tellExec(3, tt.x, tt.step)
			if got := stderr.String(); got != tt.want {
				t.Errorf("told %q, want %q", got, tt.want)
			}
		})
	}
	r.Stderr = nil
	r.tellExec(3, ExecFacts{TimedOut: true}, ExecStep{Result: ResultTimeout}) // without a Stderr it tells no one
}

// Without a Sleep of its own, the runner waits on a real timer: it returns
// once the time has passed, and as soon as its context is cancelled,
// with the context's error, long before the time.
func TestRunnerSleepRealTimer(t *testing.T) {
	r := &Runner{O: newTestOrchestrator(t)}
	const d = 20 * time.Millisecond
	start := time.Now()
	if err := r.sleep(context.Background(), d); err != nil {
		t.Fatalf("sleep: %v", err)
	}
	if took := time.Since(start); took < d {
		t.Errorf("slept %v, want at least %v", took, d)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.sleep(ctx, time.Hour) }()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("a cancelled sleep returned %v, want %v", err, context.Canceled)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a cancelled sleep did not return")
	}
}

// A loop cut short by a rule gives back the attempt it did not make: its
// issues that are in progress go back to pending with their Retry-Count
// as before the claim, and the run's auto-retry count is lowered, never
// below zero; issues not in progress are left alone, and with no issues
// nothing is written.
func TestRunnerReleaseGivesBackTheAttempt(t *testing.T) {
	const claimed, pending, claimedFirst = "ISSUE-20261122-001", "ISSUE-20261122-002", "ISSUE-20261122-003"
	f := newFakeRunner(t)
	o := f.O
	writeQueue(t, o,
		issueMD(claimed, "Type=test", "Status=in_progress", "Auto-Retry=true", "Retry-Count=2"),
		issueMD(pending, "Type=test", "Status=pending", "Auto-Retry=true", "Retry-Count=2"),
		issueMD(claimedFirst, "Type=test", "Status=in_progress", "Auto-Retry=true", "Retry-Count=0"))
	sp := o.paths().State()
	setTotal := func(n string) {
		t.Helper()
		b, err := os.ReadFile(sp)
		if err != nil {
			t.Fatal(err)
		}
		b = regexp.MustCompile(`\| total_auto_retries \| \d+ \|`).ReplaceAll(b, []byte("| total_auto_retries | "+n+" |"))
		if err := os.WriteFile(sp, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	setTotal("3")

	qp := filepath.Join(o.Dir, "issue_queue.md")
	before, _ := os.ReadFile(qp)
	if err := f.release(nil); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(qp); !bytes.Equal(before, after) || f.state(t).TotalAutoRetries != 3 {
		t.Fatal("releasing no issues changed the files")
	}

	if err := f.release([]string{claimed, pending, claimedFirst, "ISSUE-20261122-099"}); err != nil {
		t.Fatal(err)
	}
	q := loadQueue(t, o)
	for _, tt := range []struct {
		id     string
		status string
		count  int
	}{
		{claimed, issuequeue.StatusPending, 1},
		{pending, issuequeue.StatusPending, 2},
		{claimedFirst, issuequeue.StatusPending, 0},
	} {
		if is := q.Issue(tt.id); is.Status != tt.status || is.RetryCount != tt.count {
			t.Errorf("%s: Status %s, Retry-Count %d; want %s, %d", tt.id, is.Status, is.RetryCount, tt.status, tt.count)
		}
	}
	if n := f.state(t).TotalAutoRetries; n != 2 {
		t.Errorf("total_auto_retries %d, want 2", n)
	}

	setTotal("0")
	if n := f.state(t).TotalAutoRetries; n != 0 {
		t.Fatalf("total_auto_retries %d after setting it to 0", n)
	}
	writeQueue(t, o, issueMD(claimed, "Type=test", "Status=in_progress", "Auto-Retry=true", "Retry-Count=1"))
	if err := f.release([]string{claimed}); err != nil {
		t.Fatal(err)
	}
	if st := f.state(t); st.Err() != nil || st.TotalAutoRetries != 0 {
		t.Errorf("total_auto_retries %d (%v), want it kept at 0", st.TotalAutoRetries, st.Err())
	}
	if b, _ := os.ReadFile(sp); !bytes.Contains(b, []byte("| total_auto_retries | 0 |")) {
		t.Errorf("session_state.md:\n%s\nwant total_auto_retries kept at 0", b)
	}
}

// A save the store had to keep beside its file is told on stderr, with
// where it is kept; without a Stderr nothing is written.
func TestStoreTellsOfAKeptSave(t *testing.T) {
	o := newTestOrchestrator(t)
	k := issuequeue.KeptSave{File: "issue_queue.md", Saved: "issue_queue.md.kept-1"}
	o.store().Kept(k) // no Stderr: no one to tell
	var stderr bytes.Buffer
	o.Stderr = &stderr
	o.store().Kept(k)
	if got, want := stderr.String(), "orchestrator: warning: "+k.String()+"\n"; got != want {
		t.Errorf("told %q, want %q", got, want)
	}
	if !strings.Contains(stderr.String(), "issue_queue.md.kept-1") {
		t.Errorf("the warning %q does not say where the save is kept", stderr.String())
	}
}
