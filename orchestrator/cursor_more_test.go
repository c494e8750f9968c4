package orchestrator

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// historyRecord is a loop of run "r" numbered loop, finished at t.
func historyRecord(loop int, t time.Time) LoopRecord {
	return LoopRecord{RunID: "r", Loop: loop, Kind: "regular", Started: t.Add(-time.Minute), Finished: t, Result: ResultOK, Breaker: "closed"}
}

// readHistoryAfter returns the loops ReadHistoryAfter reads after c.
func readHistoryAfter(t *testing.T, dir string, c HistoryCursor) (loops []int, next HistoryCursor, ok bool) {
	t.Helper()
	next, ok, errs := ReadHistoryAfter(dir, c, func(r LoopRecord) { loops = append(loops, r.Loop) })
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return loops, next, ok
}

func sameInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// ReadHistoryAfter reads each row once: from the zero cursor all of them,
// then only the rows added after the cursor, and nothing when none was.
func TestReadHistoryAfterReadsOnlyNewRows(t *testing.T) {
	dir := t.TempDir()
	day := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	if loops, c, ok := readHistoryAfter(t, dir, HistoryCursor{}); !ok || len(loops) != 0 || c != (HistoryCursor{}) {
		t.Fatalf("no history: loops %v, cursor %+v, ok %v", loops, c, ok)
	}
	for i := 1; i <= 2; i++ {
		if err := AppendHistory(dir, historyRecord(i, day.Add(time.Duration(i)*time.Minute))); err != nil {
			t.Fatal(err)
		}
	}
	loops, c, ok := readHistoryAfter(t, dir, HistoryCursor{})
	if !ok || !sameInts(loops, []int{1, 2}) {
		t.Fatalf("from the start: loops %v, ok %v; want 1 2", loops, ok)
	}
	if c.File != "history.csv" || !strings.HasPrefix(c.Last, "r,2,") {
		t.Errorf("cursor %+v, want after loop 2 of history.csv", c)
	}
	if loops, c2, ok := readHistoryAfter(t, dir, c); !ok || len(loops) != 0 || c2 != c {
		t.Errorf("nothing added: loops %v, cursor %+v (was %+v), ok %v", loops, c2, c, ok)
	}
	if err := AppendHistory(dir, historyRecord(3, day.Add(3*time.Minute))); err != nil {
		t.Fatal(err)
	}
	if loops, _, ok := readHistoryAfter(t, dir, c); !ok || !sameInts(loops, []int{3}) {
		t.Errorf("after one more row: loops %v, ok %v; want 3", loops, ok)
	}
}

// After history.csv is rotated into its month, the cursor's row is found
// in the rotated file and only what came after it is read.
func TestReadHistoryAfterRotation(t *testing.T) {
	dir := t.TempDir()
	nov := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	for i := 1; i <= 3; i++ {
		if err := AppendHistory(dir, historyRecord(i, nov.Add(time.Duration(i)*time.Minute))); err != nil {
			t.Fatal(err)
		}
	}
	_, c, _ := readHistoryAfter(t, dir, HistoryCursor{})
	dec := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	if err := RotateHistory(dir, dec, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "history-2026-11.csv")); err != nil {
		t.Fatalf("November was not rotated: %v", err)
	}
	if err := AppendHistory(dir, historyRecord(4, dec)); err != nil {
		t.Fatal(err)
	}
	loops, next, ok := readHistoryAfter(t, dir, c)
	if !ok || !sameInts(loops, []int{4}) {
		t.Fatalf("after the rotation: loops %v, ok %v; want 4", loops, ok)
	}
	if next.File != "history.csv" || !strings.HasPrefix(next.Last, "r,4,") {
		t.Errorf("cursor %+v, want after loop 4 of history.csv", next)
	}
}

// When the cursor's row is no longer where it says (history.csv was
// replaced), nothing is read and ok is false, so the caller starts again.
func TestReadHistoryAfterReplacedFile(t *testing.T) {
	dir := t.TempDir()
	day := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	for i := 1; i <= 2; i++ {
		if err := AppendHistory(dir, historyRecord(i, day.Add(time.Duration(i)*time.Minute))); err != nil {
			t.Fatal(err)
		}
	}
	_, c, _ := readHistoryAfter(t, dir, HistoryCursor{})
	if err := os.Remove(HistoryPath(dir)); err != nil {
		t.Fatal(err)
	}
	for i := 7; i <= 9; i++ {
		if err := AppendHistory(dir, historyRecord(i, day.Add(time.Duration(i)*time.Minute))); err != nil {
			t.Fatal(err)
		}
	}
	loops, next, ok := readHistoryAfter(t, dir, c)
	if ok || len(loops) != 0 || next != c {
		t.Errorf("replaced history.csv: loops %v, cursor %+v, ok %v; want nothing read, the cursor back, not ok", loops, next, ok)
	}
	if loops, _, ok := readHistoryAfter(t, dir, HistoryCursor{}); !ok || !sameInts(loops, []int{7, 8, 9}) {
		t.Errorf("from the start again: loops %v, ok %v; want 7 8 9", loops, ok)
	}
}

// ledgerEvent is an event of issue id at t.
func ledgerEvent(id string, t time.Time) Event {
	return Event{Time: t, Event: EvAttempt, IssueID: id, Status: "failed"}
}

// readLedgerAfter returns the issues of the events ReadLedgerAfter reads after c.
func readLedgerAfter(t *testing.T, dir string, c LedgerCursor) ([]string, LedgerCursor) {
	t.Helper()
	var ids []string
	next, err := ReadLedgerAfter(dir, c, func(ev Event) { ids = append(ids, ev.IssueID) })
	if err != nil {
		t.Fatal(err)
	}
	return ids, next
}

// ReadLedgerAfter reads each event once, and only whole lines: one being
// written is left for the next read.
func TestReadLedgerAfterReadsOnlyNewWholeLines(t *testing.T) {
	dir := t.TempDir()
	log := EventLog{Dir: dir}
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	if ids, c := readLedgerAfter(t, dir, LedgerCursor{}); len(ids) != 0 || c != (LedgerCursor{}) {
		t.Fatalf("no ledger: %v, cursor %+v", ids, c)
	}
	for _, id := range []string{"A", "B"} {
		t0 = t0.Add(time.Minute)
		if err := log.Record(ledgerEvent(id, t0)); err != nil {
			t.Fatal(err)
		}
	}
	ids, c := readLedgerAfter(t, dir, LedgerCursor{})
	if strings.Join(ids, "") != "AB" || !strings.Contains(c.Last, `"B"`) {
		t.Fatalf("from the start: %v, cursor %+v; want A B", ids, c)
	}
	if ids, c2 := readLedgerAfter(t, dir, c); len(ids) != 0 || c2 != c {
		t.Errorf("nothing appended: %v, cursor %+v (was %+v)", ids, c2, c)
	}

	// A line half written: not read, and the cursor stays before it.
	f, err := os.OpenFile(PathsIn(dir).Ledger(), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	line := `{"timestamp":"2026-11-22T10:05:00Z","event":"attempt","issue_id":"C","status":"failed"}`
	if _, err := f.WriteString(line[:20]); err != nil {
		t.Fatal(err)
	}
	if ids, c2 := readLedgerAfter(t, dir, c); len(ids) != 0 || c2 != c {
		t.Errorf("a half-written line was read: %v, cursor %+v", ids, c2)
	}
	if _, err := f.WriteString(line[20:] + "\n"); err != nil {
		t.Fatal(err)
	}
	ids, c2 := readLedgerAfter(t, dir, c)
	if strings.Join(ids, "") != "C" || c2.Last != line {
		t.Errorf("the completed line: %v, cursor %+v; want C", ids, c2)
	}
}

// After the ledger is pruned (the offsets move), the cursor's line is found
// again and only what follows it is read; when the line itself is gone, the
// events newer than it are.
func TestReadLedgerAfterPruneAndRewrite(t *testing.T) {
	dir := t.TempDir()
	log := EventLog{Dir: dir}
	t0 := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	at := func(d int) time.Time { return t0.AddDate(0, 0, d) }
	for d, id := range []string{"A", "B", "C"} {
		if err := log.Record(ledgerEvent(id, at(d))); err != nil {
			t.Fatal(err)
		}
	}
	_, c := readLedgerAfter(t, dir, LedgerCursor{})
	if err := log.Record(ledgerEvent("D", at(3))); err != nil {
		t.Fatal(err)
	}
	// Keep the events from day 1 on: A goes, every offset moves.
	if err := log.Prune(at(2), 24*time.Hour, 24*time.Hour); err != nil {
		t.Fatal(err)
	}
	evs, _ := ReadEvents(dir)
	if len(evs) != 3 || evs[0].IssueID != "B" {
		t.Fatalf("the prune kept %+v, want B C D", evs)
	}
	ids, c2 := readLedgerAfter(t, dir, c)
	if strings.Join(ids, "") != "D" {
		t.Errorf("after the prune: %v, want D alone", ids)
	}

	// Rewritten without the cursor's line (D) but with an older and a newer
	// event: only the newer one is new.
	p := PathsIn(dir).Ledger()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if l != "" && !strings.Contains(l, `"D"`) {
			kept = append(kept, l)
		}
	}
	if err := os.WriteFile(p, []byte(strings.Join(kept, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := log.Record(ledgerEvent("E", at(4))); err != nil {
		t.Fatal(err)
	}
	if ids, _ := readLedgerAfter(t, dir, c2); strings.Join(ids, "") != "E" {
		t.Errorf("the cursor's line gone: %v, want E alone (B and C are older)", ids)
	}
}
