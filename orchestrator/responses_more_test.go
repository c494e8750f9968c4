package orchestrator

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/issuequeue"
)

const (
	exVerified   = "ISSUE-20261122-001" // the example's issue with a Verify check
	exUnverified = "ISSUE-20261122-002" // the example's issue without one
)

// loadQueue reads the queue o's directory holds now.
func loadQueue(t *testing.T, o *Orchestrator) *issuequeue.Queue {
	t.Helper()
	q, _, err := o.paths().Load()
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// eventsOf returns the events of the log of o's directory named name, for
// issue id.
func eventsOf(t *testing.T, o *Orchestrator, name, id string) []Event {
	t.Helper()
	evs, errs := ReadEvents(o.Dir)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	var out []Event
	for _, ev := range evs {
		if ev.Event == name && ev.IssueID == id {
			out = append(out, ev)
		}
	}
	return out
}

// A failure is recorded in the issue (its attempt, signature and
// details) and in the log; the same signature three times in a row halts
// it, escalated.
func TestFailRecordsAndHaltsOnRepeats(t *testing.T) {
	o := newTestOrchestrator(t)
	var stdout bytes.Buffer
	o.Stdout = &stdout
	o.Now = func() time.Time { return testNow }
	out := []byte("compiling\nerror: cannot find module 'left-pad'\n")
	d, err := o.NewSignature()
	if err != nil {
		t.Fatal(err)
	}
	d.Write(out)
	want := d.Sum()

	rep, err := o.Fail(context.Background(), exVerified, out, FailVerification)
	if err != nil {
		t.Fatal(err)
	}
	if rep.ID != exVerified || rep.Signature != want || rep.RepeatCount != 1 || rep.Attempt != 1 ||
		rep.Halted || rep.Status != issuequeue.StatusPending || rep.Threshold != o.Config.AutoRetry.HaltAfterRepeats {
		t.Fatalf("first failure: %+v, want signature %s, repeat 1, attempt 1, pending", rep, want)
	}
	is := loadQueue(t, o).Issue(exVerified)
	if is.FailureSignature != want || is.SignatureRepeatCount != 1 || is.Halted || is.Status != issuequeue.StatusPending {
		t.Errorf("issue after one failure: signature %q, repeats %d, halted %v, status %s",
			is.FailureSignature, is.SignatureRepeatCount, is.Halted, is.Status)
	}
	if _, rows, _ := is.Table(issuequeue.SectionAttemptHistory); len(rows) != 1 || len(rows) > 0 && (rows[0][0] != "1" || !strings.Contains(rows[0][3], want[:8])) {
		t.Errorf("Attempt History rows %q, want attempt 1 with the signature", rows)
	}
	if details, _ := is.Section(issuequeue.SectionFailureDetails); !strings.Contains(details, "error: cannot find module 'left-pad'") {
		t.Errorf("Failure Details does not hold the output:\n%s", details)
	}
	if evs := eventsOf(t, o, EvAttempt, exVerified); len(evs) != 1 || evs[0].Signature != want || evs[0].Status != "failed" || evs[0].Attempt != 1 {
		t.Errorf("attempt events %+v, want one failed attempt 1 with signature %s", evs, want)
	}
	if !strings.Contains(stdout.String(), exVerified+" "+FailVerification+": signature "+want+", repeat 1/3") {
		t.Errorf("stdout %q does not report the repeat", stdout.String())
	}

	for i := 2; i <= 3; i++ {
		if rep, err = o.Fail(context.Background(), exVerified, out, FailVerification); err != nil {
			t.Fatal(err)
		}
		if i == 2 && (rep.Halted || rep.RepeatCount != 2) {
			t.Fatalf("second failure: %+v, want repeat 2, not halted", rep)
		}
	}
	if !rep.Halted || rep.RepeatCount != 3 || rep.Status != issuequeue.StatusEscalated || rep.Code == "" {
		t.Fatalf("third identical failure: %+v, want halted, escalated, with a code", rep)
	}
	is = loadQueue(t, o).Issue(exVerified)
	if !is.Halted || is.Status != issuequeue.StatusEscalated {
		t.Errorf("issue after the halt: Halted %v, Status %s", is.Halted, is.Status)
	}
	if evs := eventsOf(t, o, EvEscalated, exVerified); len(evs) != 1 || evs[0].Code != rep.Code {
		t.Errorf("escalated events %+v, want one with code %s", evs, rep.Code)
	}
}

// A failure of an issue the queue does not hold changes nothing.
func TestFailUnknownIssue(t *testing.T) {
	o := newTestOrchestrator(t)
	before, err := os.ReadFile(filepath.Join(o.Dir, "issue_queue.md"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.Fail(context.Background(), "ISSUE-20261122-999", []byte("error: x\n"), FailVerification); err == nil {
		t.Fatal("Fail of an unknown issue: no error")
	}
	after, err := os.ReadFile(filepath.Join(o.Dir, "issue_queue.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Error("Fail of an unknown issue changed the queue")
	}
	if evs, _ := ReadEvents(o.Dir); len(evs) != 0 {
		t.Errorf("Fail of an unknown issue logged %+v", evs)
	}
}

// A loop's resolve is a claim: an issue with a Verify check keeps its
// Status and the claim is logged; one without is resolved, recorded as
// resolved_unverified.
func TestResolveFromLoop(t *testing.T) {
	o := newTestOrchestrator(t)
	var stdout bytes.Buffer
	o.Stdout = &stdout
	ctx := context.Background()

	if err := o.ResolveFromLoop(ctx, exVerified); err != nil {
		t.Fatal(err)
	}
	if s := loadQueue(t, o).Issue(exVerified).Status; s != issuequeue.StatusPending {
		t.Errorf("an issue with a Verify check became %s on a loop's resolve, want it kept pending", s)
	}
	if evs := eventsOf(t, o, EvResolveClaimed, exVerified); len(evs) != 1 {
		t.Errorf("resolve_claimed events %+v, want one", evs)
	}
	if evs := eventsOf(t, o, EvResolved, exVerified); len(evs) != 0 {
		t.Errorf("an issue with a Verify check was logged resolved: %+v", evs)
	}
	if !strings.Contains(stdout.String(), `its Verify check "build" passes`) {
		t.Errorf("stdout %q does not say the Verify check decides", stdout.String())
	}

	if err := o.ResolveFromLoop(ctx, exUnverified); err != nil {
		t.Fatal(err)
	}
	if s := loadQueue(t, o).Issue(exUnverified).Status; s != issuequeue.StatusResolved {
		t.Errorf("an issue without a Verify check is %s after a loop's resolve, want resolved", s)
	}
	evs := eventsOf(t, o, EvResolved, exUnverified)
	if len(evs) != 1 || evs[0].Resolution != ResolvedUnverified || evs[0].TotalAttempts != 1 {
		t.Errorf("resolved events %+v, want one resolved_unverified after 1 attempt", evs)
	}
	if evs := eventsOf(t, o, EvResolveClaimed, exUnverified); len(evs) != 0 {
		t.Errorf("an issue without a Verify check logged a claim: %+v", evs)
	}
}

// skip sets Status skipped and logs the answer with its reason, and the
// skip as a resolution.
func TestSkip(t *testing.T) {
	o := newTestOrchestrator(t)
	if err := o.Skip(context.Background(), exVerified, "flaky upstream"); err != nil {
		t.Fatal(err)
	}
	if s := loadQueue(t, o).Issue(exVerified).Status; s != issuequeue.StatusSkipped {
		t.Errorf("Status %s after skip, want skipped", s)
	}
	if evs := eventsOf(t, o, EvUserResponse, exVerified); len(evs) != 1 || evs[0].Response != "skip" || evs[0].Reason != "flaky upstream" {
		t.Errorf("user_response events %+v, want one skip with its reason", evs)
	}
	if evs := eventsOf(t, o, EvResolved, exVerified); len(evs) != 1 || evs[0].Resolution != issuequeue.StatusSkipped {
		t.Errorf("resolved events %+v, want one, skipped", evs)
	}
}

// fix stores the instruction in a Fix Instruction section and retries the
// issue as retry does; an empty instruction is refused and changes nothing.
func TestFix(t *testing.T) {
	o := newTestOrchestrator(t)
	ctx := context.Background()
	qp := filepath.Join(o.Dir, "issue_queue.md")
	src, err := os.ReadFile(qp)
	if err != nil {
		t.Fatal(err)
	}
	// the first issue, exVerified, has taken 2 retries
	src = bytes.Replace(src, []byte("| Retry-Count | 0 |"), []byte("| Retry-Count | 2 |"), 1)
	if err := os.WriteFile(qp, src, 0o644); err != nil {
		t.Fatal(err)
	}
	if n := loadQueue(t, o).Issue(exVerified).RetryCount; n != 2 {
		t.Fatalf("Retry-Count %d, want 2", n)
	}
	out := []byte("error: same\n")
	for i := 0; i < 3; i++ { // halt it
		if _, err := o.Fail(ctx, exVerified, out, FailVerification); err != nil {
			t.Fatal(err)
		}
	}
	if is := loadQueue(t, o).Issue(exVerified); !is.Halted {
		t.Fatal("the issue did not halt")
	}

	before, err := os.ReadFile(qp)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Fix(ctx, exVerified, " \n\t "); err == nil {
		t.Error("an empty instruction was accepted")
	}
	if after, _ := os.ReadFile(filepath.Join(o.Dir, "issue_queue.md")); !bytes.Equal(before, after) {
		t.Error("an empty instruction changed the queue")
	}

	if err := o.Fix(ctx, exVerified, "  call server.listen, not Config.listen \n"); err != nil {
		t.Fatal(err)
	}
	is := loadQueue(t, o).Issue(exVerified)
	if is.Status != issuequeue.StatusPending || is.Halted || is.RetryCount != 0 || is.SignatureRepeatCount != 0 {
		t.Errorf("after fix: Status %s, Halted %v, Retry-Count %d, repeats %d; want a fresh start",
			is.Status, is.Halted, is.RetryCount, is.SignatureRepeatCount)
	}
	if s, ok := is.Section(issuequeue.SectionFixInstruction); !ok || strings.TrimSpace(s) != "call server.listen, not Config.listen" {
		t.Errorf("Fix Instruction %q (present %v), want the trimmed instruction", s, ok)
	}
	evs := eventsOf(t, o, EvUserResponse, exVerified)
	if len(evs) != 1 || evs[0].Response != "fix" || evs[0].Reason != "call server.listen, not Config.listen" {
		t.Errorf("user_response events %+v, want one fix with the instruction", evs)
	}
	if evs := eventsOf(t, o, EvHaltReleased, exVerified); len(evs) != 1 {
		t.Errorf("halt_released events %+v, want one: a person's fix releases the halt", evs)
	}
}

// archive moves resolved and skipped issues created before now-olderThan,
// or lacking Created, to issue_archive.md byte for byte, and leaves the
// rest, and younger ones, in the queue.
func TestArchive(t *testing.T) {
	o := newTestOrchestrator(t)
	now := time.Date(2026, 12, 30, 0, 0, 0, 0, time.UTC)
	o.Now = func() time.Time { return now }
	const (
		oldResolved = "ISSUE-20261101-001"
		oldSkipped  = "ISSUE-20261101-002"
		oldPending  = "ISSUE-20261101-003"
		newResolved = "ISSUE-20261229-001"
		noCreated   = "ISSUE-20261229-002"
		edgeSkipped = "ISSUE-20261129-001"
	)
	issues := map[string]string{
		oldResolved: issueMD(oldResolved, "Type=test", "Status=resolved", "Created=2026-11-01T00:00:00Z"),
		oldSkipped:  issueMD(oldSkipped, "Type=test", "Status=skipped", "Created=2026-11-01T00:00:00Z"),
		oldPending:  issueMD(oldPending, "Type=test", "Status=pending", "Created=2026-11-01T00:00:00Z"),
		newResolved: issueMD(newResolved, "Type=test", "Status=resolved", "Created=2026-12-29T00:00:00Z"),
		noCreated:   issueMD(noCreated, "Type=test", "Status=resolved"),
		// exactly olderThan old: not younger, so moved
		edgeSkipped: issueMD(edgeSkipped, "Type=test", "Status=skipped", "Created=2026-11-30T00:00:00Z"),
	}
	order := []string{oldResolved, oldSkipped, oldPending, newResolved, noCreated, edgeSkipped}
	src := "# Issue Queue\n\n"
	for _, id := range order {
		src += issues[id]
	}
	if err := os.WriteFile(filepath.Join(o.Dir, "issue_queue.md"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}

	moved, err := o.Archive(context.Background(), 30*24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(moved, ","), oldResolved+","+oldSkipped+","+noCreated+","+edgeSkipped; got != want {
		t.Errorf("moved %s, want %s", got, want)
	}
	q := loadQueue(t, o)
	if got := idList(q.Issues); got != oldPending+","+newResolved {
		t.Errorf("the queue keeps %s, want %s,%s", got, oldPending, newResolved)
	}
	a, err := o.paths().LoadArchive()
	if err != nil || a == nil {
		t.Fatalf("archive: %v, %v", a, err)
	}
	if got := idList(a.Issues); got != oldResolved+","+oldSkipped+","+noCreated+","+edgeSkipped {
		t.Errorf("the archive holds %s", got)
	}
	arch, err := os.ReadFile(filepath.Join(o.Dir, "issue_archive.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range moved {
		if !strings.Contains(string(arch), strings.TrimRight(issues[id], "\n")) {
			t.Errorf("%s is not in the archive byte for byte:\n%s", id, arch)
		}
	}

	// Nothing left to move: a second archive moves nothing.
	if moved, err := o.Archive(context.Background(), 30*24*time.Hour); err != nil || len(moved) != 0 {
		t.Errorf("a second archive moved %v (%v)", moved, err)
	}
}
