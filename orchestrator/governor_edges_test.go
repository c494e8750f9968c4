package orchestrator

import (
	"errors"
	"io/fs"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/config"
)

// The edges of the governor's rules that the other tests leave out: each
// on both sides of its limit, or its error path with the verdict, code,
// reason and hint a person reads.

// TestGateSharedBudget proves: a loop start meets the shared budget when
// the caller read it, on both sides of each limit: one loop under
// [shared_budget] loops_per_day starts, at it no loop starts, until the
// oldest counted loop leaves the window; the shared auto-retry limit stops
// auto-retry loops only; a shared budget not read (nil) is not checked,
// however it is set.
func TestGateSharedBudget(t *testing.T) {
	const dir = "/srv/budget"
	shared := func(regular, auto int) *SharedUsage {
		su := &SharedUsage{Dir: dir}
		for i := range regular + auto {
			kind := KindRegular
			if i >= regular {
				kind = KindAutoRetry
			}
			su.Entries = append(su.Entries, SharedEntry{Time: testNow.Add(-time.Duration(regular+auto-i) * time.Minute),
				Dir: "/other/.orchestrator", Kind: kind, Attempt: 1})
		}
		return su
	}
	tests := []struct {
		name   string
		kind   string
		loops  int // [shared_budget] loops_per_day
		autos  int // [shared_budget] auto_retry_loops_per_day
		shared *SharedUsage
		want   Code
		until  time.Time
	}{
		{"not read: not checked", KindAutoRetry, 1, 1, nil, "", time.Time{}},
		{"2 shared loops of 3", KindRegular, 3, 0, shared(2, 0), "", time.Time{}},
		{"3 shared loops of 3", KindRegular, 3, 0, shared(3, 0), CodeSharedLoops, testNow.Add(-3 * time.Minute).Add(config.BudgetWindow)},
		{"3 of 3 stop an auto-retry loop too", KindAutoRetry, 3, 0, shared(1, 2), CodeSharedLoops, testNow.Add(-3 * time.Minute).Add(config.BudgetWindow)},
		{"1 shared auto-retry loop of 2", KindAutoRetry, 0, 2, shared(3, 1), "", time.Time{}},
		{"2 shared auto-retry loops of 2", KindAutoRetry, 0, 2, shared(3, 2), CodeSharedAutoRetries, testNow.Add(-2 * time.Minute).Add(config.BudgetWindow)},
		{"2 of 2 do not stop a regular loop", KindRegular, 0, 2, shared(3, 2), "", time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, st := parse(t, "", stateMD(0, true))
			in := testInputs(q, st)
			in.Invocation = "orch"
			in.Config.SharedBudget = config.SharedBudget{Dir: dir, LoopsPerDay: tt.loops, AutoRetryLoopsPerDay: tt.autos}
			in.Shared = tt.shared
			all, stop := Gate(in, tt.kind)
			var got Code
			if stop != nil {
				got = stop.Rule
			}
			if got != tt.want {
				t.Fatalf("stop = %q, want %q (%+v)", got, tt.want, stop)
			}
			sharedCodes := []Code{CodeSharedLoops, CodeSharedAutoRetries, CodeSharedAgentTime, CodeSharedCost, CodeSharedTokens}
			n := 0
			for _, v := range all {
				if slices.Contains(sharedCodes, v.Rule) {
					n++
				}
			}
			want := 0
			if tt.shared != nil {
				want = 4 // loops, agent time, cost, tokens
				if tt.kind == KindAutoRetry {
					want = 5 // and the auto-retry loops
				}
			}
			if n != want {
				t.Errorf("Gate met %d shared rules, want %d (%+v)", n, want, all)
			}
			if sv := SharedVerdicts(in, tt.kind); len(sv) != want {
				t.Errorf("SharedVerdicts gave %d verdicts, want %d", len(sv), want)
			}
			if stop == nil {
				return
			}
			if stop.Wait || !NeedsPerson(stop.Rule) {
				t.Errorf("a spent shared budget is a wait or needs no person: %+v", stop)
			}
			if !stop.Until.Equal(tt.until) {
				t.Errorf("until %s, want %s", stop.Until, tt.until)
			}
			if !strings.Contains(stop.Reason, "shared in "+dir) || !strings.Contains(stop.Hint, "'orch fleet explain DIR…'") {
				t.Errorf("reason %q, hint %q: want the directory and the fleet command", stop.Reason, stop.Hint)
			}
		})
	}
}

// TestActiveHoursUnreadable proves: active hours that cannot be read fail
// closed: no loop starts, the stop is no wait that lifts by itself, and its
// reason and hint say to fix [schedule] with the lint command; the same
// hours, readable, let a loop start inside them; a loop run again after a
// transient failure has started, and the hours do not cut it.
func TestActiveHoursUnreadable(t *testing.T) {
	tests := []struct {
		name  string
		hours []string
		zone  string
		bad   bool
	}{
		{"readable, inside them", []string{"09:00-18:00"}, "UTC", false},
		{"a range that is not one", []string{"9-18"}, "UTC", true},
		{"an unknown zone", []string{"09:00-18:00"}, "Mars/Olympus", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, st := parse(t, "", stateMD(0, true))
			in := testInputs(q, st) // 10:15 UTC
			in.Invocation = "orch"
			in.Config.Schedule.ActiveHours, in.Config.Schedule.Timezone = tt.hours, tt.zone
			_, stop := Gate(in, KindRegular)
			if !tt.bad {
				if stop != nil {
					t.Fatalf("inside readable hours: stop %+v", stop)
				}
				return
			}
			if stop == nil || stop.Rule != CodeOutsideActiveHours {
				t.Fatalf("stop %+v, want outside_active_hours", stop)
			}
			if stop.Wait || !stop.Until.IsZero() {
				t.Errorf("unreadable hours stop as a wait or lift by themselves: %+v", stop)
			}
			if !strings.HasPrefix(stop.Reason, "the active hours cannot be read: ") {
				t.Errorf("reason %q", stop.Reason)
			}
			if !strings.Contains(stop.Hint, "fix [schedule]") || !strings.Contains(stop.Hint, "'orch lint'") {
				t.Errorf("hint %q: want fix [schedule] and 'orch lint'", stop.Hint)
			}
			in.ReRun = true
			if _, stop := Gate(in, KindRegular); stop != nil {
				t.Errorf("a re-run of a started loop is stopped: %+v", stop)
			}
		})
	}
}

// TestBudgetUnreadableFile proves: an event log that cannot be read at all
// (not one of its lines: the file) stops loops, needing a person, and the
// hint says to make the file readable and run doctor, not to fix a line;
// a bad line still names that line. A real unreadable log read by
// ReadUsage (a directory where the log should be) takes that path.
func TestBudgetUnreadableFile(t *testing.T) {
	tests := []struct {
		name   string
		err    *UnreadableLogError
		reason string
		hint   string
	}{
		{"the file", &UnreadableLogError{File: "logs/retry.jsonl", Err: fs.ErrPermission},
			"the budgets' record logs/retry.jsonl cannot be read (permission denied)",
			"make logs/retry.jsonl readable by the user running 'orch'; 'orch doctor' checks the setup"},
		{"a line", &UnreadableLogError{File: "logs/retry.jsonl", Line: 3, Err: errors.New("invalid character")},
			"line 3 of logs/retry.jsonl is not an event",
			"fix or delete line 3 of logs/retry.jsonl"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, st := parse(t, "", stateMD(0, true))
			in := testInputs(q, st)
			in.Invocation = "orch"
			in.Usage.Unreadable = tt.err
			_, stop := Gate(in, KindRegular)
			if stop == nil || stop.Rule != CodeBudgetUnreadable || stop.Wait {
				t.Fatalf("stop %+v, want budget_unreadable that needs a person", stop)
			}
			if !strings.Contains(stop.Reason, tt.reason) || !strings.Contains(stop.Reason, "what was spent is unknown") {
				t.Errorf("reason %q, want %q", stop.Reason, tt.reason)
			}
			if !strings.Contains(stop.Hint, tt.hint) {
				t.Errorf("hint %q, want %q", stop.Hint, tt.hint)
			}
		})
	}

	dir := t.TempDir()
	log := PathsIn(dir).Ledger()
	if err := os.MkdirAll(log, 0o755); err != nil {
		t.Fatal(err)
	}
	u, err := ReadUsage(dir, testNow)
	if err == nil || u.Unreadable == nil || u.Unreadable.Line != 0 {
		t.Fatalf("a directory as the log: usage %+v, err %v; want it unreadable as a file", u.Unreadable, err)
	}
	q, st := parse(t, "", stateMD(0, true))
	in := testInputs(q, st)
	in.Usage = u
	_, stop := Gate(in, KindAutoRetry)
	if stop == nil || stop.Rule != CodeBudgetUnreadable || !strings.Contains(stop.Hint, "make "+log+" readable") {
		t.Errorf("stop %+v, want budget_unreadable naming %s", stop, log)
	}
}

// TestProgressRulesOff proves: [progress] turns the progress halts off on
// both sides: with it on, 1 idle auto-retry loop halts nothing and 2 halt
// their issues (no_change), a return to a failed state halts them
// (cycle); idle_loops = 0 turns the no-change rule off but not the cycle
// rule; enabled = false turns both off, and their verdicts (as the
// progress report shows them) say "off".
func TestProgressRulesOff(t *testing.T) {
	tests := []struct {
		name             string
		set              func(c *config.Config)
		idle, cycledTo   int
		halt             Code
		noChange, cycles string // the rules' limits as shown
	}{
		{"on: 1 idle loop", func(c *config.Config) {}, 1, 0, "", "2 in a row", "the first return to a failed state"},
		{"on: 2 idle loops", func(c *config.Config) {}, 2, 0, CodeNoChange, "2 in a row", "the first return to a failed state"},
		{"on: a cycle", func(c *config.Config) {}, 0, 1, CodeCycle, "2 in a row", "the first return to a failed state"},
		{"idle_loops 0: 5 idle loops", func(c *config.Config) { c.Progress.IdleLoops = 0 }, 5, 0, "", "off", "the first return to a failed state"},
		{"idle_loops 0: a cycle still halts", func(c *config.Config) { c.Progress.IdleLoops = 0 }, 5, 1, CodeCycle, "off", "the first return to a failed state"},
		{"off: 5 idle loops and a cycle", func(c *config.Config) { c.Progress.Enabled = false }, 5, 1, "", "off", "off"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig()
			tt.set(cfg)
			step := AfterLoop(LoopFacts{Config: cfg, Now: testNow, Dir: ".orchestrator", Loop: 3, Kind: KindAutoRetry,
				Result: ResultOK, Verified: true, Idle: tt.idle, Progress: LoopProgress{Loop: 3, CycledTo: tt.cycledTo}})
			var halt Code
			if step.Halt != nil {
				halt = step.Halt.Rule
				if step.Halt.Reason == "" || step.Halt.Hint == "" {
					t.Errorf("halt without a reason or a hint: %+v", step.Halt)
				}
			}
			if halt != tt.halt || step.Stop != nil || step.Next != NextCheck {
				t.Errorf("halt %q, stop %+v, next %d; want halt %q, no stop, the check", halt, step.Stop, step.Next, tt.halt)
			}
			if v := NoChangeVerdict(tt.idle, cfg, ""); v.Limit != tt.noChange || (v.Limit == "off" && v.Stop) {
				t.Errorf("no_change verdict %+v, want limit %q", v, tt.noChange)
			}
			if v := CycleVerdict(3, tt.cycledTo, cfg, ""); v.Limit != tt.cycles || (v.Limit == "off" && v.Stop) {
				t.Errorf("cycle verdict %+v, want limit %q", v, tt.cycles)
			}
		})
	}
}

// TestReserveInMillions proves: the reserve on both sides of a budget of
// millions of tokens: 1.5M left of 6M starts a loop that typically uses
// 1.5M; 500k left of 5M does not, and the reason shows the amounts as a
// person reads them (1.5M, 500k, 5.0M) and when the next loop is possible.
func TestReserveInMillions(t *testing.T) {
	u := execsOf(3, 1500000, 0, time.Second) // 4.5M used
	for _, tt := range []struct {
		limit  int
		reason string // "" when a loop starts
	}{
		{6000000, ""},
		{5000000, "a typical loop uses 1.5M tokens; 500k are left of tokens_per_day 5.0M, so a loop would not finish; next loop possible at "},
	} {
		q, st := parse(t, "", stateMD(0, true))
		in := testInputs(q, st)
		in.Config.Budget.TokensPerDay, in.Usage = tt.limit, u
		_, stop := Gate(in, KindRegular)
		if tt.reason == "" {
			if stop != nil {
				t.Errorf("limit %d: stop %+v, want a loop to start", tt.limit, stop)
			}
			continue
		}
		if stop == nil || stop.Rule != CodeDailyTokens {
			t.Fatalf("limit %d: stop %+v, want daily_tokens", tt.limit, stop)
		}
		if !strings.HasPrefix(stop.Reason, tt.reason) {
			t.Errorf("reason %q, want it to start %q", stop.Reason, tt.reason)
		}
		// 3.5M may be used for a loop of 1.5M to fit: once the oldest loop
		// has left the window.
		if want := u.Execs[0].At.Add(config.BudgetWindow); !stop.Until.Equal(want) {
			t.Errorf("until %s, want %s", stop.Until, want)
		}
	}
}

// TestLoopLimitsShared proves: what explain shows a running loop meets is
// what DuringLoop checks: with [shared_budget] naming a directory, the
// shared tokens, cost and agent time are listed, with their limit or off;
// without it none are; every rule DuringLoop evaluates is listed.
func TestLoopLimitsShared(t *testing.T) {
	shared := []Code{CodeSharedTokens, CodeSharedCost, CodeSharedAgentTime}
	for _, dir := range []string{"", "/srv/budget"} {
		cfg := testConfig()
		cfg.SharedBudget = config.SharedBudget{Dir: dir, TokensPerDay: 1000}
		limits := map[Code]string{}
		for _, v := range LoopLimits(Inputs{Config: cfg, Now: testNow}) {
			limits[v.Rule] = v.Limit
			if v.Stop {
				t.Errorf("LoopLimits stops: %+v", v)
			}
		}
		for _, c := range shared {
			if _, ok := limits[c]; ok != (dir != "") {
				t.Errorf("shared dir %q: %s listed = %v", dir, c, ok)
			}
		}
		in := InLoop{Config: cfg, Now: testNow}
		if dir != "" {
			if got := limits[CodeSharedTokens]; !strings.HasPrefix(got, "[shared_budget] tokens_per_day 1000: the loop is stopped") {
				t.Errorf("shared tokens limit %q", got)
			}
			if limits[CodeSharedCost] != "off" || limits[CodeSharedAgentTime] != "off" {
				t.Errorf("shared cost %q, agent time %q: want off", limits[CodeSharedCost], limits[CodeSharedAgentTime])
			}
			in.Shared = &SharedUsage{Dir: dir}
		}
		all, _ := DuringLoop(in)
		for _, v := range all {
			if _, ok := limits[v.Rule]; !ok {
				t.Errorf("shared dir %q: DuringLoop checks %s, which LoopLimits does not list", dir, v.Rule)
			}
		}
	}
}

// TestCutByIssueSpendHalts proves: a loop cut because one of its issues'
// own spend reached its limit halts that issue, as the check would, and
// gives the attempt back; a loop cut by a daily budget halts nothing. The
// path is the runner's: DuringLoop, DecideExec, AfterLoop.
func TestCutByIssueSpendHalts(t *testing.T) {
	const id = "ISSUE-20261122-001"
	ledger := newIssueLedger()
	ledger.issue(id).Total = Spend{Tokens: 60000}
	for _, tt := range []struct {
		name string
		set  func(c *config.Config)
		code Code
		halt bool
	}{
		{"the issue's tokens", func(c *config.Config) { c.Budget.IssueTokens = 100000 }, CodeIssueTokens, true},
		{"the day's tokens", func(c *config.Config) { c.Budget.TokensPerDay = 40000 }, CodeDailyTokens, false},
	} {
		cfg := testConfig()
		tt.set(cfg)
		_, stopped := DuringLoop(InLoop{Config: cfg, Now: testNow, Spend: LoopSpend{Tokens: 40000}, Issues: []string{id}, Ledger: ledger})
		if stopped == nil || stopped.Rule != tt.code {
			t.Fatalf("%s: stopped by %+v, want %s", tt.name, stopped, tt.code)
		}
		step := DecideExec(ExecFacts{Try: 1, ExitCode: 143, Stopped: stopped}, cfg)
		ls := AfterLoop(LoopFacts{Config: cfg, Now: testNow, Loop: 2, Kind: KindAutoRetry, Cut: step.Cut})
		if ls.Stop == nil || ls.Stop.Code != tt.code || ls.Settle != SettleRelease || ls.Next != NextEnd || ls.Breaker {
			t.Errorf("%s: after the cut %+v", tt.name, ls)
		}
		if got := ls.Halt != nil; got != tt.halt {
			t.Fatalf("%s: halted = %v, want %v (%+v)", tt.name, got, tt.halt, ls.Halt)
		}
		if tt.halt && (ls.Halt.Rule != tt.code || ls.Halt.Issue != id) {
			t.Errorf("%s: halt %+v, want %s of %s", tt.name, ls.Halt, tt.code, id)
		}
	}
}

// TestStopHaltedOnSpend proves: a failure recorded for an issue whose
// loops' spend reached a per-issue cap or a [progress] spend_* limit stops
// with that code and says so, not that the same failure repeated; the
// hint names the answers as the person runs the tool.
func TestStopHaltedOnSpend(t *testing.T) {
	for _, tt := range []struct {
		code Code
		why  string
	}{
		{CodeIssueCost, "what its loops spent reached [budget] issue_cost"},
		{CodeIssueTokens, "what its loops spent reached [budget] issue_tokens"},
		{CodeIssueAgentTime, "what its loops spent reached [budget] issue_agent_time"},
		{CodeNoProgressSpend, "since a loop last progressed on it reached a [progress] spend_* limit"},
		{CodeRepeatedFailure, "the same failure 2 times in a row"},
	} {
		se := StopHalted("ISSUE-1", tt.code, 2, "orch")
		if se.Code != tt.code || !strings.HasPrefix(se.Reason, "ISSUE-1 halted: ") || !strings.Contains(se.Reason, tt.why) {
			t.Errorf("%s: code %s, reason %q; want %q", tt.code, se.Code, se.Reason, tt.why)
		}
		if tt.code != CodeRepeatedFailure && strings.Contains(se.Reason, "same failure") {
			t.Errorf("%s: reason %q blames a repeated failure", tt.code, se.Reason)
		}
		if !strings.Contains(se.Hint, "'orch retry ISSUE-1'") || se.Wait {
			t.Errorf("%s: hint %q, wait %v", tt.code, se.Hint, se.Wait)
		}
	}
}
