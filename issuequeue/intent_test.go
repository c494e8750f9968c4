package issuequeue

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/statefile"
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
	s.betweenWrites = func() error { return errKilled }
	defer func() { s.betweenWrites = nil }()
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
		write(t, filepath.Join(s.Dir, name), text)
	}
	return s
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// mustRecover completes what an interrupted update of s left.
func mustRecover(t *testing.T, s *Store) {
	t.Helper()
	if err := s.recoverNow(context.Background()); err != nil {
		t.Fatal(err)
	}
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
	write(t, s.Queue(), hand)
	q, st, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if st.TotalAutoRetries != 3 || q.Issue("ISSUE-20261122-001").RetryCount != 3 {
		t.Errorf("read as completed: total_auto_retries %d, Retry-Count %d, want 3 and 3", st.TotalAutoRetries, q.Issue("ISSUE-20261122-001").RetryCount)
	}
	mustRecover(t, s)
	if got := read(t, s.State()); !strings.Contains(got, "| total_auto_retries | 3 |") {
		t.Errorf("recovery did not complete the state:\n%s", got)
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
	write(t, s.State(), strings.Replace(intentState, "| 2 |", "| 0 |", 1))
	mustRecover(t, s)
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
	mustRecover(t, s)
	q, a := ParseQueue("q", []byte(read(t, s.Queue()))), ParseQueue("a", []byte(read(t, s.Archive())))
	if q.Issue("ISSUE-20261122-002") != nil || a.Issue("ISSUE-20261122-002") == nil || strings.Count(read(t, s.Archive()), "## ISSUE-20261122-002") != 1 {
		t.Errorf("after recovery the issue is not in the archive alone, once:\nqueue:\n%s\narchive:\n%s", read(t, s.Queue()), read(t, s.Archive()))
	}
}

// editAfterInterruptedArchive edits ISSUE-…-002 in the queue, as a person
// may after an interrupted archive, and recovers: the edited queue must
// stay as it is.
func editAfterInterruptedArchive(t *testing.T, s *Store) {
	t.Helper()
	edited := strings.Replace(read(t, s.Queue()), "Flaky test", "Flaky test: it failed again", 1)
	write(t, s.Queue(), edited)
	mustRecover(t, s)
	if got := read(t, s.Queue()); got != edited {
		t.Errorf("the queue's newer copy was changed:\n%s", got)
	}
}

// TestIntentKeepsTheNewerCopy proves: an issue edited in the queue after an
// archive was interrupted stays in the queue, the newer copy, and the
// archive's copy of the older one is taken out again.
func TestIntentKeepsTheNewerCopy(t *testing.T) {
	s := newIntentStore(t)
	interrupted(t, s, moveResolved)
	editAfterInterruptedArchive(t, s)
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
	mustRecover(t, s)
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
	write(t, s.Queue(), hand)
	if err := s.recoverNow(context.Background()); err != nil {
		t.Fatalf("recovery around a quarantined issue: %v", err)
	}
	if got := read(t, s.Queue()); got != hand {
		t.Errorf("recovery changed the person's queue:\n%s", got)
	}
	if got := read(t, s.State()); !strings.Contains(got, "| total_auto_retries | 3 |") {
		t.Errorf("the state was not completed:\n%s", got)
	}
}

// TestReadersCompleteInMemory proves: with a change a killed command left
// half done on disk, a reader sees the files as they will be once it is
// completed, and changes no byte and takes no lock to do so.
func TestReadersCompleteInMemory(t *testing.T) {
	s := newIntentStore(t)
	interrupted(t, s, retryChange)
	lk, err := statefile.LockWrite(context.Background(), s.Dir, time.Second, statefile.Owner{Command: "holder"})
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Unlock()
	before := snapshotDir(t, s.Dir)
	q, st, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if got := q.Issue("ISSUE-20261122-001").RetryCount; got != 3 {
		t.Errorf("Load reads Retry-Count %d, want 3", got)
	}
	if got := st.TotalAutoRetries; got != 3 {
		t.Errorf("Load reads total_auto_retries %d, want 3 (the interrupted second write)", got)
	}
	if after := snapshotDir(t, s.Dir); after != before {
		t.Errorf("Load changed the directory:\nbefore %s\nafter  %s", before, after)
	}
}

// TestReadersCompleteAnArchiveInMemory proves: LoadArchive reads an
// interrupted move as it will be completed, which depends on the queue
// (read only when a change is half done): the issue archived while a
// person has edited its copy in the queue since is not in the archive.
func TestReadersCompleteAnArchiveInMemory(t *testing.T) {
	s := newIntentStore(t)
	interrupted(t, s, moveResolved)
	if a, err := s.LoadArchive(); err != nil || a == nil || a.Issue("ISSUE-20261122-002") == nil {
		t.Fatalf("LoadArchive after the interrupted move: %v, %v; want the issue archived", a, err)
	}
	write(t, s.Queue(), strings.Replace(read(t, s.Queue()), "Flaky test", "Flaky test: it failed again", 1))
	before := snapshotDir(t, s.Dir)
	a, err := s.LoadArchive()
	if err != nil {
		t.Fatal(err)
	}
	if a != nil && a.Issue("ISSUE-20261122-002") != nil {
		t.Errorf("LoadArchive keeps the older copy that completing the move takes out:\n%s", a.Source())
	}
	if after := snapshotDir(t, s.Dir); after != before {
		t.Errorf("LoadArchive changed the directory:\nbefore %s\nafter  %s", before, after)
	}
}

// snapshotDir describes every file of dir: name, size and content.
func snapshotDir(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		b.WriteString(path + " " + string(data) + "\n")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// archivedBefore is an archive that holds ISSUE-…-002 already, archived
// before with other text and a person's note added to it since.
const archivedBefore = ArchiveTemplate + `
## ISSUE-20261122-002

| Field | Value |
|-------|-------|
| Status | skipped |

### Summary
Flaky test, first seen in October

Note by hand: the CI runner was out of disk then.
`

func newArchivedStore(t *testing.T) *Store {
	t.Helper()
	s := newIntentStore(t)
	write(t, s.Archive(), archivedBefore)
	return s
}

// archiveCopies returns the copies of id in the archive, in file order.
func archiveCopies(t *testing.T, s *Store, id string) []string {
	t.Helper()
	a := ParseArchive(s.Archive(), []byte(read(t, s.Archive())))
	if len(a.Quarantined) > 0 {
		t.Errorf("the archive has quarantined issues: %v", a.QuarantineFindings())
	}
	var out []string
	for _, is := range a.Issues {
		if is.ID == id {
			out = append(out, string(a.d.src[is.r.start:is.r.end]))
		}
	}
	return out
}

// TestArchiveKeepsEveryCopy proves: moving an issue whose ID the archive
// holds already with other text adds the queue's copy after it and leaves
// the archived copy, and the person's note in it, byte for byte; moving
// the same copy again adds nothing.
func TestArchiveKeepsEveryCopy(t *testing.T) {
	s := newArchivedStore(t)
	queued := string(ParseQueue("q", []byte(intentQueue)).IssueSource("ISSUE-20261122-002"))
	if err := s.Update(context.Background(), moveResolved); err != nil {
		t.Fatal(err)
	}
	got := read(t, s.Archive())
	if !strings.HasPrefix(got, archivedBefore) {
		t.Fatalf("the archived copy was changed:\n%s", got)
	}
	copies := archiveCopies(t, s, "ISSUE-20261122-002")
	if len(copies) != 2 || sameText(copies[1]) != sameText(queued) {
		t.Fatalf("want the archived copy and then the queue's, got %d copies:\n%s", len(copies), got)
	}
	if a := ParseArchive(s.Archive(), []byte(got)); a.Issue("ISSUE-20261122-002").Status != StatusResolved {
		t.Errorf("a lookup in the archive does not give the newest copy")
	}
	// The queue's copy comes back (restored from a backup) and is moved
	// again: the archive holds it already.
	write(t, s.Queue(), intentQueue)
	if err := s.Update(context.Background(), moveResolved); err != nil {
		t.Fatal(err)
	}
	if again := read(t, s.Archive()); again != got {
		t.Errorf("moving a copy the archive holds changed the archive:\n%s", again)
	}
}

// TestIntentCompletesAnArchiveOverAnOlderCopy proves: an archive stopped
// between its writes, where the archive held another copy of the issue,
// is completed with both copies in the archive, each once.
func TestIntentCompletesAnArchiveOverAnOlderCopy(t *testing.T) {
	s := newArchivedStore(t)
	interrupted(t, s, moveResolved)
	written := read(t, s.Archive())
	for range 2 {
		mustRecover(t, s)
	}
	got := read(t, s.Archive())
	if got != written || !strings.HasPrefix(got, archivedBefore) || len(archiveCopies(t, s, "ISSUE-20261122-002")) != 2 {
		t.Errorf("recovery changed the archive the interrupted archive wrote:\n%s", got)
	}
	if ParseQueue("q", []byte(read(t, s.Queue()))).Issue("ISSUE-20261122-002") != nil {
		t.Errorf("the issue is still in the queue:\n%s", read(t, s.Queue()))
	}
	// A second archive killed after writing the archive again, with the
	// queue as before: completing it adds no third copy.
	write(t, s.Queue(), intentQueue)
	interrupted(t, s, moveResolved)
	mustRecover(t, s)
	if again := read(t, s.Archive()); again != got {
		t.Errorf("completing the archive of a copy held already changed the archive:\n%s", again)
	}
}

// TestIntentTakesOnlyTheMovedCopy proves: when the queue's copy was edited
// after an interrupted archive, recovery takes out of the archive the copy
// it added, and only that one: the older copy stays byte for byte.
func TestIntentTakesOnlyTheMovedCopy(t *testing.T) {
	s := newArchivedStore(t)
	interrupted(t, s, moveResolved)
	editAfterInterruptedArchive(t, s)
	if got := read(t, s.Archive()); got != archivedBefore {
		t.Errorf("want the archive as it was before the interrupted archive, got:\n%s", got)
	}
}

// TestParseArchiveHistory proves: an ID repeated in an archive is history,
// not an error: every copy is valid, a lookup gives the last, and the
// queue still quarantines both copies of an ID it holds twice.
func TestParseArchiveHistory(t *testing.T) {
	src := []byte(archivedBefore + "\n" + string(ParseQueue("q", []byte(intentQueue)).IssueSource("ISSUE-20261122-002")))
	a := ParseArchive("a", src)
	if err := a.Err(); err != nil || len(a.Quarantined) != 0 || len(a.Issues) != 2 || len(a.Findings()) != 0 {
		t.Fatalf("archive: err %v, %d valid, %d quarantined, findings %v; want 2 valid", err, len(a.Issues), len(a.Quarantined), a.Findings())
	}
	is, err := a.Lookup("ISSUE-20261122-002")
	if err != nil || is != a.Issues[1] || is.Status != StatusResolved {
		t.Errorf("Lookup gives %v, %v; want the last copy", is, err)
	}
	if !strings.HasPrefix(string(a.IssueSource("ISSUE-20261122-002")), "## ISSUE-20261122-002\n\n| Field | Value |\n|-------|-------|\n| Status | resolved |") {
		t.Errorf("IssueSource does not give the last copy:\n%s", a.IssueSource("ISSUE-20261122-002"))
	}
	if id := a.NextID(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)); id != "ISSUE-20261122-003" {
		t.Errorf("NextID %s, want ISSUE-20261122-003", id)
	}
	q := ParseQueue("q", src)
	if len(q.Quarantined) != 2 || q.Issue("ISSUE-20261122-002") != nil {
		t.Errorf("the queue does not quarantine an ID used twice: %d quarantined", len(q.Quarantined))
	}
}

// TestIntentKeepsACopyHeldBefore proves: when the archive held the moved
// copy already (the queue came back from a backup) and the queue's copy
// was edited after the interrupted archive, recovery leaves the archive's
// copy: the archive did not get it from this archive.
func TestIntentKeepsACopyHeldBefore(t *testing.T) {
	s := newIntentStore(t)
	if err := s.Update(context.Background(), moveResolved); err != nil {
		t.Fatal(err)
	}
	archived := read(t, s.Archive())
	write(t, s.Queue(), intentQueue)
	interrupted(t, s, moveResolved)
	editAfterInterruptedArchive(t, s)
	if got := read(t, s.Archive()); got != archived {
		t.Errorf("the copy archived before was taken out:\n%s", got)
	}
}

// TestIntentLeavesARevertMadeSince proves: a field the killed change wrote,
// and a person then set back by hand to what it was, stays as the person
// left it: the record says the queue was written, so completing the change
// does not write it again.
func TestIntentLeavesARevertMadeSince(t *testing.T) {
	s := newIntentStore(t)
	interrupted(t, s, retryChange) // queue written (Retry-Count 3), state not
	q := read(t, s.Queue())
	if !strings.Contains(q, "| Retry-Count | 3 |") {
		t.Fatal("setup")
	}
	// The person lowers Retry-Count back to 2 by hand ("between runs ... lowering Retry-Count by hand included").
	hand := strings.Replace(q, "| Retry-Count | 3 |", "| Retry-Count | 2 |", 1)
	write(t, s.Queue(), hand)
	ql, _, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if got := ql.Issue("ISSUE-20261122-001").RetryCount; got != 2 {
		t.Errorf("a reader sees Retry-Count %d, want the person's 2", got)
	}
	mustRecover(t, s)
	got := read(t, s.Queue())
	if !strings.Contains(got, "| Retry-Count | 2 |") {
		t.Errorf("person's hand edit Retry-Count 2 was overwritten by recovery; queue now:\n%s", got)
	}
}

// TestIntentKeepsAnArchivedIssueWhoseIDIsReused proves: an archive killed
// after both its writes, whose issue's ID an agent then files again, keeps
// the archived copy: the record says the queue was written, so the move is
// made and not undone.
func TestIntentKeepsAnArchivedIssueWhoseIDIsReused(t *testing.T) {
	s := newIntentStore(t)
	n := 0
	s.betweenWrites = func() error {
		n++
		if n == 2 { // after archive and queue writes, before state
			return errKilled
		}
		return nil
	}
	err := s.Update(context.Background(), func(q *Queue, st *State) (Change, error) {
		return Change{Move: []string{"ISSUE-20261122-002"}, State: []Edit{SetField(SectionAutoRetry, StateTotalAutoRetries, "2")},
			Log: []LogLine{{Path: s.Dir + "/logs/retry.jsonl", Line: []byte("{\"event\":\"archived\"}\n")}}}, nil
	})
	if !errors.Is(err, errKilled) {
		t.Fatalf("Update: %v", err)
	}
	s.betweenWrites = nil
	if strings.Contains(read(t, s.Queue()), "ISSUE-20261122-002") || !strings.Contains(read(t, s.Archive()), "Flaky test") {
		t.Fatalf("setup: queue\n%s\narchive\n%s", read(t, s.Queue()), read(t, s.Archive()))
	}
	// An agent appends a new issue, reusing the next free ID in the queue.
	f, _ := os.OpenFile(s.Queue(), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString("\n## ISSUE-20261122-002\n\n| Field | Value |\n|-------|-------|\n| Status | pending |\n\n### Summary\nNew thing\n")
	f.Close()
	mustRecover(t, s)
	a := read(t, s.Archive())
	if !strings.Contains(a, "Flaky test") {
		t.Errorf("the archived issue (Flaky test) is gone from the archive and not in the queue.\narchive:\n%s\nqueue:\n%s", a, read(t, s.Queue()))
	}
}
