package orchestrator

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/procgroup"
)

func TestBackoffDelay(t *testing.T) {
	b := Backoff{Base: time.Second, Factor: 2, Max: 30 * time.Second, Jitter: 0.1}
	tests := []struct {
		n    int
		r    float64
		want time.Duration
	}{
		{1, 0, time.Second},
		{2, 0, 2 * time.Second},
		{3, 0, 4 * time.Second},
		{3, 0.5, 4*time.Second + 200*time.Millisecond}, // jitter: up to 10% more
		{6, 0, 30 * time.Second},                       // capped
		{6, 0.999, 30*time.Second + 2997*time.Millisecond},
	}
	for _, tt := range tests {
		if got := b.Delay(tt.n, tt.r); got != tt.want {
			t.Errorf("Delay(%d, %v) = %v, want %v", tt.n, tt.r, got, tt.want)
		}
	}
}

func TestRetryHint(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 15, 0, 0, time.Local)
	tests := []struct {
		out  string
		want time.Duration
		ok   bool
	}{
		{"429 Too Many Requests. Retry after 7 seconds", 7 * time.Second, true},
		{"Retry-After: 120", 120 * time.Second, true},
		{"please retry after 2m", 2 * time.Minute, true},
		{"usage limit reached; resets at 11:42", 87 * time.Minute, true},
		{"limit resets at 09:00", 6 * time.Hour, true},          // tomorrow, capped at 6 h
		{"resets at 23:59 retry after 1s", 6 * time.Hour, true}, // the last mention wins, capped at 6 h
		{"nothing to see", 0, false},
	}
	for _, tt := range tests {
		got, ok := retryHint([]byte(tt.out), now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("retryHint(%q) = %v, %v; want %v, %v", tt.out, got, ok, tt.want, tt.ok)
		}
	}
}

func TestClassify(t *testing.T) {
	r := &Runner{Cfg: RunConfig{
		Transient: []string{"rate limit", "429", "503", "ECONNRESET", "overloaded"},
		Permanent: []string{"permission denied", "unauthorized", "invalid api key"},
	}}
	tests := []struct {
		exit  int
		out   string
		class string
	}{
		{1, "Error: 429 Too Many Requests", "transient"},
		{1, "read: econnreset by peer", "transient"},
		{1, "Anthropic API: Overloaded", "transient"},
		{1, "Error: Invalid API key", ResultPermanent},
		{1, "open /etc/x: Permission denied", ResultPermanent},
		{1, "401 Unauthorized (after a 503)", ResultPermanent}, // permanent wins
		{127, "sh: agent: not found", ResultPermanent},
		{126, "", ResultPermanent},
		{1, "--- FAIL: TestX", ""},
		{2, `{"is_error": false, "result": "ok"}`, ""},
	}
	for _, tt := range tests {
		got, _ := r.classify(procgroup.Result{ExitCode: tt.exit, Tail: []byte(tt.out)})
		if got != tt.class {
			t.Errorf("classify(exit %d, %q) = %q, want %q", tt.exit, tt.out, got, tt.class)
		}
	}
}

func TestTier(t *testing.T) {
	tiers := Tiers{SameAgent: 3, FreshAgent: 3, Model: "small", EscalationModel: "large"}
	for attempt, want := range map[int]string{1: "same_agent small", 3: "same_agent small", 4: "fresh_agent small",
		6: "fresh_agent small", 7: "escalate_model large", 10: "escalate_model large"} {
		tier, model := tiers.Tier(attempt)
		if got := tier + " " + model; got != want {
			t.Errorf("Tier(%d) = %q, want %q", attempt, got, want)
		}
	}
}

func TestEventLogPrune(t *testing.T) {
	dir := t.TempDir()
	lg := EventLog{Dir: dir}
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for _, age := range []time.Duration{40 * 24 * time.Hour, 10 * 24 * time.Hour, time.Hour} {
		if err := lg.Record(Event{Time: now.Add(-age), Event: EvResolved, IssueID: "ISSUE-20261122-001", Resolution: "resolved"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := lg.Prune(now, 7*24*time.Hour, 30*24*time.Hour); err != nil {
		t.Fatal(err)
	}
	text, _ := os.ReadFile(filepath.Join(dir, "logs", "retry.log"))
	if got := strings.Count(string(text), "\n"); got != 1 {
		t.Errorf("retry.log keeps %d lines, want the 1 younger than 7 days:\n%s", got, text)
	}
	evs, errs := ReadEvents(dir)
	if len(errs) != 0 || len(evs) != 2 {
		t.Errorf("retry.jsonl keeps %d events (%v), want the 2 younger than 30 days", len(evs), errs)
	}
}

func TestHistoryRoundTrip(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	want := LoopRecord{RunID: "r1", Loop: 2, Kind: "auto_retry", Started: start, Finished: start.Add(90 * time.Second),
		ExitCode: 1, Result: ResultFailed, TransientRetries: 2, Issues: []string{"A", "B"}, Resolved: []string{"A"},
		Failed: []string{"B"}, TotalAutoRetries: 1, Breaker: "closed"}
	for i := 0; i < 2; i++ {
		if err := AppendHistory(dir, want); err != nil {
			t.Fatal(err)
		}
	}
	got, errs := ReadHistory(dir)
	if len(errs) > 0 || len(got) != 2 {
		t.Fatalf("ReadHistory = %d rows, %v", len(got), errs)
	}
	if strings.Join(got[1].row(), ",") != strings.Join(want.row(), ",") {
		t.Errorf("row = %v\nwant  %v", got[1].row(), want.row())
	}
}
