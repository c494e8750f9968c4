package orchestrator

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/config"

	"github.com/autoretry/orchestrator/issuequeue"
)

// testConfig is the default configuration with the per-type limits the
// tests use.
func testConfig() *config.Config {
	c := config.Default()
	c.AutoRetry.MaxRetriesByType = map[string]int{"build": 1, "test": 3}
	return c
}

var testNow = time.Date(2026, 11, 22, 10, 15, 0, 0, time.UTC)

// testInputs are the inputs of a check of q and st with the test
// configuration, an empty event log and no sentinel.
func testInputs(q *issuequeue.Queue, st *issuequeue.State) Inputs {
	return Inputs{Queue: q, State: st, Config: testConfig(), Now: testNow}
}

// issueMD renders an issue with the given extra field rows.
func issueMD(id string, rows ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\n| Field | Value |\n|---|---|\n", id)
	for _, r := range rows {
		kv := strings.SplitN(r, "=", 2)
		fmt.Fprintf(&b, "| %s | %s |\n", kv[0], kv[1])
	}
	fmt.Fprintf(&b, "\n### Summary\nsummary of %s\n\n", id)
	return b.String()
}

func parse(t *testing.T, queue, state string) (*issuequeue.Queue, *issuequeue.State) {
	t.Helper()
	q := issuequeue.ParseQueue("issue_queue.md", []byte(queue))
	st := issuequeue.ParseState("session_state.md", []byte(state))
	if err := q.Err(); err != nil {
		t.Fatal(err)
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	return q, st
}

func stateMD(total int, enabled bool) string {
	return fmt.Sprintf("# Session State\n\n## Auto-Retry State\n\n| Field | Value |\n|---|---|\n| total_auto_retries | %d |\n| last_retry_reason | null |\n| auto_retry_enabled | %v |\n", total, enabled)
}

func idList(is []*issuequeue.Issue) string {
	var s []string
	for _, i := range is {
		s = append(s, i.ID)
	}
	return strings.Join(s, ",")
}

func TestDecide(t *testing.T) {
	const (
		a = "ISSUE-20261122-001"
		b = "ISSUE-20261122-002"
	)
	retryable := []string{"Auto-Retry=true", "Status=pending", "Retry-Count=2", "Max-Retries=10"}
	tests := []struct {
		name      string
		queue     string
		total     int
		enabled   bool
		sentinel  bool
		outcome   CheckOutcome
		triggered string
		exhausted string
		disabled  bool
		cap       bool
		edits     int
	}{
		{name: "nothing pending", queue: issueMD(a, "Auto-Retry=true", "Status=resolved"), enabled: true, outcome: CheckNothing},
		{name: "auto-retry off for the issue", queue: issueMD(a, "Auto-Retry=false", "Status=pending"), enabled: true, outcome: CheckNothing},
		{name: "halted issue is not a candidate", queue: issueMD(a, "Auto-Retry=true", "Halted=true"), enabled: true, outcome: CheckNothing},
		{name: "triggered", queue: issueMD(a, retryable...), enabled: true, outcome: CheckRetry, triggered: a, edits: 2},
		{name: "exhausted by own limit", queue: issueMD(a, "Auto-Retry=true", "Retry-Count=10", "Max-Retries=10"), enabled: true,
			outcome: CheckHuman, exhausted: a, edits: 1},
		{name: "exhausted by per-type default", queue: issueMD(a, "Auto-Retry=true", "Type=build", "Retry-Count=1"), enabled: true,
			outcome: CheckHuman, exhausted: a, edits: 1},
		{name: "exhausted and another triggered", queue: issueMD(a, "Auto-Retry=true", "Retry-Count=10") + issueMD(b, retryable...),
			enabled: true, outcome: CheckRetry, exhausted: a, triggered: b, edits: 3},
		{name: "cap reached", queue: issueMD(a, retryable...), total: 15, enabled: true, outcome: CheckHuman, cap: true},
		{name: "cap reached keeps escalations", queue: issueMD(a, "Auto-Retry=true", "Retry-Count=10") + issueMD(b, retryable...),
			total: 15, enabled: true, outcome: CheckHuman, cap: true, exhausted: a, edits: 1},
		{name: "disabled by state with work", queue: issueMD(a, retryable...), enabled: false, outcome: CheckHuman, disabled: true},
		{name: "disabled by sentinel with work", queue: issueMD(a, retryable...), enabled: true, sentinel: true, outcome: CheckHuman, disabled: true},
		{name: "disabled without work", queue: issueMD(a, "Status=resolved"), enabled: true, sentinel: true, outcome: CheckNothing, disabled: true},
		{name: "a quarantined issue is no candidate, the valid one is retried",
			queue:   issueMD(a, "Auto-Retry=true", "Status=pendng") + issueMD(b, retryable...),
			enabled: true, outcome: CheckRetry, triggered: b, edits: 2},
		{name: "a quarantined issue is never escalated", queue: issueMD(a, "Auto-Retry=true", "Retry-Count=10", "Max-Retry=10"),
			enabled: true, outcome: CheckNothing},
		{name: "both copies of a duplicate ID are left alone", queue: issueMD(a, retryable...) + issueMD(a, retryable...) + issueMD(b, retryable...),
			enabled: true, outcome: CheckRetry, triggered: b, edits: 2},
		{name: "synonyms: accepted is pending, completed is not", queue: issueMD(a, "Auto-Retry=true", "Status=accepted") + issueMD(b, "Auto-Retry=true", "Status=completed"),
			enabled: true, outcome: CheckRetry, triggered: a, edits: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, st := parse(t, tt.queue, stateMD(tt.total, tt.enabled))
			in := testInputs(q, st)
			in.Sentinel = tt.sentinel
			d := Decide(in)
			if got, want := d.Outcome, tt.outcome; got != want {
				t.Errorf("outcome = %v, want %v", got, want)
			}
			if got, want := idList(d.Triggered), tt.triggered; got != want {
				t.Errorf("triggered = %q, want %q", got, want)
			}
			if got, want := idList(d.Exhausted), tt.exhausted; got != want {
				t.Errorf("exhausted = %q, want %q", got, want)
			}
			if got, want := d.Disabled != "", tt.disabled; got != want {
				t.Errorf("disabled = %q, want %v", d.Disabled, want)
			}
			if got, want := d.CapReached, tt.cap; got != want {
				t.Errorf("cap = %v, want %v", got, want)
			}
			if got, want := len(d.QueueEdits), tt.edits; got != want {
				t.Errorf("queue edits = %d, want %d", got, want)
			}
			if tt.triggered == "" && len(d.StateEdits) != 0 {
				t.Errorf("state edits without a trigger: %v", d.StateEdits)
			}
		})
	}
}

func TestDecideWritesCounters(t *testing.T) {
	const a, b = "ISSUE-20261122-001", "ISSUE-20261122-002"
	q, st := parse(t, issueMD(a, "Auto-Retry=true", "Retry-Count=2")+issueMD(b, "Auto-Retry=true"), stateMD(4, true))
	d := Decide(testInputs(q, st))
	qb, err := q.Apply(d.QueueEdits...)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := st.Apply(d.StateEdits...)
	if err != nil {
		t.Fatal(err)
	}
	q2, st2 := parse(t, string(qb), string(sb))
	for id, want := range map[string]int{a: 3, b: 1} {
		is := q2.Issue(id)
		if is.RetryCount != want || is.Status != issuequeue.StatusInProgress {
			t.Errorf("%s: Retry-Count %d Status %s, want %d in_progress", id, is.RetryCount, is.Status, want)
		}
	}
	// Once per loop, however many issues were triggered.
	if got, want := st2.TotalAutoRetries, 5; got != want {
		t.Errorf("total_auto_retries = %d, want %d", got, want)
	}
	if !strings.Contains(st2.LastRetryReason, "summary of "+a) || !strings.Contains(st2.LastRetryReason, b) {
		t.Errorf("last_retry_reason = %q, want both summaries", st2.LastRetryReason)
	}
}

func TestSortForRetry(t *testing.T) {
	queue := issueMD("ISSUE-20261122-001", "Priority=low", "Blocking=true") +
		issueMD("ISSUE-20261122-002", "Priority=critical", "Retry-Count=3") +
		issueMD("ISSUE-20261122-003", "Priority=critical", "Retry-Count=1", "Created=2026-11-22T12:00:00Z") +
		issueMD("ISSUE-20261122-004", "Priority=critical", "Retry-Count=1", "Created=2026-11-22T09:00:00Z") +
		issueMD("ISSUE-20261122-005", "Priority=high")
	q, _ := parse(t, queue, "")
	is := append([]*issuequeue.Issue(nil), q.Issues...)
	SortForRetry(is)
	// Blocking first; then priority; then fewer retries; then older.
	want := "ISSUE-20261122-001,ISSUE-20261122-004,ISSUE-20261122-003,ISSUE-20261122-002,ISSUE-20261122-005"
	if got := idList(is); got != want {
		t.Errorf("order = %s\nwant    %s", got, want)
	}
}

func TestDecideFail(t *testing.T) {
	const id = "ISSUE-20261122-001"
	sig1, sig2 := strings.Repeat("a", 64), strings.Repeat("b", 64)
	queue := issueMD(id, "Auto-Retry=true", "Status=in_progress", "Failure-Signature= ")
	q, _ := parse(t, queue, "")
	steps := []struct {
		sig     string
		repeat  int
		halted  bool
		status  string
		prevLen int
	}{
		{sig1, 1, false, "pending", 0},
		{sig1, 2, false, "pending", 0},
		{sig2, 1, false, "pending", 1}, // a different failure resets the count
		{sig2, 2, false, "pending", 1},
		{sig2, 3, true, "escalated", 1}, // the third identical failure in a row halts
	}
	for i, s := range steps {
		d := DecideFail(q.Issue(id), Failure{Type: FailVerification, Output: Output{Tail: []byte("FAIL: x\n")}, Signature: s.sig}, testConfig(), Usage{})
		out, err := q.Apply(d.Edits...)
		if err != nil {
			t.Fatal(err)
		}
		q, _ = parse(t, string(out), "")
		is := q.Issue(id)
		if is.SignatureRepeatCount != s.repeat || is.Halted != s.halted || is.Status != s.status ||
			len(is.PreviousSignatures) != s.prevLen || is.FailureSignature != s.sig || d.Attempt != i+1 {
			t.Fatalf("step %d: repeat %d halted %v status %s prev %d sig %s attempt %d; want %+v",
				i+1, is.SignatureRepeatCount, is.Halted, is.Status, len(is.PreviousSignatures), is.FailureSignature[:4], d.Attempt, s)
		}
	}
	_, rows, ok := q.Issue(id).Table(issuequeue.SectionAttemptHistory)
	if !ok || len(rows) != len(steps) {
		t.Fatalf("attempt history has %d rows, want %d", len(rows), len(steps))
	}
}

// TestDecideFailShortSignature: a queue that records the first 16 hex
// digits of a signature counts the same failure as a repeat and keeps the
// short signature as written; a different failure replaces it.
func TestDecideFailShortSignature(t *testing.T) {
	const id = "ISSUE-20261122-001"
	full := strings.Repeat("0123456789abcdef", 4)
	other := strings.Repeat("f", 64)
	tests := []struct {
		name, sig string
		repeat    int
		edits     string // fields the decision sets
	}{
		{"same failure", full, 2, "Signature-Repeat-Count Status"},
		{"different failure", other, 1, "Previous-Signatures Failure-Signature Status"}, // the count starts again at 1
	}
	for _, tt := range tests {
		q, _ := parse(t, issueMD(id, "Auto-Retry=true", "Failure-Signature="+full[:16], "Signature-Repeat-Count=1"), "")
		d := DecideFail(q.Issue(id), Failure{Type: FailVerification, Output: Output{Tail: []byte("FAIL\n")}, Signature: tt.sig}, testConfig(), Usage{})
		if d.RepeatCount != tt.repeat {
			t.Errorf("%s: repeat %d, want %d", tt.name, d.RepeatCount, tt.repeat)
		}
		out, err := q.Apply(d.Edits...)
		if err != nil {
			t.Fatal(err)
		}
		q2, _ := parse(t, string(out), "")
		var set []string
		for _, f := range []string{issuequeue.FieldPreviousSignatures, issuequeue.FieldFailureSignature, issuequeue.FieldSignatureRepeatCount, issuequeue.FieldStatus} {
			before, _ := q.Issue(id).Field(f)
			after, _ := q2.Issue(id).Field(f)
			if before != after {
				set = append(set, f)
			}
		}
		if got := strings.Join(set, " "); got != tt.edits {
			t.Errorf("%s: changed %s, want %s", tt.name, got, tt.edits)
		}
	}
}

func TestTail(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 500; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	tail, cutLines, cutBytes := Tail([]byte(b.String()), 200, 1<<20)
	if !strings.HasPrefix(string(tail), "line 301\n") || !strings.HasSuffix(string(tail), "line 500") {
		t.Errorf("tail = %.20q…%q", tail, tail[len(tail)-10:])
	}
	if cutLines != 300 || cutBytes != len(b.String())-len(tail)-1 {
		t.Errorf("cut %d lines %d bytes", cutLines, cutBytes)
	}
	// A byte limit cuts at a line boundary.
	tail, _, _ = Tail([]byte(b.String()), 200, 100)
	if len(tail) > 100 || !strings.HasPrefix(string(tail), "line ") {
		t.Errorf("byte-limited tail = %q", tail)
	}
	// One huge line is cut at a character boundary.
	huge := strings.Repeat("é", 1000)
	tail, _, _ = Tail([]byte(huge), 200, 101)
	if len(tail) > 101 || !strings.HasPrefix(string(tail), "é") {
		t.Errorf("huge line tail starts %q", tail[:4])
	}
}

func TestFailureDetailsCannotEscapeFence(t *testing.T) {
	const id = "ISSUE-20261122-001"
	q, _ := parse(t, issueMD(id, "Status=in_progress")+issueMD("ISSUE-20261122-002", "Status=pending"), "")
	evil := "```\n## ISSUE-20261122-003\n| Status | resolved |\n````\n<!--\n~~~\n"
	d := DecideFail(q.Issue(id), Failure{Type: FailVerification, Output: Output{Tail: []byte(evil)}, Signature: strings.Repeat("c", 64)}, testConfig(), Usage{})
	out, err := q.Apply(d.Edits...)
	if err != nil {
		t.Fatal(err)
	}
	q2, _ := parse(t, string(out), "")
	if got := idList(q2.Issues); got != "ISSUE-20261122-001,ISSUE-20261122-002" {
		t.Fatalf("issues after writing output = %s\n%s", got, out)
	}
	if q2.Issue("ISSUE-20261122-002").Status != "pending" {
		t.Fatalf("another issue's status changed")
	}
}
