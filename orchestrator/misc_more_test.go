package orchestrator

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeQueue replaces the queue of o's directory with the given issues.
func writeQueue(t *testing.T, o *Orchestrator, issues ...string) {
	t.Helper()
	src := "# Issue Queue\n\n" + strings.Join(issues, "")
	if err := os.WriteFile(filepath.Join(o.Dir, "issue_queue.md"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Every path the tool writes in the state directory is where
// docs/file-formats.md says it is.
func TestPathsAreTheDocumentedOnes(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "file-formats.md"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("state", "dir")
	p := PathsIn(dir)
	for _, tt := range []struct{ got, rel string }{
		{p.MetricsState(), "logs/metrics-state.json"},
		{p.Ledger(), "logs/retry.jsonl"},
		{p.TextLog(), "logs/retry.log"},
		{p.LoopLogs(), "logs/loops/"},
		{p.History(), "history.csv"},
		{p.Pause(), "paused"},
	} {
		if want := filepath.Join(dir, filepath.FromSlash(tt.rel)); tt.got != want {
			t.Errorf("path %s, want %s", tt.got, want)
		}
		if !bytes.Contains(doc, []byte("`"+tt.rel+"`")) {
			t.Errorf("docs/file-formats.md does not list `%s`", tt.rel)
		}
	}
}

// Each finding that quarantines an issue is told on Stderr once, however
// often the queue is read; a new one is told when it appears.
func TestWarnQuarantinedOnce(t *testing.T) {
	o := newTestOrchestrator(t)
	var stderr bytes.Buffer
	o.Stderr = &stderr
	const good, bad, worse = "ISSUE-20261122-001", "ISSUE-20261122-002", "ISSUE-20261122-003"
	goodMD := issueMD(good, "Type=test", "Status=pending")
	badMD := issueMD(bad, "Type=test", "Status=pending", "Created=yesterday")
	writeQueue(t, o, goodMD, badMD)
	for i := 0; i < 3; i++ {
		if _, err := o.Explain(nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := strings.Count(stderr.String(), "orchestrator: warning: "); n != 1 || !strings.Contains(stderr.String(), "(the issue is left alone)") ||
		!strings.Contains(stderr.String(), `"yesterday"`) {
		t.Fatalf("after three reads, stderr:\n%s\nwant the one finding told once", stderr.String())
	}

	writeQueue(t, o, goodMD, badMD, issueMD(worse, "Type=test", "Status=pending", "Retry-Count=many"))
	stderr.Reset()
	if _, err := o.Explain(nil); err != nil {
		t.Fatal(err)
	}
	if got := stderr.String(); strings.Count(got, "orchestrator: warning: ") != 1 || !strings.Contains(got, `"many"`) {
		t.Errorf("a new finding: stderr\n%s\nwant only the new one", got)
	}

	// Without a Stderr nothing is written, and nothing remembered: a
	// Stderr set later still hears of it.
	o2 := newTestOrchestrator(t)
	writeQueue(t, o2, goodMD, badMD)
	if _, err := o2.Explain(nil); err != nil {
		t.Fatal(err)
	}
	stderr.Reset()
	o2.Stderr = &stderr
	if _, err := o2.Explain(nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), `"yesterday"`) {
		t.Errorf("a finding first read without a Stderr was not told later: %q", stderr.String())
	}
}

// explain, asked about issues that are no candidates, says why each is not.
func TestExplainNotCandidate(t *testing.T) {
	o := newTestOrchestrator(t)
	const off, halted, done, quarantined = "ISSUE-20261122-001", "ISSUE-20261122-002", "ISSUE-20261122-003", "ISSUE-20261122-004"
	writeQueue(t, o,
		issueMD(off, "Type=test", "Status=pending", "Auto-Retry=false"),
		issueMD(halted, "Type=test", "Status=escalated", "Auto-Retry=true", "Halted=true"),
		issueMD(done, "Type=test", "Status=resolved", "Auto-Retry=true"),
		issueMD(quarantined, "Type=test", "Status=pending", "Created=never"))
	ex, err := o.Explain([]string{off, halted, done, quarantined})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		off:    "not an auto-retry candidate: Auto-Retry is false",
		halted: "not an auto-retry candidate: it is halted, its Status is escalated",
		done:   "not an auto-retry candidate: its Status is resolved",
	}
	got := map[string]IssueVerdict{}
	for _, iv := range ex.Check.Issues {
		got[iv.ID] = iv
	}
	for id, because := range want {
		if iv := got[id]; iv.Retry || !strings.HasPrefix(iv.Because, because) {
			t.Errorf("%s: %+v, want not retried because %q", id, iv, because)
		}
	}
	if iv := got[quarantined]; iv.Retry || !strings.HasPrefix(iv.Because, "quarantined, left alone until a person fixes it: ") {
		t.Errorf("%s: %+v, want quarantined", quarantined, iv)
	}

	// Not asked about them, explain lists no issue that is no candidate.
	ex, err = o.Explain(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, iv := range ex.Check.Issues {
		if iv.ID != quarantined {
			t.Errorf("explain without IDs lists %s, no candidate: %+v", iv.ID, iv)
		}
	}
}

// A silent check's warning names the check and the issue and time of its
// last silent failure, in UTC, and says what to do.
func TestSilentCheckWarning(t *testing.T) {
	at := time.Date(2026, 11, 22, 11, 30, 0, 0, time.FixedZone("CET", 3600))
	w := SilentCheck{Check: "unit", Issue: "ISSUE-20261122-001", Time: at}.Warning()
	want := "check unit printed nothing when it failed (ISSUE-20261122-001, 2026-11-22T10:30:00Z): " +
		"the loop is told nothing about why; make it print what failed"
	if w != want {
		t.Errorf("warning\n%q, want\n%q", w, want)
	}
	if strings.Contains(w, "\n") {
		t.Error("the warning is more than one line")
	}
}

// The retry context shows the attempt that would run next (the retry
// count, plus one unless the issue is in progress), in the tier [tiers]
// gives that attempt, with a person's fix instruction first.
func TestRetryContext(t *testing.T) {
	o := newTestOrchestrator(t)
	o.Now = func() time.Time { return testNow }
	o.Config.Tiers.SameAgent, o.Config.Tiers.FreshAgent = 2, 2
	o.Config.Tiers.Model, o.Config.Tiers.EscalationModel = "small", "large"
	const a, b, c = "ISSUE-20261122-001", "ISSUE-20261122-002", "ISSUE-20261122-003"
	writeQueue(t, o,
		issueMD(a, "Type=test", "Status=pending", "Retry-Count=1", "Max-Retries=9"),
		issueMD(b, "Type=test", "Status=in_progress", "Retry-Count=4", "Max-Retries=9"),
		issueMD(c, "Type=test", "Status=pending", "Retry-Count=4", "Max-Retries=9"))
	if err := o.Fix(context.Background(), a, "await config.load() before start()"); err != nil {
		t.Fatal(err)
	}
	q := loadQueue(t, o)
	render := func(ids ...string) string {
		t.Helper()
		b, err := o.RetryContext(q, ids)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	// a: fix reset it to Retry-Count 0; the next attempt is 1.
	got := render(a)
	if !strings.Contains(got, `<retry_context issue="`+a+`" attempt="1" max_attempts="9" tier="same_agent" model="small">`) {
		t.Errorf("a pending issue with Retry-Count 0:\n%s", got)
	}
	if !strings.Contains(got, "<instruction priority=\"high\">\n      User provided fix: await config.load() before start()\n") {
		t.Errorf("the fix instruction is not given first, as high-priority guidance:\n%s", got)
	}
	// b: in progress, its attempt is the one running: 4, the last of fresh_agent.
	if got := render(b); !strings.Contains(got, `attempt="4" max_attempts="9" tier="fresh_agent" model="small"`) {
		t.Errorf("an in-progress issue with Retry-Count 4:\n%s", got)
	}
	// c: pending, the next attempt is 5: past both tiers, the stronger model.
	if got := render(c); !strings.Contains(got, `attempt="5" max_attempts="9" tier="escalate_model" model="large"`) {
		t.Errorf("a pending issue with Retry-Count 4:\n%s", got)
	}
	// Together, the tier is that of the furthest attempt.
	if got := render(a, b); strings.Count(got, `tier="fresh_agent"`) != 2 {
		t.Errorf("a and b together are not both in b's tier:\n%s", got)
	}
	if _, err := o.RetryContext(q, []string{"ISSUE-20261122-999"}); err == nil {
		t.Error("the retry context of an unknown issue: no error")
	}
}

// The retry context tells the loop how the last loop of the last 24 hours
// failed, and says nothing of an older one or of one that did not fail.
func TestRetryContextLastLoopFailure(t *testing.T) {
	o := newTestOrchestrator(t)
	now := testNow
	o.Now = func() time.Time { return now }
	q := loadQueue(t, o)
	const id = "ISSUE-20261122-001"
	render := func() string {
		t.Helper()
		b, err := o.RetryContext(q, []string{id})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if err := o.log().Record(Event{Time: now.Add(-25 * time.Hour), Event: EvLoop, Loop: 1, Error: "exit status 2", OutputTail: "panic: old"}); err != nil {
		t.Fatal(err)
	}
	if got := render(); strings.Contains(got, "<last_loop_failure") {
		t.Errorf("a loop failure older than 24 hours is told:\n%s", got)
	}
	if err := o.log().Record(Event{Time: now.Add(-time.Hour), Event: EvLoop, Loop: 7, Error: "exit status 1", OutputTail: "panic: <boom>"}); err != nil {
		t.Fatal(err)
	}
	got := render()
	if !strings.Contains(got, `<last_loop_failure loop="7" exit="exit status 1">`) || !strings.Contains(got, "panic: &lt;boom&gt;") {
		t.Errorf("the last loop's failure is not told, escaped:\n%s", got)
	}
	if err := o.log().Record(Event{Time: now.Add(-time.Minute), Event: EvLoop, Loop: 8}); err != nil {
		t.Fatal(err)
	}
	if got := render(); strings.Contains(got, "<last_loop_failure") {
		t.Errorf("the last loop did not fail, yet a failure is told:\n%s", got)
	}
}
