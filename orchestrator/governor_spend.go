package orchestrator

import (
	"fmt"
	"strconv"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/config"
)

// What one issue's loops may spend: the per-issue caps over its life
// ([budget] issue_cost, issue_tokens, issue_agent_time, with [budget]
// reserve) and its spend since a loop last progressed on it ([progress]
// spend_cost, spend_tokens, spend_agent_time). Each is a rule over the
// issue's figures in the event log (IssueLedger); Halt halts an issue on
// the first that stops.

// Reason codes of an issue halted on what its loops spent.
const (
	CodeIssueCost       Code = "issue_cost"        // [budget] issue_cost spent by the issue's loops since its allowance started
	CodeIssueTokens     Code = "issue_tokens"      // [budget] issue_tokens spent likewise
	CodeIssueAgentTime  Code = "issue_agent_time"  // [budget] issue_agent_time spent likewise
	CodeNoProgressSpend Code = "no_progress_spend" // [progress] spend_* spent since a loop last progressed on the issue
)

// isSpendCode reports whether an issue halted with code on what its loops
// spent, not on a failure: such a halt says nothing about other issues
// with the same failure.
func isSpendCode(c Code) bool {
	switch c {
	case CodeIssueCost, CodeIssueTokens, CodeIssueAgentTime, CodeNoProgressSpend:
		return true
	}
	return false
}

// spendMeasure is one dimension of spend, as the rules show it.
type spendMeasure struct {
	of   func(Spend) float64
	show func(float64) string
}

var (
	measureCost   = spendMeasure{func(s Spend) float64 { return s.Cost }, func(f float64) string { return "$" + strconv.FormatFloat(f, 'f', 2, 64) }}
	measureTokens = spendMeasure{func(s Spend) float64 { return float64(s.Tokens) }, func(f float64) string { return plain(f) + " tokens" }}
	measureTime   = spendMeasure{func(s Spend) float64 { return float64(s.AgentTime) },
		func(f float64) string { return time.Duration(f).Round(time.Second).String() + " of agent time" }}
)

// spendLimit is one limit on an issue's spend: its code, its key in
// config.toml, what it measures and the limit (0: off).
type spendLimit struct {
	code  Code
	key   string
	m     spendMeasure
	limit float64
}

func issueCaps(cfg *config.Config) []spendLimit {
	return []spendLimit{
		{CodeIssueCost, "[budget] issue_cost", measureCost, cfg.Budget.IssueCost},
		{CodeIssueTokens, "[budget] issue_tokens", measureTokens, float64(cfg.Budget.IssueTokens)},
		{CodeIssueAgentTime, "[budget] issue_agent_time", measureTime, float64(cfg.Budget.IssueAgentTime)},
	}
}

func progressSpendLimits(cfg *config.Config) []spendLimit {
	return []spendLimit{
		{CodeNoProgressSpend, "[progress] spend_cost", measureCost, cfg.Progress.SpendCost},
		{CodeNoProgressSpend, "[progress] spend_tokens", measureTokens, float64(cfg.Progress.SpendTokens)},
		{CodeNoProgressSpend, "[progress] spend_agent_time", measureTime, float64(cfg.Progress.SpendAgentTime)},
	}
}

// SpendVerdicts are the rules of what issue id's loops may spend, in the
// order Halt applies them: the three caps over its life, then the three
// limits of its spend since a loop last progressed on it. s is what its
// loops spent; typical what a typical loop of it spends (ok false: no loop
// recorded), which [budget] reserve compares with what is left of a cap.
// inv is how a person runs the tool, for hints.
func SpendVerdicts(id string, s IssueSpend, typical Spend, ok bool, cfg *config.Config, inv string) []Verdict {
	since := "as far back as the event log goes"
	if !s.Since.IsZero() {
		since = "since " + s.Since.UTC().Format(time.RFC3339)
	}
	capHint := fmt.Sprintf("'%s retry %s' gives it a new allowance; or raise the limit in config.toml", invocation(inv), id)
	var vs []Verdict
	for _, l := range issueCaps(cfg) {
		used := l.m.of(s.Total)
		v := Verdict{Rule: l.code, Value: l.m.show(used) + " " + since, Limit: "off", Issue: id}
		if l.limit > 0 {
			v.Limit = l.m.show(l.limit)
			switch left := l.limit - used; {
			case left <= 0:
				v.Stop = true
				v.Reason = fmt.Sprintf("the loops run for %s spent %s %s, at %s %s", id, l.m.show(used), since, l.key, l.m.show(l.limit))
			case cfg.Budget.Reserve && ok && left < l.m.of(typical):
				v.Stop = true
				v.Reason = fmt.Sprintf("a typical loop for %s needs %s and %s is left of %s %s ([budget] reserve)",
					id, l.m.show(l.m.of(typical)), l.m.show(left), l.key, l.m.show(l.limit))
			}
		}
		if v.Stop {
			v.Hint = capHint
		}
		vs = append(vs, v)
	}
	after := "since a loop last progressed on it"
	if s.Progressed.IsZero() {
		after = "with no loop progressing on it " + since
	}
	for _, l := range progressSpendLimits(cfg) {
		used := l.m.of(s.SinceProgress)
		v := Verdict{Rule: l.code, Value: l.m.show(used) + " " + after, Limit: "off", Issue: id}
		if l.limit > 0 {
			v.Limit = l.key + " " + l.m.show(l.limit)
			if used >= l.limit {
				v.Stop = true
				v.Reason = fmt.Sprintf("the loops run for %s spent %s %s, at %s %s", id, l.m.show(used), after, l.key, l.m.show(l.limit))
				v.Hint = fmt.Sprintf("look at what the loops did ('%s diff'); '%s retry %s' or '%s fix %s \"…\"' starts it again",
					invocation(inv), invocation(inv), id, invocation(inv), id)
			}
		}
		vs = append(vs, v)
	}
	return vs
}

// spendHalt is the first of issue h.Issue's spend rules that stops, for
// Halt. For a failure being recorded (h.New) the loop it ends has no
// progress verdict yet: only the caps apply, and the spend since progress
// is judged at the check before the next loop.
func spendHalt(h HaltFacts, cfg *config.Config) *Verdict {
	if h.Usage.Spend == nil {
		return nil
	}
	typical, ok := h.Usage.Spend.Typical(h.Issue)
	for _, v := range SpendVerdicts(h.Issue, h.Usage.Spend.Of(h.Issue), typical, ok, cfg, "") {
		if v.Stop && !(h.New && v.Rule == CodeNoProgressSpend) {
			return &v
		}
	}
	return nil
}
