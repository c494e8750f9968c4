package replay

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/autoretry/orchestrator/orchestrator"
)

// Outcomes reads what the engine decided in each run from the event log
// of the state directory dir: the loops it ran, the code it stopped with,
// and the issues its rules halted, in the order the runs started.
func Outcomes(dir string) ([]Outcome, error) {
	var outs []Outcome
	at := map[string]int{} // run id -> index in outs
	var cur []int          // each run's loop in progress
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
			cur = append(cur, 0)
		}
		outs[i].note(ev, &cur[i])
	})
	if len(errs) > 0 {
		return nil, fmt.Errorf("reading the event log: %w", errors.Join(errs...))
	}
	for _, o := range outs {
		sortHalts(o.Halts)
	}
	return outs, nil
}

// note takes what an event of the run says the engine decided; cur is the
// loop in progress: a halt during a loop's execution (by its QA step's
// "fail") is logged before the loop's own events.
func (o *Outcome) note(ev orchestrator.Event, cur *int) {
	switch ev.Event {
	case orchestrator.EvRunStarted:
		*cur = 1
	case orchestrator.EvAutoRetryLoop:
		*cur = o.Loops + 1
	case orchestrator.EvLoop, orchestrator.EvExec:
		o.Loops, *cur = max(o.Loops, ev.Loop), max(*cur, ev.Loop)
	case orchestrator.EvRunFinished, orchestrator.EvStopped:
		if o.Code == "" {
			o.Code = ev.Code
		}
	case orchestrator.EvHalted, orchestrator.EvEscalated, orchestrator.EvCapReached:
		if ev.Code != "" && !slices.ContainsFunc(o.Halts, func(h Halt) bool { return h.Issue == ev.IssueID }) {
			o.Halts = append(o.Halts, Halt{Issue: ev.IssueID, Loop: *cur, Code: ev.Code})
		}
	}
}

// sortHalts orders halts by loop, then issue: the halts after one loop
// are one decision, whatever order the log gives them.
func sortHalts(hs []Halt) {
	slices.SortStableFunc(hs, func(a, b Halt) int {
		if a.Loop != b.Loop {
			return a.Loop - b.Loop
		}
		return strings.Compare(a.Issue, b.Issue)
	})
}
