package orchestrator

import (
	"context"
	"strconv"

	"github.com/autoretry/orchestrator/issuequeue"
	"github.com/autoretry/orchestrator/templates"
)

// How the runner closes a loop: its history row and counter, and the
// escalation of its issues when it failed in a way retrying cannot fix.

// recordLoop writes a loop's history row and the Run section's counter.
func (r *Runner) recordLoop(rep *RunReport, lr LoopRecord) error {
	o := r.O
	if err := AppendHistory(o.Dir, lr); err != nil {
		return err
	}
	ev := Event{Time: lr.Finished, Event: EvLoop, RunID: lr.RunID, Loop: lr.Loop, Status: lr.Result,
		DurationMS: lr.Finished.Sub(lr.Started).Milliseconds(), Workspace: lr.Workspace, Progress: lr.Progress, Facts: lr.Facts}
	if f := r.failed; f != nil && f.Loop == lr.Loop {
		ev.Error, ev.OutputTail = f.Exit, f.Tail // the cause, for people and the next loop
	}
	err := o.store().Update(context.Background(), func(q *issuequeue.Queue, st *issuequeue.State) (issuequeue.Change, error) {
		return issuequeue.Change{State: []issuequeue.Edit{
			issuequeue.SetField(issuequeue.SectionRun, issuequeue.StateLoops, strconv.Itoa(lr.Loop)),
		}, After: func() error {
			return o.log().Record(ev)
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

// escalatePermanent escalates the issues in progress of a loop that failed
// with a permanent error: retrying cannot fix it. pattern is what in its
// output said so.
func (r *Runner) escalatePermanent(rep *RunReport, lr *LoopRecord, pattern string) error {
	o := r.O
	return o.store().Update(context.Background(), func(q *issuequeue.Queue, st *issuequeue.State) (issuequeue.Change, error) {
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
				if err := o.log().Record(Event{Time: r.now(), Event: EvEscalated, IssueID: is.ID, RunID: rep.RunID, Reason: string(CodePermanentError), Code: CodePermanentError,
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
}
