package orchestrator

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// The budgets must not miss an event: a line before the last of the
// window that is not an event makes the log unreadable, naming the file
// and the line (counted from the start of the file, not of the window); a
// last line torn by a crash is not read and does not stop; a log that
// cannot be opened is unreadable as a whole.
func TestReadUsageUnreadableLog(t *testing.T) {
	dir := t.TempDir()
	log := EventLog{Dir: dir}
	now := testNow
	for i, at := range []time.Time{now.Add(-72 * time.Hour), now.Add(-50 * time.Hour), now.Add(-49 * time.Hour), now.Add(-2 * time.Hour), now.Add(-time.Hour)} {
		if err := log.Record(Event{Time: at, Event: EvAttempt, IssueID: "ISSUE-20261122-001", Status: "failed", Attempt: i + 1}); err != nil {
			t.Fatal(err)
		}
	}
	path := PathsIn(dir).Ledger()
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ReadUsage(dir, now); err != nil {
		t.Fatalf("a readable log: %v", err)
	}

	damaged := `{"timestamp":"2026-11-22T09:30:00Z","event":"attempt","issue_id":` + "\n"
	last := `{"timestamp":"2026-11-22T09:45:00Z","event":"attempt","issue_id":"ISSUE-20261122-001","status":"failed"}` + "\n"
	if err := os.WriteFile(path, []byte(string(good)+damaged+last), 0o644); err != nil {
		t.Fatal(err)
	}
	u, err := ReadUsage(dir, now)
	var ue *UnreadableLogError
	if !errors.As(err, &ue) {
		t.Fatalf("a damaged line before the last: %v, want an *UnreadableLogError", err)
	}
	if ue.File != path || ue.Line != 6 || u.Unreadable != ue {
		t.Errorf("unreadable %s line %d (usage's %v), want %s line 6", ue.File, ue.Line, u.Unreadable, path)
	}
	if errors.Unwrap(err) == nil || !strings.HasPrefix(err.Error(), path+":6: not an event: ") {
		t.Errorf("error %q (cause %v), want %s:6: not an event: and the cause", err, errors.Unwrap(err), path)
	}

	// The same line last, without its newline: torn by a crash.
	if err := os.WriteFile(path, []byte(string(good)+strings.TrimSuffix(damaged, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadUsage(dir, now); err != nil {
		t.Errorf("a torn last line stopped the budgets: %v", err)
	}

	// A log that cannot be read at all.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = ReadUsage(dir, now)
	if !errors.As(err, &ue) || ue.Line != 0 || ue.File != path || !strings.HasPrefix(err.Error(), "reading "+path+": ") {
		t.Errorf("a log that cannot be read: %v, want reading %s: …", err, path)
	}
}
