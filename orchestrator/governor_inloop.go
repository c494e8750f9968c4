package orchestrator

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/config"
)

// The rules that hold while a loop runs, and the reserve a loop start
// needs. A daily budget is not only checked between loops: the runner reads
// the agent's reports as its output streams and asks DuringLoop, on each
// report and when the agent time left runs out, whether the loop may go on;
// a loop that falls silent for [loop] idle_timeout is stopped as hung; and
// [budget] reserve keeps a loop from starting when what is left of a budget
// is less than a typical loop spends. A loop stopped by these rules is the
// machine's doing, not its issues': it is cut (see Cut), and its issues are
// given back.

// CodeHung is a loop that printed nothing for [loop] idle_timeout: stopped,
// not charged to its issues, and a failed loop for the circuit breaker.
const CodeHung Code = "hung"

// LoopSpend is what a running loop has spent so far, as its agent reported
// it while it streams.
type LoopSpend struct {
	Tokens int64         // input plus output, cache reads not counted
	Cost   float64       // what the agent stated so far; 0 before
	Time   time.Duration // wall time since the loop started
	// WindowUsed and WindowReset are the agent's last report of its
	// provider's usage window in this loop; 0 when it made none.
	WindowUsed  float64
	WindowReset time.Time
}

// InLoop are the facts the rules that hold during a loop decide on.
type InLoop struct {
	Config *config.Config
	Now    time.Time
	Usage  Usage        // the event log's last 24 hours before the loop
	Shared *SharedUsage // the shared budget's, when [shared_budget] names a directory; nil: not checked
	Spend  LoopSpend
	// Issues are the issues the loop runs for, and Ledger what their loops
	// spent before it (nil: not read): the per-issue caps and the spend
	// since progress hold during the loop too, the loop's spend counting in
	// full for each.
	Issues []string
	Ledger *IssueLedger
	// Invocation is how a person runs the tool, for hints.
	Invocation string
}

// issueSpend is what issue id's loops have spent with the running loop's
// spend so far added.
func (in InLoop) issueSpend(id string) IssueSpend {
	s := in.Ledger.Of(id)
	loop := Spend{Cost: in.Spend.Cost, Tokens: in.Spend.Tokens, AgentTime: in.Spend.Time}
	s.Total.add(loop)
	s.SinceProgress.add(loop)
	return s
}

// issueRules are the per-issue limits a running loop meets, for each of its
// issues: its caps and its spend since progress, without the reserve (which
// gates a loop's start). The first that stops, for any issue, stops it.
func issueRules(in InLoop) []Verdict {
	if in.Ledger == nil {
		return nil
	}
	var vs []Verdict
	for _, id := range in.Issues {
		vs = append(vs, SpendVerdicts(id, in.issueSpend(id), Spend{}, false, in.Config, in.Invocation)...)
	}
	return vs
}

// withSpend is the inputs of the gate's rules as they would stand if the
// loop ended now: its spend added to the day's as one more execution.
func (in InLoop) withSpend() Inputs {
	s := in.Spend
	u := in.Usage
	u.Execs = append(slices.Clone(u.Execs), Exec{At: in.Now, Duration: s.Time, Cost: s.Cost, Tokens: s.Tokens,
		WindowUsed: s.WindowUsed, WindowReset: s.WindowReset})
	gin := Inputs{Usage: u, Config: in.Config, Now: in.Now, Invocation: in.Invocation}
	if in.Shared != nil {
		sh := *in.Shared
		sh.Entries = append(slices.Clone(sh.Entries), SharedEntry{Time: in.Now, DurationMS: s.Time.Milliseconds(), Cost: s.Cost, Tokens: s.Tokens})
		gin.Shared = &sh
	}
	return gin
}

// duringRules are the rules a running loop meets, in order: the daily
// budgets a loop's spend grows (not the counts of loops, which its start
// already met), the shared ones, the usage window. Per-issue limits on what
// the loop's issues spent join here, as rules over the same inputs.
func duringRules(in InLoop) []func(Inputs) Verdict {
	rules := []func(Inputs) Verdict{ruleDailyTokens, ruleDailyCost, ruleDailyAgentTime}
	if in.Shared != nil {
		rules = append(rules, ruleSharedTokens, ruleSharedCost, ruleSharedAgentTime)
	}
	return append(rules, ruleWindowShare)
}

// DuringLoop decides whether a running loop may go on: each budget's figure
// with what the loop has spent so far added reaches its limit, and the loop
// is stopped with that budget's code. It returns every verdict and the
// first that stops, if any.
func DuringLoop(in InLoop) (all []Verdict, stop *Verdict) {
	gin := in.withSpend()
	var vs []Verdict
	for _, r := range duringRules(in) {
		vs = append(vs, r(gin))
	}
	for _, v := range append(vs, issueRules(in)...) {
		if v.Stop {
			tail := "; the loop was stopped and its issues are pending again, not charged"
			if v.Issue != "" {
				tail = "; the loop was stopped and " + v.Issue + " is halted" // as the check would halt it
			}
			v.Reason = "during the loop, " + v.Reason + tail
			if stop == nil {
				s := v
				stop = &s
			}
		}
		all = append(all, v)
	}
	return all, stop
}

// AgentTimeLeft is how much longer the loop may run before its wall time
// reaches an agent time budget (its own, the shared one, or a per-issue
// one of its issues); ok is false when none is set.
func AgentTimeLeft(in InLoop) (left time.Duration, ok bool) {
	earliest := func(l time.Duration) {
		if !ok || l < left {
			left = l
		}
		ok = true
	}
	if in.Ledger != nil {
		for _, id := range in.Issues {
			s := in.Ledger.Of(id)
			if l := in.Config.Budget.IssueAgentTime; l > 0 {
				earliest(l - s.Total.AgentTime - in.Spend.Time)
			}
			if l := in.Config.Progress.SpendAgentTime; l > 0 {
				earliest(l - s.SinceProgress.AgentTime - in.Spend.Time)
			}
		}
	}
	if l := in.Config.Budget.AgentTimePerDay; l > 0 {
		earliest(l - in.Usage.AgentTime() - in.Spend.Time)
	}
	if in.Shared != nil {
		if l := in.Config.SharedBudget.AgentTimePerDay; l > 0 {
			earliest(l - in.Shared.AgentTime() - in.Spend.Time)
		}
	}
	return max(left, 0), ok
}

// stopHung stops a run whose loop printed nothing for idle.
func stopHung(loop int, idle time.Duration, loopLogs string, threshold int) *StopError {
	return &StopError{Code: CodeHung,
		Reason: fmt.Sprintf("loop %d printed nothing for %s ([loop] idle_timeout) and was stopped; its issues are pending again, not charged", loop, idle),
		Hint: "look at the end of its output in " + loopLogs + "; a hung loop counts as failed for the circuit breaker (" +
			strconv.Itoa(threshold) + " in a row open it); raise [loop] idle_timeout if the agent is silent that long on purpose"}
}

// reserveLoops is how many of the latest executions a typical loop is the
// median of, and reserveMin how many must be recorded for a reserve to
// apply.
const (
	reserveLoops = 10
	reserveMin   = 3
)

// typicalSpend is the median of f over the latest reserveLoops executions,
// and whether enough were recorded for it to mean anything.
func typicalSpend(u Usage, f func(Exec) float64) (float64, bool) {
	es := slices.Clone(u.Execs)
	slices.SortStableFunc(es, func(a, b Exec) int { return a.At.Compare(b.At) })
	if len(es) > reserveLoops {
		es = es[len(es)-reserveLoops:]
	}
	if len(es) < reserveMin {
		return 0, false
	}
	xs := make([]float64, len(es))
	for i, e := range es {
		xs[i] = f(e)
	}
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2], true
	}
	return (xs[n/2-1] + xs[n/2]) / 2, true
}

// reserveRules are the [budget] reserve rules, one per budget a loop's
// spend grows; loops count 1 each, which a budget not yet spent has left.
var reserveRules = []func(Inputs) Verdict{ruleReserveTokens, ruleReserveCost, ruleReserveAgentTime}

func ruleReserveTokens(in Inputs) Verdict {
	return reserveVerdict(in, CodeDailyTokens, func(e Exec) float64 { return float64(e.Tokens) }, kilo, " tokens")
}

func ruleReserveCost(in Inputs) Verdict {
	return reserveVerdict(in, CodeDailyCost, func(e Exec) float64 { return e.Cost },
		func(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) }, " in cost")
}

func ruleReserveAgentTime(in Inputs) Verdict {
	return reserveVerdict(in, CodeDailyAgentTime, func(e Exec) float64 { return e.Duration.Seconds() },
		func(f float64) string { return time.Duration(f * float64(time.Second)).Round(time.Second).String() }, " of agent time")
}

// kilo shows a count as a person reads it: 950, 41k, 1.2M.
func kilo(f float64) string {
	switch {
	case f >= 1e6:
		return strconv.FormatFloat(f/1e6, 'f', 1, 64) + "M"
	case f >= 1e4:
		return strconv.FormatFloat(f/1e3, 'f', 0, 64) + "k"
	}
	return strconv.FormatFloat(f, 'f', 0, 64)
}

// reserveVerdict is the reserve of the daily budget with code c: no loop
// starts when what is left of it is below what a typical loop spends (the
// median of f over the latest executions, in the budget's own figure;
// show writes an amount, unit follows a typical loop's). A budget already
// spent is its own rule's stop, not the reserve's.
func reserveVerdict(in Inputs, c Code, f func(Exec) float64, show func(float64) string, unit string) Verdict {
	b := budgetOf(in, c)
	v := Verdict{Rule: c, Value: "reserve: off", Limit: "off"}
	if !in.Config.Budget.Reserve || b.Limit <= 0 {
		return v
	}
	v.Value = "reserve: fewer than 3 loops recorded in the last 24h"
	v.Limit = "a typical loop's spend left of " + b.Key
	typical, ok := typicalSpend(in.Usage, f)
	if !ok {
		return v
	}
	left := max(b.Limit-b.Used, 0)
	v.Value = fmt.Sprintf("reserve: a typical loop uses %s%s; %s left", show(typical), unit, show(left))
	if b.Spent || left >= typical {
		return v
	}
	v.Stop = true
	v.Reason = fmt.Sprintf("a typical loop uses %s%s; %s are left of %s %s, so a loop would not finish",
		show(typical), unit, show(left), b.Key, show(b.Limit))
	v.Hint = budgetHint(in) + "; [budget] reserve = false lets a loop start on what is left"
	if typical >= b.Limit {
		v.Reason += ", even on a whole day's budget"
		return v
	}
	if v.Until = in.Usage.nextSum(f, b.Limit-typical); !v.Until.IsZero() {
		v.Reason += "; next loop possible at " + clock(v.Until, in.Now)
	}
	return v
}

// LoopLimits are the rules that hold while a loop runs, as explain shows
// them: the daily and shared budgets and the usage window, checked on each
// of the agent's reports, and [loop] idle_timeout. They stop nothing here.
func LoopLimits(in Inputs) []Verdict {
	cfg := in.Config
	b, sb := cfg.Budget, cfg.SharedBudget
	out := []Verdict{}
	add := func(c Code, key string, on bool, limit string) {
		v := Verdict{Rule: c, Value: "checked on each of the agent's reports during a loop", Limit: "off"}
		if on {
			v.Limit = key + " " + limit + ": the loop is stopped once the last 24h with its spend reach it"
		}
		out = append(out, v)
	}
	add(CodeDailyTokens, "tokens_per_day", b.TokensPerDay > 0, strconv.Itoa(b.TokensPerDay))
	add(CodeDailyCost, "cost_per_day", b.CostPerDay > 0, strconv.FormatFloat(b.CostPerDay, 'f', 2, 64))
	add(CodeDailyAgentTime, "agent_time_per_day", b.AgentTimePerDay > 0, b.AgentTimePerDay.String())
	if sb.Dir != "" {
		add(CodeSharedTokens, "[shared_budget] tokens_per_day", sb.TokensPerDay > 0, strconv.Itoa(sb.TokensPerDay))
		add(CodeSharedCost, "[shared_budget] cost_per_day", sb.CostPerDay > 0, strconv.FormatFloat(sb.CostPerDay, 'f', 2, 64))
		add(CodeSharedAgentTime, "[shared_budget] agent_time_per_day", sb.AgentTimePerDay > 0, sb.AgentTimePerDay.String())
	}
	add(CodeWindowShare, "window_share", b.WindowShare > 0, fmt.Sprintf("%.0f%%", b.WindowShare*100))
	for _, l := range append(issueCaps(cfg), progressSpendLimits(cfg)...) {
		v := Verdict{Rule: l.code, Value: "checked for each of the loop's issues on the agent's reports", Limit: "off"}
		if l.limit > 0 {
			v.Limit = l.key + " " + l.m.show(l.limit) + ": the loop is stopped once an issue's spend with the loop's reaches it"
		}
		out = append(out, v)
	}
	idle := Verdict{Rule: CodeHung, Value: "a loop's silence is timed while it runs", Limit: "off"}
	if t := cfg.Loop.IdleTimeout; t > 0 {
		idle.Limit = "no output for " + t.String() + " stops the loop (idle_timeout)"
	}
	return append(out, idle)
}
