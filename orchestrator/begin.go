package orchestrator

import (
	"context"
	"errors"
	"os"
	"strconv"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/statefile"
	"github.com/autoretry/orchestrator/issuequeue"
)

// Opening a run: its id, the session state it starts from, and the tidying
// of the logs it appends to.

// NewRunID returns a run id: the start time and the process id.
func NewRunID(now time.Time, pid int) string {
	return now.UTC().Format("20060102T150405Z") + "-" + strconv.Itoa(pid)
}

// Begin opens a run for an external driver: it resets the
// Auto-Retry State counters and the Run section, and keeps the circuit
// breaker and auto_retry_enabled. It fails with a *statefile.BusyError while
// an "orchestrator run" holds the run lock.
func (o *Orchestrator) Begin(ctx context.Context) (string, error) {
	lk, err := statefile.TryRunLock(o.Dir, statefile.Owner{Command: "begin"})
	if err != nil {
		var nf *os.PathError
		if errors.As(err, &nf) {
			return "", &issuequeue.NoStateDirError{Dir: o.Dir}
		}
		return "", err
	}
	defer lk.Unlock()
	now := o.now()
	id := NewRunID(now, os.Getpid())
	err = o.store().Update(ctx, func(q *issuequeue.Queue, st *issuequeue.State) (issuequeue.Change, error) {
		return issuequeue.Change{State: ResetRun(id, now), After: func() error {
			if err := o.tidy(now); err != nil {
				return err
			}
			return o.log().Record(Event{Time: now, Event: EvRunStarted, RunID: id, Reason: "begin"})
		}}, nil
	})
	return id, err
}

// tidy keeps what the tool appends to small as a run opens: the logs
// pruned to their retention, old loop output removed, history.csv rotated
// by month. The caller holds the write lock, so nothing is appended
// meanwhile.
func (o *Orchestrator) tidy(now time.Time) error {
	cfg := o.Config.Logs
	if err := o.log().Prune(now, cfg.TextRetention, cfg.JSONLRetention); err != nil {
		return err
	}
	pruneLoopLogs(o.paths().LoopLogs(), now.Add(-cfg.TextRetention))
	return RotateHistory(o.Dir, now, cfg.HistoryKeep)
}

// ResetRun returns the session state edits that start run id at now.
func ResetRun(id string, now time.Time) []issuequeue.Edit {
	const ar, run = issuequeue.SectionAutoRetry, issuequeue.SectionRun
	return []issuequeue.Edit{
		issuequeue.SetField(ar, issuequeue.StateTotalAutoRetries, "0"),
		issuequeue.SetField(ar, issuequeue.StateLastRetryReason, issuequeue.Null),
		issuequeue.SetField(run, issuequeue.StateRunID, id),
		issuequeue.SetField(run, issuequeue.StateStartedAt, issuequeue.FormatTime(now)),
		issuequeue.SetField(run, issuequeue.StateFinishedAt, issuequeue.Null),
		issuequeue.SetField(run, issuequeue.StateLoops, "0"),
		issuequeue.SetField(run, issuequeue.StateOutcome, "running"),
	}
}
