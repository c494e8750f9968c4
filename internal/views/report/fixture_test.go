package report_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/issuequeue"
	"github.com/autoretry/orchestrator/orchestrator"
)

// hostile is text an agent might write into a summary or an error: markup,
// quotes, a URL to fetch and an unterminated comment.
const hostile = `<script>alert("x")</script><img src="https://evil.example/x.png" onerror="steal()"> & <!-- '"`

var fx0 = time.Date(2026, 11, 16, 2, 0, 0, 0, time.UTC)

func fxAt(day, min int) time.Time {
	return fx0.Add(time.Duration(day)*24*time.Hour + time.Duration(min)*time.Minute)
}

func sig(c byte) string { return strings.Repeat(string(c), 64) }

// fixtureDir writes a state directory as the tool leaves it after a week of
// nightly runs, through the real writers for history.csv and the logs.
func fixtureDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	type loop struct {
		kind, result        string
		minutes, transients int
		issues, resolved    []string
	}
	const i1, i2, i3, i4, i5, i7 = "ISSUE-20261116-001", "ISSUE-20261116-002", "ISSUE-20261116-003", "ISSUE-20261117-001",
		"ISSUE-20261118-001", "ISSUE-20261119-001"
	runs := [][]loop{
		{{"regular", "ok", 22, 0, nil, nil}, {"auto_retry", "failed", 18, 0, []string{i1}, nil}, {"auto_retry", "ok", 25, 1, []string{i1}, []string{i1}}},
		{{"regular", "ok", 30, 0, nil, []string{i3}}},
		{{"regular", "failed", 12, 0, nil, nil}, {"auto_retry", "failed", 14, 0, []string{i2}, nil}, {"auto_retry", "timeout", 30, 0, []string{i2}, nil},
			{"auto_retry", "failed", 16, 2, []string{i2, i4}, nil}},
		{{"regular", "ok", 20, 0, nil, nil}, {"auto_retry", "failed", 21, 0, []string{i5}, nil}, {"auto_retry", "failed", 19, 0, []string{i5}, nil}},
		{{"regular", "permanent", 1, 0, nil, nil}},
		{{"regular", "ok", 24, 0, nil, nil}},
		{{"regular", "aborted", 7, 0, nil, nil}},
	}
	for d, loops := range runs {
		id := fmt.Sprintf("202611%02dT020000Z-%d", 16+d, 4000+d)
		start := fxAt(d, 0)
		total := 0
		for n, l := range loops {
			if l.kind == "auto_retry" {
				total++
			}
			end := start.Add(time.Duration(l.minutes) * time.Minute)
			exit := map[string]int{"ok": 0, "failed": 1, "timeout": -1, "permanent": 127, "aborted": -1}[l.result]
			breaker := "closed"
			if d == 2 && n == len(loops)-1 {
				breaker = "open"
			}
			if err := orchestrator.AppendHistory(dir, orchestrator.LoopRecord{RunID: id, Loop: n + 1, Kind: l.kind, Started: start, Finished: end,
				ExitCode: exit, Result: l.result, TransientRetries: l.transients, Issues: l.issues, Resolved: l.resolved,
				TotalAutoRetries: total, Breaker: breaker}); err != nil {
				t.Fatal(err)
			}
			start = end
		}
	}
	log := orchestrator.EventLog{Dir: dir}
	rec := func(ev orchestrator.Event) {
		t.Helper()
		if err := log.Record(ev); err != nil {
			t.Fatal(err)
		}
	}
	fail := func(when time.Time, id string, attempt, repeat int, s, msg string) {
		rec(orchestrator.Event{Time: when, Event: orchestrator.EvAttempt, IssueID: id, Attempt: attempt, Status: "failed",
			FailureType: "verification_failed", Signature: s, RepeatCount: repeat, Error: msg})
	}
	trig := func(when time.Time, id string, attempt int) {
		rec(orchestrator.Event{Time: when, Event: orchestrator.EvTriggered, IssueID: id, Attempt: attempt})
	}
	// 001: fixed by the second retry, after two different failures.
	fail(fxAt(0, 21), i1, 1, 1, sig('a'), "src/index.ts:42:17 - error TS2339: Property 'listen' does not exist")
	trig(fxAt(0, 22), i1, 1)
	fail(fxAt(0, 40), i1, 2, 1, sig('b'), "npm test: 3 failed")
	trig(fxAt(0, 40), i1, 2)
	rec(orchestrator.Event{Time: fxAt(0, 65), Event: orchestrator.EvResolved, IssueID: i1, Resolution: "resolved", TotalAttempts: 3})
	// 003: fixed in a regular loop, no retry.
	rec(orchestrator.Event{Time: fxAt(1, 30), Event: orchestrator.EvResolved, IssueID: i3, Resolution: "resolved", TotalAttempts: 1})
	// 002: the same failure three times: halted, then a person's fix.
	for n := 1; n <= 3; n++ {
		trig(fxAt(2, 12+20*(n-1)), i2, n)
		fail(fxAt(2, 25+20*(n-1)), i2, n, n, sig('c'), "FAIL TestParse (0.03s): "+hostile)
	}
	rec(orchestrator.Event{Time: fxAt(2, 72), Event: orchestrator.EvEscalated, IssueID: i2, Reason: "same_failure_repeated", Signature: sig('c'), RepeatCount: 3})
	rec(orchestrator.Event{Time: fxAt(2, 300), Event: orchestrator.EvUserResponse, IssueID: i2, Response: "fix", Reason: "check for nil before parsing"})
	// 004: one failure, still pending.
	trig(fxAt(2, 56), i4, 1)
	fail(fxAt(2, 72), i4, 1, 1, sig('d'), "go vet: unreachable code")
	// 005: retries exhausted, escalated, skipped by a person.
	trig(fxAt(3, 20), i5, 1)
	fail(fxAt(3, 41), i5, 1, 1, sig('e'), "connection refused on :5432")
	trig(fxAt(3, 41), i5, 2)
	fail(fxAt(3, 60), i5, 2, 1, sig('f'), "migration 0042 failed")
	rec(orchestrator.Event{Time: fxAt(3, 61), Event: orchestrator.EvEscalated, IssueID: i5, Reason: "max_retries_exceeded", TotalAttempts: 2})
	rec(orchestrator.Event{Time: fxAt(3, 600), Event: orchestrator.EvUserResponse, IssueID: i5, Response: "skip", Reason: "needs a DBA"})
	rec(orchestrator.Event{Time: fxAt(3, 600), Event: orchestrator.EvResolved, IssueID: i5, Resolution: "skipped", TotalAttempts: 2})
	// 007: a permanent error.
	rec(orchestrator.Event{Time: fxAt(4, 1), Event: orchestrator.EvEscalated, IssueID: i7, Reason: "permanent_error", Error: "permission denied"})
	rec(orchestrator.Event{Time: fxAt(2, 73), Event: orchestrator.EvCapReached, RunID: "20261118T020000Z-4002", Reason: "global_cap"})
	rec(orchestrator.Event{Time: fxAt(2, 20), Event: orchestrator.EvTransient, Loop: 4, Attempt: 1, DurationMS: 1000})

	queue := "# Issue Queue\n\n" +
		issueMD(i1, "build", "critical", "resolved", "2026-11-16T02:00:00Z", 2, 3, 1, false, "Server fails to start (TypeError in src/index.ts:42)",
			[][]string{{"1", "2026-11-16T02:21:00Z", "verification_failed", sig('a')[:12], "error TS2339"}, {"2", "2026-11-16T02:40:00Z", "verification_failed", sig('b')[:12], "npm test: 3 failed"}}) +
		issueMD(i2, "test", "high", "escalated", "2026-11-16T02:05:00Z", 3, 10, 3, true, hostile, nil) +
		issueMD(i3, "review", "low", "resolved", "2026-11-16T02:10:00Z", 0, 2, 0, false, "README quick start skips the install step", nil) +
		issueMD(i4, "bug", "medium", "pending", "2026-11-17T03:00:00Z", 1, 10, 1, false, "go vet reports unreachable code in run.go", nil) +
		issueMD(i5, "bug", "critical", "skipped", "2026-11-18T01:00:00Z", 2, 2, 1, false, "Database migrations fail on a fresh database", nil) +
		issueMD(i7, "bug", "high", "escalated", "2026-11-19T01:00:00Z", 0, 10, 0, false, "Deploy key was revoked", nil)
	write(t, filepath.Join(dir, issuequeue.QueueFile), queue)
	archive := "# Issue Archive\n\n" +
		issueMD("ISSUE-20261101-001", "bug", "high", "resolved", "2026-11-01T00:00:00Z", 1, 10, 1, false, "Flaky login test",
			[][]string{{"1", "2026-11-01T00:30:00Z", "verification_failed", "0123456789ab", "login timed out"}})
	write(t, filepath.Join(dir, issuequeue.ArchiveFile), archive)
	return dir
}

func issueMD(id, typ, prio, status, created string, retries, maxRetries, repeat int, halted bool, summary string, attempts [][]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\n| Field | Value |\n|-------|-------|\n", id)
	for _, kv := range [][2]string{{"Type", typ}, {"Priority", prio}, {"Status", status}, {"Created", created}, {"Auto-Retry", "true"},
		{"Retry-Count", fmt.Sprint(retries)}, {"Max-Retries", fmt.Sprint(maxRetries)}, {"Signature-Repeat-Count", fmt.Sprint(repeat)},
		{"Halted", fmt.Sprint(halted)}} {
		fmt.Fprintf(&b, "| %s | %s |\n", kv[0], issuequeue.EscapeCell(kv[1]))
	}
	fmt.Fprintf(&b, "\n### Summary\n%s\n\n### Attempt History\n| Attempt | Time | Type | Signature | Error |\n|---|---|---|---|---|\n", summary)
	for _, r := range attempts {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	b.WriteString("\n")
	return b.String()
}

func write(t testing.TB, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
