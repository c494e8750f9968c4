package report

import (
	"sort"
	"time"

	"github.com/autoretry/orchestrator/orchestrator"
)

// keepRuns is how many of the latest runs the charts draw, and so how many
// runs the report holds whole; older ones are only counted.
const keepRuns = max(maxRunBars, maxOutcomeRun)

// Runs aggregates the history row by row, holding the latest keepRuns runs
// and totals of the rest, so that the report's memory does not grow with
// the history it covers.
type Runs struct {
	Count       int // runs
	Loops, Auto int // loops, and auto-retry loops among them
	Transient   int // transient retries
	Wall        time.Duration
	First, Last time.Time // when the first loop started and the last ended
	Breaker     string    // after the last row
	recent      []*run    // the latest runs, in the order they began in the history
}

// Add counts one row. The rows of a run are written together, so a row
// belongs to one of the latest runs or starts a new one.
func (a *Runs) Add(r orchestrator.LoopRecord) {
	if a.First.IsZero() || r.Started.Before(a.First) {
		a.First = r.Started
	}
	if r.Finished.After(a.Last) {
		a.Last = r.Finished
	}
	a.Loops++
	a.Transient += r.TransientRetries
	a.Breaker = r.Breaker
	var rn *run
	for i := len(a.recent) - 1; i >= 0; i-- {
		if a.recent[i].ID == r.RunID {
			rn = a.recent[i]
			break
		}
	}
	if rn == nil {
		if len(a.recent) == keepRuns {
			old := a.recent[0]
			a.Wall += old.End.Sub(old.Start)
			a.recent = append(a.recent[:0], a.recent[1:]...)
		}
		rn = &run{ID: r.RunID, Start: r.Started, End: r.Finished}
		a.recent = append(a.recent, rn)
		a.Count++
	}
	rn.Loops = append(rn.Loops, r)
	if r.Started.Before(rn.Start) {
		rn.Start = r.Started
	}
	if r.Finished.After(rn.End) {
		rn.End = r.Finished
	}
	if r.Kind == "auto_retry" {
		rn.Auto++
		a.Auto++
	} else {
		rn.Regular++
	}
	rn.Resolved += len(r.Resolved)
}

// latest returns the latest runs in start order, each with its loops in
// order, and the wall time of every run.
func (a *Runs) latest() ([]*run, time.Duration) {
	wall := a.Wall
	for _, rn := range a.recent {
		wall += rn.End.Sub(rn.Start)
		sort.SliceStable(rn.Loops, func(i, j int) bool { return rn.Loops[i].Loop < rn.Loops[j].Loop })
	}
	sort.SliceStable(a.recent, func(i, j int) bool { return a.recent[i].Start.Before(a.recent[j].Start) })
	return a.recent, wall
}
