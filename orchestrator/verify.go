package orchestrator

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/autoretry/orchestrator/internal/foundations/config"
	"github.com/autoretry/orchestrator/internal/foundations/procgroup"
	"github.com/autoretry/orchestrator/issuequeue"
)

type verifyResult struct {
	resolved, failed, halted []string
	// tests are what each issue's verification said of its tests, read
	// once from its output: the attempt's event names them, the loop's
	// progress verdict compares them.
	tests map[string]TestRun
}

// verify runs the Verify check of every in_progress issue and records the
// verdict: exit 0 resolves, anything else is a failure.
func (r *Runner) verify(ctx context.Context, rep *RunReport, retried []string) (verifyResult, error) {
	o := r.O
	cfg := o.Config
	vr := verifyResult{tests: map[string]TestRun{}}
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
		chk, ok := cfg.Verify(is.Verify)
		if !ok {
			if !cfg.Verification.AllowIssueCommands {
				r.progress("%s: Verify %q is not a [verify.%s] check in config.toml; commands written in the issue file run only with [verify] allow_issue_commands = true",
					is.ID, is.Verify, is.Verify)
				continue
			}
			chk = config.Check{Name: is.Verify, Command: is.Verify, Timeout: config.DefaultCheckTimeout}
		}
		r.progress("%s: verifying with %s", is.ID, chk.Command)
		// The output's signature is of all of it, computed as it comes;
		// its end is kept for Failure Details.
		sw, err := o.NewSignature()
		if err != nil {
			return vr, err
		}
		kept := &TailBuffer{Max: MaxKeptOutput}
		logPath := filepath.Join(PathsIn(absDir).LoopLogs(), fmt.Sprintf("%s-%02d-verify-%s.log", rep.RunID, rep.Loops, is.ID))
		res, err := r.exec(ctx, procgroup.Spec{
			Command: chk.Command, Dir: filepath.Dir(absDir), Env: r.verifyEnv(absDir, rep.RunID, rep.Loops, is.ID), Timeout: chk.Timeout, Grace: cfg.Loop.KillGrace,
			Output:  io.MultiWriter(sw, kept),
			LogPath: logPath,
		})
		if err != nil {
			return vr, err
		}
		if res.Canceled || ctx.Err() != nil {
			return vr, errAborted // no verdict: the issue goes back to pending
		}
		if res.ExitCode == 126 || res.ExitCode == 127 {
			// The check cannot run at all: that is the configuration's
			// fault, not a failure of the issue.
			return vr, &VerifyCommandError{Check: chk.Name, Command: chk.Command, ExitCode: res.ExitCode, Issue: is.ID}
		}
		r.stats.attempts[is.ID]++
		if res.ExitCode == 0 && !res.TimedOut {
			vr.tests[is.ID] = TestRun{Passed: true}
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
		silent := isSilent(kept.Output())
		if b := kept.Bytes(); len(b) > 0 && b[len(b)-1] != '\n' {
			io.WriteString(w, "\n")
		}
		if silent {
			// Nothing to tell failures apart by but the check itself.
			io.WriteString(sw, silentMark(chk.Name))
		}
		if res.TimedOut {
			fmt.Fprintf(w, "[verify: %s timed out after %s]\n", chk.Command, chk.Timeout)
		} else {
			fmt.Fprintf(w, "[verify: %s exited with status %d]\n", chk.Command, res.ExitCode)
		}
		sig, older := sums(sw)
		out, _ := os.ReadFile(logPath) // all of it, as the check printed it
		vr.tests[is.ID] = testRunOf(false, out, "")
		fr, err := o.recordFailure(context.WithoutCancel(ctx), is.ID, Failure{Type: typ, Output: kept.Output(), Signature: sig, Older: older,
			Silent: silent, Tests: vr.tests[is.ID]}, chk.Name)
		if err != nil {
			return vr, err
		}
		vr.failed = append(vr.failed, is.ID)
		if fr.Halted {
			r.stats.haltCode[is.ID] = fr.Code
			vr.halted = append(vr.halted, is.ID)
			r.stats.halted[is.ID] = true
			r.stats.escalated[is.ID] = true
		}
	}
	return vr, nil
}

func (r *Runner) verifyEnv(absDir, runID string, loop int, id string) []string {
	env := append([]string(nil), r.Environ...)
	if r.Environ == nil {
		env = os.Environ()
	}
	return append(env, "ORCHESTRATOR_DIR="+absDir, "ORCHESTRATOR_ROOT="+filepath.Dir(absDir), "ORCHESTRATOR_RUN_ID="+runID, "ORCHESTRATOR_LOOP="+strconv.Itoa(loop), "ORCHESTRATOR_ISSUES="+id)
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

// VerifyCommandError is a verification command that cannot run (exit status
// 126: not executable, 127: not found): a configuration error, not a failure
// of the issue it verifies.
type VerifyCommandError struct {
	Check, Command, Issue string
	ExitCode              int
}

func (e *VerifyCommandError) Error() string {
	why := "was not found (exit status 127)"
	if e.ExitCode == 126 {
		why = "could not be executed (exit status 126)"
	}
	return fmt.Sprintf("the verification command of [verify.%s] %s: %s; %s was not counted as failing and is pending again", e.Check, why, e.Command, e.Issue)
}
