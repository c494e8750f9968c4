package orchestrator

import (
	"time"

	"github.com/autoretry/orchestrator/internal/adapters/agentout"
)

// What a loop's agent said about itself. The loop's output is read as it
// streams by an agentout.Reader ([agent] kind); its report gives the cost
// the daily budget counts, the tokens recorded with the execution, and the
// failures that belong to the machine — a usage or rate limit, an
// overloaded provider, refused credentials — which are never charged to the
// issues the loop worked on. What the agent says of its own success decides
// nothing: verification does.

// classAuth is a loop whose agent's provider refused its credentials.
const classAuth = "auth"

// agentReader returns the reader for the output of one execution of the
// loop command, started at started, or nil where [agent] kind is none.
func (r *Runner) agentReader(started time.Time) *agentout.Reader {
	k, err := agentout.ParseKind(r.O.Config.Agent.Kind)
	if err != nil || k == agentout.KindNone {
		return nil
	}
	return agentout.NewReader(k, started, time.Local)
}

// agentReport is the report of a reader that may be nil.
func agentReport(ar *agentout.Reader) agentout.Report {
	if ar == nil {
		return agentout.Report{Agent: agentout.KindNone}
	}
	return ar.Report()
}

// agentFailure is the machine's failure an agent reported for one execution.
type agentFailure struct {
	class string    // classAuth, classRateLimit, classTransient; "" for none
	what  string    // the agent's words, for progress lines and stops
	until time.Time // when a limit lifts; zero when the agent did not say
}

// agentFailureOf reads a report for a failure of the machine rather than of
// the work: refused credentials, a usage or rate limit, an overload. After
// a loop that exited 0 (a loop script may, after its agent failed) only the
// failures no agent gets past within a run count, a usage limit and
// refused credentials: agents retry rate limits and overloads themselves,
// and one they got past is no failure.
func agentFailureOf(rep agentout.Report, exitCode int) agentFailure {
	if !rep.Error {
		return agentFailure{}
	}
	if exitCode == 0 && rep.ErrorKind != agentout.ErrUsageLimit && rep.ErrorKind != agentout.ErrAuth {
		return agentFailure{}
	}
	switch rep.ErrorKind {
	case agentout.ErrAuth:
		return agentFailure{class: classAuth, what: "authentication refused"}
	case agentout.ErrUsageLimit, agentout.ErrRateLimit:
		f := agentFailure{class: classRateLimit, what: rep.ErrorKind}
		if rep.Limit != nil {
			f.until = rep.Limit.Until
			if rep.Limit.Text != "" {
				f.what = rep.ErrorKind + ": " + rep.Limit.Text
			}
		}
		return f
	case agentout.ErrOverloaded:
		return agentFailure{class: classTransient, what: "overloaded"}
	}
	return agentFailure{}
}

// state says what a machine failure left the provider, for a stop.
func (f agentFailure) state() string {
	if f.class == classTransient {
		return "overloaded"
	}
	return "rate-limited"
}

// agentCause is the agent's own word for why a failed loop failed, where it
// gave one that is the work's, not the machine's: its turn limit, its
// spending cap, another error.
func agentCause(rep agentout.Report) string {
	switch rep.ErrorKind {
	case agentout.ErrMaxTurns:
		return "the agent stopped at its turn limit (max_turns)"
	case agentout.ErrBudget:
		return "the agent stopped at its own spending cap (budget)"
	case agentout.ErrExecution:
		return "the agent reported an error (execution)"
	}
	return ""
}

// withAgent adds to a loop execution's event what its agent reported.
func withAgent(ev Event, rep agentout.Report) Event {
	if t := rep.Tokens; t.Known() {
		ev.Tokens = &EventTokens{Input: t.Input, Output: t.Output, CacheRead: t.CacheRead, CacheWrite: t.CacheWrite, CacheInInput: cacheInInput(rep)}
	}
	ev.AgentError = rep.ErrorKind
	if w := rep.Window; w != nil && w.Used != nil {
		ev.WindowUsed, ev.WindowReset = *w.Used, w.ResetsAt
	}
	for _, w := range rep.Windows {
		if w.Used != nil {
			ev.Windows = append(ev.Windows, WindowReport{Name: w.Name, Used: *w.Used, Reset: w.ResetsAt})
		}
	}
	if rep.Agent != agentout.KindNone {
		ev.Agent = string(rep.Agent)
	}
	return ev
}

// execCost returns the cost of one execution: the cost the agent stated,
// else what the loop wrote to $ORCHESTRATOR_COST_FILE or printed in the
// cost pattern's form. One source counts, never two.
func (r *Runner) execCost(rep agentout.Report, tail []byte, costPath string) float64 {
	if rep.CostUSD != nil && *rep.CostUSD >= 0 {
		return *rep.CostUSD
	}
	return r.loopCost(tail, costPath)
}

// budgetTokens are the tokens of a report the budgets count: input plus
// output as the agent stated them, without cache reads.
func budgetTokens(rep agentout.Report) int64 {
	t := rep.Tokens
	return t.Input - cacheInInput(rep) + t.Output
}

// cacheInInput is the part of a report's input count that is cache reads:
// Codex and Gemini count cached tokens in their input, Claude Code and
// opencode apart from it.
func cacheInInput(rep agentout.Report) int64 {
	t := rep.Tokens
	if (rep.Agent == agentout.KindCodex || rep.Agent == agentout.KindGemini) && t.HasCacheRead && t.CacheRead <= t.Input {
		return t.CacheRead
	}
	return 0
}
