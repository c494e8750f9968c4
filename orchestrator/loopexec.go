package orchestrator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/config"
	"github.com/autoretry/orchestrator/internal/foundations/lazyre"
	"github.com/autoretry/orchestrator/internal/foundations/procgroup"
	"github.com/autoretry/orchestrator/internal/foundations/statefile"
	"github.com/autoretry/orchestrator/issuequeue"
)

type loopResult struct {
	procgroup.Result
	started time.Time
	// stoppedBy is the code of the rule that stopped the last execution
	// while it ran (a budget, hung); "" when none did.
	stoppedBy Code
}

// runLoop executes the loop command, re-executing it after transient
// failures with backoff (not counted against issues or the cap), as
// DecideExec says. A rule that cuts the loop short (a rate-limit window, a
// budget spent by the re-runs) comes back as cut.
func (r *Runner) runLoop(ctx context.Context, runID string, loop int, kind string, retried []string, q *issuequeue.Queue) (lr loopResult, result string, transient int, cut *Cut, err error) {
	o := r.O
	cfg := o.Config
	absDir, err := filepath.Abs(o.Dir)
	if err != nil {
		return lr, "", 0, nil, err
	}
	logDir := PathsIn(absDir).LoopLogs()
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return lr, "", 0, nil, err
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
	tier, model := retryTier(cfg.Tiers, maxAttempt)
	ctxPath := ""
	if kind == KindAutoRetry {
		b, err := o.retryContext(q, retried, r.previousProgress())
		if err != nil {
			return lr, "", 0, nil, err
		}
		ctxPath = filepath.Join(logDir, fmt.Sprintf("%s-%02d-context.md", runID, loop))
		if err := writeFileAtomic(ctxPath, b); err != nil {
			return lr, "", 0, nil, err
		}
		for _, id := range retried {
			if err := o.log().Record(Event{Time: r.now(), Event: EvFeedbackInjected, IssueID: id, RunID: runID, Loop: loop,
				Attempt: maxAttempt, FeedbackLines: bytes.Count(b, []byte{'\n'})}); err != nil {
				return lr, "", 0, nil, err
			}
		}
	} else {
		tier, model = "", cfg.Tiers.Model
	}
	costPath := filepath.Join(logDir, fmt.Sprintf("%s-%02d.cost", runID, loop))
	env = append(env,
		"ORCHESTRATOR_DIR="+absDir,
		"ORCHESTRATOR_ROOT="+filepath.Dir(absDir),
		"ORCHESTRATOR_RUN_ID="+runID,
		"ORCHESTRATOR_LOOP="+strconv.Itoa(loop),
		"ORCHESTRATOR_LOOP_KIND="+kind,
		"ORCHESTRATOR_ISSUES="+strings.Join(retried, ","),
		"ORCHESTRATOR_RETRY_CONTEXT="+ctxPath,
		"ORCHESTRATOR_RETRY_TIER="+tier,
		"ORCHESTRATOR_MODEL="+model,
		"ORCHESTRATOR_COST_FILE="+costPath,
		"ORCHESTRATOR_PREVIOUS_PROGRESS="+r.previousProgress(),
	)
	for try := 1; ; try++ {
		if try > 1 {
			// Re-runs count against the daily budgets like any execution.
			if v, err := r.gate(loop - 1); err != nil {
				return lr, "", transient, nil, err
			} else if v != nil {
				return lr, "", transient, &Cut{Rule: v}, nil
			}
		}
		r.progress("loop %d (%s) starting: %s", loop, kind, cfg.Loop.Command)
		started := r.now()
		os.Remove(costPath)
		ar := r.agentReader(started)
		stop := &procgroup.Stopper{}
		w, err := r.watchLoop(ar, started, stop, loopIssues(kind, retried, q))
		if err != nil {
			return lr, "", transient, nil, err
		}
		var out io.Writer = w
		if r.Terminal != nil {
			out = io.MultiWriter(r.Terminal, w)
		}
		res, err := r.exec(ctx, procgroup.Spec{
			Command: cfg.Loop.Command, Dir: filepath.Dir(absDir), Env: env, Timeout: cfg.Loop.Timeout, Grace: cfg.Loop.KillGrace,
			IdleTimeout: cfg.Loop.IdleTimeout, Stop: stop,
			Output: out, Tail: 64 << 10, LogPath: filepath.Join(logDir, fmt.Sprintf("%s-%02d.log", runID, loop)),
		})
		hit := w.close()
		lr = loopResult{Result: res, started: started}
		if err != nil && ctx.Err() != nil {
			return lr, ResultAborted, transient, nil, nil // cancelled before it started
		}
		if err != nil {
			return lr, "", transient, nil, err
		}
		arep := agentReport(ar)
		x := ExecFacts{Try: try, Aborted: res.Canceled || ctx.Err() != nil, TimedOut: res.TimedOut, ExitCode: res.ExitCode}
		switch {
		case res.StoppedBy != "" && hit != nil:
			x.Stopped, lr.stoppedBy = hit, hit.Rule
		case res.Idle:
			x.Idle, lr.stoppedBy = cfg.Loop.IdleTimeout, CodeHung
		}
		if err := o.log().Record(withAgent(Event{Time: r.now(), Event: EvExec, RunID: runID, Loop: loop, Kind: kind, Attempt: try,
			Issues: loopIssues(kind, retried, q), DurationMS: r.now().Sub(started).Milliseconds(), Cost: r.execCost(arep, res.Tail, costPath), StoppedBy: lr.stoppedBy}, arep)); err != nil {
			return lr, "", transient, nil, err
		}
		if cause := agentCause(arep); cause != "" {
			r.progress("loop %d: %s", loop, cause)
		}
		af := agentFailureOf(arep, res.ExitCode)
		x.Agent, x.AgentState, x.Until, x.Now, x.Jitter = af.class != "", af.state(), af.until, r.now(), r.rand()
		x.Class, x.What = classOf(cfg, res, af)
		x.Hint, x.HasHint = RetryHint(res.Tail, x.Now)
		step := DecideExec(x, cfg)
		r.tellExec(loop, x, step)
		if step.Result != "" || step.Cut != nil {
			return lr, step.Result, transient, step.Cut, nil
		}
		transient++
		if err := o.log().Record(Event{Time: r.now(), Event: EvTransient, RunID: runID, Loop: loop, Attempt: try,
			Reason: x.What, DurationMS: step.Wait.Milliseconds()}); err != nil {
			return lr, "", transient, nil, err
		}
		if err := r.sleepWatching(ctx, step.Wait); err != nil {
			if errors.Is(err, errSentinel) {
				return lr, "", transient, &Cut{Sentinel: true}, nil
			}
			return lr, ResultAborted, transient, nil, nil
		}
	}
}

// classOf is the class of a failed execution and what said so: the agent's
// own report first, then the [classify] patterns.
func classOf(cfg *config.Config, res procgroup.Result, af agentFailure) (class, what string) {
	class, what = af.class, af.what
	if c, p := classify(cfg, res); class == "" {
		class, what = c, p
	} else if p != "" && af.until.IsZero() && (c == class || class == classAuth && c == ResultPermanent) {
		what = p // named as the configuration names it; a reset is named in the agent's words
	}
	return class, what
}

// tellExec says on stderr how an execution ended, when it failed.
func (r *Runner) tellExec(loop int, x ExecFacts, step ExecStep) {
	c := step.Cut
	switch {
	case x.Stopped != nil:
		r.progress("loop %d reached %s while it ran; stopping it", loop, x.Stopped.Rule)
	case x.Idle > 0:
		r.progress("loop %d printed nothing for %s; stopping it", loop, x.Idle)
	case step.Result == ResultTimeout:
		r.progress("loop %d timed out after %s", loop, r.O.Config.Loop.Timeout)
	case step.Result == ResultPermanent:
		r.progress("loop %d failed with a permanent error (%s)", loop, x.What)
	case step.Result == ResultFailed && step.Limit > 0:
		r.progress("loop %d: transient failure (%s) persisted after %d tries", loop, x.What, x.Try)
	case c != nil && c.Auth:
		r.progress("loop %d: the agent's provider refused its credentials", loop)
	case c != nil && c.Unavailable != "":
		r.progress("loop %d: the agent's provider was still %s after %d tries", loop, c.Unavailable, c.Tries)
	case step.Result == "" && c == nil:
		r.progress("loop %d: transient failure (%s); running it again in %s (try %d of %d)", loop, x.What, step.Wait.Round(time.Millisecond), x.Try+1, step.Limit)
	}
}

// gate applies the rules a loop start depends on, as they stand now, after
// done loops of this run.
func (r *Runner) gate(done int) (*Verdict, error) {
	o := r.O
	q, st, err := o.paths().Load()
	if err != nil {
		return nil, err
	}
	in, err := o.inputs(q, st)
	if err != nil {
		return nil, err
	}
	in.Run, in.RunLoops, in.ReRun = true, done, true
	_, v := Gate(in, KindRegular)
	return v, nil
}

// openRateLimitWindow records the window of a rate-limit stop in
// session_state.md.
func (r *Runner) openRateLimitWindow(runID string, se *StopError) error {
	o := r.O
	return o.store().Update(context.Background(), func(q *issuequeue.Queue, st *issuequeue.State) (issuequeue.Change, error) {
		return issuequeue.Change{State: []issuequeue.Edit{
			issuequeue.SetField(issuequeue.SectionRateLimit, issuequeue.StateLimitedUntil, issuequeue.FormatTime(se.Until)),
			issuequeue.SetField(issuequeue.SectionRateLimit, issuequeue.StateLimitReason, se.Reason),
		}, After: func() error {
			return o.log().Record(Event{Time: r.now(), Event: EvRateLimitWindow, RunID: runID, Code: CodeRateLimited, Reason: se.Reason, Until: se.Until})
		}}, nil
	})
}

// builtinCost reads the cost of a coding agent's JSON result line.
var builtinCost = lazyre.New(`"(?:total_cost_usd|cost_usd)"\s*:\s*([0-9]+(?:\.[0-9]+)?)`)

// loopCost returns the cost a loop execution reported: the number in the
// file at $ORCHESTRATOR_COST_FILE if the loop wrote one, else the last match
// of the cost pattern in the end of its output, else 0.
func (r *Runner) loopCost(tail []byte, costPath string) float64 {
	if b, err := statefile.ReadThrough(costPath); err == nil { // the loop's own file: a FIFO is refused, not waited on
		if c, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64); err == nil && c >= 0 {
			return c
		}
		r.progress("%s does not hold a cost (one decimal number); the cost of this loop is taken from its output", costPath)
	}
	re := builtinCost()
	if p := r.O.Config.Budget.CostPattern; p != "" {
		re = regexp.MustCompile(p) // validated when the config was loaded
	}
	ms := re.FindAllSubmatch(tail, -1)
	if len(ms) == 0 {
		return 0
	}
	c, err := strconv.ParseFloat(string(ms[len(ms)-1][1]), 64)
	if err != nil || c < 0 {
		return 0
	}
	return c
}

// LoopCommandError is a [loop] command whose program cannot be run: the
// configuration's fault, found before the first loop.
type LoopCommandError struct {
	Program string
	Why     string
}

func (e *LoopCommandError) Error() string { return e.Program + ": " + e.Why }

// shellBuiltins are the words sh runs itself: there is no file to find.
var shellBuiltins = map[string]bool{"echo": true, "printf": true, "true": true, "false": true, ":": true, "exit": true,
	"cd": true, "test": true, "[": true, "exec": true, "set": true, "export": true, "eval": true, ".": true}

// CheckLoopCommand checks, before the first loop, that the program the loop
// command starts exists and can be executed, looked up as sh would from the
// workspace directory. It checks the first word only, and only when it is a
// plain word: a command using the shell's syntax there is left to the shell.
func CheckLoopCommand(command, workspace string, getenv func(string) string) error {
	fields := strings.Fields(command)
	if len(fields) == 0 {
		return nil
	}
	prog := fields[0]
	if shellBuiltins[prog] || strings.ContainsAny(prog, "$`'\"\\;&|<>(){}=*?[~") {
		return nil
	}
	if strings.Contains(prog, "/") {
		path := prog
		if !filepath.IsAbs(path) {
			path = filepath.Join(workspace, path)
		}
		fi, err := os.Stat(path)
		switch {
		case err != nil:
			return &LoopCommandError{Program: prog, Why: "not found (looked in " + workspace + ")"}
		case fi.IsDir():
			return &LoopCommandError{Program: prog, Why: "is a directory"}
		case fi.Mode().Perm()&0o111 == 0:
			return &LoopCommandError{Program: prog, Why: "is not executable (chmod +x " + prog + ")"}
		}
		return nil
	}
	for _, dir := range filepath.SplitList(getenv("PATH")) {
		if dir == "" {
			dir = "."
		}
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(workspace, dir)
		}
		if fi, err := os.Stat(filepath.Join(dir, prog)); err == nil && !fi.IsDir() && fi.Mode().Perm()&0o111 != 0 {
			return nil
		}
	}
	return &LoopCommandError{Program: prog, Why: "not found in PATH"}
}
