package issuequeue

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/autoretry/orchestrator/internal/statefile"
)

// File names in the state directory.
const (
	QueueFile    = "issue_queue.md"
	StateFile    = "session_state.md"
	ArchiveFile  = "issue_archive.md"
	SentinelFile = "no_auto_retry"
)

// Paths names the files of a state directory.
type Paths struct{ Dir string }

// Queue returns the path of issue_queue.md.
func (p Paths) Queue() string { return filepath.Join(p.Dir, QueueFile) }

// State returns the path of session_state.md.
func (p Paths) State() string { return filepath.Join(p.Dir, StateFile) }

// Archive returns the path of issue_archive.md.
func (p Paths) Archive() string { return filepath.Join(p.Dir, ArchiveFile) }

// Sentinel returns the path of the no_auto_retry sentinel.
func (p Paths) Sentinel() string { return filepath.Join(p.Dir, SentinelFile) }

// SentinelPresent reports whether no_auto_retry exists.
func (p Paths) SentinelPresent() bool {
	_, err := os.Lstat(p.Sentinel())
	return err == nil
}

// KeptFindings returns a warning for each save kept beside the queue, the
// session state or the archive because a change could not merge it (see
// KeptSave): until a person merges it and removes the file, what they
// saved is not in the file they saved.
func (p Paths) KeptFindings() []Finding {
	var out []Finding
	for _, path := range []string{p.Queue(), p.State(), p.Archive()} {
		for _, kept := range statefile.SetAsideBeside(path) {
			out = append(out, Finding{File: kept, Line: 1, Col: 1, Warning: true,
				Msg: fmt.Sprintf("a save of %s that a change could not merge is kept here; merge it into %s by hand, then remove this file", filepath.Base(path), filepath.Base(path))})
		}
	}
	return out
}

// cause is err's message, for an error that wraps it once something was
// written: without the "nothing was written" of a *SavingError.
func cause(err error) string {
	var se *SavingError
	if errors.As(err, &se) {
		return se.File + " is being written by someone else and did not settle in time"
	}
	return err.Error()
}

// UnfinishedError reports a change of several files that stopped after
// its first write: the intent record (see IntentFile) holds the rest, and
// the next command completes it. Running the command again would make the
// change twice.
type UnfinishedError struct {
	Err    error  // why it stopped
	Intent string // the intent record
}

func (e *UnfinishedError) Error() string {
	return cause(e.Err) + "; the change is half made, and the next command completes it from " + e.Intent
}

func (e *UnfinishedError) Unwrap() error { return e.Err }

// RecoveryError reports a change that a killed command left half done
// (see IntentFile) and that could not be completed: the command that found
// it wrote nothing of its own, and the next command tries again.
type RecoveryError struct {
	Command string // the killed command
	Err     error
}

func (e *RecoveryError) Error() string {
	return "completing the interrupted " + e.Command + ": " + cause(e.Err) + "; this command wrote nothing, and the next one completes that change first"
}

func (e *RecoveryError) Unwrap() error { return e.Err }

// NoStateDirError reports a state directory that does not exist.
type NoStateDirError struct{ Dir string }

func (e *NoStateDirError) Error() string {
	return fmt.Sprintf("state directory %s does not exist", e.Dir)
}

// readOptional reads a file that may be missing; missing reads as nil.
func readOptional(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// Load reads and parses both files without locking, for commands that only
// read; only a change a killed command left half done (see IntentFile) is
// first completed under the write lock. A missing file parses as empty; a
// missing directory is an error.
func (p Paths) Load() (*Queue, *State, error) {
	if fi, err := os.Stat(p.Dir); err != nil || !fi.IsDir() {
		return nil, nil, &NoStateDirError{Dir: p.Dir}
	}
	if _, err := os.Lstat(p.Intent()); err == nil {
		// A command was killed between two writes: complete its change
		// first, so that what is read is never half of it.
		if err := (&Store{Paths: p, Command: "recover"}).Recover(context.Background()); err != nil {
			return nil, nil, err
		}
	}
	qb, err := readOptional(p.Queue())
	if err != nil {
		return nil, nil, err
	}
	sb, err := readOptional(p.State())
	if err != nil {
		return nil, nil, err
	}
	return ParseQueue(p.Queue(), qb), ParseState(p.State(), sb), nil
}

// LoadArchive reads and parses the archive as its history (see
// ParseArchive), after Load: nil if there is none.
func (p Paths) LoadArchive() (*Queue, error) {
	b, err := readOptional(p.Archive())
	if err != nil {
		return nil, fmt.Errorf("reading the archive: %w", err)
	}
	if b == nil {
		return nil, nil
	}
	return ParseArchive(p.Archive(), b), nil
}

// StateTemplate is the session state a missing session_state.md starts
// from.
const StateTemplate = `# Session State

## Auto-Retry State

| Field | Value |
|-------|-------|
| total_auto_retries | 0 |
| last_retry_reason | null |
| auto_retry_enabled | true |

## Run

| Field | Value |
|-------|-------|
| run_id | null |
| started_at | null |
| finished_at | null |
| loops | 0 |
| outcome | none |

## Circuit Breaker

| Field | Value |
|-------|-------|
| state | closed |
| consecutive_failures | 0 |
| opened_at | null |
`

// QueueTemplate is what a missing issue_queue.md starts from.
const QueueTemplate = "# Issue Queue\n"

// DefaultLockWait is how long a command waits for the write lock.
const DefaultLockWait = 10 * time.Second

// Store changes the state files of a directory safely: under the write
// lock, after validating them, with each file replaced atomically and a
// concurrent hand edit re-applied rather than lost.
type Store struct {
	Paths
	LockWait time.Duration // 0 means DefaultLockWait
	Command  string        // recorded in .lock as the holder, e.g. "fail"
	// Warn, if not nil, is called with the errors of each quarantined
	// issue of the queue an update reads: the issues it leaves alone.
	Warn func([]Finding)
	// Kept, if not nil, is called with each save a change could not merge
	// and kept beside its file instead (see KeptSave): what is in place
	// stands, and a person must merge the save.
	Kept func(KeptSave)

	// betweenWrites, if not nil, is called between the first and the
	// second write of a change of two files; an error stops the change
	// there, as a kill would. Tests set it.
	betweenWrites func() error
}

// LogLine is a line to append to an event log.
type LogLine struct {
	Path string
	Line []byte // ends with a newline
}

// Change is what an update writes.
type Change struct {
	Queue []Edit
	State []Edit
	// Move lists issues to move from the queue to the archive, byte for
	// byte: the archive is written first, so that an issue is never in
	// neither file. The archive keeps every copy it holds: the queue's is
	// added after an older one that differs, never in its place.
	Move []string
	// Log lists lines to append to event logs once the files are written,
	// as part of the change: if a kill comes first, the next command
	// appends them.
	Log []LogLine
	// After, if not nil, runs once both files are written, still under the
	// write lock: for output and log entries that must follow the write and
	// not interleave with another command's.
	After func() error
}

// Update takes the write lock, reads and validates both files, and calls fn
// with them. It writes the edits fn returns; if fn returns an error nothing
// is written and the error is returned. An invalid file fails with a
// *ValidationError before fn is called, and a file that a person changed in
// a way that conflicts with the edits fails with a *ConflictError; in both
// cases nothing is written.
//
// A file caught in the middle of someone's save (missing, empty, half
// written, without the issue fn looks for, or in conflict with the change)
// is read again once the save is over, for up to SettleTime, before any of
// these errors is reported.
//
// A save that went into a file the change replaced, and that could not be
// put back, is kept beside the file and told to Kept (see KeptSave); one
// that could not even be kept (the disk is full) is an error returned
// after the change was made.
//
// A change of several files that stops after its first write (a save of
// the other file that does not end, the context done) fails with an
// *UnfinishedError: the next Update or Recover completes it.
func (s *Store) Update(ctx context.Context, fn func(q *Queue, st *State) (Change, error)) error {
	if fi, err := os.Stat(s.Dir); err != nil || !fi.IsDir() {
		return &NoStateDirError{Dir: s.Dir}
	}
	return s.locked(ctx, func(set *settler) error { return s.update(ctx, set, fn) })
}

// update is Update under the write lock, with a change a killed command
// left half done completed.
func (s *Store) update(ctx context.Context, set *settler, fn func(q *Queue, st *State) (Change, error)) (err error) {
	var (
		qOrig, sOrig []byte
		q            *Queue
		st           *State
		ch           Change
		sNext        []byte
		intended     bool
		sAhead       *ahead
	)
	// verdict is err, the verdict on what was read, unless the command was
	// interrupted while it waited for a save to end: then it saw too
	// little to give one.
	verdict := func(err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		return err
	}
	// The new files go to disk while the intent is recorded (see
	// writeAhead): a temporary file is no one's until it is put in place.
	// What is written ahead and not put in place is removed.
	var aheads []*ahead
	defer func() {
		for _, a := range aheads {
			a.discard()
		}
	}()
	for {
		if err := ctx.Err(); err != nil {
			return err // interrupted while waiting: nothing is written yet
		}
		if qOrig, err = readSettled(s.Queue()); err != nil {
			return err
		}
		if sOrig, err = readSettled(s.State()); err != nil {
			return err
		}
		// A file someone saved a moment ago may have been read in the
		// middle of the save, even if it parses.
		if set.saving(s.Queue(), qOrig) && set.wait(ctx, s.Queue(), qOrig) || set.saving(s.State(), sOrig) && set.wait(ctx, s.State(), sOrig) {
			continue
		}
		for _, p := range []struct {
			path string
			seen []byte
		}{{s.Queue(), qOrig}, {s.State(), sOrig}} {
			if !set.left() && set.busy(p.path, p.seen) {
				return &SavingError{File: p.path}
			}
			if p.seen != nil && len(p.seen) == 0 && writers(p.path) == leaseUnknown {
				return verdict(&EmptyFileError{File: p.path})
			}
		}
		qBase, sBase := qOrig, sOrig
		if qBase == nil {
			qBase = []byte(QueueTemplate)
		}
		if sBase == nil {
			sBase = []byte(StateTemplate)
		}
		q, st = ParseQueue(s.Queue(), qBase), ParseState(s.State(), sBase)
		if err = q.Err(); err != nil {
			if set.wait(ctx, s.Queue(), qOrig) {
				continue
			}
			return verdict(err)
		}
		if err = st.Err(); err != nil {
			if set.wait(ctx, s.State(), sOrig) {
				continue
			}
			return verdict(err)
		}
		if s.Warn != nil && len(q.Quarantined) > 0 {
			s.Warn(q.QuarantineFindings())
		}
		ch, err = fn(q, st)
		var nf *NotFoundError
		var qe *QuarantinedError
		if errors.As(err, &nf) || errors.As(err, &qe) {
			if set.wait(ctx, s.Queue(), qOrig) {
				continue // the issue may be in the middle of a save
			}
			if set.busy(s.Queue(), qOrig) {
				return &SavingError{File: s.Queue()} // still being saved: no verdict
			}
		}
		if err = verdict(err); err != nil {
			return err // the verdict, or interrupted while waiting: nothing is written yet
		}
		var moves []intentMove
		var archived *Queue
		if len(ch.Move) > 0 {
			b, err := readSettled(s.Archive())
			if err != nil {
				return err
			}
			archived = ParseArchive(s.Archive(), b)
		}
		for _, id := range ch.Move {
			m := intentMove{ID: id, Block: string(q.IssueSource(id))}
			m.Held = archived.copyOf(m) != nil
			moves = append(moves, m)
			ch.Queue = append(ch.Queue, RemoveIssue(id))
		}
		sAhead = nil
		if len(ch.State) > 0 {
			if sNext, err = st.Apply(ch.State...); err != nil {
				return err
			}
			sAhead = writeAhead(s.State(), sNext)
			aheads = append(aheads, sAhead)
		}
		var next []byte
		if len(ch.Queue) > 0 {
			if next, err = q.Apply(ch.Queue...); err != nil {
				return err
			}
		}
		var qAhead *ahead
		if len(ch.Queue) > 0 && len(moves) == 0 {
			qAhead = writeAhead(s.Queue(), next)
			aheads = append(aheads, qAhead)
		}
		// A change that writes more than one of the archive, the queue,
		// the state and the logs needs its record.
		writes := 0
		for _, n := range []int{len(moves), len(ch.Queue), len(ch.State), len(ch.Log)} {
			if n > 0 {
				writes++
			}
		}
		if intended = writes > 1; intended {
			files := []intentFile{{Name: StateFile, Edits: encodeEdits(ch.State), Old: string(st.d.src), After: sum(sNext)}}
			if len(ch.Queue) > 0 {
				files = slices.Insert(files, 0, intentFile{Name: QueueFile, Edits: encodeEdits(ch.Queue), Old: excerpt(q.d, ch.Queue), After: sum(next)})
			}
			if err := s.writeIntent(intent{Moves: moves, Log: logIntent(ch.Log), Files: files}); err != nil {
				return err
			}
		}
		if len(ch.Queue) == 0 {
			break
		}
		if len(moves) > 0 {
			if err := s.archiveBlocks(ctx, set, moves, nil); err != nil {
				return errors.Join(err, s.removeIntent())
			}
			// The archive holds the issues now: from here on a failed
			// write is completed by the next command.
			if s.betweenWrites != nil {
				if err := s.betweenWrites(); err != nil {
					return err
				}
			}
			set.extend()
			err := set.replace(ctx, s.Queue(), qOrig, next, func(cur []byte) ([]byte, error) { return q.Rebase(cur, ch.Queue...) }, nil)
			if err != nil {
				return &UnfinishedError{Err: err, Intent: s.Intent()}
			}
			break
		}
		var seen []byte
		err = set.replaceKeeping(ctx, s.Queue(), qOrig, next, func(cur []byte) ([]byte, error) {
			return q.Rebase(cur, ch.Queue...)
		}, &seen, qAhead.take())
		if err == errSaving || err != nil && midSave(err) && set.wait(ctx, s.Queue(), seen) {
			// What the change was computed from, or what it was to be
			// re-applied to, was the middle of a save: nothing is
			// written yet, so the command starts again from the file
			// as it is now.
			if intended {
				if err := s.removeIntent(); err != nil {
					return err
				}
				intended = false
			}
			continue
		}
		if err != nil {
			if intended {
				err = errors.Join(err, s.removeIntent()) // nothing was written
			}
			return err
		}
		break
	}
	// The loop ends with the queue written (after the archive, if issues
	// moved), or with nothing written if the change leaves the queue alone.
	wrote := len(ch.Queue) > 0
	if intended && s.betweenWrites != nil {
		if err := s.betweenWrites(); err != nil {
			return err
		}
	}
	if wrote {
		// The rest of the change must be made: a save of the state file
		// going on now gets a wait of its own.
		set.extend()
	}
	if len(ch.State) > 0 {
		err := set.replace(ctx, s.State(), sOrig, sNext, func(cur []byte) ([]byte, error) { return st.Rebase(cur, ch.State...) }, sAhead.take())
		switch {
		case err != nil && wrote:
			return &UnfinishedError{Err: err, Intent: s.Intent()} // the next command completes the change
		case err != nil && intended:
			return errors.Join(err, s.removeIntent()) // nothing was written
		case err != nil:
			return err
		}
	}
	if err := AppendLog(ch.Log...); err != nil {
		if intended {
			return &UnfinishedError{Err: err, Intent: s.Intent()} // the next command appends what is missing
		}
		return err
	}
	if intended {
		if err := s.removeIntent(); err != nil {
			return err
		}
	}
	if ch.After != nil {
		return ch.After()
	}
	return nil
}

// Recover takes the write lock and completes a change that a command
// killed between two writes left half done (see IntentFile). Every Update
// does so first.
func (s *Store) Recover(ctx context.Context) error {
	return s.locked(ctx, func(*settler) error { return nil })
}

// locked takes the write lock, completes a change a killed command left
// half done, and calls fn, all with one settler. Before the lock is let go
// of, the saves the settler kept aside are told to Kept, and those it could
// not keep are joined to the error.
func (s *Store) locked(ctx context.Context, fn func(set *settler) error) (err error) {
	wait := s.LockWait
	if wait == 0 {
		wait = DefaultLockWait
	}
	lk, err := statefile.LockWrite(ctx, s.Dir, wait, statefile.Owner{Command: s.Command})
	if err != nil {
		return err
	}
	defer lk.Unlock()
	set := newSettler()
	defer func() { err = errors.Join(err, s.report(set)) }()
	if err := s.recoverIntent(ctx, set); err != nil {
		return err
	}
	return fn(set)
}

// report tells Kept of the saves set kept aside, and returns an error for
// those it could not keep either: the change went on without them.
func (s *Store) report(set *settler) error {
	if s.Kept != nil {
		for _, k := range set.kept {
			s.Kept(k)
		}
	}
	return errors.Join(set.lost...)
}

// Unfence returns the content of text if it is exactly one fenced code
// block, else text unchanged.
func Unfence(text string) string { return unfence(text) }

// IssueSource returns the bytes of an issue, heading to the start of the
// next heading of its level or higher, or nil.
func (q *Queue) IssueSource(id string) []byte {
	r := q.d.byKey[id]
	if r == nil {
		return nil
	}
	return q.d.src[r.start:r.end]
}

// ArchiveTemplate is what a new issue_archive.md starts with.
const ArchiveTemplate = "# Issue Archive\n\nResolved and skipped issues moved out of issue_queue.md by `orchestrator archive`.\n"
