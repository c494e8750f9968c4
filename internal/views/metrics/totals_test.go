package metrics_test

import (
	"bytes"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/internal/views/metrics"
	"github.com/autoretry/orchestrator/orchestrator"
)

// textOf renders a snapshot as the textfile has it.
func textOf(t *testing.T, s metrics.Snapshot) string {
	t.Helper()
	var b bytes.Buffer
	if _, err := s.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// whole derives the metrics from every file, as if nothing had been kept.
func whole(t *testing.T, dir string) string {
	t.Helper()
	hist, _ := orchestrator.ReadHistory(dir)
	evs, _ := orchestrator.ReadEvents(dir)
	return textOf(t, metrics.Compute(hist, evs))
}

// simRun appends what one run writes: loops rows and their events, issue
// i's retry ending one way or another.
func simRun(t *testing.T, dir string, n int, start time.Time) {
	t.Helper()
	log := orchestrator.EventLog{Dir: dir}
	id := fmt.Sprintf("ISSUE-20261001-%03d", n%7)
	run := fmt.Sprintf("run-%d", n)
	results := []string{orchestrator.ResultOK, orchestrator.ResultFailed, orchestrator.ResultTimeout, orchestrator.ResultPermanent, "odd"}
	for loop := 1; loop <= 3; loop++ {
		at := start.Add(time.Duration(loop) * time.Minute)
		kind := "regular"
		if loop > 1 {
			kind = "auto_retry"
			if err := log.Record(orchestrator.Event{Time: at, Event: orchestrator.EvTriggered, IssueID: id, Attempt: loop - 1}); err != nil {
				t.Fatal(err)
			}
		}
		if n%3 == 0 {
			log.Record(orchestrator.Event{Time: at.Add(time.Second), Event: orchestrator.EvTransient, DurationMS: int64(500 * n)})
		}
		r := orchestrator.LoopRecord{RunID: run, Loop: loop, Kind: kind, Started: at, Finished: at.Add(30 * time.Second),
			Result: results[(n+loop)%len(results)], TransientRetries: n % 3, TotalAutoRetries: loop - 1, Breaker: "closed"}
		if err := orchestrator.AppendHistory(dir, r); err != nil {
			t.Fatal(err)
		}
	}
	end := start.Add(4 * time.Minute)
	var err error
	switch n % 4 {
	case 0:
		err = log.Record(orchestrator.Event{Time: end, Event: orchestrator.EvResolved, IssueID: id, Resolution: "resolved", TotalAttempts: 3})
	case 1:
		err = log.Record(orchestrator.Event{Time: end, Event: orchestrator.EvEscalated, IssueID: id, Reason: "same_failure_repeated"})
	case 2:
		err = log.Record(orchestrator.Event{Time: end, Event: orchestrator.EvEscalated, IssueID: id, Reason: "max_retries_exceeded"})
	}
	if err != nil {
		t.Fatal(err)
	}
}

// The textfile kept by running totals, updated after every run across
// month rotations, equals the one derived from the whole history at every
// step; and totals that are lost are counted again to the same values.
func TestUpdateEqualsWholeHistory(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2026, 9, 28, 0, 0, 0, 0, time.UTC)
	for n := 0; n < 60; n++ {
		at := start.Add(time.Duration(n) * 16 * time.Hour) // 40 days: two month ends
		if err := orchestrator.RotateHistory(dir, at, 0); err != nil {
			t.Fatal(err)
		}
		simRun(t, dir, n, at)
		s, err := metrics.Update(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := textOf(t, s), whole(t, dir); got != want {
			t.Fatalf("after run %d, the running totals give\n%s\nthe whole history gives\n%s", n, got, want)
		}
	}
	if files := orchestrator.HistoryFiles(dir); len(files) != 3 {
		t.Fatalf("the test meant to cross two month ends: %v", files)
	}
	want := whole(t, dir)
	// Lost totals, and totals no program could have written, are counted
	// again.
	state := orchestrator.PathsIn(dir).MetricsState()
	for _, damage := range []func(){
		func() { os.Remove(state) },
		func() { os.WriteFile(state, []byte(`{"version":1,"counters":{}}`), 0o644) },
		func() { os.WriteFile(state, []byte("{not json"), 0o644) },
	} {
		damage()
		s, err := metrics.Update(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got := textOf(t, s); got != want {
			t.Fatalf("counted again:\n%s\nwant\n%s", got, want)
		}
	}
}

// Only whole lines count: an event being written is counted once it is
// whole, and once only; a history.csv edited by hand is counted again.
func TestUpdateTornLinesAndEdits(t *testing.T) {
	dir := t.TempDir()
	at := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	simRun(t, dir, 1, at)
	if _, err := metrics.Update(dir); err != nil {
		t.Fatal(err)
	}
	ledger := orchestrator.PathsIn(dir).Ledger()
	line := `{"timestamp":"2026-11-02T01:00:00Z","event":"triggered","issue_id":"ISSUE-20261102-009","attempt":1}` + "\n"
	appendTo := func(path, s string) {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(s)
		f.Close()
	}
	appendTo(ledger, line[:50])
	s, _ := metrics.Update(dir)
	before := s.RetryAttempts[metrics.KindAutoRetry]
	appendTo(ledger, line[50:])
	s, _ = metrics.Update(dir)
	if got := s.RetryAttempts[metrics.KindAutoRetry]; got != before+1 {
		t.Errorf("auto-retry attempts %d after the line was finished, want %d", got, before+1)
	}
	if got, want := textOf(t, s), whole(t, dir); got != want {
		t.Errorf("after a torn line:\n%s\nwant\n%s", got, want)
	}
	deleteLastRow(t, dir)
	s, _ = metrics.Update(dir)
	if got, want := textOf(t, s), whole(t, dir); got != want {
		t.Errorf("after an edit of history.csv:\n%s\nwant\n%s", got, want)
	}
}

// countedThenPruned simulates four daily runs, counts them, and prunes the
// event log on the fifth day (now): counted is the auto-retry attempts
// counted before the prune.
func countedThenPruned(t *testing.T) (dir string, counted int, now time.Time) {
	t.Helper()
	dir = t.TempDir()
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for n := 0; n < 4; n++ {
		simRun(t, dir, n, start.Add(time.Duration(n)*24*time.Hour))
	}
	s, _ := metrics.Update(dir)
	counted = s.RetryAttempts[metrics.KindAutoRetry]
	now = start.Add(4 * 24 * time.Hour)
	if err := (orchestrator.EventLog{Dir: dir}).Prune(now, 24*time.Hour, 36*time.Hour); err != nil {
		t.Fatal(err)
	}
	return dir, counted, now
}

// deleteLastRow deletes history.csv's last row, as a person might.
func deleteLastRow(t *testing.T, dir string) {
	t.Helper()
	hist := orchestrator.HistoryPath(dir)
	b, err := os.ReadFile(hist)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hist, b[:bytes.LastIndexByte(b[:len(b)-1], '\n')+1], 0o644); err != nil {
		t.Fatal(err)
	}
}

// Pruning the event log does not take back what was counted, and does not
// count anything twice.
func TestUpdateAcrossPrune(t *testing.T) {
	dir, counted, now := countedThenPruned(t)
	simRun(t, dir, 4, now)
	s, _ := metrics.Update(dir)
	if got := s.RetryAttempts[metrics.KindAutoRetry]; got != counted+2 {
		t.Errorf("auto-retry attempts after pruning and one more run: %d, want %d + 2", got, counted)
	}
}

// History counted again (history.csv no longer matching the saved cursor)
// does not take back what was counted from events that pruning has removed
// since.
func TestUpdateRecountKeepsPrunedEvents(t *testing.T) {
	dir, counted, _ := countedThenPruned(t)
	deleteLastRow(t, dir) // the rows are counted again
	s, _ := metrics.Update(dir)
	if got := s.RetryAttempts[metrics.KindAutoRetry]; got != counted {
		t.Errorf("auto-retry attempts after history was counted again: %d, want %d", got, counted)
	}
	if got, want := s.Loops, 4*3-1; got != want {
		t.Errorf("loops after the edit: %d, want %d", got, want)
	}
}

// Update reads only what was added: rows already counted, in history.csv
// or in the month it was rotated into, are not read again.
func TestUpdateReadsOnlyWhatIsNew(t *testing.T) {
	dir := t.TempDir()
	oct := time.Date(2026, 10, 30, 0, 0, 0, 0, time.UTC)
	simRun(t, dir, 4, oct) // results failed, timeout, permanent
	simRun(t, dir, 8, oct.Add(time.Hour))
	before, err := metrics.Update(dir)
	if err != nil {
		t.Fatal(err)
	}
	nov := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	if err := orchestrator.RotateHistory(dir, nov, 0); err != nil {
		t.Fatal(err)
	}
	// Change a counted row in place, its length and the last row kept: if
	// Update read it again, the change would show.
	rotated := orchestrator.HistoryFiles(dir)[0]
	b, _ := os.ReadFile(rotated)
	edited := bytes.Replace(b, []byte(",failed,"), []byte(",xailed,"), 1)
	if bytes.Equal(edited, b) {
		t.Fatal("no row to change")
	}
	os.WriteFile(rotated, edited, 0o644)
	simRun(t, dir, 12, nov)
	after, err := metrics.Update(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := after.FailedLoops["unknown"], before.FailedLoops["unknown"]+1; got != want {
		t.Errorf("unknown results %d after the new run, want %d: counted rows were read again", got, want)
	}
	if after.Loops != before.Loops+3 || after.Runs != before.Runs+1 {
		t.Errorf("loops %d runs %d, want %d and %d", after.Loops, after.Runs, before.Loops+3, before.Runs+1)
	}
}
