package issuequeue

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const intentQueue = `# Issue Queue

## ISSUE-20261122-001

| Field | Value |
|-------|-------|
| Status | pending |
| Retry-Count | 2 |

### Summary
Server fails to start

### Attempt History
| Attempt | Error |
|---|---|
| 1 | boom |

## ISSUE-20261122-002

| Field | Value |
|-------|-------|
| Status | resolved |

### Summary
Flaky test
`

const intentState = `# Session State

## Auto-Retry State

| Field | Value |
|-------|-------|
| total_auto_retries | 2 |
`

var errKilled = errors.New("killed")

// interrupted runs an update that stops between its two writes, as a kill
// would.
func interrupted(t *testing.T, s *Store, fn func(q *Queue, st *State) (Change, error)) {
	t.Helper()
	hookBetweenWrites = func() error { return errKilled }
	defer func() { hookBetweenWrites = nil }()
	if err := s.Update(context.Background(), fn); !errors.Is(err, errKilled) {
		t.Fatalf("Update: %v, want it stopped between its writes", err)
	}
	if _, err := os.Stat(s.Intent()); err != nil {
		t.Fatalf("no intent record after the interrupted update: %v", err)
	}
}

func newIntentStore(t *testing.T) *Store {
	t.Helper()
	s := &Store{Paths: Paths{Dir: t.TempDir()}, Command: "test"}
	for name, text := range map[string]string{QueueFile: intentQueue, StateFile: intentState} {
		if err := os.WriteFile(filepath.Join(s.Dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

// retryChange is what a check that retries ISSUE-…-001 writes.
func retryChange(q *Queue, st *State) (Change, error) {
	return Change{
		Queue: []Edit{SetField("ISSUE-20261122-001", FieldRetryCount, "3"), SetField("ISSUE-20261122-001", FieldStatus, StatusInProgress),
			AppendRow("ISSUE-20261122-001", SectionAttemptHistory, []string{"Attempt", "Error"}, []string{"2", "bang"})},
		State: []Edit{SetField(SectionAutoRetry, StateTotalAutoRetries, "3")},
		Log:   []LogLine{{Path: filepath.Join(filepath.Dir(q.Name()), "logs", "retry.jsonl"), Line: []byte("{\"event\":\"triggered\"}\n")}},
	}, nil
}

// TestIntentCompletesTheSecondWrite proves: a change of the queue and the
// session state stopped between the two is completed by the next command,
// once: the counter raised, the row and the log line not added twice, and
// a person's edit of the queue made since kept.
func TestIntentCompletesTheSecondWrite(t *testing.T) {
	s := newIntentStore(t)
	interrupted(t, s, retryChange)
	if !strings.Contains(read(t, s.Queue()), "| Retry-Count | 3 |") || !strings.Contains(read(t, s.State()), "| total_auto_retries | 2 |") {
		t.Fatal("the interrupted update did not stop between the queue and the state")
	}
	hand := strings.Replace(read(t, s.Queue()), "Flaky test", "Flaky test, seen by hand", 1)
	if err := os.WriteFile(s.Queue(), []byte(hand), 0o644); err != nil {
		t.Fatal(err)
	}
	q, st, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if st.TotalAutoRetries != 3 || q.Issue("ISSUE-20261122-001").RetryCount != 3 {
		t.Errorf("after recovery: total_auto_retries %d, Retry-Count %d, want 3 and 3", st.TotalAutoRetries, q.Issue("ISSUE-20261122-001").RetryCount)
	}
	if got := read(t, s.Queue()); got != hand {
		t.Errorf("recovery changed the queue, which held the change already:\n%s", got)
	}
	if n := strings.Count(read(t, filepath.Join(s.Dir, "logs", "retry.jsonl")), "triggered"); n != 1 {
		t.Errorf("the log line is in the log %d times, want once", n)
	}
	if _, err := os.Stat(s.Intent()); !os.IsNotExist(err) {
		t.Errorf("the intent record is still there: %v", err)
	}
}

// TestIntentLeavesAPersonsEdit proves: a field a person changed after the
// interruption keeps their value.
func TestIntentLeavesAPersonsEdit(t *testing.T) {
	s := newIntentStore(t)
	interrupted(t, s, retryChange)
	if err := os.WriteFile(s.State(), []byte(strings.Replace(intentState, "| 2 |", "| 0 |", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := read(t, s.State()); !strings.Contains(got, "| total_auto_retries | 0 |") {
		t.Errorf("the person's total_auto_retries 0 was not kept:\n%s", got)
	}
}

func moveResolved(q *Queue, st *State) (Change, error) {
	return Change{Move: []string{"ISSUE-20261122-002"}}, nil
}

// TestIntentCompletesAnArchive proves: an archive stopped after writing the
// archive is completed: the issue leaves the queue and is in the archive
// once.
func TestIntentCompletesAnArchive(t *testing.T) {
	s := newIntentStore(t)
	interrupted(t, s, moveResolved)
	if err := s.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	q, a := ParseQueue("q", []byte(read(t, s.Queue()))), ParseQueue("a", []byte(read(t, s.Archive())))
	if q.Issue("ISSUE-20261122-002") != nil || a.Issue("ISSUE-20261122-002") == nil || strings.Count(read(t, s.Archive()), "## ISSUE-20261122-002") != 1 {
		t.Errorf("after recovery the issue is not in the archive alone, once:\nqueue:\n%s\narchive:\n%s", read(t, s.Queue()), read(t, s.Archive()))
	}
}

// TestIntentKeepsTheNewerCopy proves: an issue edited in the queue after an
// archive was interrupted stays in the queue, the newer copy, and the
// archive's copy of the older one is taken out again.
func TestIntentKeepsTheNewerCopy(t *testing.T) {
	s := newIntentStore(t)
	interrupted(t, s, moveResolved)
	edited := strings.Replace(read(t, s.Queue()), "Flaky test", "Flaky test: it failed again", 1)
	if err := os.WriteFile(s.Queue(), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := read(t, s.Queue()); got != edited {
		t.Errorf("the queue's newer copy was changed:\n%s", got)
	}
	if a := ParseQueue("a", []byte(read(t, s.Archive()))); a.Issue("ISSUE-20261122-002") != nil {
		t.Errorf("the archive still holds the older copy:\n%s", read(t, s.Archive()))
	}
}

// TestIntentCreatesAMissingState proves: a change stopped after the queue
// in a directory without session_state.md still gets its counters: the
// file is made from the template with the change's edits.
func TestIntentCreatesAMissingState(t *testing.T) {
	s := newIntentStore(t)
	if err := os.Remove(s.State()); err != nil {
		t.Fatal(err)
	}
	interrupted(t, s, retryChange)
	if _, err := os.Stat(s.State()); !os.IsNotExist(err) {
		t.Fatalf("the interrupted update wrote the state: %v", err)
	}
	if err := s.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := read(t, s.State()); !strings.Contains(got, "| total_auto_retries | 3 |") {
		t.Errorf("the missing state was not completed:\n%s", got)
	}
}

// TestIntentAroundAQuarantinedIssue proves: an issue a person made invalid
// after the interruption is theirs (left as written) and does not keep the
// rest of the change from being completed.
func TestIntentAroundAQuarantinedIssue(t *testing.T) {
	s := newIntentStore(t)
	interrupted(t, s, retryChange)
	hand := strings.Replace(read(t, s.Queue()), "| Retry-Count | 3 |", "| Retry-Count | three |", 1)
	if err := os.WriteFile(s.Queue(), []byte(hand), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.Recover(context.Background()); err != nil {
		t.Fatalf("recovery around a quarantined issue: %v", err)
	}
	if got := read(t, s.Queue()); got != hand {
		t.Errorf("recovery changed the person's queue:\n%s", got)
	}
	if got := read(t, s.State()); !strings.Contains(got, "| total_auto_retries | 3 |") {
		t.Errorf("the state was not completed:\n%s", got)
	}
}

// TestSettleFutureTime proves: a state file whose modification time is in
// the future (another machine's clock) is not taken for a save going on,
// so commands do not wait on it.
func TestSettleFutureTime(t *testing.T) {
	s := newIntentStore(t)
	ahead := time.Now().Add(time.Hour)
	if err := os.Chtimes(s.Queue(), ahead, ahead); err != nil {
		t.Fatal(err)
	}
	if newSettler().busy(s.Queue()) {
		t.Error("a file dated an hour ahead is taken for a save going on")
	}
	now := time.Now()
	if err := os.Chtimes(s.Queue(), now, now); err != nil {
		t.Fatal(err)
	}
	if !newSettler().busy(s.Queue()) {
		t.Error("a file someone wrote just now is not taken for a save that may be going on")
	}
}
