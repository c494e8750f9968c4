package orchestrator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/config"
	"github.com/autoretry/orchestrator/internal/foundations/statefile"
	"github.com/autoretry/orchestrator/issuequeue"
)

// The loop guard. A coding agent runs with write access to the whole
// workspace, the state directory included. So the runner records what the
// limits and a person's stops depend on before every loop, compares after
// it, and restores what the loop loosened other than through orchestrator
// commands: the run then stops (reason code guard). The guard is monotone:
// an edit that only tightens (a lower limit, an issue halted or skipped,
// a new stop file) stands, whoever made it; and what a person's command
// told the run it set during the loop (over the run's socket, from a
// process that does not descend from the run: see guard_person.go and
// package handoff) counts as part of the state before the loop, so a
// person's answer during a loop stands too. A user_response record that a
// loop appends to the ledger without a person's command behind it is
// removed. Between runs no agent runs, so edits then are a person's and
// are honoured.

// guardSnapshot is the protected state as it was before a loop.
type guardSnapshot struct {
	queue       *issuequeue.Queue
	state       *issuequeue.State
	stateExists bool
	files       map[string]*[]byte // path → content; nil: did not exist
	lock        os.FileInfo        // .lock, nil if missing
	ledgerSize  int64
	ledgerTail  []byte // the last bytes before ledgerSize
	// ledgerWindow is the ledger's last 24 hours (what the budgets and the
	// cross-issue rules read), to put back if a loop truncates or rewrites
	// the ledger.
	ledgerWindow []byte
	// person is what the run learns of a person's changes during the loop.
	person *personWindow
}

// A guardChange is one change a loop made to protected state, and what the
// guard did about it.
type guardChange struct {
	What     string // e.g. "ISSUE-…: Retry-Count 4 → 0"
	Restored bool
	// Claim marks an issue the loop set resolved in the file although it
	// has a Verify check: it goes back to in_progress and the tool's own
	// verification decides. A claim does not stop the run.
	Claim bool
	// Kept marks a change the guard let stand: a person's, or one that
	// only tightens. It does not stop the run.
	Kept bool
}

// stops returns the changes that stop the run: all but claims.
func stops(changes []guardChange) []guardChange {
	var out []guardChange
	for _, c := range changes {
		if !c.Claim && !c.Kept {
			out = append(out, c)
		}
	}
	return out
}

// Tool-owned cells of session_state.md: a loop may not change them.
var guardedState = []struct{ section, field string }{
	{issuequeue.SectionAutoRetry, issuequeue.StateTotalAutoRetries},
	{issuequeue.SectionRun, issuequeue.StateRunID},
	{issuequeue.SectionBreaker, issuequeue.StateBreaker},
	{issuequeue.SectionBreaker, issuequeue.StateConsecutiveFailures},
	{issuequeue.SectionBreaker, issuequeue.StateOpenedAt},
	{issuequeue.SectionRateLimit, issuequeue.StateLimitedUntil},
}

const ledgerTailSize = 4096

// guardedFiles lists the files of the state directory whose change or
// removal by a loop is undone: the configuration, template overrides and a
// person's two stop files.
func (o *Orchestrator) guardedFiles() []string {
	p := o.paths()
	files := []string{filepath.Join(o.Dir, "config.toml"), p.Sentinel(), p.Pause()}
	if ents, err := os.ReadDir(filepath.Join(o.Dir, "templates")); err == nil {
		for _, e := range ents {
			files = append(files, filepath.Join(o.Dir, "templates", e.Name()))
		}
	}
	return files
}

// snapshot records the protected state before a loop.
func (o *Orchestrator) snapshot() (*guardSnapshot, error) {
	q, st, err := o.paths().Load()
	if err != nil {
		return nil, err
	}
	s := &guardSnapshot{queue: q, state: st, files: map[string]*[]byte{}}
	if _, err := os.Stat(o.paths().State()); err == nil {
		s.stateExists = true
	}
	for _, f := range o.guardedFiles() {
		s.files[f] = readMaybe(f)
	}
	s.lock, _ = os.Lstat(filepath.Join(o.Dir, statefile.LockFile))
	s.ledgerSize, s.ledgerTail = ledgerEnd(o.paths().Ledger(), -1)
	s.ledgerWindow = ledgerWindow(o.paths().Ledger(), s.ledgerSize, o.now().Add(-config.BudgetWindow))
	return s, nil
}

// maxLedgerWindow bounds the copy of the ledger's window a snapshot holds.
const maxLedgerWindow = 16 << 20

// ledgerWindow returns the ledger's lines from where its window at since
// starts (found reading backwards from size, as the limits find it) up to
// size, at most its last maxLedgerWindow bytes.
func ledgerWindow(path string, size int64, since time.Time) []byte {
	f, _, err := statefile.OpenThrough(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	from, err := windowStart(f, size, since, jsonTime)
	if err != nil || from >= size {
		return nil
	}
	cut := from < size-maxLedgerWindow
	from = max(from, size-maxLedgerWindow)
	b := make([]byte, size-from)
	n, _ := f.ReadAt(b, from)
	b = b[:n]
	if cut {
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:] // the first line began before what was read
		}
	}
	return b
}

func readMaybe(path string) *[]byte {
	b, err := statefile.ReadThrough(path)
	if err != nil {
		return nil
	}
	return &b
}

// ledgerEnd returns the size of the ledger and its last bytes before at
// (the end when at < 0).
func ledgerEnd(path string, at int64) (int64, []byte) {
	f, fi, err := statefile.OpenThrough(path)
	if err != nil {
		return 0, nil
	}
	defer f.Close()
	size := fi.Size()
	if at < 0 || at > size {
		at = size
	}
	from := max(0, at-ledgerTailSize)
	b := make([]byte, at-from)
	n, _ := f.ReadAt(b, from)
	return size, b[:n]
}

// eventsSince reads the ledger's events after offset off.
func eventsSince(path string, off int64) []Event {
	f, _, err := statefile.OpenThrough(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var evs []Event
	// A line too long ends the read: the events before it are what it finds.
	_ = scanEvents(io.NewSectionReader(f, off, 64<<20), func(l ledgerLine) error {
		if ev, err := l.Event(); !l.Blank() && err == nil {
			evs = append(evs, ev)
		}
		return nil
	})
	return evs
}

// guardAfter compares the protected state with the snapshot taken before
// loop, restores what the loop changed other than through orchestrator
// commands, records each change as a guard event, and returns them.
//
// The guard is monotone: what a person's command told the run it set
// during the loop (see PersonChange) counts as part of the state before
// the loop, and so does a stop file that appeared; an edit that only
// tightens a limit stands, whoever made it. Only loosening changes are
// undone. It holds the write lock while it compares, so a person's
// command is either wholly before the comparison or wholly after it.
func (o *Orchestrator) guardAfter(s *guardSnapshot, runID string, loop int) ([]guardChange, error) {
	var changes []guardChange
	add := func(restored bool, format string, args ...any) {
		changes = append(changes, guardChange{What: fmt.Sprintf(format, args...), Restored: restored})
	}
	// The two markdown files: one deleted is put back before the store
	// reads it (it would read a blank one).
	if _, err := os.Stat(o.paths().State()); s.stateExists && errors.Is(err, fs.ErrNotExist) {
		// Created, never clobbered: a file put there meanwhile (an editor
		// that renamed the old one away mid-save) stands.
		switch err := statefile.WriteNew(o.paths().State(), s.state.Source()); {
		case err == nil:
			add(true, "session_state.md was deleted: restored")
		case !errors.Is(err, fs.ErrExist):
			return changes, err
		}
	}
	pre := len(changes)
	var (
		once      []guardChange
		onceDone  bool
		onceErr   error
		newEvents map[string]bool // issues a command recorded a failure of during the loop
	)
	doOnce := func() {
		onceDone = true
		people, seen := s.person.take(settleWait)
		once, newEvents, onceErr = o.guardOnce(s, people, seen)
		if onceErr == nil {
			onceErr = o.recordPeople(runID, loop, people)
		}
	}
	err := o.store().Update(context.Background(), func(q *issuequeue.Queue, st *issuequeue.State) (issuequeue.Change, error) {
		if !onceDone {
			doOnce()
		}
		changes = append(changes[:pre], once...) // the store may call this again, on a file caught mid-save
		if onceErr != nil {
			return issuequeue.Change{}, onceErr
		}
		var qe, se []issuequeue.Edit
		for _, old := range s.queue.Issues {
			if _, err := q.Lookup(old.ID); errors.As(err, new(*issuequeue.QuarantinedError)) {
				add(false, "%s was made invalid: it is left alone until a person fixes it", old.ID)
				continue
			}
			now := q.Issue(old.ID)
			if now == nil {
				qe = append(qe, issuequeue.AppendIssue(old.ID, string(s.queue.IssueSource(old.ID))))
				add(true, "%s was deleted: restored", old.ID)
				continue
			}
			qe = append(qe, o.guardIssue(old, now, newEvents[old.ID], add, func(what string) {
				changes = append(changes, guardChange{What: what, Restored: true, Claim: true})
			})...)
		}
		for _, c := range guardedState {
			before, _ := s.state.Field(c.section, c.field)
			after, _ := st.Field(c.section, c.field)
			if strings.TrimSpace(before) == strings.TrimSpace(after) {
				continue
			}
			se = append(se, issuequeue.SetField(c.section, c.field, before))
			add(true, "session_state.md: %s %q → %q: restored", c.field, before, after)
		}
		if !s.state.AutoRetryEnabled && st.AutoRetryEnabled {
			before, _ := s.state.Field(issuequeue.SectionAutoRetry, issuequeue.StateAutoRetryEnabled)
			se = append(se, issuequeue.SetField(issuequeue.SectionAutoRetry, issuequeue.StateAutoRetryEnabled, before))
			add(true, "session_state.md: auto_retry_enabled switched back on: restored to %q", before)
		}
		return issuequeue.Change{Queue: qe, State: se}, nil
	})
	if !onceDone {
		// The store failed before it read the files (one the loop made
		// invalid): the rest is put back all the same.
		doOnce()
		changes = append(changes[:pre], once...)
	}
	if err == nil {
		err = onceErr
	}
	if err != nil {
		return changes, err
	}
	lg := o.log()
	for _, c := range changes {
		if c.Kept {
			continue
		}
		if err := lg.Record(Event{Time: o.now(), Event: EvGuard, RunID: runID, Loop: loop, Code: CodeGuard, Reason: c.What}); err != nil {
			return changes, err
		}
	}
	return changes, nil
}

// guardOnce does what the guard does once per loop under the write lock:
// the ledger, a person's changes applied to the snapshot, the files.
func (o *Orchestrator) guardOnce(s *guardSnapshot, people []takenChange, seen map[string]*[]byte) ([]guardChange, map[string]bool, error) {
	var changes []guardChange
	add := func(restored bool, format string, args ...any) {
		changes = append(changes, guardChange{What: fmt.Sprintf(format, args...), Restored: restored})
	}
	kept := func(format string, args ...any) {
		changes = append(changes, guardChange{What: fmt.Sprintf(format, args...), Kept: true})
	}
	ledger := o.paths().Ledger()
	newEvents := map[string]bool{}
	size, tail := ledgerEnd(ledger, s.ledgerSize)
	if size < s.ledgerSize || !bytes.Equal(tail, s.ledgerTail) {
		// What the limits read is put back: the last 24 hours as they were
		// before the loop. What the loop wrote there is not believed.
		if err := writeFileAtomic(ledger, s.ledgerWindow); err != nil {
			return changes, newEvents, err
		}
		add(true, "logs/retry.jsonl was truncated or rewritten (%d bytes before the loop, %d after): its last 24 hours restored", s.ledgerSize, size)
	} else {
		forged, err := o.removeForged(s.ledgerSize, people)
		if err != nil {
			return changes, newEvents, err
		}
		for _, f := range forged {
			add(true, "logs/retry.jsonl: a %s record no person's command made was appended: removed", f)
		}
		for _, ev := range eventsSince(ledger, s.ledgerSize) {
			if ev.Event == EvAttempt {
				newEvents[ev.IssueID] = true
			}
		}
	}

	// A person's changes, and the stop files that appeared, are part of
	// the state before the loop.
	for path, b := range seen {
		if cur, ok := s.files[path]; ok && cur == nil {
			s.files[path] = b
		}
	}
	for _, c := range people {
		s.applyPerson(o, c)
		kept("a person's change during the loop: %s", c.what())
	}

	// Files: the configuration, template overrides, the stop files.
	for _, path := range o.guardedFiles() {
		if _, ok := s.files[path]; !ok {
			s.files[path] = nil // a template override the loop added
		}
	}
	paths := make([]string, 0, len(s.files))
	for p := range s.files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, path := range paths {
		before, now := s.files[path], readMaybe(path)
		name, _ := filepath.Rel(o.Dir, path)
		switch {
		case before == nil && now == nil, before != nil && now != nil && bytes.Equal(*before, *now):
			continue
		case path == o.paths().Sentinel() || path == o.paths().Pause():
			if before == nil {
				continue // a new stop file only stops more
			}
			if err := writeFileAtomic(path, *before); err != nil {
				return changes, newEvents, err
			}
			add(true, "%s was removed (a person's stop): put back", name)
			continue
		}
		isConfig := filepath.Base(path) == "config.toml" && filepath.Dir(path) == filepath.Clean(o.Dir)
		var loose []string
		if isConfig && now != nil {
			var old []byte
			if before != nil {
				old = *before
			}
			if loose = configLoosens(old, *now); len(loose) == 0 {
				kept("%s was tightened: kept", name)
				continue
			}
			if err := writeFileAtomic(path+".rejected", *now); err != nil {
				return changes, newEvents, err
			}
		}
		if before == nil {
			if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return changes, newEvents, err
			}
		} else if err := writeFileAtomic(path, *before); err != nil {
			return changes, newEvents, err
		}
		what := "changed"
		switch {
		case before == nil:
			what = "created"
		case now == nil:
			what = "removed"
		}
		extra := ""
		if isConfig && now != nil {
			extra = "; the loop's version is in config.toml.rejected (it loosens " + strings.Join(loose, ", ") + ")"
		}
		add(true, "%s was %s: restored%s", name, what, extra)
	}
	lockPath := filepath.Join(o.Dir, statefile.LockFile)
	if fi, err := os.Lstat(lockPath); s.lock != nil && (err != nil || !os.SameFile(fi, s.lock)) {
		if err != nil {
			if f, err := statefile.OpenNoLink(lockPath, os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
				f.Close()
			}
		}
		add(err != nil, "%s was removed or replaced (the state directory's own lock still kept other runs out)", statefile.LockFile)
	}
	return changes, newEvents, nil
}

// guardIssue returns the edits that undo a loop's changes to one issue's
// protected fields. Changes that only make things stricter (more retries
// counted, a lower limit, a halt) stand; so do the signature fields when an
// orchestrator fail recorded a failure of the issue during the loop.
func (o *Orchestrator) guardIssue(old, now *issuequeue.Issue, failRecorded bool, add func(bool, string, ...any), claim func(string)) []issuequeue.Edit {
	var edits []issuequeue.Edit
	restore := func(field, format string, args ...any) {
		v, _ := old.Field(field)
		edits = append(edits, issuequeue.SetField(old.ID, field, strings.TrimSpace(v)))
		add(true, old.ID+": "+format+": restored", args...)
	}
	if now.RetryCount < old.RetryCount {
		restore(issuequeue.FieldRetryCount, "Retry-Count %d → %d", old.RetryCount, now.RetryCount)
	}
	if a, b := MaxRetries(o.Config, old), MaxRetries(o.Config, now); b > a {
		restore(issuequeue.FieldMaxRetries, "Max-Retries %d → %d", a, b)
	}
	if old.Halted && !now.Halted {
		restore(issuequeue.FieldHalted, "Halted true → false")
	}
	if !old.AutoRetry && now.AutoRetry {
		restore(issuequeue.FieldAutoRetry, "Auto-Retry false → true")
	}
	if (old.Status == issuequeue.StatusEscalated || old.Status == issuequeue.StatusSkipped) && now.Status != old.Status &&
		now.Status != issuequeue.StatusSkipped {
		restore(issuequeue.FieldStatus, "Status %s → %s", old.Status, now.Status)
	}
	if old.Status == issuequeue.StatusInProgress && now.Status == issuequeue.StatusResolved && now.Verify != "" {
		edits = append(edits, issuequeue.SetField(old.ID, issuequeue.FieldStatus, issuequeue.StatusInProgress))
		claim(old.ID + ": set resolved by the loop: back to in_progress, its Verify check decides")
	}
	if !failRecorded {
		if old.FailureSignature != now.FailureSignature {
			restore(issuequeue.FieldFailureSignature, "Failure-Signature changed")
		}
		if strings.Join(old.PreviousSignatures, ",") != strings.Join(now.PreviousSignatures, ",") {
			restore(issuequeue.FieldPreviousSignatures, "Previous-Signatures changed")
		}
		if old.SignatureRepeatCount != now.SignatureRepeatCount {
			restore(issuequeue.FieldSignatureRepeatCount, "Signature-Repeat-Count %d → %d", old.SignatureRepeatCount, now.SignatureRepeatCount)
		}
	}
	return edits
}
