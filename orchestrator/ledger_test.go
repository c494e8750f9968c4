package orchestrator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// fullScan is what the windowed reader must agree with: every event of the
// whole log at or after since, in file order.
func fullScan(t *testing.T, dir string, since time.Time) []Event {
	t.Helper()
	evs, _ := ReadEvents(dir)
	var out []Event
	for _, ev := range evs {
		if !ev.Time.IsZero() && !ev.Time.Before(since) {
			out = append(out, ev)
		}
	}
	return out
}

// The budgets and the cross-issue rules read the ledger's window from its
// end; what they get is exactly what reading the whole ledger and keeping
// the window gives, whatever the tail of the file looks like.
func TestReadLedgerSinceEqualsFullScan(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	since := now.Add(-24 * time.Hour)
	line := func(at time.Time, id string) string {
		b, _ := json.Marshal(Event{Time: at, Event: EvAttempt, IssueID: id, Signature: strings.Repeat("c", 64)})
		return string(b) + "\n"
	}
	// Three days of events every 10 minutes, with lines long enough that
	// the window spans several of the backward scan's chunks.
	var steady strings.Builder
	for at := now.Add(-72 * time.Hour); !at.After(now); at = at.Add(10 * time.Minute) {
		steady.WriteString(line(at, "ISSUE-20261124-"+strings.Repeat("x", 300)))
	}
	cases := []struct {
		name string
		log  string
	}{
		{"empty", ""},
		{"all old", line(now.Add(-30*time.Hour), "A") + line(now.Add(-25*time.Hour), "B")},
		{"all recent", line(now.Add(-2*time.Hour), "A") + line(now.Add(-time.Hour), "B")},
		{"steady", steady.String()},
		{"torn last line", steady.String() + line(now, "TORN")[:40]},
		{"whole last line without its newline", steady.String() + strings.TrimSuffix(line(now, "C"), "\n")},
		{"an old line pasted among recent ones", line(now.Add(-30*time.Hour), "A") + line(now.Add(-3*time.Hour), "B") +
			line(now.Add(-300*time.Hour), "PASTED") + line(now.Add(-time.Hour), "C")},
		{"a clock stepped back", line(now.Add(-2*time.Hour), "A") + line(now.Add(-26*time.Hour), "B") + line(now.Add(-time.Hour), "C")},
		{"blank and damaged lines", line(now.Add(-26*time.Hour), "A") + "\n\nnot json\n" + line(now.Add(-time.Hour), "B") + "{\"timestamp\":\"garbage\"}\n"},
		{"CRLF", strings.ReplaceAll(line(now.Add(-30*time.Hour), "A")+line(now.Add(-time.Hour), "B"), "\n", "\r\n")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := PathsIn(dir).Ledger()
			os.MkdirAll(filepath.Dir(path), 0o755)
			if err := os.WriteFile(path, []byte(c.log), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := readLedgerSince(path, since, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := fullScan(t, dir, since)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("windowed read: %d events, full scan: %d\ngot  %v\nwant %v", len(got), len(want), eventIDs(got), eventIDs(want))
			}
			// Only some events: the others are left out, nothing else.
			for _, name := range []string{EvAttempt, EvExec} {
				got, _ := readLedgerSince(path, since, map[string]bool{name: true}, nil)
				var want []Event
				for _, ev := range fullScan(t, dir, since) {
					if ev.Event == name {
						want = append(want, ev)
					}
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("only %s: %d events, want %d", name, len(got), len(want))
				}
			}
		})
	}
}

func eventIDs(evs []Event) []string {
	var s []string
	for _, ev := range evs {
		s = append(s, fmt.Sprintf("%s@%s", ev.IssueID[:min(len(ev.IssueID), 8)], ev.Time.Format("01-02T15:04")))
	}
	return s
}

// Pruning keeps what the window reader would read with the retention as
// window, and copies it rather than holding the whole log; an old line of
// any length goes.
func TestPruneKeepsTheRecentPart(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	lg := EventLog{Dir: dir}
	var want bytes.Buffer
	for at := now.Add(-60 * 24 * time.Hour); !at.After(now); at = at.Add(6 * time.Hour) {
		ev := Event{Time: at, Event: EvLoop, RunID: "r"}
		if at.Equal(now.Add(-45 * 24 * time.Hour)) {
			// A line longer than any read buffer is pruned like the others.
			ev.Reason = strings.Repeat("a person's long answer ", 5000)
		}
		if err := lg.Record(ev); err != nil {
			t.Fatal(err)
		}
		if !at.Before(now.Add(-30 * 24 * time.Hour)) {
			b, _ := json.Marshal(ev)
			want.Write(append(b, '\n'))
		}
	}
	if err := lg.Prune(now, 7*24*time.Hour, 30*24*time.Hour); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(PathsIn(dir).Ledger())
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("retry.jsonl after pruning: %d bytes, want the last 30 days: %d bytes", len(got), want.Len())
	}
	// Nothing but the two logs: no temporary file is left behind.
	p := PathsIn(dir)
	entries, err := os.ReadDir(p.Logs())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if path := filepath.Join(p.Logs(), e.Name()); path != p.Ledger() && path != p.TextLog() {
			t.Errorf("%s is left behind", e.Name())
		}
	}
}

// Read again after the log changed — lines appended, a line torn and then
// finished, the log pruned or rewritten, a later window — the reader, which
// keeps what it read before, still returns what a full scan returns.
func TestReadLedgerSinceAgain(t *testing.T) {
	dir := t.TempDir()
	path := PathsIn(dir).Ledger()
	os.MkdirAll(filepath.Dir(path), 0o755)
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	line := func(at time.Time, id string) string {
		b, _ := json.Marshal(Event{Time: at, Event: EvExec, IssueID: id, DurationMS: 1000})
		return string(b) + "\n"
	}
	var log strings.Builder
	for at := now.Add(-48 * time.Hour); at.Before(now); at = at.Add(30 * time.Minute) {
		log.WriteString(line(at, "A"))
	}
	appendTo := func(s string) {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(s)
		f.Close()
	}
	appendTo(log.String())
	var memo ledgerMemo
	check := func(step string, since time.Time) {
		t.Helper()
		got, err := readLedgerSince(path, since, nil, &memo)
		if err != nil {
			t.Fatal(err)
		}
		if want := fullScan(t, dir, since); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %d events, full scan %d\ngot  %v\nwant %v", step, len(got), len(want), eventIDs(got), eventIDs(want))
		}
	}
	since := now.Add(-24 * time.Hour)
	check("first read", since)
	appendTo(line(now, "B") + line(now.Add(time.Minute), "C"))
	check("lines appended", since)
	torn := line(now.Add(2*time.Minute), "TORN")
	appendTo(torn[:30])
	check("a torn line", since)
	appendTo(torn[30:])
	check("the line finished", since)
	appendTo(line(now.Add(-40*time.Hour), "LATE") + line(now.Add(3*time.Minute), "D"))
	check("an old line appended", since)
	check("a later window", since.Add(90*time.Minute))
	check("an earlier window", since.Add(-6*time.Hour))
	b, _ := os.ReadFile(path)
	os.WriteFile(path, b[len(b)/2:][bytes.IndexByte(b[len(b)/2:], '\n')+1:], 0o644)
	check("pruned", since)
	os.WriteFile(path, []byte(line(now.Add(-time.Hour), "E")+line(now, "F")), 0o644)
	check("rewritten", since)
	os.Remove(path)
	check("removed", since)
}

// FuzzReadLedgerSince: whatever the log holds — damaged lines, lines cut
// short, times in any order, no newline at the end — the windowed reader
// returns what a full scan filtered to the window returns, as long as fewer
// than oldRunStop lines are in the log (more old lines in a row end the
// scan by design).
func FuzzReadLedgerSince(f *testing.F) {
	f.Add([]byte(`{"timestamp":"2026-11-24T11:00:00Z","event":"attempt","issue_id":"A"}`+"\n"+`{"timestamp":"2026-11-22T11:00:00Z","event":"loop"}`+"\n"), int64(3600))
	f.Add([]byte(`{"event":"loop","timestamp":"2026-11-24T11:00:00Z"}`+"\n\n"+`{"timestamp":"2026-11-24T11:30:00Z","ev`), int64(7200))
	f.Add([]byte("\r\n{\"timestamp\":\"2026-11-24T11:59:59.5+01:00\",\"event\":\"x\\\"y\"}\r\n"), int64(86400))
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, log []byte, window int64) {
		if bytes.Count(log, []byte{'\n'}) >= oldRunStop || window <= 0 {
			return
		}
		dir := t.TempDir()
		path := PathsIn(dir).Ledger()
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, log, 0o644); err != nil {
			t.Fatal(err)
		}
		since := now.Add(-time.Duration(window%(1<<40)) * time.Second)
		got, err := readLedgerSince(path, since, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := fullScan(t, dir, since)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("windowed read %d events, full scan %d", len(got), len(want))
		}
		only := map[string]bool{EvAttempt: true}
		got, _ = readLedgerSince(path, since, only, nil)
		var wantOnly []Event
		for _, ev := range want {
			if only[ev.Event] {
				wantOnly = append(wantOnly, ev)
			}
		}
		if !reflect.DeepEqual(got, wantOnly) {
			t.Fatalf("only attempts: %d events, want %d", len(got), len(wantOnly))
		}
	})
}
