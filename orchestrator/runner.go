package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/autoretry/orchestrator/internal/adapters/workspace"
	"github.com/autoretry/orchestrator/internal/foundations/procgroup"
	"github.com/autoretry/orchestrator/internal/foundations/statefile"
	"github.com/autoretry/orchestrator/issuequeue"
)

// Runner runs loops until the end-of-loop check says stop. Its settings
// are O.Config's.
type Runner struct {
	O *Orchestrator
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
	person   *personWindow    // a person's changes during loops (guard_person.go)
	prog     *progressTracker // the run's loops, judged by what they did
	// failed is how the last loop failed, nil if it did not (loopfailure.go).
	failed *LoopFailure
}

// RunReport is the result of a run, for --json and the summary.
type RunReport struct {
	RunID    string   `json:"run_id"`
	Outcome  string   `json:"outcome"` // completed, stopped, aborted, failed
	Code     Code     `json:"code,omitempty"`
	Reason   string   `json:"reason,omitempty"`
	Hint     string   `json:"hint,omitempty"`
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
	haltCode  map[string]Code
	attempts  map[string]int
	failTypes map[string]int
	summaries map[string]string
}

func newRunStats() runStats {
	return runStats{firstOK: map[string]bool{}, retried: map[string]bool{}, resolved: map[string]bool{}, escalated: map[string]bool{},
		halted: map[string]bool{}, haltCode: map[string]Code{}, attempts: map[string]int{}, failTypes: map[string]int{}, summaries: map[string]string{}}
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
// its report. A *StopError means a rule stopped it.
func (r *Runner) Run(ctx context.Context) (RunReport, error) {
	o := r.O
	start := r.now()
	r.stats = newRunStats()
	r.prog = newProgressTracker()
	pid := r.Pid
	if pid == 0 {
		pid = os.Getpid()
	}
	rep := RunReport{RunID: NewRunID(start, pid), Resolved: []string{}, Halted: []string{}, Escal: []string{}}
	if o.Config.Loop.Command == "" {
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
	o.WarnQuarantined(q.QuarantineFindings())
	if err := st.Err(); err != nil {
		return rep, err
	}
	// The rules that keep any loop from starting (a pause, the breaker, a
	// rate-limit window, a spent daily budget) stop the run before it
	// opens: the files stay as they are.
	in, err := o.inputs(q, st)
	if err != nil {
		return rep, err
	}
	in.Run = true
	if in.Shared, err = o.ReadShared(in.Now); err != nil {
		return rep, err
	}
	if _, v := Gate(in, KindRegular); v != nil {
		se := StopFor(v)
		rep.Outcome, rep.Code, rep.Reason, rep.Hint = "stopped", se.Code, se.Reason, se.Hint
		if err := o.log().Record(se.Event(start, rep.RunID)); err != nil {
			return rep, err
		}
		return rep, se
	}
	halfOpen := st.Breaker == issuequeue.BreakerOpen || st.Breaker == issuequeue.BreakerHalfOpen

	stopWatch := r.watchSentinel()
	defer stopWatch()
	stopListen := r.listen()
	defer stopListen()

	// Open the run. Pruning the logs happens under the write lock, so no
	// event is appended meanwhile.
	err = o.store().Update(context.WithoutCancel(ctx), func(q *issuequeue.Queue, st *issuequeue.State) (issuequeue.Change, error) {
		edits := ResetRun(rep.RunID, start)
		if halfOpen {
			edits = append(edits, issuequeue.SetField(issuequeue.SectionBreaker, issuequeue.StateBreaker, issuequeue.BreakerHalfOpen))
		}
		return issuequeue.Change{State: edits, After: func() error {
			if err := o.tidy(start); err != nil {
				return err
			}
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
		rep.Code, rep.Reason, rep.Hint = se.Code, se.Reason, se.Hint
		if ctx.Err() != nil {
			outcome = "aborted"
		}
	default:
		outcome = "failed"
		rep.Reason = runErr.Error()
	}
	rep.Outcome = outcome
	finish := r.now()
	fin := Event{Time: finish, Event: EvRunFinished, RunID: rep.RunID, Status: outcome, Reason: rep.Reason, Code: rep.Code, Loop: rep.Loops, DurationMS: rep.WallMS}
	if se != nil {
		fin.Reason, fin.Error = string(se.Code), se.Reason
	}
	werr := o.store().Update(context.WithoutCancel(ctx), func(q *issuequeue.Queue, st *issuequeue.State) (issuequeue.Change, error) {
		return issuequeue.Change{State: []issuequeue.Edit{
			issuequeue.SetField(issuequeue.SectionRun, issuequeue.StateFinishedAt, issuequeue.FormatTime(finish)),
			issuequeue.SetField(issuequeue.SectionRun, issuequeue.StateLoops, strconv.Itoa(rep.Loops)),
			issuequeue.SetField(issuequeue.SectionRun, issuequeue.StateOutcome, outcome),
		}, After: func() error {
			return o.log().Record(fin)
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

// CheckCommand checks the loop command's program before anything runs (see
// CheckLoopCommand), in the environment the loop gets.
func (r *Runner) CheckCommand() error {
	abs, err := filepath.Abs(r.O.Dir)
	if err != nil {
		return err
	}
	getenv := os.Getenv
	if r.Environ != nil {
		getenv = func(k string) string {
			for _, kv := range r.Environ {
				if v, ok := strings.CutPrefix(kv, k+"="); ok {
					return v
				}
			}
			return ""
		}
	}
	return CheckLoopCommand(r.O.Config.Loop.Command, filepath.Dir(abs), getenv)
}

// loops runs the regular loop and the auto-retry loops: each loop is run,
// what happened gathered as facts, and the governor (AfterLoop) says what
// comes next; the runner carries it out.
func (r *Runner) loops(ctx context.Context, rep *RunReport, halfOpen bool) error {
	kind := KindRegular
	var retried []string
	var cascade []int
	for loop := 1; ; loop++ {
		rep.Loops = loop
		lp, err := r.runOne(ctx, rep, loop, kind, retried)
		if err != nil {
			return err
		}
		v := r.decide(ctx, &lp.f)
		if v.Breaker {
			// A cut loop is not verified, which would count it.
			if lp.f.Breaker, err = r.breakerAfter(ctx, true, halfOpen); err != nil {
				return err
			}
			lp.lr.Breaker, halfOpen = lp.f.Breaker.State, false
		}
		if v.Next == NextVerify {
			if err := r.verifyLoop(ctx, rep, lp, retried, halfOpen, &cascade); err != nil {
				return err
			}
			halfOpen = false
			v = r.decide(ctx, &lp.f)
		}
		if err := r.carryOut(ctx, rep, lp, retried, v); err != nil {
			return err
		}
		if err := r.recordLoop(rep, lp.lr); err != nil {
			return err
		}
		if v.Next == NextEnd {
			return stopped(v)
		}
		d, err := r.endOfLoopCheck(ctx, rep, &lp.f)
		if err != nil {
			return err
		}
		v = r.decide(ctx, &lp.f)
		if err := r.carryOut(ctx, rep, nil, ids(d.Triggered), v); err != nil {
			return err
		}
		if v.Next == NextEnd {
			return stopped(v)
		}
		kind, retried = KindAutoRetry, ids(d.Triggered)
		for _, is := range d.Triggered {
			r.stats.touch(is.ID, is.Summary())
			r.stats.retried[is.ID] = true
		}
	}
}

// stopped is the end of a run a verdict ended: its stop, or nil.
func stopped(v LoopStep) error {
	if v.Stop != nil {
		return v.Stop
	}
	return nil
}

// loopRun is one loop of a run as the runner carries it: the facts the
// governor decides on, the loop's record, and what its verification and
// judgement need.
type loopRun struct {
	f        LoopFacts
	lr       LoopRecord
	res      loopResult
	before   *issuequeue.Queue // as the loop found it
	ws       workspace.State   // the workspace as the loop found it
	recorded bool              // ws was recorded
}

// decide asks the governor what comes after the loop, with the facts read
// at every step brought up to date.
func (r *Runner) decide(ctx context.Context, f *LoopFacts) LoopStep {
	f.Now, f.Sentinel, f.Aborted = r.now(), r.sentinel.Load(), ctx.Err() != nil
	return AfterLoop(*f)
}

// runOne executes loop number loop and gathers how it ended, up to the loop
// guard's verdict.
func (r *Runner) runOne(ctx context.Context, rep *RunReport, loop int, kind string, retried []string) (*loopRun, error) {
	o := r.O
	lp := &loopRun{f: LoopFacts{Config: o.Config, Invocation: o.invocation(), Dir: o.Dir, Loop: loop, Kind: kind}}
	var err error
	if lp.before, _, err = o.paths().Load(); err != nil {
		return nil, err
	}
	// The workspace's state is recorded outside the loop and before the
	// guard's snapshot: its own files are not the loop's doing. The
	// issues a run retries failed as the files are when a loop starts:
	// the regular loop's (it has no verification of its own to say so)
	// and every auto-retry loop's.
	if lp.ws, lp.recorded = r.recordState(ctx); lp.recorded {
		r.prog.failed(lp.ws.Hex, loop)
	}
	r.beginGuard(rep.RunID, loop)
	snap, err := o.snapshot()
	if err != nil {
		return nil, err
	}
	snap.person = r.person
	loopStart := r.now()
	res, result, transient, cut, err := r.runLoop(ctx, rep.RunID, loop, kind, retried, lp.before)
	if err = errors.Join(err, o.shareExecs(rep.RunID, loop, loopStart)); err != nil {
		return nil, err
	}
	r.noteLoop(loop, res, result)
	lp.res = res
	lp.lr = LoopRecord{RunID: rep.RunID, Loop: loop, Kind: kind, Started: res.started, Finished: r.now(), ExitCode: res.ExitCode,
		Result: result, TransientRetries: transient, Issues: retried, StoppedBy: res.stoppedBy}
	changes, err := o.guardAfter(snap, rep.RunID, loop)
	if err != nil {
		return nil, err
	}
	for _, c := range changes {
		r.progress("guard: %s", c.What)
	}
	for _, c := range stops(changes) {
		lp.f.Guard = append(lp.f.Guard, c.What)
	}
	lp.f.Result, lp.f.ExitCode, lp.f.Cut = result, res.ExitCode, cut
	if result == ResultPermanent {
		_, lp.f.Pattern = classify(o.Config, res.Result)
	}
	return lp, nil
}

// verifyLoop runs the verification of a loop's issues and gathers what
// follows from it: the circuit breaker, the loop's progress, the new
// failures of the run's auto-retry loops (cascade).
func (r *Runner) verifyLoop(ctx context.Context, rep *RunReport, lp *loopRun, retried []string, halfOpen bool, cascade *[]int) error {
	o, f := r.O, &lp.f
	// After the loop and before its verification, which may write files
	// of its own (caches, reports).
	var wsAfter workspace.State
	recorded := lp.recorded
	if recorded {
		wsAfter, recorded = r.recordState(ctx)
	}
	vr, err := r.verify(ctx, rep, retried)
	if errors.Is(err, errAborted) {
		f.VerifyAborted = true
		return nil
	}
	if err != nil {
		if _, _, serr := r.settle(ctx); serr != nil {
			return errors.Join(err, serr)
		}
		return err
	}
	lp.lr.Resolved, lp.lr.Failed, lp.lr.Halted = vr.resolved, vr.failed, vr.halted
	rep.Resolved = append(rep.Resolved, vr.resolved...)
	rep.Halted = append(rep.Halted, vr.halted...)
	after, st, err := r.settle(ctx)
	if err != nil {
		return err
	}
	lp.lr.TotalAutoRetries = st.TotalAutoRetries
	if f.Breaker, err = r.breakerAfter(ctx, f.Result != ResultOK, halfOpen); err != nil {
		return err
	}
	lp.lr.Breaker = f.Breaker.State
	p, wc := r.judgeLoop(ctx, f.Loop, f.Kind, lp.before, lp.ws, wsAfter, recorded, vr)
	lp.lr.Progress, lp.lr.Workspace, lp.lr.Facts = p.Verdict, wc, &p
	f.Verified, f.Halted, f.Progress, f.Idle, f.NoProgress = true, vr.halted, p, r.prog.idle, r.prog.noProgress
	if f.Kind == KindAutoRetry {
		*cascade = append(*cascade, newFailures(lp.before, after, retried))
		f.Cascade = *cascade
	}
	if o.Config.Budget.IssuesFiledPerDay > 0 {
		u, err := ReadUsage(o.Dir, r.now())
		if err != nil {
			return fmt.Errorf("reading the event log: %w", err)
		}
		f.Usage = &u
	}
	return nil
}

// endOfLoopCheck runs the end-of-loop check and adds what it decided to
// the facts: its decision, the issues the run gave up on, and the shared
// budget when it claimed a loop.
func (r *Runner) endOfLoopCheck(ctx context.Context, rep *RunReport, f *LoopFacts) (Decision, error) {
	o := r.O
	cr, err := o.check(context.WithoutCancel(ctx), runCheck{run: true, loops: f.Loop})
	if err != nil {
		return Decision{}, err
	}
	for _, id := range append(append([]string(nil), cr.Exhausted...), cr.Halted...) {
		rep.Escal = append(rep.Escal, id)
		r.stats.escalated[id] = true
	}
	for _, iv := range cr.Issues {
		if iv.Code != "" {
			r.stats.haltCode[iv.ID] = iv.Code
		}
	}
	f.Check = &cr.Decision
	if f.GaveUp = append(append([]string(nil), rep.Halted...), rep.Escal...); len(f.GaveUp) > 0 {
		f.GaveUpCode = r.stats.haltCode[f.GaveUp[0]]
	}
	if cr.Decision.Outcome == CheckRetry {
		// The shared budget may have been spent by other projects since
		// the check.
		if f.Shared, err = o.ReadShared(r.now()); err != nil {
			return Decision{}, err
		}
	}
	return cr.Decision, nil
}

// carryOut carries out a verdict: a progress halt, a rate-limit window,
// and what becomes of the issues of the loop lp (nil: between loops) or
// claimed for the next one (retried).
func (r *Runner) carryOut(ctx context.Context, rep *RunReport, lp *loopRun, retried []string, v LoopStep) error {
	// A loop cut short is given back first, so that an issue a rule of
	// its own spend halts keeps its Retry-Count as before the claim.
	if v.Settle == SettleRelease {
		if err := r.release(retried); err != nil {
			return err
		}
	}
	if v.Halt != nil {
		ids := retried
		if v.Halt.Issue != "" {
			ids = []string{v.Halt.Issue} // a rule of one issue's spend halts that issue alone
		}
		if err := r.haltForProgress(rep, &lp.lr, ids, v.Halt); err != nil {
			return err
		}
	}
	if v.Window {
		if err := r.openRateLimitWindow(rep.RunID, v.Stop); err != nil {
			return err
		}
	}
	if lp != nil && v.Result != "" {
		lp.lr.Result = v.Result
	}
	switch v.Settle {
	case SettlePending:
		_, _, err := r.settle(ctx)
		return err
	case SettleEscalate:
		return r.escalatePermanent(rep, &lp.lr, lp.f.Pattern)
	}
	return nil
}

// release gives back the attempt a loop cut short by a rule did not make:
// its issues go back to pending with their Retry-Count as before the check
// claimed them, and the run's auto-retry count is lowered.
func (r *Runner) release(retried []string) error {
	if len(retried) == 0 {
		return nil
	}
	return r.O.store().Update(context.Background(), func(q *issuequeue.Queue, st *issuequeue.State) (issuequeue.Change, error) {
		var edits []issuequeue.Edit
		for _, id := range retried {
			is := q.Issue(id)
			if is == nil || is.Status != issuequeue.StatusInProgress {
				continue
			}
			edits = append(edits, issuequeue.SetField(id, issuequeue.FieldStatus, issuequeue.StatusPending),
				issuequeue.SetField(id, issuequeue.FieldRetryCount, strconv.Itoa(max(0, is.RetryCount-1))))
		}
		return issuequeue.Change{Queue: edits, State: []issuequeue.Edit{issuequeue.SetField(issuequeue.SectionAutoRetry,
			issuequeue.StateTotalAutoRetries, strconv.Itoa(max(0, st.TotalAutoRetries-1)))}}, nil
	})
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
