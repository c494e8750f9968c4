package orchestrator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/autoretry/orchestrator/issuequeue"
	"github.com/autoretry/orchestrator/procgroup"
	"github.com/autoretry/orchestrator/statefile"
	"github.com/autoretry/orchestrator/templates"
)

// Backoff configures the delays before a transient failure's re-execution
// (seed 002): Base·Factor^(n-1), capped at Max, plus up to Jitter of itself.
type Backoff struct {
	Base, Max                   time.Duration
	Factor, Jitter              float64
	Attempts, RateLimitAttempts int // tries in all, the first included
}

// Delay returns the delay before try n+1 after n failed tries (n ≥ 1); r is
// a random number in [0, 1).
func (b Backoff) Delay(n int, r float64) time.Duration {
	d := float64(b.Base) * math.Pow(b.Factor, float64(n-1))
	if d > float64(b.Max) {
		d = float64(b.Max)
	}
	return time.Duration(d + d*b.Jitter*r)
}

// VerifyCheck is a configured verification command.
type VerifyCheck struct {
	Command string
	Timeout time.Duration
}

// RunConfig is what a run needs beyond the check's Policy (SPEC §6, §8).
type RunConfig struct {
	Command            string
	Timeout            time.Duration
	MaxLoops           int
	Backoff            Backoff
	Transient          []string // case-insensitive substrings of the output
	Permanent          []string
	BreakerThreshold   int
	BreakerCooldown    time.Duration
	StallLoops         int
	CascadeThreshold   int
	CascadeWindow      int
	Tiers              Tiers
	Verify             map[string]VerifyCheck
	AllowIssueCommands bool
	TextRetention      time.Duration
	JSONLRetention     time.Duration
	Grace              time.Duration // SIGTERM → SIGKILL; 0 means 10 s
}

// Runner runs loops until the end-of-loop check says stop (SPEC §6).
type Runner struct {
	O   *Orchestrator
	Cfg RunConfig
	// Terminal receives the loop's output as it runs (it is also kept in
	// logs/loops/). Stderr receives progress lines.
	Terminal, Stderr io.Writer
	// Environ is the environment the loop command starts from; nil means
	// os.Environ().
	Environ []string
	// Exec runs a command; nil means procgroup.Run.
	Exec func(context.Context, procgroup.Spec) (procgroup.Result, error)
	// Sleep waits for d or until ctx is done; nil means a timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// Rand returns a number in [0, 1) for jitter; nil means math/rand.
	Rand func() float64
	// AfterLoop, if set, runs after each loop's state is written (metrics).
	AfterLoop func() error
	// Pid is recorded in the run id; 0 means os.Getpid().
	Pid int

	sentinel atomic.Bool
	stats    runStats
}

// StopError ends a run that a safeguard, a person or a permanent error
// stopped (exit 3). Hint says what to do next.
type StopError struct {
	Reason string
	Hint   string
}

func (e *StopError) Error() string { return e.Reason }

// RunReport is the result of a run, for --json and the summary.
type RunReport struct {
	RunID    string   `json:"run_id"`
	Outcome  string   `json:"outcome"` // completed, stopped, aborted
	Reason   string   `json:"reason,omitempty"`
	Loops    int      `json:"loops"`
	Resolved []string `json:"resolved"`
	Halted   []string `json:"halted"`
	Escal    []string `json:"escalated"`
	WallMS   int64    `json:"wall_ms"`
}

type runStats struct {
	touched   []string
	firstOK   map[string]bool
	retried   map[string]bool
	resolved  map[string]bool
	escalated map[string]bool
	halted    map[string]bool
	attempts  map[string]int
	failTypes map[string]int
	summaries map[string]string
}

func newRunStats() runStats {
	return runStats{firstOK: map[string]bool{}, retried: map[string]bool{}, resolved: map[string]bool{}, escalated: map[string]bool{},
		halted: map[string]bool{}, attempts: map[string]int{}, failTypes: map[string]int{}, summaries: map[string]string{}}
}

func (s *runStats) touch(id, summary string) {
	if _, ok := s.summaries[id]; !ok {
		s.touched = append(s.touched, id)
	}
	s.summaries[id] = summary
}

func (r *Runner) now() time.Time { return r.O.now() }

func (r *Runner) sleep(ctx context.Context, d time.Duration) error {
	if r.Sleep != nil {
		return r.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (r *Runner) rand() float64 {
	if r.Rand != nil {
		return r.Rand()
	}
	return rand.Float64()
}

func (r *Runner) exec(ctx context.Context, s procgroup.Spec) (procgroup.Result, error) {
	if r.Exec != nil {
		return r.Exec(ctx, s)
	}
	return procgroup.Run(ctx, s)
}

func (r *Runner) progress(format string, args ...any) {
	if r.Stderr != nil {
		fmt.Fprintf(r.Stderr, "orchestrator: "+format+"\n", args...)
	}
}

// Run performs one run: it opens the run, executes the regular loop and then
// auto-retry loops while the end-of-loop check asks for them, and returns
// its report. A *StopError means a safeguard or a person stopped it.
func (r *Runner) Run(ctx context.Context) (RunReport, error) {
	o := r.O
	start := r.now()
	r.stats = newRunStats()
	pid := r.Pid
	if pid == 0 {
		pid = os.Getpid()
	}
	rep := RunReport{RunID: NewRunID(start, pid), Resolved: []string{}, Halted: []string{}, Escal: []string{}}
	if r.Cfg.Command == "" {
		return rep, fmt.Errorf("no loop command: set [loop] command in config.toml (the script that runs one improvement loop)")
	}
	lk, err := statefile.TryRunLock(o.Dir, statefile.Owner{Command: "run", RunID: rep.RunID, PID: pid})
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return rep, &issuequeue.NoStateDirError{Dir: o.Dir}
		}
		return rep, err
	}
	defer lk.Unlock()
	q, st, err := o.paths().Load()
	if err != nil {
		return rep, err
	}
	if err := q.Err(); err != nil {
		return rep, err
	}
	if err := st.Err(); err != nil {
		return rep, err
	}
	halfOpen := false
	if st.Breaker == issuequeue.BreakerOpen || st.Breaker == issuequeue.BreakerHalfOpen {
		until := st.OpenedAt.Add(r.Cfg.BreakerCooldown)
		if st.Breaker == issuequeue.BreakerOpen && start.Before(until) {
			return rep, &StopError{
				Reason: fmt.Sprintf("circuit breaker open until %s after %d failed loops in a row", until.Local().Format("15:04"), st.ConsecutiveFailures),
				Hint:   "wait for the cooldown, or set state to closed in " + o.paths().State() + " after fixing the cause",
			}
		}
		halfOpen = true
	}

	stopWatch := r.watchSentinel()
	defer stopWatch()

	// Open the run. Pruning the logs happens under the write lock, so no
	// event is appended meanwhile.
	err = o.store().Update(context.WithoutCancel(ctx), func(q *issuequeue.Queue, st *issuequeue.State) (issuequeue.Change, error) {
		edits := ResetRun(rep.RunID, start)
		if halfOpen {
			edits = append(edits, issuequeue.SetField(issuequeue.SectionBreaker, issuequeue.StateBreaker, issuequeue.BreakerHalfOpen))
		}
		return issuequeue.Change{State: edits, After: func() error {
			if err := o.log().Prune(start, r.Cfg.TextRetention, r.Cfg.JSONLRetention); err != nil {
				return err
			}
			pruneLoopLogs(filepath.Join(o.Dir, "logs", "loops"), start.Add(-r.Cfg.TextRetention))
			return o.log().Record(Event{Time: start, Event: EvRunStarted, RunID: rep.RunID})
		}}, nil
	})
	if err != nil {
		return rep, err
	}
	if halfOpen {
		r.progress("circuit breaker half-open: one trial loop decides whether it closes")
	}

	runErr := r.loops(ctx, &rep, halfOpen)
	rep.WallMS = r.now().Sub(start).Milliseconds()
	outcome := "completed"
	var se *StopError
	switch {
	case runErr == nil:
	case errors.As(runErr, &se):
		outcome = "stopped"
		rep.Reason = se.Reason
		if ctx.Err() != nil {
			outcome = "aborted"
		}
	default:
		outcome = "failed"
		rep.Reason = runErr.Error()
	}
	rep.Outcome = outcome
	finish := r.now()
	werr := o.store().Update(context.WithoutCancel(ctx), func(q *issuequeue.Queue, st *issuequeue.State) (issuequeue.Change, error) {
		return issuequeue.Change{State: []issuequeue.Edit{
			issuequeue.SetField(issuequeue.SectionRun, issuequeue.StateFinishedAt, issuequeue.FormatTime(finish)),
			issuequeue.SetField(issuequeue.SectionRun, issuequeue.StateLoops, strconv.Itoa(rep.Loops)),
			issuequeue.SetField(issuequeue.SectionRun, issuequeue.StateOutcome, outcome),
		}, After: func() error {
			return o.log().Record(Event{Time: finish, Event: EvRunFinished, RunID: rep.RunID, Status: outcome, Reason: rep.Reason,
				Loop: rep.Loops, DurationMS: rep.WallMS})
		}}, nil
	})
	if serr := r.printSummary(rep, finish.Sub(start)); serr != nil && werr == nil {
		werr = serr
	}
	if runErr == nil {
		runErr = werr
	}
	return rep, runErr
}

// loops runs the regular loop and the auto-retry loops.
func (r *Runner) loops(ctx context.Context, rep *RunReport, halfOpen bool) error {
	o := r.O
	kind := "regular"
	var retried []string
	stall := 0
	var cascade []int
	for loop := 1; ; loop++ {
		if loop > r.Cfg.MaxLoops {
			return &StopError{Reason: fmt.Sprintf("max loops (%d) reached for this run", r.Cfg.MaxLoops),
				Hint: "raise [loop] max_loops, or look at why the issues keep coming back"}
		}
		if loop > 1 && r.sentinelPresent() {
			return r.sentinelStop()
		}
		if loop > 1 && ctx.Err() != nil {
			return r.abortedAfter(loop - 1)
		}
		rep.Loops = loop
		before, _, err := o.paths().Load()
		if err != nil {
			return err
		}
		res, result, transient, err := r.runLoop(ctx, rep.RunID, loop, kind, retried, before)
		if err != nil {
			return err
		}
		lr := LoopRecord{RunID: rep.RunID, Loop: loop, Kind: kind, Started: res.started, Finished: r.now(), ExitCode: res.ExitCode,
			Result: result, TransientRetries: transient, Issues: retried}
		if result == ResultAborted {
			return r.abortLoop(rep, lr)
		}
		if result == ResultPermanent {
			return r.permanentStop(rep, lr, retried, res)
		}

		vr, err := r.verify(ctx, rep, retried)
		if errors.Is(err, errAborted) {
			lr.Result = ResultAborted
			return r.abortLoop(rep, lr)
		}
		if err != nil {
			return err
		}
		lr.Resolved, lr.Failed, lr.Halted = vr.resolved, vr.failed, vr.halted
		rep.Resolved = append(rep.Resolved, vr.resolved...)
		rep.Halted = append(rep.Halted, vr.halted...)

		after, st, err := r.settle(ctx)
		if err != nil {
			return err
		}
		lr.TotalAutoRetries = st.TotalAutoRetries

		// The circuit breaker counts failed loops in a row (004).
		failed := result != ResultOK
		breaker, stop := r.breakerAfter(ctx, failed, halfOpen, loop)
		lr.Breaker = breaker
		halfOpen = false

		// Stall: auto-retry loops in a row that resolved nothing (004).
		if kind == "auto_retry" {
			if len(vr.resolved) == 0 {
				stall++
			} else {
				stall = 0
			}
		}
		// Cascade: new failures outside the retried issues (001).
		if kind == "auto_retry" {
			cascade = append(cascade, newFailures(before, after, retried))
			if len(cascade) > r.Cfg.CascadeWindow {
				cascade = cascade[1:]
			}
		}
		if err := r.recordLoop(rep, lr); err != nil {
			return err
		}
		if stop != nil {
			return stop
		}
		if r.Cfg.StallLoops > 0 && stall >= r.Cfg.StallLoops {
			reason := fmt.Sprintf("stalled: %d auto-retry loops in a row resolved nothing", stall)
			if len(vr.halted) > 0 {
				reason += fmt.Sprintf(" (%s halted on a repeated failure)", strings.Join(vr.halted, ", "))
			}
			return &StopError{Reason: reason,
				Hint: "read the issues' Failure Details; 'orchestrator fix ID \"…\"' gives the agent guidance"}
		}
		if n := sum(cascade); r.Cfg.CascadeThreshold > 0 && n >= r.Cfg.CascadeThreshold {
			return &StopError{Reason: fmt.Sprintf("cascade: %d new failures in the last %d auto-retry loops", n, len(cascade)),
				Hint: "the fixes are breaking other things; review the architecture or dependencies before continuing"}
		}
		if r.sentinelPresent() {
			return r.sentinelStop()
		}
		// Aborted (abort, SIGTERM) after the loop ended: its verdicts are
		// recorded; nothing is claimed for a loop that will not run.
		if ctx.Err() != nil {
			return r.abortedAfter(loop)
		}

		cr, err := o.Check(context.WithoutCancel(ctx))
		if err != nil {
			return err
		}
		for _, id := range cr.Exhausted {
			rep.Escal = append(rep.Escal, id)
			r.stats.escalated[id] = true
		}
		switch cr.Decision.Outcome {
		case CheckNothing:
			if gaveUp := append(append([]string(nil), rep.Halted...), rep.Escal...); len(gaveUp) > 0 {
				// Nothing left to retry, but the run gave up on something: a
				// cron mail must say so.
				return &StopError{Reason: fmt.Sprintf("nothing left to retry, but a person is needed for %s (halted or out of retries)", strings.Join(gaveUp, ", ")),
					Hint: "answer with 'orchestrator retry ID', 'orchestrator fix ID \"…\"' or 'orchestrator skip ID'"}
			}
			return nil
		case CheckHuman:
			hint := "answer the escalation: 'orchestrator retry ID', 'orchestrator fix ID \"…\"' or 'orchestrator skip ID'"
			if cr.Decision.CapReached {
				hint = "look at the issues; the next run starts with a fresh cap"
			}
			return &StopError{Reason: cr.Reason, Hint: hint}
		}
		kind, retried = "auto_retry", cr.Triggered
		for _, is := range cr.Decision.Triggered {
			r.stats.touch(is.ID, is.Summary())
			r.stats.retried[is.ID] = true
		}
	}
}

type loopResult struct {
	procgroup.Result
	started time.Time
}

var (
	retryAfterRe = regexp.MustCompile(`(?i)retry[- ]after[:= ]+(\d+)\s*(ms|s|sec|seconds|m|min|minutes)?`)
	resetsAtRe   = regexp.MustCompile(`(?i)resets? at (\d{1,2}):(\d{2})`)
)

// runLoop executes the loop command, re-executing it after transient
// failures with backoff (not counted against issues or the cap).
func (r *Runner) runLoop(ctx context.Context, runID string, loop int, kind string, retried []string, q *issuequeue.Queue) (loopResult, string, int, error) {
	o := r.O
	absDir, err := filepath.Abs(o.Dir)
	if err != nil {
		return loopResult{}, "", 0, err
	}
	if err := os.MkdirAll(filepath.Join(absDir, "logs", "loops"), 0o755); err != nil {
		return loopResult{}, "", 0, err
	}
	env := append([]string(nil), r.Environ...)
	if r.Environ == nil {
		env = os.Environ()
	}
	maxAttempt := 0
	for _, id := range retried {
		if is := q.Issue(id); is != nil {
			maxAttempt = max(maxAttempt, is.RetryCount)
		}
	}
	tier, model := r.Cfg.Tiers.Tier(maxAttempt)
	ctxPath := ""
	if kind == "auto_retry" {
		b, err := o.RetryContext(q, retried, r.Cfg.Tiers)
		if err != nil {
			return loopResult{}, "", 0, err
		}
		ctxPath = filepath.Join(absDir, "logs", "loops", fmt.Sprintf("%s-%02d-context.md", runID, loop))
		if err := os.MkdirAll(filepath.Dir(ctxPath), 0o755); err != nil {
			return loopResult{}, "", 0, err
		}
		if err := os.WriteFile(ctxPath, b, 0o644); err != nil {
			return loopResult{}, "", 0, err
		}
		for _, id := range retried {
			if err := o.log().Record(Event{Time: r.now(), Event: EvFeedbackInjected, IssueID: id, RunID: runID, Loop: loop,
				Attempt: maxAttempt, FeedbackLines: bytes.Count(b, []byte{'\n'})}); err != nil {
				return loopResult{}, "", 0, err
			}
		}
	} else {
		tier, model = "", r.Cfg.Tiers.Model
	}
	env = append(env,
		"ORCHESTRATOR_DIR="+absDir,
		"ORCHESTRATOR_RUN_ID="+runID,
		"ORCHESTRATOR_LOOP="+strconv.Itoa(loop),
		"ORCHESTRATOR_LOOP_KIND="+kind,
		"ORCHESTRATOR_ISSUES="+strings.Join(retried, ","),
		"ORCHESTRATOR_RETRY_CONTEXT="+ctxPath,
		"ORCHESTRATOR_RETRY_TIER="+tier,
		"ORCHESTRATOR_MODEL="+model,
	)
	transient := 0
	for try := 1; ; try++ {
		r.progress("loop %d (%s) starting: %s", loop, kind, r.Cfg.Command)
		started := r.now()
		res, err := r.exec(ctx, procgroup.Spec{
			Command: r.Cfg.Command, Dir: filepath.Dir(absDir), Env: env, Timeout: r.Cfg.Timeout, Grace: r.Cfg.Grace,
			Output: r.Terminal, Tail: 64 << 10, LogPath: filepath.Join(absDir, "logs", "loops", fmt.Sprintf("%s-%02d.log", runID, loop)),
		})
		lr := loopResult{Result: res, started: started}
		if err != nil && ctx.Err() != nil {
			return lr, ResultAborted, transient, nil // cancelled before it started
		}
		if err != nil {
			return lr, "", transient, err
		}
		switch {
		case res.Canceled || ctx.Err() != nil:
			return lr, ResultAborted, transient, nil
		case res.TimedOut:
			r.progress("loop %d timed out after %s", loop, r.Cfg.Timeout)
			return lr, ResultTimeout, transient, nil
		case res.ExitCode == 0:
			return lr, ResultOK, transient, nil
		}
		class, pattern := r.classify(res)
		switch class {
		case ResultPermanent:
			r.progress("loop %d failed with a permanent error (%s)", loop, pattern)
			return lr, ResultPermanent, transient, nil
		case "transient":
			limit := r.Cfg.Backoff.Attempts
			rateLimited := isRateLimit(pattern, res.Tail)
			if rateLimited {
				limit = r.Cfg.Backoff.RateLimitAttempts
			}
			if try >= limit {
				r.progress("loop %d: transient failure (%s) persisted after %d tries", loop, pattern, try)
				return lr, ResultFailed, transient, nil
			}
			d := r.Cfg.Backoff.Delay(try, r.rand())
			if hint, ok := retryHint(res.Tail, r.now()); ok && hint > d {
				d = hint
			}
			transient++
			r.progress("loop %d: transient failure (%s); running it again in %s (try %d of %d)", loop, pattern, d.Round(time.Millisecond), try+1, limit)
			if err := o.log().Record(Event{Time: r.now(), Event: EvTransient, RunID: runID, Loop: loop, Attempt: try,
				Reason: pattern, DurationMS: d.Milliseconds()}); err != nil {
				return lr, "", transient, err
			}
			if err := r.sleepWatching(ctx, d); err != nil {
				if errors.Is(err, errSentinel) {
					return lr, "", transient, r.sentinelStop()
				}
				return lr, ResultAborted, transient, nil
			}
			continue
		}
		return lr, ResultFailed, transient, nil
	}
}

// classify matches a failed loop's exit status and output tail against the
// [classify] patterns (002): "transient", ResultPermanent or "".
func (r *Runner) classify(res procgroup.Result) (string, string) {
	if res.ExitCode == 126 || res.ExitCode == 127 {
		return ResultPermanent, "exit status " + strconv.Itoa(res.ExitCode)
	}
	lower := bytes.ToLower(res.Tail)
	for _, p := range r.Cfg.Permanent {
		if p != "" && bytes.Contains(lower, []byte(strings.ToLower(p))) {
			return ResultPermanent, p
		}
	}
	for _, p := range r.Cfg.Transient {
		if p != "" && bytes.Contains(lower, []byte(strings.ToLower(p))) {
			return "transient", p
		}
	}
	return "", ""
}

func isRateLimit(pattern string, tail []byte) bool {
	p := strings.ToLower(pattern)
	return strings.Contains(p, "rate") || strings.Contains(p, "429") || bytes.Contains(bytes.ToLower(tail), []byte("rate limit"))
}

// retryHint reads "retry after N" or "resets at HH:MM" from output; the
// last mention wins. Waits are capped at six hours.
func retryHint(tail []byte, now time.Time) (time.Duration, bool) {
	const maxWait = 6 * time.Hour
	var d time.Duration
	found := false
	if ms := retryAfterRe.FindAllSubmatch(tail, -1); len(ms) > 0 {
		m := ms[len(ms)-1]
		n, _ := strconv.Atoi(string(m[1]))
		unit := time.Second
		switch strings.ToLower(string(m[2])) {
		case "ms":
			unit = time.Millisecond
		case "m", "min", "minutes":
			unit = time.Minute
		}
		d, found = time.Duration(n)*unit, true
	}
	if ms := resetsAtRe.FindAllSubmatch(tail, -1); len(ms) > 0 {
		m := ms[len(ms)-1]
		h, _ := strconv.Atoi(string(m[1]))
		mi, _ := strconv.Atoi(string(m[2]))
		local := now.Local()
		at := time.Date(local.Year(), local.Month(), local.Day(), h, mi, 0, 0, local.Location())
		if !at.After(local) {
			at = at.Add(24 * time.Hour)
		}
		d, found = at.Sub(local), true
	}
	return min(d, maxWait), found
}

var (
	errSentinel = errors.New("sentinel")
	errAborted  = errors.New("aborted")
)

// sleepWatching sleeps d, waking early if the sentinel appears.
func (r *Runner) sleepWatching(ctx context.Context, d time.Duration) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	defer close(done)
	go func() {
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if r.sentinelPresent() {
					cancel()
					return
				}
			}
		}
	}()
	err := r.sleep(ctx, d)
	if err != nil && r.sentinelPresent() {
		return errSentinel
	}
	return err
}

type verifyResult struct{ resolved, failed, halted []string }

// verify runs the Verify check of every in_progress issue and records the
// verdict: exit 0 resolves, anything else is a failure (SPEC §6 step 1).
func (r *Runner) verify(ctx context.Context, rep *RunReport, retried []string) (verifyResult, error) {
	o := r.O
	var vr verifyResult
	q, _, err := o.paths().Load()
	if err != nil {
		return vr, err
	}
	absDir, _ := filepath.Abs(o.Dir)
	for _, is := range q.Issues {
		if is.Status != issuequeue.StatusInProgress || is.Verify == "" {
			continue
		}
		r.stats.touch(is.ID, is.Summary())
		chk, ok := r.Cfg.Verify[is.Verify]
		if !ok {
			if !r.Cfg.AllowIssueCommands {
				r.progress("%s: Verify %q is not a [verify.%s] check in config.toml; commands written in the issue file run only with [verify] allow_issue_commands = true",
					is.ID, is.Verify, is.Verify)
				continue
			}
			chk = VerifyCheck{Command: is.Verify, Timeout: 5 * time.Minute}
		}
		r.progress("%s: verifying with %s", is.ID, chk.Command)
		// The output's signature is of all of it, computed as it comes;
		// its end is kept for Failure Details.
		sw, err := o.NewSignature()
		if err != nil {
			return vr, err
		}
		kept := &tailBuffer{max: MaxKeptOutput}
		res, err := r.exec(ctx, procgroup.Spec{
			Command: chk.Command, Dir: filepath.Dir(absDir), Env: r.verifyEnv(absDir, rep.RunID, is.ID), Timeout: chk.Timeout, Grace: r.Cfg.Grace,
			Output:  io.MultiWriter(sw, kept),
			LogPath: filepath.Join(absDir, "logs", "loops", fmt.Sprintf("%s-%02d-verify-%s.log", rep.RunID, rep.Loops, is.ID)),
		})
		if err != nil {
			return vr, err
		}
		if res.Canceled || ctx.Err() != nil {
			return vr, errAborted // no verdict: the issue goes back to pending
		}
		r.stats.attempts[is.ID]++
		if res.ExitCode == 0 && !res.TimedOut {
			if err := o.Resolve(context.WithoutCancel(ctx), is.ID); err != nil {
				return vr, err
			}
			vr.resolved = append(vr.resolved, is.ID)
			r.stats.resolved[is.ID] = true
			if !r.stats.retried[is.ID] {
				r.stats.firstOK[is.ID] = true
			}
			continue
		}
		typ := FailVerification
		if res.TimedOut {
			typ = FailTimeout
		}
		r.stats.failTypes[typ]++
		// What became of the command ends the output, and counts in its
		// signature: exit status 1 and 2 are different failures.
		w := io.MultiWriter(sw, kept)
		if b := kept.bytes(); len(b) > 0 && b[len(b)-1] != '\n' {
			io.WriteString(w, "\n")
		}
		if res.TimedOut {
			fmt.Fprintf(w, "[verify: %s timed out after %s]\n", chk.Command, chk.Timeout)
		} else {
			fmt.Fprintf(w, "[verify: %s exited with status %d]\n", chk.Command, res.ExitCode)
		}
		fr, err := o.recordFailure(context.WithoutCancel(ctx), is.ID, kept.output(), sw.Sum(), typ)
		if err != nil {
			return vr, err
		}
		vr.failed = append(vr.failed, is.ID)
		if fr.Halted {
			vr.halted = append(vr.halted, is.ID)
			r.stats.halted[is.ID] = true
			r.stats.escalated[is.ID] = true
		}
	}
	return vr, nil
}

func (r *Runner) verifyEnv(absDir, runID, id string) []string {
	env := append([]string(nil), r.Environ...)
	if r.Environ == nil {
		env = os.Environ()
	}
	return append(env, "ORCHESTRATOR_DIR="+absDir, "ORCHESTRATOR_RUN_ID="+runID, "ORCHESTRATOR_ISSUES="+id)
}

// settle puts issues still in_progress with no verdict back to pending
// (their attempt was counted already) and returns the files as they are.
func (r *Runner) settle(ctx context.Context) (*issuequeue.Queue, *issuequeue.State, error) {
	var q *issuequeue.Queue
	var st *issuequeue.State
	err := r.O.store().Update(context.WithoutCancel(ctx), func(cq *issuequeue.Queue, cs *issuequeue.State) (issuequeue.Change, error) {
		q, st = cq, cs
		var edits []issuequeue.Edit
		for _, is := range cq.Issues {
			if is.Status == issuequeue.StatusInProgress {
				edits = append(edits, issuequeue.SetField(is.ID, issuequeue.FieldStatus, issuequeue.StatusPending))
			}
		}
		return issuequeue.Change{Queue: edits}, nil
	})
	return q, st, err
}

// breakerAfter records a loop's success or failure in the circuit breaker
// and returns its state, and a stop if it opened.
func (r *Runner) breakerAfter(ctx context.Context, failed, halfOpen bool, loop int) (string, *StopError) {
	o := r.O
	now := r.now()
	var state string
	var stop *StopError
	err := o.store().Update(context.WithoutCancel(ctx), func(q *issuequeue.Queue, st *issuequeue.State) (issuequeue.Change, error) {
		const sec = issuequeue.SectionBreaker
		n := st.ConsecutiveFailures
		state = issuequeue.BreakerClosed
		edits := []issuequeue.Edit{}
		if !failed {
			edits = append(edits, issuequeue.SetField(sec, issuequeue.StateConsecutiveFailures, "0"),
				issuequeue.SetField(sec, issuequeue.StateBreaker, issuequeue.BreakerClosed),
				issuequeue.SetField(sec, issuequeue.StateOpenedAt, issuequeue.Null))
			if halfOpen {
				r.progress("circuit breaker closed: the trial loop succeeded")
			}
			return issuequeue.Change{State: edits}, nil
		}
		n++
		edits = append(edits, issuequeue.SetField(sec, issuequeue.StateConsecutiveFailures, strconv.Itoa(n)))
		if n >= r.Cfg.BreakerThreshold || halfOpen {
			state = issuequeue.BreakerOpen
			until := now.Add(r.Cfg.BreakerCooldown)
			edits = append(edits, issuequeue.SetField(sec, issuequeue.StateBreaker, issuequeue.BreakerOpen),
				issuequeue.SetField(sec, issuequeue.StateOpenedAt, issuequeue.FormatTime(now)))
			why := fmt.Sprintf("%d failed loops in a row", n)
			if halfOpen {
				why = "the half-open trial loop failed"
			}
			stop = &StopError{
				Reason: fmt.Sprintf("circuit breaker opened: %s; no run starts until %s", why, until.Local().Format("15:04")),
				Hint:   "look at the loop's output in " + filepath.Join(o.Dir, "logs", "loops") + "; to retry sooner, set state to closed in " + o.paths().State(),
			}
		} else {
			state = st.Breaker
			if state == issuequeue.BreakerHalfOpen {
				state = issuequeue.BreakerClosed
			}
		}
		return issuequeue.Change{State: edits}, nil
	})
	if err != nil {
		return state, &StopError{Reason: "recording the loop in the circuit breaker: " + err.Error()}
	}
	return state, stop
}

// newFailures counts issues that appeared, and failures recorded for issues
// other than the retried ones, between two readings of the queue.
func newFailures(before, after *issuequeue.Queue, retried []string) int {
	n := 0
	for _, is := range after.Issues {
		prev := before.Issue(is.ID)
		if prev == nil {
			n++
			continue
		}
		if slices.Contains(retried, is.ID) {
			continue
		}
		_, rb, _ := prev.Table(issuequeue.SectionAttemptHistory)
		_, ra, _ := is.Table(issuequeue.SectionAttemptHistory)
		if len(ra) > len(rb) {
			n += len(ra) - len(rb)
		}
	}
	return n
}

func sum(xs []int) int {
	t := 0
	for _, x := range xs {
		t += x
	}
	return t
}

// recordLoop writes a loop's history row and the Run section's counter.
func (r *Runner) recordLoop(rep *RunReport, lr LoopRecord) error {
	o := r.O
	if err := AppendHistory(o.Dir, lr); err != nil {
		return err
	}
	err := o.store().Update(context.Background(), func(q *issuequeue.Queue, st *issuequeue.State) (issuequeue.Change, error) {
		return issuequeue.Change{State: []issuequeue.Edit{
			issuequeue.SetField(issuequeue.SectionRun, issuequeue.StateLoops, strconv.Itoa(lr.Loop)),
		}, After: func() error {
			return o.log().Record(Event{Time: lr.Finished, Event: EvLoop, RunID: lr.RunID, Loop: lr.Loop, Status: lr.Result,
				DurationMS: lr.Finished.Sub(lr.Started).Milliseconds()})
		}}, nil
	})
	if err != nil {
		return err
	}
	if r.AfterLoop != nil {
		return r.AfterLoop()
	}
	return nil
}

// abortLoop handles a loop stopped by abort or a signal: issues in progress
// go back to pending and the state is written (SPEC §6).
func (r *Runner) abortLoop(rep *RunReport, lr LoopRecord) error {
	if _, _, err := r.settle(context.Background()); err != nil {
		return err
	}
	if err := r.recordLoop(rep, lr); err != nil {
		return err
	}
	return &StopError{Reason: fmt.Sprintf("aborted during loop %d; its issues are pending again", lr.Loop),
		Hint: "run 'orchestrator run' again when ready"}
}

// abortedAfter stops a run aborted between loops: issues the check had
// claimed for the next loop go back to pending, as after an aborted loop.
func (r *Runner) abortedAfter(loop int) error {
	if _, _, err := r.settle(context.Background()); err != nil {
		return err
	}
	return &StopError{Reason: fmt.Sprintf("aborted after loop %d; no further loop starts", loop),
		Hint: "run 'orchestrator run' again when ready"}
}

// permanentStop handles a loop that failed with a permanent error: the run
// stops and the retried issues are escalated (002).
func (r *Runner) permanentStop(rep *RunReport, lr LoopRecord, retried []string, res loopResult) error {
	o := r.O
	_, pattern := r.classify(res.Result)
	err := o.store().Update(context.Background(), func(q *issuequeue.Queue, st *issuequeue.State) (issuequeue.Change, error) {
		var edits []issuequeue.Edit
		var esc []*issuequeue.Issue
		for _, is := range q.Issues {
			if is.Status == issuequeue.StatusInProgress {
				edits = append(edits, issuequeue.SetField(is.ID, issuequeue.FieldStatus, issuequeue.StatusEscalated))
				esc = append(esc, is)
			}
		}
		return issuequeue.Change{Queue: edits, After: func() error {
			for _, is := range esc {
				rep.Escal = append(rep.Escal, is.ID)
				r.stats.touch(is.ID, is.Summary())
				r.stats.escalated[is.ID] = true
				lr.Escalated = append(lr.Escalated, is.ID)
				if err := o.log().Record(Event{Time: r.now(), Event: EvEscalated, IssueID: is.ID, RunID: rep.RunID, Reason: "permanent_error",
					Error: pattern}); err != nil {
					return err
				}
				if err := o.render("escalation", templates.Escalation{Issue: o.tmplIssue(is), Reason: "permanent",
					Detail: "the loop failed with a permanent error (" + pattern + "); retrying cannot fix it", Command: o.invocation()}); err != nil {
					return err
				}
			}
			return nil
		}}, nil
	})
	if err != nil {
		return err
	}
	if err := r.recordLoop(rep, lr); err != nil {
		return err
	}
	return &StopError{Reason: fmt.Sprintf("the loop failed with a permanent error (%s)", pattern),
		Hint: "fix the cause (credentials, permissions, the command itself), then run again"}
}

func (r *Runner) sentinelPresent() bool {
	return r.sentinel.Load() || r.O.paths().SentinelPresent()
}

func (r *Runner) sentinelStop() error {
	return &StopError{Reason: "the sentinel file no_auto_retry exists: no further loop starts",
		Hint: "remove " + r.O.paths().Sentinel() + " to let auto-retry run again"}
}

// watchSentinel notices no_auto_retry as soon as it is created (004: the
// running loop finishes; no further loop starts). Without fsnotify (NFS) the
// stat before every loop still catches it.
func (r *Runner) watchSentinel() func() {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return func() {}
	}
	if err := w.Add(r.O.Dir); err != nil {
		w.Close()
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if filepath.Base(ev.Name) == issuequeue.SentinelFile && ev.Has(fsnotify.Create) {
					r.sentinel.Store(true)
					r.progress("no_auto_retry appeared: the running loop finishes, no further loop starts")
				}
			case _, ok := <-w.Errors:
				if !ok {
					return
				}
			case <-done:
				return
			}
		}
	}()
	return func() { close(done); w.Close() }
}

// pruneLoopLogs removes captured loop output older than cutoff.
func pruneLoopLogs(dir string, cutoff time.Time) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() && fi.ModTime().Before(cutoff) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// printSummary prints the retry summary (seed 000) of a run.
func (r *Runner) printSummary(rep RunReport, wall time.Duration) error {
	s := &r.stats
	sum := templates.RunSummary{RunID: rep.RunID, Loops: rep.Loops, Wall: wall, Outcome: rep.Outcome, Reason: rep.Reason}
	sum.Issues = len(s.touched)
	final, _, _ := r.O.paths().Load()
	for _, id := range s.touched {
		res := "pending"
		if final != nil {
			if is := final.Issue(id); is != nil && is.Status == issuequeue.StatusSkipped {
				res = "skipped"
				sum.Skipped++
			}
		}
		switch {
		case res == "skipped":
		case s.resolved[id] && s.retried[id]:
			res = "success (retry worked)"
			sum.RetrySuccesses++
		case s.resolved[id]:
			res = "success"
		case s.halted[id]:
			res = "halted (escalated)"
		case s.escalated[id]:
			res = "escalated"
		}
		if s.firstOK[id] {
			sum.FirstAttempt++
		}
		if s.retried[id] {
			sum.Retried++
		}
		if s.escalated[id] {
			sum.Escalations++
		}
		if s.halted[id] {
			sum.Halted++
		}
		sum.Details = append(sum.Details, templates.SummaryRow{ID: id, Summary: s.summaries[id], Attempts: max(1, s.attempts[id]), Result: res})
	}
	for name, n := range s.failTypes {
		sum.Patterns = append(sum.Patterns, templates.Pattern{Name: name, Count: n})
	}
	slices.SortFunc(sum.Patterns, func(a, b templates.Pattern) int {
		if a.Count != b.Count {
			return b.Count - a.Count
		}
		return strings.Compare(a.Name, b.Name)
	})
	return r.O.render("summary", sum)
}

// DryRun prints what a run would do now, and runs and writes nothing.
func (r *Runner) DryRun(w io.Writer) error {
	o := r.O
	q, st, err := o.paths().Load()
	if err != nil {
		return err
	}
	if err := q.Err(); err != nil {
		return err
	}
	if err := st.Err(); err != nil {
		return err
	}
	now := r.now()
	if holder, held, err := statefile.RunHolder(o.Dir); err == nil && held {
		fmt.Fprintf(w, "A run is in progress (pid %d, started %s): run would exit 4.\n", holder.PID, holder.Since.Format(time.RFC3339))
		return nil
	}
	if st.Breaker == issuequeue.BreakerOpen {
		until := st.OpenedAt.Add(r.Cfg.BreakerCooldown)
		if now.Before(until) {
			fmt.Fprintf(w, "Circuit breaker open until %s: run would exit 3 without running anything.\n", until.Local().Format("15:04"))
			return nil
		}
		fmt.Fprintln(w, "Circuit breaker open, cooldown over: the first loop would be a half-open trial.")
	}
	fmt.Fprintf(w, "Would run the regular loop: sh -c %q (timeout %s, at most %d loops).\n", r.Cfg.Command, r.Cfg.Timeout, r.Cfg.MaxLoops)
	p := o.Policy
	p.SentinelPresent = o.paths().SentinelPresent()
	// The run starts with fresh counters: decide as its first check would.
	fresh := issuequeue.ParseState(o.paths().State(), []byte(issuequeue.StateTemplate))
	fresh.AutoRetryEnabled = st.AutoRetryEnabled
	d := Decide(q, fresh, p)
	switch {
	case d.Disabled != "":
		fmt.Fprintf(w, "Auto-retry is disabled (%s): no auto-retry loop would follow.\n", d.Disabled)
	case len(d.Exhausted) > 0 || len(d.Triggered) > 0 || d.CapReached:
		for _, is := range d.Exhausted {
			fmt.Fprintf(w, "Would escalate %s (retries used up): %s\n", is.ID, is.Summary())
		}
		trig := d.Triggered
		if d.CapReached {
			trig = d.WouldQualify
		}
		if len(trig) > 0 {
			fmt.Fprintln(w, "If the queue stays as it is now, the check after the loop would retry, in this order:")
			for _, is := range trig {
				fmt.Fprintf(w, "  %s  attempt %d of %d  %s\n", is.ID, is.RetryCount+1, p.MaxRetriesFor(is), is.Summary())
			}
		}
	default:
		fmt.Fprintln(w, "No issue is waiting for an auto-retry now; the loop's QA step may file some.")
	}
	fmt.Fprintln(w, "Dry run: nothing was run and nothing was written.")
	return nil
}
