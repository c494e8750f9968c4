package replay

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/autoretry/orchestrator/orchestrator"
)

// Outcomes reads what the engine decided in each run from the event log
// of the state directory dir: the loops it ran, the code it stopped with,
// and the issues its rules halted, in the order the runs started.
func Outcomes(dir string) ([]Outcome, error) {
	var outs []Outcome
	at := map[string]int{} // run id -> index in outs
	errs := orchestrator.EachEvent(dir, time.Time{}, func(ev orchestrator.Event) {
		if ev.RunID == "" {
			return
		}
		i, ok := at[ev.RunID]
		if !ok {
			if ev.Event != orchestrator.EvRunStarted && ev.Event != orchestrator.EvStopped {
				return // a command's event between runs, filed under the last run
			}
			i = len(outs)
			at[ev.RunID] = i
			outs = append(outs, Outcome{Run: i + 1})
		}
		o := &outs[i]
		switch ev.Event {
		case orchestrator.EvLoop, orchestrator.EvExec:
			o.Loops = max(o.Loops, ev.Loop)
		case orchestrator.EvRunFinished, orchestrator.EvStopped:
			if o.Code == "" {
				o.Code = ev.Code
			}
		case orchestrator.EvHalted, orchestrator.EvEscalated, orchestrator.EvCapReached:
			if ev.Code != "" && !slices.ContainsFunc(o.Halts, func(h Halt) bool { return h.Issue == ev.IssueID }) {
				o.Halts = append(o.Halts, Halt{Issue: ev.IssueID, Loop: o.Loops, Code: ev.Code})
			}
		}
	})
	if len(errs) > 0 {
		return nil, fmt.Errorf("reading the event log: %w", errors.Join(errs...))
	}
	return outs, nil
}
