package orchestrator

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/config"
	"github.com/autoretry/orchestrator/internal/foundations/schedule"
	"github.com/autoretry/orchestrator/issuequeue"
)

// The governor is the one place that decides whether a loop may start,
// whether the end-of-loop check retries, and why a run stops: the rules a
// loop start meets are here, pure functions of Inputs; the order of the
// stops after a loop is AfterLoop (governor_loop.go), a pure function of
// the facts the runner gathered; every halt is Halt (governor_halt.go);
// every stop is built and worded in governor_stops.go. The runner and the
// commands only gather facts and carry decisions out.
//
// The file is longer than the others on purpose: it holds every rule, so
// that a person asking why a run stopped reads one file, and Gate lists in
// one place which rules a loop meets and in what order, which decides the
// reason given when two apply. Splitting it by rule would scatter what the
// rules share: Inputs, the Verdict they return, the order they run in.

// Code is a stable reason code: every stop, skipped loop and halted issue
// has one. Codes never change meaning between versions.
type Code string

// Reason codes of stops and skipped loops.
const (
	CodePaused           Code = "paused"             // a person paused all loops
	CodeSentinel         Code = "sentinel"           // no_auto_retry exists: no auto-retry loop
	CodeDisabled         Code = "disabled"           // auto_retry_enabled is false
	CodeDailyLoops       Code = "daily_loops"        // [budget] loops_per_day spent
	CodeDailyAutoRetries Code = "daily_auto_retries" // [budget] auto_retry_loops_per_day spent
	CodeDailyAgentTime   Code = "daily_agent_time"   // [budget] agent_time_per_day spent
	CodeDailyCost        Code = "daily_cost"         // [budget] cost_per_day spent
	CodeRateLimited      Code = "rate_limited"       // inside a rate-limit window
	CodeBreakerOpen      Code = "breaker_open"       // the circuit breaker is open
	CodeRunCap           Code = "run_cap"            // auto-retry loops of this run at the global cap
	CodeMaxLoops         Code = "max_loops"          // loops of this run at [loop] max_loops
	CodeStall            Code = "stall"              // older logs' name of no_progress; no longer recorded
	CodeCascade          Code = "cascade"            // fixes keep breaking other things
	CodePermanentError   Code = "permanent_error"    // the loop failed in a way retrying cannot fix
	CodeGuard            Code = "guard"              // a loop changed what the limits depend on
	CodeAborted          Code = "aborted"            // orchestrator abort, SIGINT or SIGTERM
	CodeLoopFailed       Code = "loop_failed"        // the run ended and its last loop's command had failed
)

// Reason codes of the agent's own reports.
const (
	CodeDailyTokens Code = "daily_tokens" // [budget] tokens_per_day spent
	CodeWindowShare Code = "window_share" // [budget] window_share of the agent's usage window used
)

// CodeDailyIssuesFiled stops loops once [budget] issues_filed_per_day
// issues were filed from inside loops in the last 24 hours.
const CodeDailyIssuesFiled Code = "daily_issues_filed"

// Reason codes of halted or escalated issues.
const (
	CodeMaxRetries      Code = "max_retries"                    // Retry-Count reached Max-Retries
	CodeRepeatedFailure Code = "repeated_failure"               // the same signature halt_after_repeats times in a row
	CodeRepeatedAcross  Code = "repeated_failure_across_issues" // the same signature under other issues
	CodeOscillation     Code = "oscillation"                    // the last 4 attempts alternate A B A B
)

// Verdict is one rule's answer.
type Verdict struct {
	Rule  Code   `json:"rule"`
	Value string `json:"value"` // the inputs the rule read, as text
	Limit string `json:"limit"` // its limit ("off" when disabled)
	Stop  bool   `json:"stop"`
	// Wait marks a stop where nothing is wrong and no person is needed: the
	// stop lifts by itself (a rate-limit window) or a person chose it.
	Wait   bool      `json:"wait,omitempty"`
	Reason string    `json:"reason,omitempty"` // one line, when Stop
	Hint   string    `json:"hint,omitempty"`   // how to clear it, when Stop
	Until  time.Time `json:"until,omitzero"`   // when the stop lifts by itself
	// Issue is the issue a rule of one issue's spend is about; empty for
	// the other rules.
	Issue string `json:"issue,omitempty"`
}

// Pause is a person's pause of all loops (the paused file).
type Pause struct {
	Paused bool
	Until  time.Time // zero: until resumed
}

// Inputs are everything a decision depends on.
type Inputs struct {
	Queue    *issuequeue.Queue
	State    *issuequeue.State
	Usage    Usage // the event log's last 24 hours
	Config   *config.Config
	Now      time.Time
	Sentinel bool // no_auto_retry exists
	Pause    Pause
	// Run is set when the decision is for "orchestrator run": the loops it
	// has run so far count against [loop] max_loops, and the circuit
	// breaker applies. A driver's check (begin + check) has neither.
	Run      bool
	RunLoops int
	// ReRun is set for a loop run again after a transient failure: it has
	// started, so the active hours, which gate only the start of a loop,
	// do not stop it.
	ReRun bool
	// Invocation is how a person runs the tool here, and Dir the state
	// directory as they named it, for hints.
	Invocation string
	Dir        string
	// Shared is the shared budget's last 24 hours, when [shared_budget]
	// names a directory and the caller read it; nil: not checked.
	Shared *SharedUsage
}

func (in Inputs) inv() string { return invocation(in.Invocation) }

// invocation is how a person runs the tool, for hints: inv, or the tool's
// name when the caller does not know.
func invocation(inv string) string {
	if inv == "" {
		return "orchestrator"
	}
	return inv
}

// Loop kinds.
const (
	KindRegular   = "regular"
	KindAutoRetry = "auto_retry"
)

// Gate evaluates every rule that decides whether a loop of the given kind
// may start now, in order. It returns all verdicts and the first that stops,
// if any.
func Gate(in Inputs, kind string) (all []Verdict, stop *Verdict) {
	rules := []func(Inputs) Verdict{rulePaused}
	if in.Run {
		rules = append(rules, ruleBreaker)
	}
	rules = append(rules, ruleRateLimited)
	if !in.ReRun {
		rules = append(rules, ruleActiveHours)
	}
	if kind == KindAutoRetry {
		rules = append(rules, ruleSentinel, ruleDisabled)
	}
	if in.Shared != nil {
		rules = append(rules, sharedRules(kind)...)
	}
	rules = append(rules, ruleBudgetReadable)
	rules = append(rules, ruleDailyLoops, ruleDailyAgentTime, ruleDailyCost)
	rules = append(rules, ruleDailyTokens, ruleWindowShare)
	rules = append(rules, ruleWindowPace)
	rules = append(rules, reserveRules...)
	rules = append(rules, ruleDailyIssuesFiled)
	if kind == KindAutoRetry {
		rules = append(rules, ruleDailyAutoRetries)
	}
	if in.Run {
		rules = append(rules, ruleMaxLoops)
	}
	if kind == KindAutoRetry {
		rules = append(rules, ruleRunCap)
	}
	for _, r := range rules {
		v := r(in)
		all = append(all, v)
		if v.Stop && stop == nil {
			s := liftsInActiveHours(v, in)
			stop = &s
		}
	}
	return all, stop
}

// clock shows a time in local time: "15:04" within a day of now, else with
// its date.
func clock(t, now time.Time) string {
	l := t.Local()
	if d := t.Sub(now); d > 20*time.Hour || d < -20*time.Hour {
		return l.Format("Jan 2 15:04")
	}
	return l.Format("15:04")
}

func rulePaused(in Inputs) Verdict {
	v := Verdict{Rule: CodePaused, Value: "not paused", Limit: "no loop while paused"}
	p := in.Pause
	if !p.Paused || (!p.Until.IsZero() && !in.Now.Before(p.Until)) {
		return v
	}
	v.Stop, v.Wait = true, true
	v.Value = "paused"
	v.Reason = "paused by a person"
	if !p.Until.IsZero() {
		v.Value = "paused until " + p.Until.UTC().Format(time.RFC3339)
		v.Reason = "paused until " + clock(p.Until, in.Now)
		v.Until = p.Until
	}
	v.Hint = "'" + in.inv() + " resume' lets loops run again"
	return v
}

func ruleBreaker(in Inputs) Verdict {
	st, cb := in.State, in.Config.CircuitBreaker
	v := Verdict{Rule: CodeBreakerOpen, Value: fmt.Sprintf("%s, %d failed loop(s) in a row", st.Breaker, st.ConsecutiveFailures),
		Limit: fmt.Sprintf("%d failed loops open it for %s", cb.Threshold, cb.Cooldown)}
	if st.Breaker != issuequeue.BreakerOpen {
		return v
	}
	until := st.OpenedAt.Add(cb.Cooldown)
	if !in.Now.Before(until) {
		v.Value += "; cooldown over: the next loop is a half-open trial"
		return v
	}
	v.Stop, v.Until = true, until
	v.Reason = fmt.Sprintf("circuit breaker open until %s after %d failed loops in a row", clock(until, in.Now), st.ConsecutiveFailures)
	v.Hint = "wait for the cooldown, or fix the cause and run '" + in.inv() + " breaker reset'"
	return v
}

func ruleRateLimited(in Inputs) Verdict {
	st := in.State
	v := Verdict{Rule: CodeRateLimited, Value: "no rate-limit window", Limit: "reset hints over " + in.Config.Backoff.MaxWait.String() + " open a window"}
	if st.LimitedUntil.IsZero() {
		return v
	}
	v.Value = "window until " + st.LimitedUntil.UTC().Format(time.RFC3339)
	if !in.Now.Before(st.LimitedUntil) {
		v.Value += " (over)"
		return v
	}
	v.Stop, v.Wait, v.Until = true, true, st.LimitedUntil
	v.Reason = "rate-limited until " + clock(st.LimitedUntil, in.Now)
	if st.LimitReason != "" {
		v.Reason += " (" + st.LimitReason + ")"
	}
	v.Hint = "runs before then exit 0 without running the agent; nothing to do"
	return v
}

func ruleSentinel(in Inputs) Verdict {
	v := Verdict{Rule: CodeSentinel, Value: "absent", Limit: "no auto-retry loop while no_auto_retry exists"}
	if !in.Sentinel {
		return v
	}
	v.Value, v.Stop = "present", true
	v.Reason = "the sentinel file no_auto_retry exists"
	v.Hint = "remove " + PathsIn(in.Dir).Sentinel() + " to let auto-retry run again"
	return v
}

func ruleDisabled(in Inputs) Verdict {
	v := Verdict{Rule: CodeDisabled, Value: "auto_retry_enabled = true", Limit: "no auto-retry loop while false"}
	if in.State.AutoRetryEnabled {
		return v
	}
	v.Value, v.Stop = "auto_retry_enabled = false", true
	v.Reason = "auto_retry_enabled is false in session_state.md"
	v.Hint = "set auto_retry_enabled to true in " + PathsIn(in.Dir).State() + " to let auto-retry run again"
	return v
}

// Budget is one daily budget's figure: what the event log's last 24
// hours spent of it. The gate's budget rules and every view (status,
// explain, metrics, report, fleet) read these figures, from Budgets.
type Budget struct {
	Code   Code      `json:"code"`  // the reason code when it is spent
	Key    string    `json:"key"`   // its [budget] key
	Used   float64   `json:"used"`  // executions, loops, seconds, cost, tokens or issues
	Limit  float64   `json:"limit"` // 0: off
	Spent  bool      `json:"spent"`
	NextAt time.Time `json:"next_loop_at,omitzero"` // when spent: when it frees up
}

// Budgets returns every daily budget as the event log's last 24 hours
// spent it.
func Budgets(cfg *config.Config, u Usage) []Budget {
	b := cfg.Budget
	out := []Budget{
		{Code: CodeDailyLoops, Key: "loops_per_day", Used: float64(len(u.Execs)), Limit: float64(b.LoopsPerDay)},
		{Code: CodeDailyAutoRetries, Key: "auto_retry_loops_per_day", Used: float64(len(u.AutoRetryLoops)), Limit: float64(b.AutoRetryLoopsPerDay)},
		{Code: CodeDailyAgentTime, Key: "agent_time_per_day", Used: u.AgentTime().Seconds(), Limit: b.AgentTimePerDay.Seconds()},
		{Code: CodeDailyCost, Key: "cost_per_day", Used: u.Cost(), Limit: b.CostPerDay},
		{Code: CodeDailyTokens, Key: "tokens_per_day", Used: float64(u.Tokens()), Limit: float64(b.TokensPerDay)},
		{Code: CodeDailyIssuesFiled, Key: "issues_filed_per_day", Used: float64(len(u.Filed)), Limit: float64(b.IssuesFiledPerDay)},
	}
	for i := range out {
		x := &out[i]
		if x.Spent = x.Limit > 0 && x.Used >= x.Limit; !x.Spent {
			continue
		}
		switch x.Code {
		case CodeDailyLoops:
			x.NextAt = u.nextCount(u.execTimes(), b.LoopsPerDay)
		case CodeDailyAutoRetries:
			x.NextAt = u.nextCount(u.AutoRetryLoops, b.AutoRetryLoopsPerDay)
		case CodeDailyAgentTime:
			x.NextAt = u.nextSum(func(e Exec) float64 { return float64(e.Duration) }, float64(b.AgentTimePerDay))
		case CodeDailyCost:
			x.NextAt = u.nextSum(func(e Exec) float64 { return e.Cost }, b.CostPerDay)
		case CodeDailyTokens:
			x.NextAt = u.nextSum(func(e Exec) float64 { return float64(e.Tokens) }, float64(b.TokensPerDay))
		case CodeDailyIssuesFiled:
			x.NextAt = u.nextCount(u.Filed, b.IssuesFiledPerDay)
		}
	}
	return out
}

// budgetOf is the figure of the daily budget with reason code c.
func budgetOf(in Inputs, c Code) Budget {
	for _, b := range Budgets(in.Config, in.Usage) {
		if b.Code == c {
			return b
		}
	}
	return Budget{Code: c}
}

// budgetVerdict is the rule of daily budget b: value and limit are its
// figures as the verdict shows them (value also names what was spent).
func budgetVerdict(b Budget, in Inputs, value, limit func(float64) string) Verdict {
	v := Verdict{Rule: b.Code, Value: value(b.Used) + " in the last 24h", Limit: "off"}
	if b.Limit <= 0 {
		return v
	}
	v.Limit = limit(b.Limit) + " per 24h"
	if !b.Spent {
		return v
	}
	return budgetSpent(v, in, b.NextAt, value(b.Used), limit(b.Limit))
}

// countOf shows a count of what.
func countOf(what string) func(float64) string {
	return func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) + " " + what }
}

func plain(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func budgetHint(in Inputs) string {
	return "wait, or raise the limit in [budget] of config.toml; '" + in.inv() + " explain' shows what was spent"
}

func ruleDailyLoops(in Inputs) Verdict {
	return budgetVerdict(budgetOf(in, CodeDailyLoops), in, countOf("loop command executions"), plain)
}

func ruleDailyAutoRetries(in Inputs) Verdict {
	return budgetVerdict(budgetOf(in, CodeDailyAutoRetries), in, countOf("auto-retry loops"), plain)
}

func ruleDailyAgentTime(in Inputs) Verdict {
	seconds := func(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
	return budgetVerdict(budgetOf(in, CodeDailyAgentTime), in,
		func(f float64) string { return seconds(f).Round(time.Second).String() + " of loop command time" },
		func(f float64) string { return seconds(f).String() })
}

func ruleDailyCost(in Inputs) Verdict {
	cost := func(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) }
	v := budgetVerdict(budgetOf(in, CodeDailyCost), in, func(f float64) string { return "cost " + cost(f) }, cost)
	v.Value = cost(in.Usage.Cost()) + " spent in the last 24h"
	return v
}

func ruleMaxLoops(in Inputs) Verdict {
	limit := in.Config.Loop.MaxLoops
	v := Verdict{Rule: CodeMaxLoops, Value: fmt.Sprintf("%d loop(s) in this run", in.RunLoops), Limit: fmt.Sprintf("%d per run", limit)}
	if in.RunLoops < limit {
		return v
	}
	v.Stop = true
	v.Reason = fmt.Sprintf("max loops (%d) reached for this run", limit)
	v.Hint = "raise [loop] max_loops, or look at why the issues keep coming back"
	return v
}

func ruleRunCap(in Inputs) Verdict {
	limit := in.Config.AutoRetry.GlobalCap
	v := Verdict{Rule: CodeRunCap, Value: fmt.Sprintf("%d auto-retry loop(s) in this run", in.State.TotalAutoRetries),
		Limit: fmt.Sprintf("%d per run", limit)}
	if in.State.TotalAutoRetries < limit {
		return v
	}
	v.Stop = true
	v.Reason = fmt.Sprintf("Max auto-retries (%d) reached for this run", limit)
	v.Hint = "look at the issues; the next run starts with a fresh cap"
	return v
}

// NoProgressVerdict is the no-progress rule: auto-retry loops in a row
// without progress (no fewer failing tests, no check newly passing) against
// [progress] loops ([stall] loops, its older name). It replaces the stall
// rule, which counted loops that resolved nothing.
func NoProgressVerdict(loops int, halted []string, cfg *config.Config, inv string) Verdict {
	inv = invocation(inv)
	limit := cfg.NoProgressLoops()
	v := Verdict{Rule: CodeNoProgress, Value: fmt.Sprintf("%d auto-retry loop(s) in a row without progress", loops),
		Limit: fmt.Sprintf("%d in a row", limit)}
	if limit <= 0 || loops < limit {
		return v
	}
	v.Stop = true
	v.Reason = fmt.Sprintf("no progress: %d auto-retry loops in a row fixed no failing test", loops)
	if len(halted) > 0 {
		v.Reason += fmt.Sprintf(" (%s halted on a repeated failure)", strings.Join(halted, ", "))
	}
	v.Hint = "read the issues' Failure Details; '" + inv + " fix ID \"…\"' gives the agent guidance"
	return v
}

// CascadeVerdict is the cascade rule: new failures (new issues, or failures
// of issues other than the retried ones) in each of the last auto-retry
// loops, against [cascade] threshold within window loops.
func CascadeVerdict(perLoop []int, cfg *config.Config) Verdict {
	w := perLoop
	if len(w) > cfg.Cascade.Window {
		w = w[len(w)-cfg.Cascade.Window:]
	}
	n := 0
	for _, x := range w {
		n += x
	}
	v := Verdict{Rule: CodeCascade, Value: fmt.Sprintf("%d new failure(s) in the last %d auto-retry loop(s)", n, len(w)),
		Limit: fmt.Sprintf("%d within %d loops", cfg.Cascade.Threshold, cfg.Cascade.Window)}
	if cfg.Cascade.Threshold <= 0 || n < cfg.Cascade.Threshold {
		return v
	}
	v.Stop = true
	v.Reason = fmt.Sprintf("cascade: %d new failures in the last %d auto-retry loops", n, len(w))
	v.Hint = "the fixes are breaking other things; review the architecture or dependencies before continuing"
	return v
}

// MaxRetries returns the retry limit of an issue: its own Max-Retries, else
// the default for its Type, else the global default.
func MaxRetries(cfg *config.Config, is *issuequeue.Issue) int {
	if is.HasMaxRetries {
		return is.MaxRetries
	}
	return cfg.MaxRetriesFor(is.Type)
}

// IssueVerdict says why one issue will or will not be retried.
type IssueVerdict struct {
	ID      string `json:"id"`
	Retry   bool   `json:"retry"`
	Code    Code   `json:"code,omitempty"` // why it is escalated now
	Because string `json:"because"`
}

// issueVerdict applies the per-issue rules to an auto-retry candidate.
func issueVerdict(in Inputs, is *issuequeue.Issue) IssueVerdict {
	v := IssueVerdict{ID: is.ID}
	if code, because := Halt(HaltFacts{Issue: is.ID, Failure: in.Usage.lastFailure(is), Usage: in.Usage}, in.Config); code != "" {
		v.Code, v.Because = code, because
		return v
	}
	if m := MaxRetries(in.Config, is); is.RetryCount >= m {
		v.Code = CodeMaxRetries
		v.Because = fmt.Sprintf("Retry-Count %d reached Max-Retries %d", is.RetryCount, m)
		return v
	}
	v.Retry = true
	v.Because = fmt.Sprintf("attempt %d of %d", is.RetryCount+1, MaxRetries(in.Config, is))
	return v
}

func ruleDailyTokens(in Inputs) Verdict {
	v := budgetVerdict(budgetOf(in, CodeDailyTokens), in, countOf("tokens"), plain)
	v.Value = fmt.Sprintf("%d tokens reported in the last 24h", in.Usage.Tokens())
	return v
}

// ruleWindowShare stops loops while the agent's last report of its
// provider's usage window says that [budget] window_share of it is used,
// until that window resets: the rest is kept for people.
func ruleWindowShare(in Inputs) Verdict {
	share := in.Config.Budget.WindowShare
	v := Verdict{Rule: CodeWindowShare, Value: "no usage window reported", Limit: "off"}
	if share > 0 {
		v.Limit = fmt.Sprintf("%.0f%% of the window", share*100)
	}
	last, ok := in.Usage.LastWindow()
	if !ok {
		return v
	}
	v.Value = fmt.Sprintf("%.0f%% of the window used", last.WindowUsed*100)
	if !last.WindowReset.IsZero() {
		v.Value += ", resets " + last.WindowReset.UTC().Format(time.RFC3339)
	}
	if share <= 0 || last.WindowUsed < share || last.WindowReset.IsZero() || !in.Now.Before(last.WindowReset) {
		return v
	}
	v.Stop, v.Wait, v.Until = true, true, last.WindowReset
	v.Reason = fmt.Sprintf("the agent has used %.0f%% of its usage window (limit %.0f%%); it resets at %s",
		last.WindowUsed*100, share*100, clock(last.WindowReset, in.Now))
	v.Hint = "runs before then exit 0 without running the agent; raise [budget] window_share to let loops use more of it"
	return v
}

// Reason codes of the progress rules: what the loops did to the workspace
// and to the failing tests.
const (
	CodeNoProgress Code = "no_progress" // auto-retry loops in a row without progress: the run stops
	CodeNoChange   Code = "no_change"   // auto-retry loops in a row left the workspace as they found it: the issue halts
	CodeCycle      Code = "cycle"       // a loop returned the workspace to a state that had failed: the issue halts
)

// NoChangeVerdict is the no-change rule: auto-retry loops in a row that
// left the workspace as they found it against [progress] idle_loops.
func NoChangeVerdict(idle int, cfg *config.Config, inv string) Verdict {
	inv = invocation(inv)
	limit := cfg.Progress.IdleLoops
	v := Verdict{Rule: CodeNoChange, Value: fmt.Sprintf("%d auto-retry loop(s) in a row left the workspace as it was", idle),
		Limit: fmt.Sprintf("%d in a row", limit)}
	if limit <= 0 || !cfg.Progress.Enabled {
		v.Limit = "off"
		return v
	}
	if idle < limit {
		return v
	}
	v.Stop = true
	v.Reason = fmt.Sprintf("no change: %d auto-retry loops in a row left the workspace as they found it", idle)
	v.Hint = "the agent is not working on the issue: look at its loop logs, then answer with '" + inv + " fix ID \"…\"' or '" + inv + " skip ID'"
	return v
}

// CycleVerdict is the cycle rule: loop returned the workspace to the state
// it was in before loop earlier, in which the issues had failed (0: it did
// not).
func CycleVerdict(loop, earlier int, cfg *config.Config, inv string) Verdict {
	inv = invocation(inv)
	v := Verdict{Rule: CodeCycle, Value: "no return to a failed state", Limit: "the first return to a failed state"}
	if !cfg.Progress.Enabled {
		v.Limit = "off"
		return v
	}
	if earlier <= 0 {
		return v
	}
	v.Value = fmt.Sprintf("loop %d returned to the state before loop %d", loop, earlier)
	v.Stop = true
	v.Reason = fmt.Sprintf("cycle: loop %d put the workspace back as it was before loop %d, when the issue had failed", loop, earlier)
	v.Hint = "the agent goes round in a circle between fixes that fail: '" + inv + " diff' shows what it changed; answer with '" + inv + " fix ID \"…\"'"
	return v
}

// ProgressHalt returns the progress rule that halts a loop's issues, if
// any: a cycle wins, then no change. A loop that progressed is never halted.
func ProgressHalt(p LoopProgress, idle int, cfg *config.Config, inv string) *Verdict {
	if p.Verdict == ProgressProgressed {
		return nil
	}
	if v := CycleVerdict(p.Loop, p.CycledTo, cfg, inv); v.Stop {
		return &v
	}
	if v := NoChangeVerdict(idle, cfg, inv); v.Stop {
		return &v
	}
	return nil
}

// Reason codes of a spent shared budget ([shared_budget]): the budget
// several state directories share.
const (
	CodeSharedLoops       Code = "shared_daily_loops"        // [shared_budget] loops_per_day spent
	CodeSharedAutoRetries Code = "shared_daily_auto_retries" // [shared_budget] auto_retry_loops_per_day spent
	CodeSharedAgentTime   Code = "shared_daily_agent_time"   // [shared_budget] agent_time_per_day spent
	CodeSharedCost        Code = "shared_daily_cost"         // [shared_budget] cost_per_day spent
	CodeSharedTokens      Code = "shared_daily_tokens"       // [shared_budget] tokens_per_day spent
)

// sharedRules are the shared budget's rules for a loop of the given kind.
func sharedRules(kind string) []func(Inputs) Verdict {
	rules := []func(Inputs) Verdict{ruleSharedLoops, ruleSharedAgentTime, ruleSharedCost, ruleSharedTokens}
	if kind == KindAutoRetry {
		rules = append(rules, ruleSharedAutoRetries)
	}
	return rules
}

// SharedVerdicts evaluates the shared budget's rules alone, for a loop of
// the given kind; none when in.Shared is nil.
func SharedVerdicts(in Inputs, kind string) []Verdict {
	if in.Shared == nil {
		return nil
	}
	var out []Verdict
	for _, r := range sharedRules(kind) {
		out = append(out, r(in))
	}
	return out
}

// sharedBudgetRule is one shared limit: used against limit (0: off), worded
// by show; next is when it frees up once spent.
func sharedBudgetRule(in Inputs, code Code, key string, used, limit float64, show func(float64) string, next func() time.Time) Verdict {
	v := Verdict{Rule: code, Value: show(used) + " in the last 24h, shared by every project naming " + in.Shared.Dir, Limit: "off"}
	if limit <= 0 {
		return v
	}
	v.Limit = show(limit) + " per 24h"
	if used < limit {
		return v
	}
	at := next()
	v.Stop, v.Until = true, at
	v.Reason = fmt.Sprintf("shared daily budget spent: %s in the last 24h (limit %s, [shared_budget] %s, shared in %s); next loop possible at %s",
		show(used), show(limit), key, in.Shared.Dir, clock(at, in.Now))
	v.Hint = "wait, or raise the limit in [shared_budget] of every config.toml that names " + in.Shared.Dir +
		"; '" + in.inv() + " fleet explain DIR…' shows which projects spent it"
	return v
}

func countShow(what string) func(float64) string {
	return func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) + " " + what }
}

func ruleSharedLoops(in Inputs) Verdict {
	u, limit := in.Shared, in.Config.SharedBudget.LoopsPerDay
	return sharedBudgetRule(in, CodeSharedLoops, "loops_per_day", float64(u.Loops()), float64(limit), countShow("loop command executions"),
		func() time.Time { return u.nextAt(func(SharedEntry) float64 { return 1 }, float64(limit)) })
}

func ruleSharedAutoRetries(in Inputs) Verdict {
	u, limit := in.Shared, in.Config.SharedBudget.AutoRetryLoopsPerDay
	return sharedBudgetRule(in, CodeSharedAutoRetries, "auto_retry_loops_per_day", float64(u.AutoRetryLoops()), float64(limit), countShow("auto-retry loops"),
		func() time.Time {
			return u.nextAt(func(e SharedEntry) float64 {
				if e.Kind == KindAutoRetry && e.Attempt <= 1 {
					return 1
				}
				return 0
			}, float64(limit))
		})
}

func ruleSharedAgentTime(in Inputs) Verdict {
	u, limit := in.Shared, in.Config.SharedBudget.AgentTimePerDay
	show := func(f float64) string { return time.Duration(f).Round(time.Second).String() + " of loop command time" }
	return sharedBudgetRule(in, CodeSharedAgentTime, "agent_time_per_day", float64(u.AgentTime()), float64(limit), show,
		func() time.Time {
			return u.nextAt(func(e SharedEntry) float64 { return float64(time.Duration(e.DurationMS) * time.Millisecond) }, float64(limit))
		})
}

func ruleSharedCost(in Inputs) Verdict {
	u, limit := in.Shared, in.Config.SharedBudget.CostPerDay
	show := func(f float64) string { return "cost " + strconv.FormatFloat(f, 'f', 2, 64) }
	return sharedBudgetRule(in, CodeSharedCost, "cost_per_day", u.Cost(), limit, show,
		func() time.Time { return u.nextAt(func(e SharedEntry) float64 { return e.Cost }, limit) })
}

func ruleSharedTokens(in Inputs) Verdict {
	u, limit := in.Shared, in.Config.SharedBudget.TokensPerDay
	return sharedBudgetRule(in, CodeSharedTokens, "tokens_per_day", float64(u.Tokens()), float64(limit), countShow("tokens"),
		func() time.Time {
			return u.nextAt(func(e SharedEntry) float64 { return float64(e.Tokens) }, float64(limit))
		})
}

// ruleDailyIssuesFiled is [budget] issues_filed_per_day: issues filed from
// inside loops in the last 24 hours. A loop that files what it was given
// again under new IDs floods the queue; the run stops and a person looks.
func ruleDailyIssuesFiled(in Inputs) Verdict {
	v := budgetVerdict(budgetOf(in, CodeDailyIssuesFiled), in, countOf("issues filed from loops"), plain)
	if v.Stop {
		v.Hint = filedHint(in.inv())
	}
	return v
}

// filedHint is the hint of a spent issues_filed_per_day, for the stop and
// for a refused add.
func filedHint(inv string) string {
	return "look at what the loops file ('" + inv + " status'); wait, or raise [budget] issues_filed_per_day in config.toml"
}

// budgetSpent stops v until next because a daily [budget] limit is reached;
// spent and limit are the amounts as the reason names them.
func budgetSpent(v Verdict, in Inputs, next time.Time, spent, limit string) Verdict {
	v.Stop, v.Until = true, next
	v.Reason = fmt.Sprintf("daily budget spent: %s in the last 24h (limit %s); next loop possible at %s", spent, limit, clock(next, in.Now))
	v.Hint = budgetHint(in)
	return v
}

// Reason codes of the rules on when loops start and how fast they spend.
const (
	// CodeOutsideActiveHours: outside [schedule] active_hours no loop
	// starts; a loop running when they end finishes.
	CodeOutsideActiveHours Code = "outside_active_hours"
	// CodeWindowPace: [budget] window_pace, the agent used more of a usage
	// window than the share of it elapsed plus windowPaceSlack.
	CodeWindowPace Code = "window_pace"
	// CodeBudgetUnreadable: the event log the budgets count from cannot
	// be read, so what was spent is unknown.
	CodeBudgetUnreadable Code = "budget_unreadable"
)

// activeHours is the configured schedule; nil when loops start at any
// hour.
func activeHours(cfg *config.Config) (*schedule.Schedule, error) {
	if len(cfg.Schedule.ActiveHours) == 0 {
		return nil, nil
	}
	return schedule.Parse(cfg.Schedule.ActiveHours, cfg.Schedule.Timezone)
}

// wallTime shows t on the wall clock of the active hours' zone, with its
// day: the next start may be days away.
func wallTime(t time.Time) string { return t.Format("Mon Jan 2 15:04 MST") }

// ruleActiveHours is [schedule] active_hours: a loop starts only inside
// them. It gates the start of every loop, the auto-retry loops of a run
// included; a loop that is running when they end finishes.
func ruleActiveHours(in Inputs) Verdict {
	v := Verdict{Rule: CodeOutsideActiveHours, Value: "no active hours: loops start at any hour", Limit: "off"}
	s, err := activeHours(in.Config)
	if err != nil {
		v.Value, v.Stop = err.Error(), true
		v.Reason = "the active hours cannot be read: " + err.Error()
		v.Hint = "fix [schedule] in config.toml; '" + in.inv() + " lint' checks it"
		return v
	}
	if s == nil {
		return v
	}
	v.Limit = "loops start within " + s.String()
	next := s.Next(in.Now)
	if next.Equal(in.Now) {
		v.Value = "inside the active hours at " + wallTime(next)
		return v
	}
	v.Value = "outside the active hours at " + wallTime(in.Now.In(next.Location()))
	v.Stop, v.Wait, v.Until = true, true, next
	v.Reason = fmt.Sprintf("outside the active hours (%s); the next loop may start at %s", s, wallTime(next))
	v.Hint = "runs before then exit 0 without running a loop; '" + in.inv() + " run --ignore-schedule' runs once anyway"
	return v
}

// liftsInActiveHours moves the end of a stop that lifts by itself outside
// the active hours to their next start: no loop starts before both allow
// it.
func liftsInActiveHours(v Verdict, in Inputs) Verdict {
	if v.Until.IsZero() || v.Rule == CodeOutsideActiveHours {
		return v
	}
	s, err := activeHours(in.Config)
	if err != nil || s == nil || s.Active(v.Until) {
		return v
	}
	v.Until = s.Next(v.Until)
	v.Reason += "; that is outside the active hours: the next loop may start at " + wallTime(v.Until)
	return v
}

// ruleBudgetReadable fails closed: when the event log the budgets count
// from cannot be read (a line in its middle that is not an event), what
// was spent is unknown, and it is never taken as nothing. A last line
// torn by a crash is not read and does not stop.
func ruleBudgetReadable(in Inputs) Verdict {
	v := Verdict{Rule: CodeBudgetUnreadable, Value: "the event log reads", Limit: "no loop while it cannot be read"}
	le := in.Usage.Unreadable
	if le == nil {
		return v
	}
	v.Value, v.Stop = le.Error(), true
	if le.Line == 0 {
		v.Reason = fmt.Sprintf("the budgets' record %s cannot be read (%v); what was spent is unknown", le.File, le.Err)
		v.Hint = "make " + le.File + " readable by the user running '" + in.inv() + "'; '" + in.inv() + " doctor' checks the setup"
		return v
	}
	v.Reason = fmt.Sprintf("the budgets' record cannot be read: line %d of %s is not an event; what was spent is unknown", le.Line, le.File)
	v.Hint = fmt.Sprintf("fix or delete line %d of %s (each line is one JSON object the tool wrote); '%s explain' shows the budgets once it reads",
		le.Line, le.File, in.inv())
	return v
}

// windowPaceSlack is how far ahead of the share of a usage window elapsed
// [budget] window_pace lets the share used run.
const windowPaceSlack = 0.2

// windowLengths are the usage windows whose length is known, by the name
// the agent gives them: the share elapsed is measured against it.
var windowLengths = map[string]time.Duration{
	"five_hour": 5 * time.Hour,
	"seven_day": 7 * 24 * time.Hour,
}

// windowLength is the length of the usage window named name; 0 when
// unknown. Weekly windows of one model ("seven_day_opus") are a week too.
func windowLength(name string) time.Duration {
	if strings.HasPrefix(name, "seven_day") {
		return windowLengths["seven_day"]
	}
	return windowLengths[name]
}

// ruleWindowPace is [budget] window_pace: for every usage window the agent
// last reported, a loop starts only while the share used is at most the
// share of the window elapsed plus windowPaceSlack. The window that allows
// the next loop last decides.
func ruleWindowPace(in Inputs) Verdict {
	v := Verdict{Rule: CodeWindowPace, Value: "no usage window with a known length reported", Limit: "off"}
	if in.Config.Budget.WindowPace {
		v.Limit = fmt.Sprintf("used at most elapsed + %.0f%% of each window", windowPaceSlack*100)
	}
	var shown []string
	var worst WindowReport
	var worstElapsed float64
	for _, w := range in.Usage.Windows(in.Now) {
		length := windowLength(w.Name)
		if length <= 0 {
			continue
		}
		elapsed := min(1, max(0, 1-float64(w.Reset.Sub(in.Now))/float64(length)))
		shown = append(shown, fmt.Sprintf("%s: %.0f%% used, %.0f%% elapsed", w.Name, w.Used*100, elapsed*100))
		if w.Used <= elapsed+windowPaceSlack {
			continue
		}
		// The share elapsed reaches used - slack at allowed.
		allowed := w.Reset.Add(-time.Duration((1 - (w.Used - windowPaceSlack)) * float64(length)))
		if worst.Name == "" || allowed.After(v.Until) {
			worst, worstElapsed, v.Until = w, elapsed, allowed
		}
	}
	if len(shown) > 0 {
		v.Value = strings.Join(shown, "; ")
	}
	if !in.Config.Budget.WindowPace || worst.Name == "" {
		v.Until = time.Time{}
		return v
	}
	v.Stop, v.Wait = true, true
	v.Reason = fmt.Sprintf("ahead of pace: the agent has used %.0f%% of its %s usage window with %.0f%% of it elapsed (allowed: elapsed + %.0f%%); the next loop may start at %s",
		worst.Used*100, worst.Name, worstElapsed*100, windowPaceSlack*100, clock(v.Until, in.Now))
	v.Hint = "runs before then exit 0 without running the agent; set [budget] window_pace = false to let loops spend the window faster"
	return v
}
