package orchestrator

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// ledgerOf reads events as ReadIssueLedger would.
func ledgerOf(evs ...Event) *IssueLedger {
	l := newIssueLedger()
	for _, ev := range evs {
		l.add(ev)
	}
	return l
}

func execFor(run string, loop int, tokens *EventTokens, cost float64, d time.Duration, ids ...string) Event {
	return Event{Time: testNow, Event: EvExec, RunID: run, Loop: loop, Tokens: tokens, Cost: cost, DurationMS: d.Milliseconds(), Issues: ids}
}

// An issue's spend is what every loop run for it spent: tokens are input
// plus output, cache reads and writes not counted; a loop run for several
// issues counts in full for each; re-runs of a loop add to it; a loop not
// run for an issue does not count.
func TestIssueLedgerCounts(t *testing.T) {
	tok := &EventTokens{Input: 100, Output: 50, CacheRead: 90000, CacheWrite: 700}
	l := ledgerOf(
		execFor("r1", 2, tok, 0.5, time.Minute, "A", "B"),
		execFor("r1", 2, tok, 0.5, time.Minute, "A", "B"), // a re-run of the same loop
		execFor("r1", 3, tok, 1, time.Minute, "B"),
		execFor("r2", 1, tok, 1, time.Minute),
	)
	a, b := l.Of("A"), l.Of("B")
	if got, want := a.Total, (Spend{Cost: 1, Tokens: 300, AgentTime: 2 * time.Minute}); got != want {
		t.Errorf("A spent %+v, want %+v", got, want)
	}
	if got, want := b.Total, (Spend{Cost: 2, Tokens: 450, AgentTime: 3 * time.Minute}); got != want {
		t.Errorf("B spent %+v, want %+v", got, want)
	}
	if a.Loops != 1 || b.Loops != 2 {
		t.Errorf("loops: A %d, B %d; want 1, 2", a.Loops, b.Loops)
	}
}

// A person's retry or fix, the issue's creation and a release of its halt
// start a new allowance, and with it a new spend since progress; a skip
// does not.
func TestIssueLedgerRestarts(t *testing.T) {
	tok := &EventTokens{Input: 1000}
	for _, ev := range []Event{
		{Event: EvUserResponse, IssueID: "A", Response: "retry"},
		{Event: EvUserResponse, IssueID: "A", Response: "fix"},
		{Event: EvAdded, IssueID: "A"},
		{Event: EvHaltReleased, IssueID: "A", Cause: "issue_changed"},
	} {
		ev.Time = testNow.Add(time.Hour)
		l := ledgerOf(execFor("r1", 2, tok, 0, time.Minute, "A"), ev, execFor("r2", 2, tok, 0, time.Minute, "A"))
		s := l.Of("A")
		if s.Total.Tokens != 1000 || s.SinceProgress.Tokens != 1000 || !s.Since.Equal(ev.Time) {
			t.Errorf("after %s %s: %+v, want 1000 tokens since %s", ev.Event, ev.Response, s, ev.Time)
		}
	}
	skip := Event{Time: testNow, Event: EvUserResponse, IssueID: "A", Response: "skip"}
	if s := ledgerOf(execFor("r1", 2, tok, 0, time.Minute, "A"), skip, execFor("r2", 2, tok, 0, time.Minute, "A")).Of("A"); s.Total.Tokens != 2000 {
		t.Errorf("after a skip: %d tokens, want 2000", s.Total.Tokens)
	}
}

// The spend since progress starts again after a loop judged to have
// progressed on the issue, its own spend included; a loop that only
// changed files does not reset it.
func TestIssueLedgerSinceProgress(t *testing.T) {
	tok := &EventTokens{Input: 100}
	loop := func(run string, n int, verdict string) Event {
		return Event{Time: testNow, Event: EvLoop, RunID: run, Loop: n, Progress: verdict}
	}
	l := ledgerOf(
		execFor("r1", 2, tok, 0, time.Minute, "A"), loop("r1", 2, ProgressChanged),
		execFor("r2", 2, tok, 0, time.Minute, "A"), loop("r2", 2, ProgressProgressed),
		execFor("r3", 2, tok, 0, time.Minute, "A"), loop("r3", 2, ProgressChanged),
		execFor("r4", 2, tok, 0, time.Minute, "A"), loop("r4", 2, ProgressCycled),
	)
	s := l.Of("A")
	if s.SinceProgress.Tokens != 200 || s.Total.Tokens != 400 || s.Progressed.IsZero() {
		t.Errorf("%+v: want 200 tokens since progress, 400 in all", s)
	}
}

// A typical loop is the median of the issue's last loops, or of the last
// loops of any issue while it has run fewer than 3.
func TestIssueLedgerTypical(t *testing.T) {
	tok := func(n int64) *EventTokens { return &EventTokens{Input: n} }
	l := ledgerOf(
		execFor("r1", 1, tok(10), 0, 0, "B"), execFor("r1", 2, tok(20), 0, 0, "B"), execFor("r1", 3, tok(900), 0, 0, "B"),
		execFor("r1", 4, tok(5000), 0, 0, "A"),
	)
	if s, ok := l.Typical("B"); !ok || s.Tokens != 20 {
		t.Errorf("B's typical loop: %d tokens, want its own median 20", s.Tokens)
	}
	if s, ok := l.Typical("A"); !ok || s.Tokens != 20 {
		t.Errorf("A's typical loop: %d tokens, want the median of all loops 20 (10 20 900 5000)", s.Tokens)
	}
	if _, ok := ledgerOf().Typical("A"); ok {
		t.Error("a typical loop without any loop")
	}
	for i := range 2 * typicalLoops {
		l.add(execFor("r2", i, tok(1), 0, 0, "C"))
	}
	if n := len(l.Issues["C"].recent); n != typicalLoops {
		t.Errorf("C keeps %d loops, want %d", n, typicalLoops)
	}
}

// The check halts an issue whose loops reached a cap, before another loop
// (it is not retried), with the cap's code in its escalated event; a
// person's retry gives it a new allowance and the next check retries it.
// The halt on spend says nothing about other issues with its failure.
func TestCheckHaltsOnIssueCap(t *testing.T) {
	const a, b = "ISSUE-20261122-001", "ISSUE-20261122-002"
	sig := strings.Repeat("e", 64)
	o := newTestOrchestrator(t)
	o.Now = func() time.Time { return testNow }
	o.Config.Budget.IssueTokens = 1000
	queue := "# Issue Queue\n\n" + issueMD(a, "Auto-Retry=true", "Failure-Signature="+sig) + issueMD(b, "Auto-Retry=true", "Failure-Signature="+sig)
	if err := os.WriteFile(filepath.Join(o.Dir, "issue_queue.md"), []byte(queue), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(o.Dir, "session_state.md"), []byte(stateMD(0, true)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := o.log().Record(execFor("r1", 2, &EventTokens{Input: 600, Output: 400, CacheRead: 1e6}, 0, time.Minute, a)); err != nil {
		t.Fatal(err)
	}
	rep, err := o.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Outcome != "retry" || strings.Join(rep.Halted, ",") != a || strings.Join(rep.Triggered, ",") != b {
		t.Fatalf("check: %s, halted %v, retried %v; want %s halted and %s retried", rep.Outcome, rep.Halted, rep.Triggered, a, b)
	}
	evs, _ := ReadEvents(o.Dir)
	var found bool
	for _, ev := range evs {
		if ev.Event == EvEscalated && ev.IssueID == a {
			found = ev.Code == CodeIssueTokens && ev.Fingerprint != nil
		}
	}
	if !found {
		t.Errorf("no escalated event of %s with code %s and a fingerprint: %+v", a, CodeIssueTokens, evs)
	}
	q, _, err := o.paths().Load()
	if err != nil {
		t.Fatal(err)
	}
	if !q.Issue(a).Halted {
		t.Fatalf("%s is not halted", a)
	}
	if err := o.Retry(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	if rep, err = o.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(rep.Triggered, a) {
		t.Errorf("after a retry, %s is not retried: %+v", a, rep)
	}
}

// Reading the log again after more was appended gives what reading it
// whole gives, and so does reading it after it was rewritten (pruned); a
// caller's change of what it was given does not reach the next reader.
func TestReadIssueLedgerAgain(t *testing.T) {
	o := newTestOrchestrator(t)
	rec := func(evs ...Event) {
		for _, ev := range evs {
			if err := o.log().Record(ev); err != nil {
				t.Fatal(err)
			}
		}
	}
	tok := &EventTokens{Input: 10}
	rec(execFor("r1", 2, tok, 0, time.Minute, "A"))
	first, err := ReadIssueLedger(o.Dir)
	if err != nil {
		t.Fatal(err)
	}
	first.Issues["A"].Total.Tokens = 1e9
	rec(execFor("r1", 3, tok, 0, time.Minute, "A"),
		Event{Time: testNow, Event: EvEscalated, IssueID: "A", Code: CodeIssueTokens, Fingerprint: &Fingerprint{Issue: "x"}})
	again, err := ReadIssueLedger(o.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if s := again.Of("A"); s.Total.Tokens != 20 || s.Loops != 2 || again.Halt("A") == nil {
		t.Errorf("read again: %+v, halt %v; want 20 tokens over 2 loops and the halt", s, again.Halt("A"))
	}
	// Rewritten: only the last loop is left.
	b, err := os.ReadFile(o.paths().Ledger())
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	if err := os.WriteFile(o.paths().Ledger(), []byte(strings.Join(lines[1:], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	pruned, err := ReadIssueLedger(o.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if s := pruned.Of("A"); s.Total.Tokens != 10 || s.Loops != 1 {
		t.Errorf("read after a prune: %+v, want 10 tokens over 1 loop", s)
	}
}
