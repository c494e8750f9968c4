package orchestrator

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A loop's executions go to the shared ledger exactly as the state
// directory's own event log recorded them, only that loop's, under the
// absolute state directory; the tokens the loop's output states go with
// its last execution. A relative shared directory is beside the state
// directory.
func TestShareExecs(t *testing.T) {
	o := newTestOrchestrator(t)
	o.Now = func() time.Time { return testNow }
	if u, err := o.ReadShared(testNow); u != nil || err != nil {
		t.Fatalf("no shared budget: %+v, %v", u, err)
	}
	if err := o.shareExecs("R", 1, testNow.Add(-time.Hour)); err != nil {
		t.Fatalf("no shared budget: %v", err)
	}
	o.Config.SharedBudget.Dir = "shared"
	shared := filepath.Join(filepath.Dir(o.Dir), "shared")
	since := testNow.Add(-10 * time.Minute)
	for _, ev := range []Event{
		{Time: since.Add(-time.Minute), Event: EvExec, RunID: "R", Loop: 2, Kind: KindAutoRetry, DurationMS: 9},
		{Time: since.Add(time.Minute), Event: EvExec, RunID: "R", Loop: 1, Kind: KindRegular, DurationMS: 1000},
		{Time: since.Add(2 * time.Minute), Event: EvExec, RunID: "R", Loop: 2, Kind: KindAutoRetry, DurationMS: 2000, Cost: 0.25},
		{Time: since.Add(3 * time.Minute), Event: EvExec, RunID: "Q", Loop: 2, Kind: KindAutoRetry, DurationMS: 7},
		{Time: since.Add(4 * time.Minute), Event: EvAttempt, RunID: "R", Loop: 2},
		{Time: since.Add(5 * time.Minute), Event: EvExec, RunID: "R", Loop: 2, Kind: KindAutoRetry, Attempt: 2, DurationMS: 3000, Cost: 0.5},
	} {
		if err := o.log().Record(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(o.paths().LoopLogs(), 0o755); err != nil {
		t.Fatal(err)
	}
	out := `{"type":"result","subtype":"success","is_error":false,"total_cost_usd":0.5,"usage":{"input_tokens":1200,"output_tokens":300}}` + "\n"
	if err := os.WriteFile(filepath.Join(o.paths().LoopLogs(), "R-02.log"), []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := o.shareExecs("R", 2, since); err != nil {
		t.Fatal(err)
	}
	u, err := o.ReadShared(testNow)
	if err != nil || u == nil {
		t.Fatalf("ReadShared = %+v, %v", u, err)
	}
	abs, _ := filepath.Abs(o.Dir)
	want := []SharedEntry{
		{Time: since.Add(2 * time.Minute), Dir: abs, RunID: "R", Loop: 2, Kind: KindAutoRetry, DurationMS: 2000, Cost: 0.25},
		{Time: since.Add(5 * time.Minute), Dir: abs, RunID: "R", Loop: 2, Kind: KindAutoRetry, Attempt: 2, DurationMS: 3000, Cost: 0.5, Tokens: 1500},
	}
	if fmt.Sprint(u.Entries) != fmt.Sprint(want) {
		t.Errorf("shared entries:\n%+v\nwant\n%+v", u.Entries, want)
	}
	if u.AutoRetryLoops() != 1 || u.Loops() != 2 {
		t.Errorf("%d loops, %d auto-retry loops; want 2 executions of one auto-retry loop", u.Loops(), u.AutoRetryLoops())
	}
	if _, err := os.Stat(filepath.Join(shared, SharedLedgerFile)); err != nil {
		t.Errorf("the shared ledger is not beside the state directory: %v", err)
	}
}

// A shared ledger grown past a few MiB is cut to its last two days before
// the next append, dropping lines that cannot be read; what is appended
// is kept.
func TestAppendSharedPrunes(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, SharedLedgerFile)
	line := func(at time.Time, run string) []byte {
		b, _ := json.Marshal(SharedEntry{Time: at, Dir: "/a", RunID: run, Loop: 1, Kind: KindRegular, DurationMS: 1})
		return append(b, '\n')
	}
	var big bytes.Buffer
	old := line(testNow.Add(-49*time.Hour), "old")
	for big.Len() <= sharedPruneSize {
		big.Write(old)
	}
	big.WriteString("not json\n")
	big.Write(line(testNow.Add(-47*time.Hour), "recent"))
	if err := os.WriteFile(path, big.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := AppendShared(context.Background(), dir, []SharedEntry{{Time: testNow, Dir: "/b", RunID: "new", Loop: 1, Kind: KindRegular}}, testNow); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var runs []string
	for l := range bytes.Lines(b) {
		var e SharedEntry
		if err := json.Unmarshal(l, &e); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		runs = append(runs, e.RunID)
	}
	if fmt.Sprint(runs) != "[recent new]" {
		t.Errorf("kept runs %v, want [recent new]", runs)
	}

	// Below the size, nothing old is removed.
	small := append(line(testNow.Add(-72*time.Hour), "old"), line(testNow.Add(-time.Hour), "r")...)
	if err := os.WriteFile(path, small, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := AppendShared(context.Background(), dir, []SharedEntry{{Time: testNow, RunID: "n"}}, testNow); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); !bytes.HasPrefix(b, small) || bytes.Count(b, []byte{'\n'}) != 3 {
		t.Errorf("a small ledger was rewritten:\n%s", b)
	}
}
