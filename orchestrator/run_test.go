package orchestrator

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/config"
	"github.com/autoretry/orchestrator/internal/foundations/procgroup"
)

func TestBackoffDelay(t *testing.T) {
	b := config.Backoff{Base: time.Second, Factor: 2, Max: 30 * time.Second, Jitter: 0.1}
	tests := []struct {
		n    int
		r    float64
		want time.Duration
	}{
		{1, 0, time.Second},
		{2, 0, 2 * time.Second},
		{3, 0, 4 * time.Second},
		{3, 0.5, 4*time.Second + 200*time.Millisecond}, // jitter: up to 10% more
		{6, 0, 30 * time.Second},                       // capped
		{6, 0.999, 30*time.Second + 2997*time.Millisecond},
	}
	for _, tt := range tests {
		if got := backoffDelay(b, tt.n, tt.r); got != tt.want {
			t.Errorf("Delay(%d, %v) = %v, want %v", tt.n, tt.r, got, tt.want)
		}
	}
}

// Retry hints in the wordings real agent CLIs and APIs print: relative
// waits, clock times with and without minutes, am/pm and an IANA zone, and
// a Unix time. The last hint in the output wins.
func TestRetryHint(t *testing.T) {
	dublin, _ := time.LoadLocation("Europe/Dublin")
	chicago, _ := time.LoadLocation("America/Chicago")
	now := time.Date(2026, 11, 22, 10, 15, 0, 0, time.UTC) // 10:15 in Dublin, 04:15 in Chicago
	at := func(loc *time.Location, day, h, m int) time.Duration {
		return time.Date(2026, 11, day, h, m, 0, 0, loc).Sub(now)
	}
	local := func(day, h, m int) time.Duration { return at(time.Local, day, h, m) }
	tests := []struct {
		out  string
		want time.Duration
		ok   bool
	}{
		{"429 Too Many Requests. Retry after 7 seconds", 7 * time.Second, true},
		{"Retry-After: 120", 120 * time.Second, true},
		{"please retry after 2m", 2 * time.Minute, true},
		{"Please try again in 20 minutes.", 20 * time.Minute, true},
		{"You've hit your limit · resets 3pm (Europe/Dublin)", at(dublin, 22, 15, 0), true},
		{"You've hit your session limit · resets 5pm (Europe/Vilnius)", 4*time.Hour + 45*time.Minute, true}, // 17:00 in Vilnius is 15:00 UTC
		{"Claude usage limit reached. Your limit will reset at 9am (America/Chicago).", at(chicago, 22, 9, 0), true},
		{"You're out of extra usage · resets 9pm", local(22, 21, 0), true},
		{"usage limit reached; resets at 3:45 PM", local(22, 15, 45), true},
		{"limit resets at 09:00", local(23, 9, 0), true},                  // already past today: tomorrow
		{"Claude AI usage limit reached|1795353300", 3 * time.Hour, true}, // 13:15 UTC
		{"resets at 23:59 retry after 1s", time.Second, true},             // the last mention wins
		{"the counter resets 3 times a day", 0, false},                    // no clock time
		{"nothing to see", 0, false},
	}
	for _, tt := range tests {
		got, ok := RetryHint([]byte(tt.out), now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("RetryHint(%q) = %v, %v; want %v, %v", tt.out, got, ok, tt.want, tt.ok)
		}
	}
}

func TestClassify(t *testing.T) {
	cfg := config.Default()
	tests := []struct {
		exit  int
		out   string
		class string
	}{
		{1, "Error: 429 Too Many Requests", classRateLimit},
		{1, "You've hit your session limit · resets 5pm (Europe/Vilnius)", classRateLimit},
		{1, "Your usage allocation has been disabled by your admin", ResultPermanent},
		{1, "read: econnreset by peer", classTransient},
		{1, "Anthropic API: Overloaded", classTransient},
		{1, "Error: Invalid API key", ResultPermanent},
		{1, "open /etc/x: Permission denied", ResultPermanent},
		{1, "401 Unauthorized (after a 503)", ResultPermanent}, // permanent wins
		{127, "sh: agent: not found", ResultPermanent},
		{126, "", ResultPermanent},
		{1, "--- FAIL: TestX", ""},
		{2, `{"is_error": false, "result": "ok"}`, ""},
	}
	for _, tt := range tests {
		got, _ := classify(cfg, procgroup.Result{ExitCode: tt.exit, Tail: []byte(tt.out)})
		if got != tt.class {
			t.Errorf("classify(exit %d, %q) = %q, want %q", tt.exit, tt.out, got, tt.class)
		}
	}
}

func TestTier(t *testing.T) {
	tiers := config.Tiers{SameAgent: 3, FreshAgent: 3, Model: "small", EscalationModel: "large"}
	for attempt, want := range map[int]string{1: "same_agent small", 3: "same_agent small", 4: "fresh_agent small",
		6: "fresh_agent small", 7: "escalate_model large", 10: "escalate_model large"} {
		tier, model := retryTier(tiers, attempt)
		if got := tier + " " + model; got != want {
			t.Errorf("Tier(%d) = %q, want %q", attempt, got, want)
		}
	}
}

func TestEventLogPrune(t *testing.T) {
	dir := t.TempDir()
	lg := EventLog{Dir: dir}
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for _, age := range []time.Duration{40 * 24 * time.Hour, 10 * 24 * time.Hour, time.Hour} {
		if err := lg.Record(Event{Time: now.Add(-age), Event: EvResolved, IssueID: "ISSUE-20261122-001", Resolution: "resolved"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := lg.Prune(now, 7*24*time.Hour, 30*24*time.Hour); err != nil {
		t.Fatal(err)
	}
	text, _ := os.ReadFile(filepath.Join(dir, "logs", "retry.log"))
	if got := strings.Count(string(text), "\n"); got != 1 {
		t.Errorf("retry.log keeps %d lines, want the 1 younger than 7 days:\n%s", got, text)
	}
	evs, errs := ReadEvents(dir)
	if len(errs) != 0 || len(evs) != 2 {
		t.Errorf("retry.jsonl keeps %d events (%v), want the 2 younger than 30 days", len(evs), errs)
	}
}

// Pruning the logs never writes through a link: a log that is a symbolic
// link is refused, and a link planted where a temporary file could go is
// not written through.
func TestEventLogPruneRefusesLinks(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	record := func(t *testing.T, dir string) {
		for _, age := range []time.Duration{40 * 24 * time.Hour, time.Hour} {
			if err := (EventLog{Dir: dir}).Record(Event{Time: now.Add(-age), Event: EvResolved, IssueID: "ISSUE-20261122-001", Resolution: "resolved"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Run("log is a link", func(t *testing.T) {
		dir, elsewhere := t.TempDir(), t.TempDir()
		record(t, elsewhere)
		outside := filepath.Join(elsewhere, "logs", "retry.log")
		before, _ := os.ReadFile(outside)
		if err := os.Mkdir(filepath.Join(dir, "logs"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, filepath.Join(dir, "logs", "retry.log")); err != nil {
			t.Fatal(err)
		}
		err := EventLog{Dir: dir}.Prune(now, 7*24*time.Hour, 30*24*time.Hour)
		if err == nil || !strings.Contains(err.Error(), "is a symbolic link") {
			t.Fatalf("Prune: %v; want a refusal of the link", err)
		}
		if after, _ := os.ReadFile(outside); string(after) != string(before) {
			t.Errorf("the file outside changed:\n%s", after)
		}
	})
	t.Run("link where a temporary file could go", func(t *testing.T) {
		dir, elsewhere := t.TempDir(), t.TempDir()
		record(t, dir)
		outside := filepath.Join(elsewhere, "outside.txt")
		if err := os.WriteFile(outside, []byte("outside\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"retry.log.prune", "retry.jsonl.prune", "retry.log.tmp", "retry.jsonl.tmp"} {
			if err := os.Symlink(outside, filepath.Join(dir, "logs", name)); err != nil {
				t.Fatal(err)
			}
		}
		if err := (EventLog{Dir: dir}).Prune(now, 7*24*time.Hour, 30*24*time.Hour); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(outside); string(b) != "outside\n" {
			t.Errorf("the file outside holds %q", b)
		}
		if evs, errs := ReadEvents(dir); len(errs) != 0 || len(evs) != 1 {
			t.Errorf("retry.jsonl keeps %d events (%v), want 1", len(evs), errs)
		}
	})
}

func TestHistoryRoundTrip(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	want := LoopRecord{RunID: "r1", Loop: 2, Kind: "auto_retry", Started: start, Finished: start.Add(90 * time.Second),
		ExitCode: 1, Result: ResultFailed, TransientRetries: 2, Issues: []string{"A", "B"}, Resolved: []string{"A"},
		Failed: []string{"B"}, TotalAutoRetries: 1, Breaker: "closed"}
	for i := 0; i < 2; i++ {
		if err := AppendHistory(dir, want); err != nil {
			t.Fatal(err)
		}
	}
	got, errs := ReadHistory(dir)
	if len(errs) > 0 || len(got) != 2 {
		t.Fatalf("ReadHistory = %d rows, %v", len(got), errs)
	}
	if strings.Join(got[1].row(), ",") != strings.Join(want.row(), ",") {
		t.Errorf("row = %v\nwant  %v", got[1].row(), want.row())
	}
}

// history.csv is rotated at the first run of a new month into
// history-YYYY-MM.csv, keeping the newest [logs] history_keep months;
// ReadHistory (what the report and the metrics read) gives the same rows
// from the rotated files as from one file.
func TestHistoryRotation(t *testing.T) {
	dir := t.TempDir()
	row := func(month time.Month, loop int) LoopRecord {
		at := time.Date(2026, month, 15, 10, 0, 0, 0, time.UTC)
		return LoopRecord{RunID: "r" + month.String(), Loop: loop, Kind: "regular", Started: at, Finished: at.Add(time.Minute), Result: ResultOK, Breaker: "closed"}
	}
	var all []LoopRecord
	for _, m := range []time.Month{time.August, time.September, time.October} {
		for loop := 1; loop <= 2; loop++ {
			r := row(m, loop)
			if err := AppendHistory(dir, r); err != nil {
				t.Fatal(err)
			}
			all = append(all, r)
		}
		if err := RotateHistory(dir, time.Date(2026, m+1, 1, 0, 5, 0, 0, time.UTC), 0); err != nil {
			t.Fatal(err)
		}
	}
	checkHistory(t, dir, all, "after rotation")
	for _, m := range []string{"2026-08", "2026-09", "2026-10"} {
		if _, err := os.Stat(filepath.Join(dir, "history-"+m+".csv")); err != nil {
			t.Errorf("history-%s.csv: %v", m, err)
		}
	}
	// The same month again: nothing to rotate. Keep 2: the oldest month goes.
	if err := RotateHistory(dir, time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC), 2); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "history-2026-08.csv")); !os.IsNotExist(err) {
		t.Errorf("history-2026-08.csv kept beyond history_keep = 2: %v", err)
	}
	if got, _ := ReadHistory(dir); len(got) != 4 {
		t.Errorf("%d rows after keeping 2 months, want 4", len(got))
	}
}

// A history.csv written before rotation existed, spanning several months,
// is split into one file per month at the next run, once: every row is kept,
// in order, and the current month's rows stay in history.csv.
func TestHistoryLegacyMigration(t *testing.T) {
	dir := t.TempDir()
	var all []LoopRecord
	for _, m := range []time.Month{time.September, time.October, time.November} {
		for day := 1; day <= 3; day++ {
			at := time.Date(2026, m, day, 10, 0, 0, 0, time.UTC)
			r := LoopRecord{RunID: fmt.Sprintf("r%d-%d", m, day), Loop: 1, Kind: "regular", Started: at, Finished: at.Add(time.Minute), Result: ResultOK, Breaker: "closed"}
			if err := AppendHistory(dir, r); err != nil {
				t.Fatal(err)
			}
			all = append(all, r)
		}
	}
	now := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	if err := RotateHistory(dir, now, 0); err != nil {
		t.Fatal(err)
	}
	for name, rows := range map[string]int{"history-2026-09.csv": 3, "history-2026-10.csv": 3, "history.csv": 3} {
		n := 0
		if _, errs := ScanHistoryFile(filepath.Join(dir, name), 0, func(LoopRecord, int64, int64) { n++ }); len(errs) > 0 || n != rows {
			t.Errorf("%s: %d rows (%v), want %d", name, n, errs, rows)
		}
	}
	checkHistory(t, dir, all, "after migration")
	// Once: the next run finds one month in history.csv and nothing to do.
	if err := RotateHistory(dir, now.Add(time.Hour), 0); err != nil {
		t.Fatal(err)
	}
	if files := HistoryFiles(dir); len(files) != 3 {
		t.Errorf("history files after a second run: %v", files)
	}
}

// checkHistory checks that ReadHistory gives want, row for row.
func checkHistory(t *testing.T, dir string, want []LoopRecord, when string) {
	t.Helper()
	got, errs := ReadHistory(dir)
	if len(errs) > 0 || len(got) != len(want) {
		t.Fatalf("%s: %d rows (%v), want %d", when, len(got), errs, len(want))
	}
	for i := range want {
		if strings.Join(got[i].row(), ",") != strings.Join(want[i].row(), ",") {
			t.Errorf("row %d = %v, want %v", i, got[i].row(), want[i].row())
		}
	}
}

// A split stopped after it wrote the month files but before it replaced
// history.csv is finished by the next run, without a row counted twice; a
// month file with other rows is not overwritten.
func TestHistorySplitInterrupted(t *testing.T) {
	dir := t.TempDir()
	for _, m := range []time.Month{time.October, time.November} {
		at := time.Date(2026, m, 2, 10, 0, 0, 0, time.UTC)
		r := LoopRecord{RunID: fmt.Sprint("r", m), Loop: 1, Kind: "regular", Started: at, Finished: at, Result: ResultOK, Breaker: "closed"}
		if err := AppendHistory(dir, r); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := os.ReadFile(HistoryPath(dir))
	now := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	if err := RotateHistory(dir, now, 0); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(HistoryPath(dir), before, 0o644) // as if stopped before its last rename
	if err := RotateHistory(dir, now, 0); err != nil {
		t.Fatalf("rotation after an interrupted split: %v", err)
	}
	if got, errs := ReadHistory(dir); len(got) != 2 || len(errs) > 0 {
		t.Errorf("after the split was finished: %d rows (%v), want 2", len(got), errs)
	}
	// A month file that someone changed is theirs: refused, nothing moved.
	os.WriteFile(HistoryPath(dir), before, 0o644)
	month := filepath.Join(dir, "history-2026-10.csv")
	kept, err := os.ReadFile(month)
	if err != nil {
		t.Fatal(err)
	}
	edited := append(kept, "# a person's note\n"...)
	os.WriteFile(month, edited, 0o644)
	if err := RotateHistory(dir, now, 0); err == nil || !strings.Contains(err.Error(), "merge the two by hand") {
		t.Errorf("rotation onto a month file with other rows: %v, want a refusal", err)
	}
	if got, _ := os.ReadFile(month); !bytes.Equal(got, edited) {
		t.Errorf("the month file was changed:\n%s", got)
	}
	if got, _ := os.ReadFile(HistoryPath(dir)); !bytes.Equal(got, before) {
		t.Errorf("history.csv was changed:\n%s", got)
	}
}

// A last row without its newline (a crash mid-write) is not read until it
// is whole; the offset returned is where it starts.
func TestScanHistoryFileTornRow(t *testing.T) {
	dir := t.TempDir()
	at := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	r := LoopRecord{RunID: "r1", Loop: 1, Kind: "regular", Started: at, Finished: at, Result: ResultOK, Breaker: "closed"}
	if err := AppendHistory(dir, r); err != nil {
		t.Fatal(err)
	}
	whole, _ := os.Stat(HistoryPath(dir))
	f, _ := os.OpenFile(HistoryPath(dir), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString("r2,1,regular,2026-11-24T10:00:00Z")
	f.Close()
	n := 0
	end, errs := ScanHistoryFile(HistoryPath(dir), 0, func(LoopRecord, int64, int64) { n++ })
	if n != 1 || len(errs) > 0 || end != whole.Size() {
		t.Errorf("read %d rows (%v) up to %d, want 1 up to %d", n, errs, end, whole.Size())
	}
}

// FuzzRowMonth: the month of a history row read without a CSV parser is the
// month the parser reads.
func FuzzRowMonth(f *testing.F) {
	f.Add([]byte("r1,1,regular,2026-11-22T10:00:00Z,2026-11-22T10:01:00Z,60000,0,ok,0,,,,,,0,closed"))
	f.Add([]byte(`r1,1,regular,x,"2026-11-22T10:01:00Z",60000,0,ok,0,"A B",,,,,0,closed`))
	f.Add([]byte("run_id,loop,kind,started_at,finished_at,duration_ms,exit_code,result,transient_retries,issues,resolved,failed,halted,escalated,total_auto_retries,breaker"))
	f.Fuzz(func(t *testing.T, line []byte) {
		if bytes.ContainsAny(line, "\r\n") {
			return
		}
		got, ok := rowMonth(line)
		want, wok := "", false
		if rec, err := csv.NewReader(bytes.NewReader(line)).Read(); err == nil && len(rec) >= historyMinFields {
			if tm, err := time.Parse(time.RFC3339, rec[4]); err == nil {
				want, wok = tm.UTC().Format("2006-01"), true
			}
		}
		if got != want || ok != wok {
			t.Fatalf("rowMonth(%q) = %q, %v; the CSV parser reads %q, %v", line, got, ok, want, wok)
		}
	})
}
