//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/issuequeue"
)

// TestProcessOnlyTheCheckReleases proves: a halted issue whose fingerprint
// changed since its halt (a person rewrote its summary) stays halted
// through every command and view that is not the check or a person's
// answer: status, explain, lint, fleet status, the report, replay, a serve
// GET, archive and the completion of a half-done change. None records a
// release. The next check releases it once, with cause issue_changed, and
// a second check does not again.
func TestProcessOnlyTheCheckReleases(t *testing.T) {
	ctx := testContext(t, 60*time.Second)
	c := newCLI(t)
	const id = "ISSUE-20261122-001"
	c.setup(ctx, "[loop]\ncommand = \"true\"\n", `# Issue Queue

## `+id+`

| Field | Value |
|-------|-------|
| Auto-Retry | true |
| Status | escalated |
| Halted | true |
| Signature-Repeat-Count | 3 |

### Summary
TestParse fails on empty input
`)
	// The halt recorded another text: the summary was edited since.
	halt := `{"timestamp":"2026-11-22T10:00:00Z","event":"escalated","issue_id":"` + id + `","reason":"repeated_failure","code":"repeated_failure",` +
		`"fingerprint":{"issue":"0000000000000000","check":"0000000000000000","command":"0000000000000000","model":"0000000000000000"}}` + "\n"
	if err := os.MkdirAll(filepath.Join(c.dir(), "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	c.write(".orchestrator/logs/retry.jsonl", halt)
	c.write(".orchestrator/"+issuequeue.IntentFile, `{"command":"check","files":[`+
		`{"name":"issue_queue.md","edits":[{"kind":0,"key":"`+id+`","name":"Retry-Count","value":"4"}],"old":"","after":"0"}]}`)

	for _, args := range [][]string{
		{"status"}, {"explain", id}, {"lint"}, {"fleet", "status", c.work}, {"report", "--out", "-"}, {"replay"}, {"archive"},
	} {
		if r := c.run(ctx, nil, args...); r.code > 3 {
			t.Errorf("%s: exit %d\n%s", args, r.code, r.stderr)
		}
	}
	serveGet(ctx, t, c)
	if _, err := os.Stat(filepath.Join(c.dir(), issuequeue.IntentFile)); err == nil {
		t.Error("archive did not complete the half-done change")
	}
	is := c.queue().Issue(id)
	if is == nil || !is.Halted || is.RetryCount != 4 {
		t.Fatalf("after the commands that are not the check: %+v, want it halted, Retry-Count 4", is)
	}
	if log := string(c.read(".orchestrator/logs/retry.jsonl")); strings.Contains(log, "halt_released") {
		t.Fatalf("a command that is not the check released the halt:\n%s", log)
	}

	for range 2 {
		c.run(ctx, nil, "check")
	}
	if is := c.queue().Issue(id); is.Halted || is.SignatureRepeatCount != 0 {
		t.Errorf("after the check: Halted %v, Signature-Repeat-Count %d; want released, 0", is.Halted, is.SignatureRepeatCount)
	}
	log := string(c.read(".orchestrator/logs/retry.jsonl"))
	if n := strings.Count(log, `"event":"halt_released"`); n != 1 || !strings.Contains(log, `"cause":"issue_changed"`) {
		t.Errorf("%d halt_released events, want 1 with cause issue_changed:\n%s", n, log)
	}
}
