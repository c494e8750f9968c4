package orchestrator

import (
	"strings"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/issuequeue"
)

// What follows one execution of the loop command, on both sides of each
// limit: 3 tries of a transient failure, 5 of a rate limit, a reset within
// [backoff] max_wait (5m) slept and one beyond it a window, the agent's own
// report of the machine's failure never charged to the issues.
func TestDecideExec(t *testing.T) {
	cfg := testConfig()
	jit := func(d time.Duration) time.Duration { return d + d/20 }
	later := func(d time.Duration) time.Time { return testNow.Add(d) }
	tests := []struct {
		name  string
		x     ExecFacts
		want  ExecStep
		cutOK func(*Cut) bool
	}{
		{"aborted", ExecFacts{Aborted: true, ExitCode: 1}, ExecStep{Result: ResultAborted}, nil},
		{"timed out", ExecFacts{TimedOut: true}, ExecStep{Result: ResultTimeout}, nil},
		{"exit 0", ExecFacts{}, ExecStep{Result: ResultOK}, nil},
		{"exit 0, but the agent hit its usage limit", ExecFacts{Try: 1, Class: classRateLimit, Agent: true, Until: later(time.Hour)}, ExecStep{},
			func(c *Cut) bool { return c.Limited.Equal(later(time.Hour)) }},
		{"an ordinary failure", ExecFacts{Try: 1, ExitCode: 1}, ExecStep{Result: ResultFailed}, nil},
		{"permanent", ExecFacts{Try: 1, ExitCode: 1, Class: ResultPermanent}, ExecStep{Result: ResultPermanent}, nil},
		{"credentials refused", ExecFacts{Try: 1, ExitCode: 1, Class: classAuth, What: "401"}, ExecStep{},
			func(c *Cut) bool { return c.Auth && c.What == "401" }},
		{"transient, try 1", ExecFacts{Try: 1, ExitCode: 1, Class: classTransient, Jitter: 0.5}, ExecStep{Wait: jit(time.Second), Limit: 3}, nil},
		{"transient, try 2", ExecFacts{Try: 2, ExitCode: 1, Class: classTransient, Jitter: 0.5}, ExecStep{Wait: jit(2 * time.Second), Limit: 3}, nil},
		{"transient, try 3: the loop failed", ExecFacts{Try: 3, ExitCode: 1, Class: classTransient}, ExecStep{Result: ResultFailed, Limit: 3}, nil},
		{"rate limit, try 4", ExecFacts{Try: 4, ExitCode: 1, Class: classRateLimit}, ExecStep{Wait: 8 * time.Second, Limit: 5}, nil},
		{"rate limit, try 5", ExecFacts{Try: 5, ExitCode: 1, Class: classRateLimit}, ExecStep{Result: ResultFailed, Limit: 5}, nil},
		{"a hint longer than the backoff", ExecFacts{Try: 1, ExitCode: 1, Class: classTransient, Hint: 40 * time.Second, HasHint: true},
			ExecStep{Wait: 40 * time.Second, Limit: 3}, nil},
		{"a rate limit's hint at max_wait is slept", ExecFacts{Try: 1, ExitCode: 1, Class: classRateLimit, Hint: 5 * time.Minute, HasHint: true},
			ExecStep{Wait: 5 * time.Minute, Limit: 5}, nil},
		{"a rate limit's hint beyond max_wait opens a window", ExecFacts{Try: 1, ExitCode: 1, Class: classRateLimit, Hint: 5*time.Minute + time.Second, HasHint: true, Now: testNow},
			ExecStep{}, func(c *Cut) bool { return c.Limited.Equal(later(5*time.Minute + time.Second)) }},
		{"a transient failure's long hint is slept", ExecFacts{Try: 1, ExitCode: 1, Class: classTransient, Hint: time.Hour, HasHint: true},
			ExecStep{Wait: time.Hour, Limit: 3}, nil},
		{"the agent's reset at max_wait is slept", ExecFacts{Try: 1, ExitCode: 1, Class: classRateLimit, Agent: true, Until: later(5 * time.Minute), Now: testNow},
			ExecStep{Wait: 5 * time.Minute, Limit: 5}, nil},
		{"the agent overloaded after every try", ExecFacts{Try: 3, ExitCode: 1, Class: classTransient, Agent: true, AgentState: "overloaded", Now: testNow},
			ExecStep{}, func(c *Cut) bool {
				return c.Unavailable == "overloaded" && c.Tries == 3 && c.Limited.Equal(later(5*time.Minute))
			}},
		{"the agent overloaded, try 2", ExecFacts{Try: 2, ExitCode: 1, Class: classTransient, Agent: true}, ExecStep{Wait: 2 * time.Second, Limit: 3}, nil},
	}
	for _, tt := range tests {
		got := DecideExec(tt.x, cfg)
		if (got.Cut != nil) != (tt.cutOK != nil) || got.Cut != nil && !tt.cutOK(got.Cut) {
			t.Errorf("%s: cut %+v", tt.name, got.Cut)
		}
		got.Cut = nil
		if got != tt.want {
			t.Errorf("%s: DecideExec = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// The stop order after a loop, rule by rule, each on both sides of its
// limit: what ends the loop before its verification, then what follows
// the verification, then the check, then what keeps the next loop from
// starting.
func TestAfterLoop(t *testing.T) {
	verified := func(set func(f *LoopFacts)) LoopFacts {
		f := LoopFacts{Config: testConfig(), Now: testNow, Dir: ".orchestrator", Invocation: "orch", Loop: 2, Kind: KindAutoRetry,
			Result: ResultOK, Verified: true}
		if set != nil {
			set(&f)
		}
		return f
	}
	checked := func(d Decision, set func(f *LoopFacts)) LoopFacts {
		return verified(func(f *LoopFacts) {
			f.Check = &d
			if set != nil {
				set(f)
			}
		})
	}
	spent := &Verdict{Rule: CodeDailyLoops, Stop: true, Reason: "spent", Hint: "wait"}
	filed := func(n int) *Usage {
		u := Usage{}
		for range n {
			u.Filed = append(u.Filed, testNow.Add(-time.Minute))
		}
		return &u
	}
	shared := func(n int) *SharedUsage {
		su := &SharedUsage{Dir: "/shared"}
		for range n {
			su.Entries = append(su.Entries, SharedEntry{Time: testNow.Add(-time.Minute), Kind: KindRegular, Attempt: 1})
		}
		return su
	}
	tests := []struct {
		name   string
		f      LoopFacts
		next   Next
		code   Code
		settle Settle
		halt   Code
		result string
	}{
		{"guard", LoopFacts{Loop: 1, Result: ResultOK, Guard: []string{"Retry-Count 3 → 0"}, Cut: &Cut{Auth: true}}, NextEnd, CodeGuard, SettlePending, "", ""},
		{"cut by a spent budget", LoopFacts{Cut: &Cut{Rule: spent}}, NextEnd, CodeDailyLoops, SettleRelease, "", ResultFailed},
		{"cut: credentials refused", LoopFacts{Cut: &Cut{Auth: true, What: "401"}}, NextEnd, CodePermanentError, SettleRelease, "", ResultPermanent},
		{"cut: sentinel during a backoff", LoopFacts{Cut: &Cut{Sentinel: true}}, NextEnd, CodeSentinel, SettleRelease, "", ResultFailed},
		{"cut: rate limit", LoopFacts{Cut: &Cut{Limited: testNow.Add(time.Hour), What: "429"}}, NextEnd, CodeRateLimited, SettleRelease, "", ResultFailed},
		{"cut: provider unavailable", LoopFacts{Cut: &Cut{Unavailable: "overloaded", Tries: 3, Limited: testNow.Add(time.Hour)}}, NextEnd, CodeRateLimited, SettleRelease, "", ResultFailed},
		{"aborted during the loop", LoopFacts{Result: ResultAborted}, NextEnd, CodeAborted, SettlePending, "", ResultAborted},
		{"permanent error", LoopFacts{Result: ResultPermanent, Pattern: "invalid API key"}, NextEnd, CodePermanentError, SettleEscalate, "", ""},
		{"a failed loop is verified", LoopFacts{Result: ResultFailed}, NextVerify, "", SettleNone, "", ""},
		{"aborted during the verification", verified(func(f *LoopFacts) { f.VerifyAborted = true }), NextEnd, CodeAborted, SettlePending, "", ResultAborted},
		{"verified: the check", verified(nil), NextCheck, "", SettleNone, "", ""},
		{"breaker closed", verified(func(f *LoopFacts) { f.Breaker = BreakerFacts{Failures: 2} }), NextCheck, "", SettleNone, "", ""},
		{"breaker opened", verified(func(f *LoopFacts) { f.Breaker = BreakerFacts{Failures: 3, Opened: true} }), NextEnd, CodeBreakerOpen, SettleNone, "", ""},
		{"49 issues filed", verified(func(f *LoopFacts) { f.Usage = filed(49) }), NextCheck, "", SettleNone, "", ""},
		{"50 issues filed", verified(func(f *LoopFacts) { f.Usage = filed(50) }), NextEnd, CodeDailyIssuesFiled, SettleNone, "", ""},
		{"2 loops without progress", verified(func(f *LoopFacts) { f.NoProgress = 2 }), NextCheck, "", SettleNone, "", ""},
		{"3 loops without progress", verified(func(f *LoopFacts) { f.NoProgress = 3 }), NextEnd, CodeNoProgress, SettleNone, "", ""},
		{"3 regular loops without progress", verified(func(f *LoopFacts) { f.NoProgress, f.Kind = 3, KindRegular }), NextCheck, "", SettleNone, "", ""},
		{"no change halts: no no_progress stop", verified(func(f *LoopFacts) { f.NoProgress, f.Idle = 3, 2 }), NextCheck, "", SettleNone, CodeNoChange, ""},
		{"1 idle loop", verified(func(f *LoopFacts) { f.Idle = 1 }), NextCheck, "", SettleNone, "", ""},
		{"a cycle wins", verified(func(f *LoopFacts) { f.Idle, f.Progress = 2, LoopProgress{Loop: 2, CycledTo: 1} }), NextCheck, "", SettleNone, CodeCycle, ""},
		{"a loop that progressed is never halted", verified(func(f *LoopFacts) {
			f.Idle, f.Progress = 2, LoopProgress{Verdict: ProgressProgressed, CycledTo: 1}
		}), NextCheck, "", SettleNone, "", ""},
		{"2 new failures", verified(func(f *LoopFacts) { f.Cascade = []int{1, 0, 1} }), NextCheck, "", SettleNone, "", ""},
		{"3 new failures", verified(func(f *LoopFacts) { f.Cascade = []int{1, 1, 1} }), NextEnd, CodeCascade, SettleNone, "", ""},
		{"3 new failures, one out of the window", verified(func(f *LoopFacts) { f.Cascade = []int{1, 0, 0, 0, 0, 1, 1} }), NextCheck, "", SettleNone, "", ""},
		{"sentinel after the loop", verified(func(f *LoopFacts) { f.Sentinel = true }), NextEnd, CodeSentinel, SettleNone, "", ""},
		{"aborted after the loop", verified(func(f *LoopFacts) { f.Aborted = true }), NextEnd, CodeAborted, SettlePending, "", ""},
		{"check: nothing to do", checked(Decision{Outcome: CheckNothing}, nil), NextEnd, "", SettleNone, "", ""},
		{"check: paused, issues waiting", checked(Decision{Outcome: CheckNothing, Stop: &Verdict{Rule: CodePaused, Stop: true, Reason: "paused", Hint: "resume"},
			WouldQualify: []*issuequeue.Issue{{ID: "x"}}}, nil), NextEnd, CodePaused, SettleNone, "", ""},
		{"check: paused, nothing waiting", checked(Decision{Outcome: CheckNothing, Stop: &Verdict{Rule: CodePaused, Stop: true}}, nil), NextEnd, "", SettleNone, "", ""},
		{"check: nothing left, but the run gave up", checked(Decision{Outcome: CheckNothing}, func(f *LoopFacts) {
			f.GaveUp, f.GaveUpCode = []string{"ISSUE-1"}, CodeRepeatedFailure
		}), NextEnd, CodeRepeatedFailure, SettleNone, "", ""},
		{"check: the run gave up, code unknown", checked(Decision{Outcome: CheckNothing}, func(f *LoopFacts) { f.GaveUp = []string{"ISSUE-1"} }),
			NextEnd, CodeMaxRetries, SettleNone, "", ""},
		{"check: the last loop failed", checked(Decision{Outcome: CheckNothing}, func(f *LoopFacts) { f.Result = ResultFailed }), NextEnd, CodeLoopFailed, SettleNone, "", ""},
		{"check: the last loop timed out", checked(Decision{Outcome: CheckNothing}, func(f *LoopFacts) { f.Result = ResultTimeout }), NextEnd, CodeLoopFailed, SettleNone, "", ""},
		{"check: a person is needed", checked(Decision{Outcome: CheckHuman, Stop: &Verdict{Rule: CodeRunCap, Stop: true, Reason: "cap", Hint: "look"}}, nil), NextEnd, CodeRunCap, SettleNone, "", ""},
		{"check: retry", checked(Decision{Outcome: CheckRetry}, nil), NextLoop, "", SettleNone, "", ""},
		{"check: retry, sentinel meanwhile", checked(Decision{Outcome: CheckRetry}, func(f *LoopFacts) { f.Sentinel = true }), NextEnd, CodeSentinel, SettleNone, "", ""},
		{"check: retry, aborted meanwhile", checked(Decision{Outcome: CheckRetry}, func(f *LoopFacts) { f.Aborted = true }), NextEnd, CodeAborted, SettlePending, "", ""},
		{"check: retry, shared budget left", checked(Decision{Outcome: CheckRetry}, func(f *LoopFacts) {
			f.Config.SharedBudget.LoopsPerDay, f.Shared = 3, shared(2)
		}), NextLoop, "", SettleNone, "", ""},
		{"check: retry, shared budget spent", checked(Decision{Outcome: CheckRetry}, func(f *LoopFacts) {
			f.Config.SharedBudget.LoopsPerDay, f.Shared = 3, shared(3)
		}), NextEnd, CodeSharedLoops, SettleRelease, "", ""},
	}
	for _, tt := range tests {
		f := tt.f
		if f.Config == nil {
			f.Config, f.Now, f.Dir, f.Loop = testConfig(), testNow, ".orchestrator", 1
		}
		v := AfterLoop(f)
		var code Code
		if v.Stop != nil {
			code = v.Stop.Code
			if v.Stop.Reason == "" || v.Stop.Hint == "" {
				t.Errorf("%s: stop %+v without a reason or a hint", tt.name, v.Stop)
			}
		}
		var halt Code
		if v.Halt != nil {
			halt = v.Halt.Rule
		}
		if v.Next != tt.next || code != tt.code || v.Settle != tt.settle || halt != tt.halt || v.Result != tt.result {
			t.Errorf("%s: AfterLoop = next %d, stop %q, settle %d, halt %q, result %q; want %d, %q, %d, %q, %q",
				tt.name, v.Next, code, v.Settle, halt, v.Result, tt.next, tt.code, tt.settle, tt.halt, tt.result)
		}
		if v.Window != (code == CodeRateLimited) {
			t.Errorf("%s: window %v for a %q stop", tt.name, v.Window, code)
		}
	}
}

// The breaker opens at [circuit_breaker] threshold failed loops in a row,
// or at the first failure of a half-open trial loop.
func TestBreakerOpens(t *testing.T) {
	cfg := testConfig()
	th := cfg.CircuitBreaker.Threshold
	for _, tt := range []struct {
		failures int
		halfOpen bool
		want     bool
	}{{th - 1, false, false}, {th, false, true}, {1, true, true}, {0, true, false}} {
		if got := BreakerOpens(tt.failures, tt.halfOpen, cfg); got != tt.want {
			t.Errorf("BreakerOpens(%d, %v) = %v, want %v", tt.failures, tt.halfOpen, got, tt.want)
		}
	}
	if v := AfterLoop(LoopFacts{Config: cfg, Now: testNow, Verified: true, Breaker: BreakerFacts{Opened: true, HalfOpen: true, Failures: 1}}); v.Stop == nil ||
		!strings.Contains(v.Stop.Reason, "half-open trial loop failed") {
		t.Errorf("a failed trial loop: %+v", v.Stop)
	}
}

// A stop is worded "stopped (CODE): reason" and logged with its code as
// the reason; a halt's stop names its rule and, in its hint, the command
// as the person runs it.
func TestStopWordsAndEvent(t *testing.T) {
	for _, tt := range []struct {
		code Code
		why  string
	}{{CodeRepeatedFailure, "3 times in a row"}, {CodeRepeatedAcross, "under other issues"}, {CodeOscillation, "alternate"}} {
		se := StopHalted("ISSUE-1", tt.code, 3, "orch --dir ci")
		if got, want := se.Error(), Stopped(tt.code, se.Reason); got != want || !strings.HasPrefix(got, "stopped ("+string(tt.code)+"): ISSUE-1 halted") {
			t.Errorf("%s: %q", tt.code, got)
		}
		if !strings.Contains(se.Reason, tt.why) || !strings.Contains(se.Hint, "'orch --dir ci retry ISSUE-1'") || strings.Contains(se.Hint, "orchestrator") {
			t.Errorf("%s: reason %q, hint %q", tt.code, se.Reason, se.Hint)
		}
		ev := se.Event(testNow, "run-1")
		if ev.Event != EvStopped || ev.Reason != string(tt.code) || ev.Code != tt.code || ev.Error != se.Reason {
			t.Errorf("%s: event %+v", tt.code, ev)
		}
	}
}
