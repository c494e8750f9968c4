package orchestrator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/internal/adapters/handoff"
	"github.com/autoretry/orchestrator/internal/foundations/statefile"
	"github.com/autoretry/orchestrator/issuequeue"
)

// With no run listening, a person's change is made alone: do runs once,
// its error is the result, and nothing is said.
func TestTellRunNoRun(t *testing.T) {
	o := newTestOrchestrator(t)
	var stderr bytes.Buffer
	o.Stderr = &stderr
	for _, want := range []error{nil, errors.New("queue is locked")} {
		calls := 0
		err := o.TellRun(RetryChange("ISSUE-20261122-001"), func() error { calls++; return want })
		if calls != 1 || err != want {
			t.Errorf("do ran %d times, TellRun = %v; want once, %v", calls, err, want)
		}
	}
	if stderr.Len() != 0 {
		t.Errorf("stderr %q, want nothing", stderr.String())
	}
}

// A run refuses a message from itself (as from anything its loop starts):
// the change is made all the same, with a warning that names the command
// as the person runs it and says that the guard will undo the change, and
// the run takes nothing.
func TestTellRunRefused(t *testing.T) {
	o := newTestOrchestrator(t)
	o.Invocation = "orchestrator --dir ci/.orchestrator"
	var stderr bytes.Buffer
	o.Stderr = &stderr
	r := &Runner{O: o}
	stop := r.listen()
	defer stop()
	if r.person.srv == nil {
		t.Fatal("the run does not listen")
	}
	calls := 0
	if err := o.TellRun(SkipChange("ISSUE-20261122-001"), func() error { calls++; return nil }); err != nil || calls != 1 {
		t.Fatalf("TellRun = %v after %d calls; want the change made once", err, calls)
	}
	if w := stderr.String(); !strings.Contains(w, "warning: the running 'orchestrator --dir ci/.orchestrator run' did not take this change") ||
		!strings.Contains(w, "the loop guard will undo the change") {
		t.Errorf("stderr %q", w)
	}
	if people, _ := r.person.take(0); len(people) != 0 {
		t.Errorf("the run took %+v from itself", people)
	}
}

// A run that listens takes the change exactly as sent, from the sender's
// process, once it is made; a change that fails is not taken.
func TestTellRunTaken(t *testing.T) {
	o := newTestOrchestrator(t)
	// The listening side stands for a run this test does not descend from.
	other := exec.Command("sleep", "60")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { other.Process.Kill(); other.Wait() }()
	srv, err := handoff.Listen(o.socketPath(), other.Process.Pid, func(b []byte) error {
		var c PersonChange
		if err := json.Unmarshal(b, &c); err != nil {
			return err
		}
		return c.valid()
	})
	if err != nil {
		t.Skipf("cannot listen here: %v", err)
	}
	defer srv.Close()
	var stderr bytes.Buffer
	o.Stderr = &stderr

	c := RetryChange("ISSUE-20261122-001")
	taken := func() int { return len(srv.Take(0)) }
	if err := o.TellRun(c, func() error {
		if n := taken(); n != 0 {
			t.Errorf("the run took %d change(s) before it was made", n)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	got := srv.Take(time.Second)
	if len(got) != 1 || got[0].PID != os.Getpid() {
		t.Fatalf("taken %+v, want one change from pid %d", got, os.Getpid())
	}
	var back PersonChange
	if err := json.Unmarshal(got[0].Payload, &back); err != nil || back.what() != c.what() {
		t.Errorf("taken %s (%v), want %s", got[0].Payload, err, c.what())
	}

	failed := errors.New("no such issue")
	if err := o.TellRun(SkipChange("ISSUE-20261122-009"), func() error { return failed }); err != failed {
		t.Fatalf("TellRun = %v, want the change's error", err)
	}
	if got := srv.Take(time.Second); len(got) != 0 {
		t.Errorf("a change that failed was taken: %+v", got)
	}
	if stderr.Len() != 0 {
		t.Errorf("stderr %q, want nothing", stderr.String())
	}
}

// How each change is described in the event log and the guard's lines.
func TestPersonChangeWhat(t *testing.T) {
	id := "ISSUE-20261122-001"
	tests := []struct {
		c    PersonChange
		want string
	}{
		{RetryChange(id), "retry " + id + ": Retry-Count 0, Halted false, Signature-Repeat-Count 0, Status pending"},
		{SkipChange(id), "skip " + id + ": Status skipped"},
		{BreakerResetChange(), "breaker_reset: state closed, consecutive_failures 0, opened_at null"},
		{PauseChange(time.Time{}), "pause: paused until resumed"},
		{PauseChange(time.Date(2026, 11, 22, 18, 0, 0, 0, time.FixedZone("", 3600))), "pause: paused until 2026-11-22T17:00:00Z"},
		{ResumeChange(), "resume: pause lifted"},
	}
	for _, tt := range tests {
		if got := tt.c.what(); got != tt.want {
			t.Errorf("what = %q, want %q", got, tt.want)
		}
	}
}

// A change the run took is recorded as a person_change event naming the
// loop, the command, the issue and the sender.
func TestRecordPeople(t *testing.T) {
	o := newTestOrchestrator(t)
	o.Now = func() time.Time { return testNow }
	id := "ISSUE-20261122-001"
	if err := o.recordPeople("R1", 3, []takenChange{{SkipChange(id), 4321}, {ResumeChange(), 99}}); err != nil {
		t.Fatal(err)
	}
	evs, err := readLedgerSince(o.paths().Ledger(), time.Time{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 {
		t.Fatalf("%d events, want 2", len(evs))
	}
	e := evs[0]
	if e.Event != EvPersonChange || e.IssueID != id || e.RunID != "R1" || e.Loop != 3 || e.Response != "skip" ||
		e.Reason != "skip "+id+": Status skipped (pid 4321)" || !e.Time.Equal(testNow) {
		t.Errorf("event %+v", e)
	}
	if e := evs[1]; e.Response != "resume" || e.IssueID != "" || e.Reason != "resume: pause lifted (pid 99)" {
		t.Errorf("event %+v", e)
	}
}

// A change a person made during a loop counts as part of the state before
// the loop, so the guard keeps it: the issue's fields, the breaker's
// fields and the pause file. A change to an issue the snapshot does not
// hold changes nothing.
func TestApplyPerson(t *testing.T) {
	o := newTestOrchestrator(t)
	id := "ISSUE-20261122-001"
	queue := "# Issue Queue\n\n" + issueMD(id, "Status=escalated", "Retry-Count=5", "Halted=true", "Signature-Repeat-Count=2", "Auto-Retry=true")
	if err := os.WriteFile(o.paths().Queue(), []byte(queue), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(o.paths().State(), []byte(stateMD(0, true)+breakerMD("open", 3, testNow.Format(time.RFC3339))), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := o.snapshot()
	if err != nil {
		t.Fatal(err)
	}
	before := string(s.queue.Source())
	s.applyPerson(o, takenChange{RetryChange("ISSUE-20261122-404"), 1})
	if string(s.queue.Source()) != before {
		t.Error("a change to an issue not in the queue changed the snapshot")
	}
	s.applyPerson(o, takenChange{RetryChange(id), 1})
	is := s.queue.Issue(id)
	if is == nil || is.Status != issuequeue.StatusPending || is.RetryCount != 0 || is.Halted || is.SignatureRepeatCount != 0 {
		t.Errorf("after retry: %+v", is)
	}
	s.applyPerson(o, takenChange{BreakerResetChange(), 1})
	if s.state.Breaker != issuequeue.BreakerClosed || s.state.ConsecutiveFailures != 0 || !s.state.OpenedAt.IsZero() {
		t.Errorf("after breaker reset: %s, %d, %v", s.state.Breaker, s.state.ConsecutiveFailures, s.state.OpenedAt)
	}
	s.applyPerson(o, takenChange{PauseChange(time.Time{}), 1})
	if p := s.files[o.paths().Pause()]; p == nil || len(*p) != 0 {
		t.Errorf("after pause: pause file %v, want empty", p)
	}
	s.applyPerson(o, takenChange{ResumeChange(), 1})
	if p, ok := s.files[o.paths().Pause()]; !ok || p != nil {
		t.Errorf("after resume: pause file %v (%v), want absent", p, ok)
	}
	if b, _ := os.ReadFile(o.paths().Queue()); string(b) != queue {
		t.Error("applyPerson wrote the queue")
	}
}

// WithWriteLock runs fn holding the write lock; if the lock cannot be
// had within LockWait, fn runs anyway: a person's stop must not wait.
func TestWithWriteLock(t *testing.T) {
	o := newTestOrchestrator(t)
	o.LockWait = 50 * time.Millisecond
	var held bool
	want := errors.New("from fn")
	if err := o.WithWriteLock(context.Background(), func() error {
		_, held, _ = statefile.WriteHolder(o.Dir)
		return want
	}); err != want {
		t.Fatalf("WithWriteLock = %v, want fn's error", err)
	}
	if !held {
		t.Error("fn ran without the write lock")
	}
	if _, held, _ := statefile.WriteHolder(o.Dir); held {
		t.Error("the write lock is still held after fn")
	}

	lk, err := statefile.LockWrite(context.Background(), o.Dir, time.Second, statefile.Owner{Command: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Unlock()
	ran := false
	if err := o.WithWriteLock(context.Background(), func() error { ran = true; return nil }); err != nil || !ran {
		t.Fatalf("with the lock held elsewhere: %v, ran %v; want fn run anyway", err, ran)
	}
	if _, err := os.Stat(filepath.Join(o.Dir, statefile.LockFile)); err != nil {
		t.Fatal(err)
	}
}
