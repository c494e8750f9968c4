package orchestrator

import (
	"strings"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/internal/adapters/agentout"
	"github.com/autoretry/orchestrator/internal/foundations/config"
)

// execsOf is a day's ledger of n executions, each with tokens, cost and
// time d, ending a minute apart before testNow.
func execsOf(n int, tokens int64, cost float64, d time.Duration) Usage {
	u := usageOf(n, d, cost, 0)
	for i := range u.Execs {
		u.Execs[i].Tokens = tokens
	}
	return u
}

// A running loop is stopped once what it reported so far, added to the
// day's ledger, reaches a budget: just below goes on, at and above stop,
// with the budget's code; the loop's own spend counts, the ledger's alone
// need not reach it. Budgets that are off never stop it.
func TestDuringLoop(t *testing.T) {
	tests := []struct {
		name  string
		set   func(c *config.Config)
		usage Usage
		spend LoopSpend
		want  Code
	}{
		{"tokens off", func(c *config.Config) {}, execsOf(2, 1e6, 0, time.Second), LoopSpend{Tokens: 1e6}, ""},
		{"tokens just below", func(c *config.Config) { c.Budget.TokensPerDay = 100000 }, execsOf(2, 30000, 0, time.Second), LoopSpend{Tokens: 39999}, ""},
		{"tokens at", func(c *config.Config) { c.Budget.TokensPerDay = 100000 }, execsOf(2, 30000, 0, time.Second), LoopSpend{Tokens: 40000}, CodeDailyTokens},
		{"tokens above", func(c *config.Config) { c.Budget.TokensPerDay = 100000 }, execsOf(2, 30000, 0, time.Second), LoopSpend{Tokens: 70000}, CodeDailyTokens},
		{"the loop alone", func(c *config.Config) { c.Budget.TokensPerDay = 100000 }, Usage{}, LoopSpend{Tokens: 100000}, CodeDailyTokens},
		{"cost just below", func(c *config.Config) { c.Budget.CostPerDay = 5 }, execsOf(2, 0, 1, time.Second), LoopSpend{Cost: 2.99}, ""},
		{"cost at", func(c *config.Config) { c.Budget.CostPerDay = 5 }, execsOf(2, 0, 1, time.Second), LoopSpend{Cost: 3}, CodeDailyCost},
		{"cost above", func(c *config.Config) { c.Budget.CostPerDay = 5 }, execsOf(2, 0, 1, time.Second), LoopSpend{Cost: 4}, CodeDailyCost},
		{"agent time just below", func(c *config.Config) {}, execsOf(7, 0, 0, time.Hour), LoopSpend{Time: time.Hour - time.Second}, ""},
		{"agent time at", func(c *config.Config) {}, execsOf(7, 0, 0, time.Hour), LoopSpend{Time: time.Hour}, CodeDailyAgentTime},
		{"agent time above", func(c *config.Config) {}, execsOf(7, 0, 0, time.Hour), LoopSpend{Time: 2 * time.Hour}, CodeDailyAgentTime},
		{"window share below", func(c *config.Config) { c.Budget.WindowShare = 0.8 }, Usage{},
			LoopSpend{WindowUsed: 0.79, WindowReset: testNow.Add(time.Hour)}, ""},
		{"window share at", func(c *config.Config) { c.Budget.WindowShare = 0.8 }, Usage{},
			LoopSpend{WindowUsed: 0.8, WindowReset: testNow.Add(time.Hour)}, CodeWindowShare},
		{"tokens come before cost", func(c *config.Config) { c.Budget.TokensPerDay, c.Budget.CostPerDay = 10, 1 }, Usage{},
			LoopSpend{Tokens: 10, Cost: 1}, CodeDailyTokens},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig()
			tt.set(cfg)
			all, stop := DuringLoop(InLoop{Config: cfg, Now: testNow, Usage: tt.usage, Spend: tt.spend})
			if len(all) == 0 {
				t.Fatal("no verdicts")
			}
			var got Code
			if stop != nil {
				got = stop.Rule
				if !strings.HasPrefix(stop.Reason, "during the loop") || stop.Hint == "" {
					t.Errorf("stop %s: reason %q, hint %q", got, stop.Reason, stop.Hint)
				}
			}
			if got != tt.want {
				t.Errorf("stop = %q, want %q (%+v)", got, tt.want, all)
			}
		})
	}
}

// The shared budgets hold during a loop too: the other projects' spend and
// this loop's together reach the shared limit.
func TestDuringLoopShared(t *testing.T) {
	cfg := testConfig()
	cfg.SharedBudget.TokensPerDay = 1000
	sh := &SharedUsage{Dir: "/srv/budget", Entries: []SharedEntry{{Time: testNow.Add(-time.Hour), Dir: "/other", Tokens: 900}}}
	for _, tc := range []struct {
		tokens int64
		want   Code
	}{{99, ""}, {100, CodeSharedTokens}} {
		_, stop := DuringLoop(InLoop{Config: cfg, Now: testNow, Shared: sh, Spend: LoopSpend{Tokens: tc.tokens}})
		var got Code
		if stop != nil {
			got = stop.Rule
		}
		if got != tc.want {
			t.Errorf("%d tokens this loop: stop %q, want %q", tc.tokens, got, tc.want)
		}
	}
	if len(sh.Entries) != 1 {
		t.Errorf("DuringLoop changed the shared usage it was given: %d entries", len(sh.Entries))
	}
}

// The agent time left is what the day's budget, and the shared one, leave
// after the ledger and the loop's time so far; none when both are off.
func TestAgentTimeLeft(t *testing.T) {
	cfg := testConfig()
	in := InLoop{Config: cfg, Now: testNow, Usage: execsOf(7, 0, 0, time.Hour), Spend: LoopSpend{Time: 20 * time.Minute}}
	if left, ok := AgentTimeLeft(in); !ok || left != 40*time.Minute {
		t.Errorf("left %v %v, want 40m", left, ok)
	}
	in.Spend.Time = 2 * time.Hour
	if left, ok := AgentTimeLeft(in); !ok || left != 0 {
		t.Errorf("over the budget: left %v %v, want 0", left, ok)
	}
	cfg.Budget.AgentTimePerDay = 0
	if _, ok := AgentTimeLeft(in); ok {
		t.Error("no agent time budget, yet a time left")
	}
	cfg.SharedBudget.AgentTimePerDay = 3 * time.Hour
	in.Shared, in.Spend.Time = &SharedUsage{}, time.Hour
	if left, ok := AgentTimeLeft(in); !ok || left != 2*time.Hour {
		t.Errorf("shared: left %v %v, want 2h", left, ok)
	}
}

// The reserve: a loop starts only when what is left of a budget is at
// least a typical loop's spend, the median of the latest 10 executions;
// with fewer than 3 recorded, none applies; reserve = false turns it off.
func TestReserve(t *testing.T) {
	tests := []struct {
		name  string
		set   func(c *config.Config)
		usage Usage
		want  Code
	}{
		// 3 loops of 20k tokens: a typical loop needs 20k.
		{"tokens: more left than a loop needs", func(c *config.Config) { c.Budget.TokensPerDay = 81000 }, execsOf(3, 20000, 0, time.Second), ""},
		{"tokens: just what a loop needs", func(c *config.Config) { c.Budget.TokensPerDay = 80000 }, execsOf(3, 20000, 0, time.Second), ""},
		{"tokens: just below", func(c *config.Config) { c.Budget.TokensPerDay = 79999 }, execsOf(3, 20000, 0, time.Second), CodeDailyTokens},
		{"tokens: two loops recorded", func(c *config.Config) { c.Budget.TokensPerDay = 40001 }, execsOf(2, 20000, 0, time.Second), ""},
		{"tokens: reserve off", func(c *config.Config) { c.Budget.TokensPerDay, c.Budget.Reserve = 79999, false }, execsOf(3, 20000, 0, time.Second), ""},
		{"cost: above", func(c *config.Config) { c.Budget.CostPerDay = 5.5 }, execsOf(4, 0, 1, time.Second), ""},
		{"cost: at", func(c *config.Config) { c.Budget.CostPerDay = 5 }, execsOf(4, 0, 1, time.Second), ""},
		{"cost: below", func(c *config.Config) { c.Budget.CostPerDay = 4.99 }, execsOf(4, 0, 1, time.Second), CodeDailyCost},
		{"agent time: above", func(c *config.Config) {}, execsOf(7, 0, 0, time.Hour-time.Minute), ""},
		{"agent time: at", func(c *config.Config) { c.Budget.AgentTimePerDay = 8 * time.Hour }, execsOf(3, 0, 0, 2*time.Hour), ""},
		{"agent time: below", func(c *config.Config) { c.Budget.AgentTimePerDay = 7*time.Hour + 59*time.Minute }, execsOf(5, 0, 0, 80*time.Minute), CodeDailyAgentTime},
		{"agent time: fewer than 3", func(c *config.Config) { c.Budget.AgentTimePerDay = 3 * time.Hour }, execsOf(2, 0, 0, 80*time.Minute), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig()
			tt.set(cfg)
			q, st := parse(t, "", stateMD(0, true))
			in := testInputs(q, st)
			in.Config, in.Usage = cfg, tt.usage
			_, stop := Gate(in, KindRegular)
			var got Code
			if stop != nil {
				got = stop.Rule
			}
			if got != tt.want {
				t.Fatalf("stop = %q, want %q (%+v)", got, tt.want, stop)
			}
		})
	}
}

// The reserve's reason names what a typical loop uses and what is left of
// which budget, and only the latest 10 loops make a typical one.
func TestReserveReason(t *testing.T) {
	cfg := testConfig()
	// 11 older loops that reported no tokens, then 10 of 5k: 50k used,
	// 4k left of 54k. Over all 21 the median would be 0.
	u := execsOf(21, 5000, 0, time.Second)
	for i := range 11 {
		u.Execs[i].Tokens = 0
	}
	cfg.Budget.TokensPerDay = 54000
	q, st := parse(t, "", stateMD(0, true))
	in := testInputs(q, st)
	in.Config, in.Usage = cfg, u
	if _, stop := Gate(in, KindRegular); stop == nil || stop.Rule != CodeDailyTokens {
		t.Fatalf("stop %+v, want daily_tokens: the latest 10 loops used 5k each", stop)
	}
	for i := range u.Execs {
		u.Execs[i].Tokens = 41000
	}
	u.Execs = u.Execs[len(u.Execs)-3:]
	cfg.Budget.TokensPerDay = 135000 // 123k used, 12k left
	in.Usage = u
	_, stop := Gate(in, KindRegular)
	if stop == nil || stop.Rule != CodeDailyTokens {
		t.Fatalf("stop %+v, want daily_tokens", stop)
	}
	if want := "a typical loop uses 41k tokens; 12k are left of tokens_per_day 135k"; !strings.HasPrefix(stop.Reason, want) {
		t.Errorf("reason %q, want it to start %q", stop.Reason, want)
	}
}

// Tokens are input plus output, cache reads not counted: Codex and Gemini
// count cached tokens in their input, Claude Code and opencode do not.
func TestBudgetTokens(t *testing.T) {
	tk := agentout.Tokens{Input: 1000, Output: 100, CacheRead: 600, HasInput: true, HasOutput: true, HasCacheRead: true}
	for _, tc := range []struct {
		agent agentout.Kind
		want  int64
	}{{agentout.KindClaude, 1100}, {agentout.KindOpencode, 1100}, {agentout.KindCodex, 500}, {agentout.KindGemini, 500}} {
		rep := agentout.Report{Agent: tc.agent, Tokens: tk}
		if got := budgetTokens(rep); got != tc.want {
			t.Errorf("%s: %d tokens counted, want %d", tc.agent, got, tc.want)
		}
		ev := withAgent(Event{}, rep)
		if got := ev.Tokens.Counted(); got != tc.want {
			t.Errorf("%s: the event counts %d tokens, want %d", tc.agent, got, tc.want)
		}
	}
}

// A budget reached during a loop cuts it: its issues are given back; a
// hung loop is cut too, and counted as failed for the breaker.
func TestDecideExecStoppedDuringLoop(t *testing.T) {
	cfg := testConfig()
	v := &Verdict{Rule: CodeDailyTokens, Stop: true, Reason: "r", Hint: "h"}
	step := DecideExec(ExecFacts{Try: 1, ExitCode: 143, Stopped: v}, cfg)
	if step.Cut == nil || step.Cut.Rule != v {
		t.Fatalf("stopped by a budget: %+v, want a cut by its rule", step)
	}
	ls := AfterLoop(LoopFacts{Config: cfg, Now: testNow, Loop: 2, Kind: KindAutoRetry, Cut: step.Cut})
	if ls.Stop == nil || ls.Stop.Code != CodeDailyTokens || ls.Settle != SettleRelease || ls.Breaker {
		t.Errorf("after the cut: %+v", ls)
	}
	step = DecideExec(ExecFacts{Try: 1, ExitCode: 143, Idle: time.Minute}, cfg)
	if step.Cut == nil || step.Cut.Hung != time.Minute {
		t.Fatalf("hung: %+v, want a cut", step)
	}
	ls = AfterLoop(LoopFacts{Config: cfg, Now: testNow, Loop: 2, Kind: KindAutoRetry, Cut: step.Cut})
	if ls.Stop == nil || ls.Stop.Code != CodeHung || ls.Settle != SettleRelease || !ls.Breaker || ls.Next != NextEnd {
		t.Errorf("after a hung loop: %+v", ls)
	}
	if !NeedsPerson(CodeHung) {
		t.Error("a hung loop needs no person?")
	}
}

// The per-issue caps and the spend since progress hold during a loop too:
// what the loop's issues' loops spent before it, with the loop's spend so
// far added in full for each issue, reaches a limit and stops it; just
// below, it goes on.
func TestDuringLoopPerIssue(t *testing.T) {
	ledger := newIssueLedger()
	a := ledger.issue("ISSUE-20261122-001")
	a.Total = Spend{Tokens: 60000, Cost: 1, AgentTime: time.Hour}
	a.SinceProgress = Spend{Tokens: 20000, AgentTime: 30 * time.Minute}
	b := ledger.issue("ISSUE-20261122-002")
	b.Total = Spend{Tokens: 90000}
	tests := []struct {
		name   string
		set    func(c *config.Config)
		issues []string
		spend  LoopSpend
		want   Code
	}{
		{"issue tokens just below", func(c *config.Config) { c.Budget.IssueTokens = 100000 }, []string{"ISSUE-20261122-001"}, LoopSpend{Tokens: 39999}, ""},
		{"issue tokens at", func(c *config.Config) { c.Budget.IssueTokens = 100000 }, []string{"ISSUE-20261122-001"}, LoopSpend{Tokens: 40000}, CodeIssueTokens},
		{"the other issue of the loop reaches it", func(c *config.Config) { c.Budget.IssueTokens = 100000 }, []string{"ISSUE-20261122-001", "ISSUE-20261122-002"}, LoopSpend{Tokens: 10000}, CodeIssueTokens},
		{"issue cost below", func(c *config.Config) { c.Budget.IssueCost = 2 }, []string{"ISSUE-20261122-001"}, LoopSpend{Cost: 0.99}, ""},
		{"issue cost at", func(c *config.Config) { c.Budget.IssueCost = 2 }, []string{"ISSUE-20261122-001"}, LoopSpend{Cost: 1}, CodeIssueCost},
		{"issue agent time at", func(c *config.Config) { c.Progress.SpendAgentTime = 0 }, []string{"ISSUE-20261122-001"}, LoopSpend{Time: 3 * time.Hour}, CodeIssueAgentTime},
		{"spend since progress below", func(c *config.Config) { c.Progress.SpendTokens = 50000 }, []string{"ISSUE-20261122-001"}, LoopSpend{Tokens: 29999}, ""},
		{"spend since progress at", func(c *config.Config) { c.Progress.SpendTokens = 50000 }, []string{"ISSUE-20261122-001"}, LoopSpend{Tokens: 30000}, CodeNoProgressSpend},
		{"no issues: nothing per issue", func(c *config.Config) { c.Budget.IssueTokens = 100 }, nil, LoopSpend{Tokens: 1e6}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig()
			tt.set(cfg)
			_, stop := DuringLoop(InLoop{Config: cfg, Now: testNow, Spend: tt.spend, Issues: tt.issues, Ledger: ledger})
			var got Code
			if stop != nil {
				got = stop.Rule
				if !strings.HasPrefix(stop.Reason, "during the loop") {
					t.Errorf("reason %q", stop.Reason)
				}
			}
			if got != tt.want {
				t.Errorf("stopped by %q, want %q", got, tt.want)
			}
		})
	}
	// The timer is set to the earliest agent time limit of the loop's
	// issues: 30 minutes left of 1h of spend since progress, against 3h
	// left of the 4h cap.
	cfg := testConfig()
	cfg.Budget.AgentTimePerDay, cfg.Progress.SpendAgentTime = 0, time.Hour
	left, ok := AgentTimeLeft(InLoop{Config: cfg, Now: testNow, Issues: []string{"ISSUE-20261122-001"}, Ledger: ledger, Spend: LoopSpend{Time: 10 * time.Minute}})
	if !ok || left != 20*time.Minute {
		t.Errorf("AgentTimeLeft = %v, %v; want 20m", left, ok)
	}
}
