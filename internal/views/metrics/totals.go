package metrics

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/statefile"
	"github.com/autoretry/orchestrator/orchestrator"
)

// totalsVersion changes when what the totals count changes; totals of
// another version are counted again from the files.
const totalsVersion = 1

// totals are the running counters and where in the files they stand: the
// content of logs/metrics-state.json.
type totals struct {
	Version int                        `json:"version"`
	History orchestrator.HistoryCursor `json:"history"`
	Ledger  orchestrator.LedgerCursor  `json:"ledger"`
	LastRun string                     `json:"last_run,omitempty"`
	// Open holds, by issue, when its retry sequence that has not ended yet
	// began.
	Open     map[string]time.Time `json:"open"`
	Snapshot Snapshot             `json:"counters"`
}

func newTotals() *totals {
	return &totals{Version: totalsVersion, Open: map[string]time.Time{}, Snapshot: newSnapshot()}
}

// Update brings the running totals of state directory dir up to date with
// the rows and events written since they were last saved, saves them, and
// returns the snapshot. Its cost follows what was added, not the age of the
// history. Totals that are missing or unreadable are counted again from
// everything the files hold, once; when only history.csv no longer matches
// (edited by hand, or split into months), only its rows are counted again,
// so that what was counted from events since pruned stays counted. Reading the same files, it
// gives what Compute gives over ReadHistory and ReadEvents.
func Update(dir string) (Snapshot, error) {
	path := orchestrator.PathsIn(dir).MetricsState()
	t := loadTotals(path)
	h, ok, _ := orchestrator.ReadHistoryAfter(dir, t.History, t.addLoop)
	if !ok {
		t.forgetHistory()
		h, _, _ = orchestrator.ReadHistoryAfter(dir, t.History, t.addLoop)
	}
	t.History = h
	var batch []orchestrator.Event
	l, err := orchestrator.ReadLedgerAfter(dir, t.Ledger, func(ev orchestrator.Event) {
		if batch = append(batch, ev); len(batch) == eventBatch {
			t.addEvents(batch)
			batch = batch[:0]
		}
	})
	if err != nil {
		return Snapshot{}, fmt.Errorf("reading the event log for the metrics: %w", err)
	}
	t.addEvents(batch)
	t.Ledger = l
	err = statefile.WriteAtomic(path, func(w io.Writer) error { return json.NewEncoder(w).Encode(t) })
	if err != nil {
		return Snapshot{}, fmt.Errorf("saving the metrics totals: %w", err)
	}
	return t.Snapshot, nil
}

// forgetHistory takes back what was counted from the history rows, to
// count them again from the start, and keeps what was counted from the
// event log, whose older lines pruning may have removed since.
func (t *totals) forgetHistory() {
	s, fresh := &t.Snapshot, newSnapshot()
	s.Runs, s.Loops, s.AutoRetryLoops, s.FailedLoops, s.ImmediateFailures = 0, 0, 0, fresh.FailedLoops, 0
	s.RetryAttempts[KindTransient], s.RetrySuccess[KindTransient], s.RetryFailure[KindTransient] = 0, 0, 0
	s.Last, s.LastLoopFinished, s.RunAutoRetries, s.BreakerOpen = false, time.Time{}, 0, false
	t.LastRun, t.History = "", orchestrator.HistoryCursor{}
}

// loadTotals reads the saved totals; anything it cannot use gives new,
// empty totals, which Update counts from the start of the files.
func loadTotals(path string) *totals {
	b, err := statefile.ReadThrough(path) // a FIFO is refused, not waited on
	if err != nil {
		return newTotals()
	}
	var t totals
	if json.Unmarshal(b, &t) != nil || t.Version != totalsVersion || !t.valid() {
		return newTotals()
	}
	if t.Open == nil {
		t.Open = map[string]time.Time{}
	}
	return &t
}

// valid reports whether saved totals have every counter Update adds to.
func (t *totals) valid() bool {
	s, fresh := t.Snapshot, newSnapshot()
	for _, m := range []struct{ got, want map[string]int }{
		{s.RetryAttempts, fresh.RetryAttempts}, {s.RetrySuccess, fresh.RetrySuccess},
		{s.RetryFailure, fresh.RetryFailure}, {s.FailedLoops, fresh.FailedLoops},
	} {
		if len(m.got) != len(m.want) {
			return false
		}
		for k := range m.want {
			if _, ok := m.got[k]; !ok {
				return false
			}
		}
	}
	return slices.Equal(s.RetryDelay.Bounds, DelayBuckets) && len(s.RetryDelay.Counts) == len(DelayBuckets)+1 &&
		slices.Equal(s.RetryDuration.Bounds, DurationBuckets) && len(s.RetryDuration.Counts) == len(DurationBuckets)+1
}
