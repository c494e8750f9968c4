package orchestrator

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/autoretry/orchestrator/internal/adapters/workspace"
	"github.com/autoretry/orchestrator/issuequeue"
	"github.com/autoretry/orchestrator/templates"
)

// How the runner judges its loops: the workspace's state before and after
// each loop, the failing tests after each verification, the verdict, and
// the halts of the progress rules.

// Workspace returns the workspace the loops of the state directory dir work
// in: the directory that holds it.
func Workspace(dir string) (*workspace.Workspace, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	return &workspace.Workspace{Root: filepath.Dir(abs), StateDir: abs}, nil
}

// recordState records the workspace's state; ok is false when recording is
// off or failed (said once on stderr): the loop is then judged by its tests.
func (r *Runner) recordState(ctx context.Context) (workspace.State, bool) {
	if !r.O.Config.Progress.Enabled {
		return workspace.State{}, false
	}
	w, err := Workspace(r.O.Dir)
	if err == nil {
		var st workspace.State
		if st, err = w.State(context.WithoutCancel(ctx)); err == nil {
			return st, true
		}
	}
	r.progress("recording the workspace's state: %v; loops are judged by their tests alone", err)
	return workspace.State{}, false
}

// judgeLoop decides a loop's verdict from the states before and after it
// and its verifications, and counts it.
// The tests an issue failed before its first verification in the run are
// read from its Failure Details as the loop found them (q).
func (r *Runner) judgeLoop(ctx context.Context, loop int, kind string, q *issuequeue.Queue, before, after workspace.State, recorded bool, vr verifyResult) (LoopProgress, *WorkspaceChange) {
	t := r.prog
	p := LoopProgress{Loop: loop, Kind: kind, Recorded: recorded}
	var wc *WorkspaceChange
	if recorded {
		wc = &WorkspaceChange{State: after.Hex, Before: before.Hex, Kind: after.Kind}
		p.Idle = before == after
		p.CycledTo = t.cycledTo(before.Hex, after.Hex)
		if !p.Idle {
			if w, err := Workspace(r.O.Dir); err == nil {
				if st, err := w.Diff(context.WithoutCancel(ctx), before, after); err == nil {
					wc.FilesChanged, wc.LinesAdded, wc.LinesRemoved = st.FilesChanged, st.LinesAdded, st.LinesRemoved
				}
			}
		}
	}
	p.Passed = len(vr.failed) == 0 && len(vr.resolved) > 0
	judge := func(ids []string) {
		for _, id := range ids {
			cur := vr.tests[id]
			var prev *TestRun
			if pt, ok := t.tests[id]; ok {
				prev = &pt
			} else {
				prev = detailsTests(q.Issue(id))
			}
			if testsProgressed(prev, cur) {
				p.Tests = true
			}
			t.tests[id] = cur
			p.Failing += len(cur.Failing)
		}
	}
	judge(vr.resolved)
	judge(vr.failed)
	p.Verdict = DecideProgress(p)
	if recorded && len(vr.failed) > 0 {
		t.failed(after.Hex, loop+1)
	}
	t.count(kind, p)
	return p, wc
}

// haltForProgress halts the issues a loop retried and did not resolve, on
// the progress rule v: Halted, escalated, the events and the escalation
// text, as a repeated failure halts them.
func (r *Runner) haltForProgress(rep *RunReport, lr *LoopRecord, retried []string, v *Verdict) error {
	o := r.O
	now := r.now()
	return o.store().Update(context.Background(), func(q *issuequeue.Queue, st *issuequeue.State) (issuequeue.Change, error) {
		var edits []issuequeue.Edit
		var halted []*issuequeue.Issue
		var evs []Event
		for _, id := range retried {
			is := q.Issue(id)
			if is == nil || is.Halted || is.Status == issuequeue.StatusResolved || is.Status == issuequeue.StatusSkipped {
				continue
			}
			edits = append(edits, haltEdits(id)...)
			halted = append(halted, is)
			evs = append(evs,
				Event{Time: now, Event: EvHalted, IssueID: id, RunID: rep.RunID, Loop: lr.Loop, Code: v.Rule, Reason: string(v.Rule), Error: v.Reason},
				Event{Time: now, Event: EvEscalated, IssueID: id, RunID: rep.RunID, Reason: string(v.Rule), Code: v.Rule, Error: v.Reason,
					Fingerprint: o.fingerprint(is)})
		}
		lines, err := o.log().Lines(evs...)
		if err != nil {
			return issuequeue.Change{}, err
		}
		return issuequeue.Change{Queue: edits, Log: lines, After: func() error {
			for _, is := range halted {
				rep.Halted = append(rep.Halted, is.ID)
				lr.Halted = append(lr.Halted, is.ID)
				r.stats.touch(is.ID, is.Summary())
				r.stats.halted[is.ID] = true
				r.stats.escalated[is.ID] = true
				r.stats.haltCode[is.ID] = v.Rule
				fmt.Fprintf(o.Stdout, "%s halted (%s): %s\n", is.ID, v.Rule, v.Reason)
				ti := o.tmplIssue(is)
				ti.Status = issuequeue.StatusEscalated
				if err := o.render("escalation", templates.Escalation{Issue: ti, Reason: progressHaltReason(v.Rule), Detail: v.Reason,
					Command: o.invocation()}); err != nil {
					return err
				}
			}
			return nil
		}}, nil
	})
}

// previousProgress is the verdict of the run's last loop, for the next
// loop's environment and retry context; "" before the first.
func (r *Runner) previousProgress() string {
	if r.prog == nil {
		return ""
	}
	return r.prog.last.Verdict
}
