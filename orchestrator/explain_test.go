package orchestrator

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// explain decides exactly as check then does, on every rule: for each
// situation, the outcome, reason code and retried issues explain predicts
// are those check reports when it runs next.
func TestExplainAgreesWithCheck(t *testing.T) {
	const a, b = "ISSUE-20261122-001", "ISSUE-20261122-002"
	sig := strings.Repeat("d", 64)
	record := func(evs ...Event) func(o *Orchestrator) {
		return func(o *Orchestrator) {
			for _, ev := range evs {
				if err := o.log().Record(ev); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	execs := func(n int, d time.Duration, cost float64) []Event {
		var evs []Event
		for i := 0; i < n; i++ {
			evs = append(evs, Event{Time: testNow.Add(-time.Duration(n-i) * time.Minute), Event: EvExec, Kind: KindRegular,
				DurationMS: d.Milliseconds(), Cost: cost})
		}
		return evs
	}
	autoLoops := func(n int) []Event {
		var evs []Event
		for i := 0; i < n; i++ {
			evs = append(evs, Event{Time: testNow.Add(-time.Duration(n-i) * time.Minute), Event: EvAutoRetryLoop})
		}
		return evs
	}
	write := func(name, content string) func(o *Orchestrator) {
		return func(o *Orchestrator) {
			if err := os.WriteFile(filepath.Join(o.Dir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	retryable := issueMD(a, "Auto-Retry=true", "Status=pending", "Retry-Count=1", "Max-Retries=10")
	tests := []struct {
		name    string
		queue   string
		state   string
		setup   func(o *Orchestrator)
		outcome string
		code    Code
	}{
		{"retry", retryable, stateMD(0, true), nil, "retry", ""},
		{"nothing waits", issueMD(a, "Auto-Retry=false"), stateMD(0, true), nil, "nothing", ""},
		{"paused", retryable, stateMD(0, true), write("paused", ""), "nothing", CodePaused},
		{"sentinel", retryable, stateMD(0, true), write("no_auto_retry", ""), "stop", CodeSentinel},
		{"disabled", retryable, stateMD(0, false), nil, "stop", CodeDisabled},
		{"rate-limited", retryable, stateMD(0, true) + "\n## Rate Limit\n\n| Field | Value |\n|---|---|\n| limited_until | 2026-11-22T11:00:00Z |\n",
			nil, "nothing", CodeRateLimited},
		{"daily loops", retryable, stateMD(0, true), record(execs(200, time.Second, 0)...), "stop", CodeDailyLoops},
		{"daily agent time", retryable, stateMD(0, true), record(execs(2, 4*time.Hour, 0)...), "stop", CodeDailyAgentTime},
		{"daily cost", retryable, stateMD(0, true), func(o *Orchestrator) {
			o.Config.Budget.CostPerDay = 1
			record(execs(2, time.Second, 0.5)...)(o)
		}, "stop", CodeDailyCost},
		{"daily auto-retries", retryable, stateMD(0, true), record(autoLoops(30)...), "stop", CodeDailyAutoRetries},
		{"run cap", retryable, stateMD(15, true), nil, "stop", CodeRunCap},
		{"exhausted", issueMD(a, "Auto-Retry=true", "Retry-Count=10", "Max-Retries=10"), stateMD(0, true), nil, "stop", CodeMaxRetries},
		{"halted elsewhere", issueMD(b, "Auto-Retry=true", "Failure-Signature="+sig), stateMD(0, true),
			record(Event{Time: testNow.Add(-time.Hour), Event: EvEscalated, IssueID: a, Signature: sig, Code: CodeRepeatedFailure}), "stop", CodeRepeatedAcross},
		{"issue cap", retryable, stateMD(0, true), func(o *Orchestrator) {
			o.Config.Budget.IssueTokens = 1000
			record(Event{Time: testNow.Add(-48 * time.Hour), Event: EvExec, RunID: "r1", Loop: 2, Issues: []string{a},
				Tokens: &EventTokens{Input: 900, Output: 100, CacheRead: 1e6}})(o)
		}, "stop", CodeIssueTokens},
		{"spend since progress", retryable, stateMD(0, true), func(o *Orchestrator) {
			o.Config.Progress.SpendTokens = 1000
			record(Event{Time: testNow.Add(-48 * time.Hour), Event: EvExec, RunID: "r1", Loop: 2, Issues: []string{a}, Tokens: &EventTokens{Input: 600}},
				Event{Time: testNow.Add(-48 * time.Hour), Event: EvLoop, RunID: "r1", Loop: 2, Progress: ProgressProgressed},
				Event{Time: testNow.Add(-47 * time.Hour), Event: EvExec, RunID: "r2", Loop: 2, Issues: []string{a}, Tokens: &EventTokens{Input: 600}},
				Event{Time: testNow.Add(-47 * time.Hour), Event: EvLoop, RunID: "r2", Loop: 2, Progress: ProgressChanged},
				Event{Time: testNow.Add(-46 * time.Hour), Event: EvExec, RunID: "r3", Loop: 2, Issues: []string{a}, Tokens: &EventTokens{Input: 400}},
				Event{Time: testNow.Add(-46 * time.Hour), Event: EvLoop, RunID: "r3", Loop: 2, Progress: ProgressChanged})(o)
		}, "stop", CodeNoProgressSpend},
		{"spend since progress, below", retryable, stateMD(0, true), func(o *Orchestrator) {
			o.Config.Progress.SpendTokens = 1000
			record(Event{Time: testNow.Add(-47 * time.Hour), Event: EvExec, RunID: "r2", Loop: 2, Issues: []string{a}, Tokens: &EventTokens{Input: 999}},
				Event{Time: testNow.Add(-47 * time.Hour), Event: EvLoop, RunID: "r2", Loop: 2, Progress: ProgressChanged})(o)
		}, "retry", ""},
		{"old events are outside the window", retryable, stateMD(0, true), func(o *Orchestrator) {
			evs := execs(200, time.Second, 0)
			for i := range evs {
				evs[i].Time = evs[i].Time.Add(-24 * time.Hour)
			}
			record(evs...)(o)
		}, "retry", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newTestOrchestrator(t)
			o.Now = func() time.Time { return testNow }
			write("issue_queue.md", "# Issue Queue\n\n"+tt.queue)(o)
			write("session_state.md", tt.state)(o)
			if tt.setup != nil {
				tt.setup(o)
			}
			ex, err := o.Explain(nil)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := o.Check(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if ex.Check.Outcome != rep.Outcome || ex.Check.Code != rep.Code || strings.Join(ex.Check.Retry, ",") != strings.Join(rep.Triggered, ",") {
				t.Errorf("explain said %s (%s) retry %v; check did %s (%s) retry %v",
					ex.Check.Outcome, ex.Check.Code, ex.Check.Retry, rep.Outcome, rep.Code, rep.Triggered)
			}
			if rep.Outcome != tt.outcome || rep.Code != tt.code {
				t.Errorf("check: %s (%s), want %s (%s)", rep.Outcome, rep.Code, tt.outcome, tt.code)
			}
			// A run started now is stopped by the rules that stop every loop.
			if everyLoop := tt.code == CodePaused || tt.code == CodeRateLimited || strings.HasPrefix(string(tt.code), "daily_") &&
				tt.code != CodeDailyAutoRetries; everyLoop != !ex.Run.Start {
				t.Errorf("explain says a run would start: %v (stop %s)", ex.Run.Start, ex.Run.Code)
			}
		})
	}
}
