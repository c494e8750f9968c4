package orchestrator

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The stops of a run, a check or a recorded failure, built from the facts
// the runner and the commands report. Their codes, wording and hints are
// written here and nowhere else, so that a run, a check and a command stop
// for one cause with one message.

// StopError ends a run or a check that a rule stopped. Code is its stable
// reason code, Hint says what to do next. Wait marks a stop where nothing is
// wrong (a rate-limit window, a pause): exit 0 for a run, not 3.
type StopError struct {
	Code   Code
	Reason string
	Hint   string
	Wait   bool
	Until  time.Time
}

func (e *StopError) Error() string { return Stopped(e.Code, e.Reason) }

// Stopped words a stop with reason code c: "stopped (c): reason". Every
// stop is worded so, whether it ends a run or a check or explain and a dry
// run foresee it; its hint follows on a line of its own, "hint: …".
func Stopped(c Code, reason string) string { return "stopped (" + string(c) + "): " + reason }

// NeedsPerson reports whether a stop, halt or escalation with reason code c
// waits for a person's answer. A pause and a rate-limit window do not:
// nothing is wrong, and they lift by themselves or by the person who chose
// them, nor a share of the agent's usage window kept for people, nor the
// hours outside the active ones, nor a pace ahead of the window; nor does
// an abort, which a person asked for. Every other code does.
func NeedsPerson(c Code) bool {
	switch c {
	case "", CodePaused, CodeRateLimited, CodeAborted, CodeWindowShare, CodeOutsideActiveHours, CodeWindowPace:
		return false
	}
	return true
}

// Event is the event log's record of the stop: its reason code as the
// reason, and the reason in words as the error.
func (e *StopError) Event(at time.Time, runID string) Event {
	return Event{Time: at, Event: EvStopped, RunID: runID, Code: e.Code, Reason: string(e.Code), Error: e.Reason, Until: e.Until}
}

// StopFor turns a stopping verdict into the error that ends a run or a check.
func StopFor(v *Verdict) *StopError {
	return &StopError{Code: v.Rule, Reason: v.Reason, Hint: v.Hint, Wait: v.Wait, Until: v.Until}
}

// againHint is the hint of a run a person stopped; inv is how they run
// the tool.
func againHint(inv string) string { return "run '" + inv + " run' again when ready" }

// answerHint is the hint of issues that need a person's answer: id, or
// ID for any of them.
func answerHint(inv, id string) string {
	return "'" + inv + " retry " + id + "', '" + inv + " fix " + id + " \"…\"' or '" + inv + " skip " + id + "'"
}

// stopAbortedDuring stops a run aborted while a loop ran.
func stopAbortedDuring(loop int, inv string) *StopError {
	return &StopError{Code: CodeAborted, Reason: fmt.Sprintf("aborted during loop %d; its issues are pending again", loop), Hint: againHint(inv)}
}

// stopAbortedAfter stops a run aborted between loops.
func stopAbortedAfter(loop int, inv string) *StopError {
	return &StopError{Code: CodeAborted, Reason: fmt.Sprintf("aborted after loop %d; no further loop starts", loop), Hint: againHint(inv)}
}

// stopPermanent stops a run whose loop failed in a way retrying cannot fix;
// pattern is what in its output said so.
func stopPermanent(pattern string) *StopError {
	return &StopError{Code: CodePermanentError, Reason: fmt.Sprintf("the loop failed with a permanent error (%s)", pattern),
		Hint: "fix the cause (credentials, permissions, the command itself), then run again"}
}

// stopSentinel stops a run when no_auto_retry (at path) appears while it
// runs.
func stopSentinel(path string) *StopError {
	return &StopError{Code: CodeSentinel, Reason: "the sentinel file no_auto_retry exists: no further loop starts",
		Hint: "remove " + path + " to let auto-retry run again"}
}

// stopRateLimited stops a run whose loop hit a rate limit that resets at
// until, later than [backoff] max_wait; pattern is what in its output said
// so.
func stopRateLimited(until, now time.Time, pattern string) *StopError {
	until = until.UTC().Truncate(time.Second)
	return &StopError{Code: CodeRateLimited, Wait: true, Until: until,
		Reason: "rate-limited until " + clock(until, now) + " (the loop hit a rate limit: " + pattern + ")",
		Hint:   "runs before then exit 0 without running the agent; nothing to do"}
}

// stopBreakerOpened stops a run whose failed loop opened the circuit
// breaker until until: failed loops in a row, or the failed trial loop of a
// half-open breaker.
func stopBreakerOpened(failed int, halfOpen bool, until, now time.Time, loopLogs, invocation string) *StopError {
	why := fmt.Sprintf("%d failed loops in a row", failed)
	if halfOpen {
		why = "the half-open trial loop failed"
	}
	return &StopError{Code: CodeBreakerOpen, Until: until,
		Reason: fmt.Sprintf("circuit breaker opened: %s; no run starts until %s", why, clock(until, now)),
		Hint:   "look at the loop's output in " + loopLogs + "; to retry sooner, fix the cause and run '" + invocation + " breaker reset'",
	}
}

// stopGuard stops a run whose loop changed protected state; what names
// each change.
func stopGuard(loop int, what []string) *StopError {
	return &StopError{Code: CodeGuard,
		Reason: fmt.Sprintf("loop %d changed what the limits depend on, other than through orchestrator commands: %s", loop, strings.Join(what, "; ")),
		Hint:   "a person changes these between runs, or with orchestrator's own commands (retry, skip, fix, resume, breaker reset); see the README's loop guard section"}
}

// stopGaveUp ends a run with nothing left to retry that halted or
// escalated the issues gaveUp; code is the first one's reason code.
func stopGaveUp(code Code, gaveUp []string, inv string) *StopError {
	if code == "" {
		code = CodeMaxRetries
	}
	return &StopError{Code: code, Reason: fmt.Sprintf("nothing left to retry, but a person is needed for %s (halted or out of retries)", strings.Join(gaveUp, ", ")),
		Hint: "answer with " + answerHint(inv, "ID")}
}

// stopLoopFailed ends a run whose last loop's command failed (how says in
// what way), so that an agent that crashes every time does not look fine to
// cron.
func stopLoopFailed(loop int, how, loopLogs string, threshold int) *StopError {
	return &StopError{Code: CodeLoopFailed, Reason: fmt.Sprintf("the loop command failed in loop %d (%s)", loop, how),
		Hint: "look at its output in " + loopLogs + "; " + strconv.Itoa(threshold) + " failed loops in a row open the circuit breaker"}
}

// StopHalted is the stop of a recorded failure that halted issue id: code
// says which rule halted it, repeats how often the failure came in a row;
// inv is how a person runs the tool.
func StopHalted(id string, code Code, repeats int, inv string) *StopError {
	why := fmt.Sprintf("the same failure %d times in a row", repeats)
	switch code {
	case CodeRepeatedAcross:
		why = "the same failure as under other issues"
	case CodeOscillation:
		why = "its last 4 attempts alternate between two failures"
	case CodeIssueCost, CodeIssueTokens, CodeIssueAgentTime:
		why = "what its loops spent reached [budget] " + string(code)
	case CodeNoProgressSpend:
		why = "what its loops spent since a loop last progressed on it reached a [progress] spend_* limit"
	}
	return &StopError{Code: code, Reason: fmt.Sprintf("%s halted: %s", id, why),
		Hint: "a person is needed: " + answerHint(inv, id)}
}

// stopAgentAuth stops a run whose agent's provider refused its credentials
// or access (text is what the agent said): no clock lifts it, and it is the
// machine's fault, not the issues'.
func stopAgentAuth(text string) *StopError {
	return &StopError{Code: CodePermanentError, Reason: fmt.Sprintf("the loop failed with a permanent error (%s)", text),
		Hint: "fix the cause: the agent's provider refused its credentials or access; log the agent in again, or fix its API key or plan, then run again (the issues it worked on are pending, nothing was counted against them)"}
}

// stopAgentUnavailable stops a run whose agent's provider was still
// unavailable (what says how) after tries runs: a window until until, in
// which runs exit 0 without running the agent.
func stopAgentUnavailable(what string, tries int, until, now time.Time) *StopError {
	until = until.UTC().Truncate(time.Second)
	return &StopError{Code: CodeRateLimited, Wait: true, Until: until,
		Reason: fmt.Sprintf("rate-limited until %s (the agent's provider was still %s after %d tries)", clock(until, now), what, tries),
		Hint:   "runs before then exit 0 without running the agent; nothing to do"}
}

// escalationVerdict is the stop of a check that escalated issues and has
// nothing left to retry.
func escalationVerdict(d Decision, inv string) *Verdict {
	v := &Verdict{Rule: CodeMaxRetries, Stop: true, Hint: "answer the escalation: " + answerHint(inv, "ID")}
	var parts []string
	if n := len(d.Exhausted); n > 0 {
		parts = append(parts, fmt.Sprintf("%d issue(s) used all their retries and were escalated", n))
	}
	across := 0
	for _, iv := range d.Issues {
		switch {
		case iv.Retry || iv.Code == CodeMaxRetries || iv.Code == "":
		case iv.Code == CodeRepeatedAcross:
			across++
		default:
			if len(d.Exhausted) == 0 && v.Rule == CodeMaxRetries {
				v.Rule = iv.Code
			}
			parts = append(parts, iv.ID+" halted: "+iv.Because)
		}
	}
	if across > 0 {
		if len(d.Exhausted) == 0 {
			v.Rule = CodeRepeatedAcross
		}
		parts = append(parts, fmt.Sprintf("%d issue(s) fail the same way as an issue halted on that failure and were escalated", across))
	}
	v.Reason = strings.Join(parts, "; ")
	return v
}

// progressHaltReason is what the escalation of an issue halted by a
// progress rule says.
func progressHaltReason(code Code) string {
	if code == CodeCycle {
		return "the loops went back to a state that had already failed"
	}
	return "the loops stopped changing the workspace"
}
