package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/autoretry/orchestrator/internal/foundations/config"
	"github.com/autoretry/orchestrator/internal/foundations/statefile"
	"github.com/autoretry/orchestrator/orchestrator"
)

// heartbeat runs [notify] heartbeat once for a run that ended with err
// (what the command returns, so the exit status is the process's) and
// report rep. A heartbeat that fails is a warning: it never changes the
// exit status.
func (e *env) heartbeat(ctx context.Context, cfg *config.Config, rep orchestrator.RunReport, err error) {
	if cfg == nil || cfg.Notify.Heartbeat == "" {
		return
	}
	b := orchestrator.Beat{ExitStatus: exitStatusOf(err), Outcome: rep.Outcome, Code: rep.Code, Reason: rep.Reason,
		RunID: rep.RunID, Loops: rep.Loops, NeedsPerson: orchestrator.IssuesNeedingPerson(e.dir)}
	var be *statefile.BusyError
	switch {
	case b.Outcome != "":
	case errors.As(err, &be):
		b.Outcome = "busy"
	case err != nil:
		b.Outcome, b.Reason = "error", err.Error()
	default:
		b.Outcome = "completed"
	}
	if b.Code == "" {
		var se *orchestrator.StopError
		if errors.As(err, &se) {
			b.Code = se.Code
		}
	}
	if herr := orchestrator.Heartbeat(context.WithoutCancel(ctx), e.dir, cfg.Notify.Heartbeat, b, nil); herr != nil {
		fmt.Fprintf(e.stderr, "orchestrator: warning: %v\n", herr)
	}
}

// exitStatusOf returns the exit status Main ends with for err.
func exitStatusOf(err error) int {
	if code, ok := quietStatus(err); ok {
		return code
	}
	code, _ := classify(err)
	return code
}
