package orchestrator

import (
	"fmt"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/config"
)

// The stop order of a run. The runner executes a loop and gathers what
// happened as facts; AfterLoop, one pure function of them, says what comes
// next: verify, run the check, run another loop, or end, and with which
// stop. It is asked again as the runner learns more (after the
// verification, after the check), so the order in which the rules apply is
// written here once. DecideExec does the same for one execution of the
// loop command: run it again after a transient failure, end the loop, or
// cut it short.

// Cut is why a rule cut a loop short before it ended on its own: its
// issues' attempt did not happen, and is given back.
type Cut struct {
	Rule        *Verdict  // a rule a re-run met (a spent budget)
	Auth        bool      // the agent's provider refused its credentials
	Limited     time.Time // a rate limit lifts then, later than [backoff] max_wait
	Unavailable string    // the agent's provider was still in this state (overloaded, rate-limited) after Tries tries
	Tries       int
	Sentinel    bool   // no_auto_retry appeared during a backoff
	What        string // what in the output said so
	// Hung is how long the loop had printed nothing when [loop]
	// idle_timeout stopped it; 0 when it did not.
	Hung time.Duration
}

// ExecFacts are how one execution of the loop command ended.
type ExecFacts struct {
	Try      int
	Aborted  bool // abort, SIGINT or SIGTERM
	TimedOut bool
	// Stopped is the rule that stopped the execution while it ran
	// (DuringLoop: a budget its spend reached); Idle the [loop]
	// idle_timeout that stopped it for silence (0: none did).
	Stopped  *Verdict
	Idle     time.Duration
	ExitCode int
	// Class is the failure's class (ResultPermanent, classAuth,
	// classRateLimit, classTransient; "" for an ordinary failure), and
	// What what said so. Agent marks a class the agent itself reported:
	// the machine's failure, in state AgentState, lifting at Until if it
	// said when.
	Class, What string
	Agent       bool
	AgentState  string
	Until       time.Time
	// Hint is the wait a "retry after" or "resets at" in the output asks
	// for, when HasHint.
	Hint    time.Duration
	HasHint bool
	Now     time.Time
	Jitter  float64 // in [0, 1)
}

// ExecStep is what follows an execution: the loop ends with Result, or a
// rule cuts it short (Cut), or it runs again after Wait (try Try+1 of
// Limit).
type ExecStep struct {
	Result string
	Cut    *Cut
	Wait   time.Duration
	Limit  int
}

// DecideExec decides what follows one execution of the loop command.
// Transient failures and rate limits run it again after backoff, up to
// [backoff] attempts (rate_limit_attempts); a reset further away than
// max_wait, or the agent's provider still failing after the last try, cuts
// the loop short: the machine's failure, not charged to the issues.
func DecideExec(x ExecFacts, cfg *config.Config) ExecStep {
	switch {
	case x.Aborted:
		return ExecStep{Result: ResultAborted}
	case x.Stopped != nil:
		// A budget reached while it ran: the machine's limit, not the
		// issues' attempt.
		return ExecStep{Cut: &Cut{Rule: x.Stopped}}
	case x.Idle > 0:
		return ExecStep{Cut: &Cut{Hung: x.Idle}}
	case x.TimedOut:
		return ExecStep{Result: ResultTimeout}
	case x.ExitCode == 0 && !x.Agent:
		return ExecStep{Result: ResultOK}
	}
	switch x.Class {
	case classAuth:
		return ExecStep{Cut: &Cut{Auth: true, What: x.What}}
	case ResultPermanent:
		return ExecStep{Result: ResultPermanent}
	case classTransient, classRateLimit:
	default:
		return ExecStep{Result: ResultFailed}
	}
	limit := cfg.Backoff.Attempts
	if x.Class == classRateLimit {
		limit = cfg.Backoff.RateLimitAttempts
	}
	d := backoffDelay(cfg.Backoff, x.Try, x.Jitter)
	if !x.Until.IsZero() {
		// The agent said when its limit lifts: a window until then, or a
		// wait as short.
		hint := x.Until.Sub(x.Now)
		if hint > cfg.Backoff.MaxWait {
			return ExecStep{Cut: &Cut{Limited: x.Until, What: x.What}}
		}
		d = max(d, hint)
	} else if x.HasHint {
		if x.Class == classRateLimit && x.Hint > cfg.Backoff.MaxWait {
			return ExecStep{Cut: &Cut{Limited: x.Now.Add(x.Hint), What: x.What}}
		}
		d = max(d, x.Hint)
	}
	if x.Try >= limit && x.Agent {
		// Still the machine's failure after every try: the issues are not
		// charged with it; no loop for a while.
		return ExecStep{Cut: &Cut{Unavailable: x.AgentState, Tries: x.Try, Limited: x.Now.Add(cfg.Backoff.MaxWait), What: x.What}}
	}
	if x.Try >= limit {
		return ExecStep{Result: ResultFailed, Limit: limit}
	}
	return ExecStep{Wait: d, Limit: limit}
}

// LoopFacts are what the runner knows about a loop of a run when it asks
// AfterLoop what comes next. Each group is filled in as it becomes known.
type LoopFacts struct {
	Config     *config.Config
	Now        time.Time
	Invocation string // how a person runs the tool, for hints
	Dir        string // the state directory as the person named it
	Loop       int
	Kind       string

	// How the loop ended: Result (ResultOK, ResultFailed, ResultTimeout,
	// ResultAborted, ResultPermanent, with the exit code and what said
	// an error was permanent), or a rule cut it short; the changes the
	// loop guard undid and that stop the run.
	Result   string
	ExitCode int
	Pattern  string
	Cut      *Cut
	Guard    []string

	// Its verification and what followed it, once Verified.
	Verified      bool
	VerifyAborted bool
	Halted        []string // issues its failures halted
	Breaker       BreakerFacts
	Progress      LoopProgress
	Idle          int    // auto-retry loops in a row that changed nothing
	NoProgress    int    // auto-retry loops in a row without progress
	Cascade       []int  // new failures in each auto-retry loop of the run
	Usage         *Usage // the event log's last 24 hours, when issues_filed_per_day is on

	// The end-of-loop check's decision, once it ran; the issues the run
	// gave up on (halted or escalated) and the reason code of the first;
	// the shared budget's last 24 hours, read when the check retries and
	// [shared_budget] names a directory.
	Check      *Decision
	GaveUp     []string
	GaveUpCode Code
	Shared     *SharedUsage

	// Read whenever the runner asks: no_auto_retry exists, the run was
	// aborted.
	Sentinel bool
	Aborted  bool
}

// BreakerFacts are the circuit breaker after a loop: whether the loop
// opened it (failed loops in a row, or the failed trial of a half-open
// breaker) and until when.
type BreakerFacts struct {
	State    string
	Opened   bool
	HalfOpen bool
	Failures int
	Until    time.Time
}

// BreakerOpens reports whether failures failed loops in a row open the
// circuit breaker: [circuit_breaker] threshold of them, or one failed trial
// loop of a half-open breaker.
func BreakerOpens(failures int, halfOpen bool, cfg *config.Config) bool {
	return failures >= cfg.CircuitBreaker.Threshold || halfOpen && failures > 0
}

// Next is what the runner does after a verdict.
type Next int

const (
	NextEnd    Next = iota // the run ends: with Stop, or completed
	NextVerify             // verify the loop's issues
	NextCheck              // run the end-of-loop check
	NextLoop               // run the loop the check claimed issues for
)

// Settle says what becomes of the issues a loop worked on, or that the
// check claimed, when the run ends.
type Settle int

const (
	SettleNone     Settle = iota
	SettlePending         // in_progress issues go back to pending; their attempt counted
	SettleRelease         // the attempt did not happen: given back
	SettleEscalate        // escalated to a person (a permanent error)
)

// LoopStep is AfterLoop's answer.
type LoopStep struct {
	Next   Next
	Stop   *StopError // why the run ends, when it ends stopped
	Halt   *Verdict   // a progress rule halts the loop's unresolved issues
	Settle Settle
	Window bool // Stop opens a rate-limit window
	// Breaker counts the loop as failed for the circuit breaker, when a
	// cut loop skips the verification that would count it.
	Breaker bool
	Result  string // the loop's result as recorded, when it is not the facts'
}

// AfterLoop decides what comes after a loop, from what is known of it. The
// order below is the order in which the stops apply.
func AfterLoop(f LoopFacts) LoopStep {
	switch {
	case len(f.Guard) > 0:
		// Nothing the loop claims is believed: no verification.
		return LoopStep{Stop: stopGuard(f.Loop, f.Guard), Settle: SettlePending}
	case f.Cut != nil:
		return cutVerdict(f)
	case f.Result == ResultAborted || f.VerifyAborted:
		return LoopStep{Stop: stopAbortedDuring(f.Loop, f.inv()), Settle: SettlePending, Result: ResultAborted}
	case f.Result == ResultPermanent:
		return LoopStep{Stop: stopPermanent(f.Pattern), Settle: SettleEscalate}
	case !f.Verified:
		return LoopStep{Next: NextVerify}
	case f.Check == nil:
		return afterVerify(f)
	}
	return afterCheck(f)
}

// cutVerdict ends a run whose loop a rule cut short: its issues' attempt
// is given back.
func cutVerdict(f LoopFacts) LoopStep {
	c := f.Cut
	v := LoopStep{Settle: SettleRelease, Result: ResultFailed}
	switch {
	case c.Rule != nil:
		v.Stop = StopFor(c.Rule)
		if c.Rule.Issue != "" && isSpendCode(c.Rule.Rule) {
			v.Halt = c.Rule // an issue's own limit: it is halted, as the check would
		}
	case c.Hung > 0:
		v.Stop, v.Breaker = stopHung(f.Loop, c.Hung, PathsIn(f.Dir).LoopLogs(), f.Config.CircuitBreaker.Threshold), true
	case c.Auth:
		v.Stop, v.Result = stopAgentAuth(c.What), ResultPermanent // the agent's credentials were refused
	case c.Sentinel:
		v.Stop = stopSentinel(PathsIn(f.Dir).Sentinel())
	case c.Unavailable != "":
		v.Stop = stopAgentUnavailable(c.Unavailable, c.Tries, c.Limited, f.Now)
	default:
		v.Stop = stopRateLimited(c.Limited, f.Now, c.What)
	}
	v.Window = v.Stop.Code == CodeRateLimited
	return v
}

// afterVerify decides after a loop's verification: a progress halt of its
// issues, then the stops in order, else the check.
func afterVerify(f LoopFacts) LoopStep {
	cfg := f.Config
	v := LoopStep{Next: NextCheck}
	auto := f.Kind == KindAutoRetry
	if auto {
		v.Halt = ProgressHalt(f.Progress, f.Idle, cfg, f.inv())
	}
	b := f.Breaker
	switch {
	case b.Opened:
		v.Stop = stopBreakerOpened(b.Failures, b.HalfOpen, b.Until, f.Now, PathsIn(f.Dir).LoopLogs(), f.inv())
	case f.Usage != nil && filedStop(f) != nil:
		v.Stop = filedStop(f)
	case auto && v.Halt == nil && NoProgressVerdict(f.NoProgress, f.Halted, cfg, f.inv()).Stop:
		// A halt by a progress rule is the loop's verdict: the check ends
		// the run with its code when nothing is left to retry.
		nv := NoProgressVerdict(f.NoProgress, f.Halted, cfg, f.inv())
		v.Stop = StopFor(&nv)
	case auto && CascadeVerdict(f.Cascade, cfg).Stop:
		cv := CascadeVerdict(f.Cascade, cfg)
		v.Stop = StopFor(&cv)
	default:
		return between(f, v)
	}
	v.Next = NextEnd
	return v
}

// filedStop is the issues_filed_per_day stop after a loop, if spent.
func filedStop(f LoopFacts) *StopError {
	v := ruleDailyIssuesFiled(Inputs{Usage: *f.Usage, Config: f.Config, Now: f.Now, Invocation: f.Invocation, Dir: f.Dir})
	if !v.Stop {
		return nil
	}
	return StopFor(&v)
}

// afterCheck decides after the end-of-loop check: the run ends when it
// retries nothing (stopped, if a person is needed or the last loop
// failed), else the next loop runs.
func afterCheck(f LoopFacts) LoopStep {
	d := f.Check
	end := LoopStep{}
	switch d.Outcome {
	case CheckNothing:
		switch {
		case d.Stop != nil && len(d.WouldQualify) > 0:
			end.Stop = StopFor(d.Stop) // a pause or a rate-limit window: nothing is wrong
		case len(f.GaveUp) > 0:
			// Nothing left to retry, but the run gave up on something: a
			// cron mail must say so.
			end.Stop = stopGaveUp(f.GaveUpCode, f.GaveUp, f.inv())
		case f.Result == ResultFailed || f.Result == ResultTimeout:
			// The run is over and its last loop's command failed: an agent
			// that crashes every time must not look fine to cron.
			how := fmt.Sprintf("exited with status %d", f.ExitCode)
			if f.Result == ResultTimeout {
				how = "timed out after " + f.Config.Loop.Timeout.String()
			}
			end.Stop = stopLoopFailed(f.Loop, how, PathsIn(f.Dir).LoopLogs(), f.Config.CircuitBreaker.Threshold)
		}
		return end
	case CheckHuman:
		end.Stop = StopFor(d.Stop)
		return end
	}
	return between(f, LoopStep{Next: NextLoop})
}

// between applies the stops that keep the next step from starting: the
// sentinel, an abort, and, before a claimed loop, a shared budget that
// other projects spent meanwhile.
func between(f LoopFacts, v LoopStep) LoopStep {
	switch {
	case f.Sentinel:
		v.Stop = stopSentinel(PathsIn(f.Dir).Sentinel())
	case f.Aborted:
		// Its verdicts are recorded; nothing is claimed for a loop that
		// will not run.
		v.Stop, v.Settle = stopAbortedAfter(f.Loop, f.inv()), SettlePending
	case f.Check != nil && f.Shared != nil:
		in := Inputs{Config: f.Config, Now: f.Now, Shared: f.Shared, Invocation: f.Invocation, Dir: f.Dir}
		for _, sv := range SharedVerdicts(in, KindAutoRetry) {
			if sv.Stop {
				v.Stop, v.Settle = StopFor(&sv), SettleRelease
				break
			}
		}
		if v.Stop == nil {
			return v
		}
	default:
		return v
	}
	v.Next = NextEnd
	return v
}

func (f LoopFacts) inv() string { return invocation(f.Invocation) }
