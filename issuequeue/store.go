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

	"github.com/autoretry/orchestrator/internal/foundations/statefile"
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
// session state or the archive (see KeptSave): until a person merges it
// and removes the file, what they saved is not in the file they saved.
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

// KeptSave is a save into File that began in the instant a change had put
// its new file in place and had to give the name back to an earlier save:
// it went on into Saved, beside File, for a person to merge.
type KeptSave struct{ File, Saved string }

func (k KeptSave) String() string {
	return fmt.Sprintf("%s was saved while this command replaced it, and the save could not be merged: it is kept in %s; merge it into %s by hand, then remove %s", k.File, k.Saved, k.File, k.Saved)
}

// cause is err's message, for an error that wraps it once something was
// written: without the "nothing was written" of a *statefile.WritingError.
func cause(err error) string {
	var we *statefile.WritingError
	if errors.As(err, &we) {
		return we.File + " is being written by someone else and did not settle in time"
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

// EmptyFileError reports an empty state file where no lease can tell
// whether someone has it open for writing (see statefile.EmptyFileError).
type EmptyFileError = statefile.EmptyFileError

// NoStateDirError reports a state directory that does not exist.
type NoStateDirError struct{ Dir string }

func (e *NoStateDirError) Error() string {
	return fmt.Sprintf("state directory %s does not exist", e.Dir)
}

// unleasedEmpty returns an *EmptyFileError for the file at path read empty
// (b) where no lease could tell (not whole) whether an editor is in the
// middle of saving it.
func unleasedEmpty(path string, b []byte, whole bool) error {
	if b != nil && len(b) == 0 && !whole {
		return &EmptyFileError{File: path}
	}
	return nil
}

// readOptional reads a state file for a command that only reads: it takes
// no lock and does not wait. Missing reads as nil. A link is read through:
// lint reports it, and every write refuses it. A FIFO or other file that
// is not a regular one is refused, not waited on.
func readOptional(path string) ([]byte, error) {
	b, err := statefile.ReadThrough(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// readState reads a state file for a change: it waits while someone has it
// open for writing, and reports whether the kernel vouched that it is
// whole. Missing reads as nil.
func readState(ctx context.Context, path string) ([]byte, bool, error) {
	b, whole, err := statefile.Read(ctx, path, statefile.WriterWait)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	return b, whole, err
}

// Load reads and parses both files for commands that only read: it takes
// no lock and writes nothing. A change a killed command left half done
// (see IntentFile) is read as it will be once completed, in memory only;
// the next command that writes completes it on disk. A missing file parses
// as empty; a missing directory is an error.
func (p Paths) Load() (*Queue, *State, error) {
	if fi, err := os.Stat(p.Dir); err != nil || !fi.IsDir() {
		return nil, nil, &NoStateDirError{Dir: p.Dir}
	}
	files, err := p.readAll(p.Queue(), p.State())
	if err != nil {
		return nil, nil, err
	}
	return ParseQueue(p.Queue(), files[p.Queue()]), ParseState(p.State(), files[p.State()]), nil
}

// LoadArchive reads and parses the archive as its history (see
// ParseArchive), after Load: nil if there is none.
func (p Paths) LoadArchive() (*Queue, error) {
	files, err := p.readAll(p.Archive())
	if err != nil {
		return nil, fmt.Errorf("reading the archive: %w", err)
	}
	if files[p.Archive()] == nil {
		return nil, nil
	}
	return ParseArchive(p.Archive(), files[p.Archive()]), nil
}

// readAll reads the files at paths for a command that only reads, as they
// will be once a change a killed command left half done is completed. A
// change that a command makes meanwhile could leave one file read before
// it and another after it: the files and the intent record are looked at
// before and after, and read again (a few times at most) until nothing
// changed in between. The queue, read only to complete a half-done move,
// need not be watched: whatever completes the move on disk removes the
// intent record, which is.
func (p Paths) readAll(paths ...string) (map[string][]byte, error) {
	watch := append(slices.Clone(paths), p.Intent())
	for try := 0; ; try++ {
		before := stamps(watch)
		files := map[string][]byte{}
		for _, path := range paths {
			b, err := readOptional(path)
			if err != nil {
				return nil, err
			}
			files[path] = b
		}
		if err := p.completed(files); err != nil {
			return nil, err
		}
		if try == 3 || sameStamps(before, stamps(watch)) {
			return files, nil
		}
	}
}

// stamps returns what the files' metadata say of their versions (nil: a
// missing file).
func stamps(paths []string) []os.FileInfo {
	out := make([]os.FileInfo, len(paths))
	for i, path := range paths {
		out[i], _ = os.Lstat(path)
	}
	return out
}

// sameStamps reports whether no file changed between two stamps: the same
// inode, size and modification time, or missing both times.
func sameStamps(a, b []os.FileInfo) bool {
	for i := range a {
		if (a[i] == nil) != (b[i] == nil) {
			return false
		}
		if a[i] != nil && !(os.SameFile(a[i], b[i]) && a[i].Size() == b[i].Size() && a[i].ModTime().Equal(b[i].ModTime())) {
			return false
		}
	}
	return true
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

// SettleTime bounds how long a command waits for a state file caught in
// the middle of someone's save to change, before a verdict on what it held.
const SettleTime = statefile.WriterWait

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
	// Kept, if not nil, is called with each save kept beside its file (see
	// KeptSave): what is in place stands, and a person must merge the save.
	Kept func(KeptSave)

	// betweenWrites, if not nil, is called between the first and the
	// second write of a change of several files; an error stops the change
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

// Update takes the write lock, completes a change a killed command left
// half done, reads and validates both files, and calls fn with them. It
// writes the edits fn returns; if fn returns an error nothing is written
// and the error is returned. An invalid file fails with a *ValidationError
// before fn is called, and a file that a person changed in a way that
// conflicts with the edits fails with a *ConflictError; in both cases
// nothing is written.
//
// A file someone is saving is read once the save is over. One that may
// still be in the middle of a save when the verdict is against it
// (missing, or read where no lease can vouch for it) is read again once it
// changes, for up to SettleTime.
//
// A change of several files that stops after its first write fails with
// an *UnfinishedError: the next Update completes it.
func (s *Store) Update(ctx context.Context, fn func(q *Queue, st *State) (Change, error)) error {
	if fi, err := os.Stat(s.Dir); err != nil || !fi.IsDir() {
		return &NoStateDirError{Dir: s.Dir}
	}
	return s.locked(ctx, func() error {
		by := time.Now().Add(SettleTime)
		for {
			snap, err := s.read(ctx)
			if err != nil {
				return err
			}
			ch, err := s.decide(snap, fn)
			if err != nil && snap.midSave(ctx, err, by) {
				continue // their save was going on: read it as it is now
			}
			if err != nil {
				return err
			}
			p, err := s.plan(ctx, snap, ch)
			if err != nil {
				return err
			}
			return s.commit(ctx, p)
		}
	})
}

// locked takes the write lock, completes a change a killed command left
// half done, and calls fn.
func (s *Store) locked(ctx context.Context, fn func() error) error {
	wait := s.LockWait
	if wait == 0 {
		wait = DefaultLockWait
	}
	lk, err := statefile.LockWrite(ctx, s.Dir, wait, statefile.Owner{Command: s.Command})
	if err != nil {
		return err
	}
	defer lk.Unlock()
	if err := s.recoverIntent(ctx); err != nil {
		return err
	}
	return fn()
}

// snapshot is what an update read: both files as they were (nil:
// missing), parsed, and whether the kernel vouched for each that no save
// was going on while it was read.
type snapshot struct {
	qOrig, sOrig   []byte
	qWhole, sWhole bool
	q              *Queue
	st             *State
	queue, state   string
}

// read reads and parses both files. Where no lease can tell whether an
// editor has an empty file open, the file is refused (*EmptyFileError): a
// change built on it would throw away what the editor then writes.
func (s *Store) read(ctx context.Context) (*snapshot, error) {
	snap := &snapshot{queue: s.Queue(), state: s.State()}
	var err error
	if snap.qOrig, snap.qWhole, err = readState(ctx, s.Queue()); err != nil {
		return nil, err
	}
	if snap.sOrig, snap.sWhole, err = readState(ctx, s.State()); err != nil {
		return nil, err
	}
	qBase, sBase := snap.qOrig, snap.sOrig
	if qBase == nil {
		qBase = []byte(QueueTemplate)
	}
	if sBase == nil {
		sBase = []byte(StateTemplate)
	}
	snap.q, snap.st = ParseQueue(s.Queue(), qBase), ParseState(s.State(), sBase)
	return snap, nil
}

// decide validates what was read and asks fn for the change.
func (s *Store) decide(snap *snapshot, fn func(q *Queue, st *State) (Change, error)) (Change, error) {
	for _, err := range []error{unleasedEmpty(snap.queue, snap.qOrig, snap.qWhole), unleasedEmpty(snap.state, snap.sOrig, snap.sWhole)} {
		if err != nil {
			return Change{}, err
		}
	}
	if err := snap.q.Err(); err != nil {
		return Change{}, err
	}
	if err := snap.st.Err(); err != nil {
		return Change{}, err
	}
	if s.Warn != nil && len(snap.q.Quarantined) > 0 {
		s.Warn(snap.q.QuarantineFindings())
	}
	return fn(snap.q, snap.st)
}

// midSave reports whether err, a verdict on what snap read, may come from
// a file caught in the middle of someone's save (missing, or read where no
// lease could vouch that it is whole), and that file changed since, by
// the deadline by: then the update reads it again.
func (snap *snapshot) midSave(ctx context.Context, err error, by time.Time) bool {
	var (
		ve *ValidationError
		nf *NotFoundError
		qe *QuarantinedError
		ee *EmptyFileError
	)
	path, seen, whole := snap.queue, snap.qOrig, snap.qWhole
	if errors.As(err, &ve) && ve.File == snap.state || errors.As(err, &ee) && ee.File == snap.state {
		path, seen, whole = snap.state, snap.sOrig, snap.sWhole
	}
	mayBe := errors.As(err, &ve) || errors.As(err, &nf) || errors.As(err, &qe) || errors.As(err, &ee)
	left := time.Until(by)
	if !mayBe || whole && seen != nil || left <= 0 {
		return false
	}
	return statefile.Changed(ctx, path, seen, left)
}

// plan is a change ready to be written: the new content of each file it
// changes, in the order they are written, and its intent record if it
// writes more than one.
type plan struct {
	moves  []intentMove
	writes []fileWrite
	log    []LogLine
	intent *intent
	after  func() error
}

// fileWrite is the new content of one file, computed from orig, and rebase,
// which re-applies the change to what the file holds if someone saved it
// since.
type fileWrite struct {
	path       string
	orig, next []byte
	rebase     func([]byte) ([]byte, error)
}

// plan computes what the change writes.
func (s *Store) plan(ctx context.Context, snap *snapshot, ch Change) (*plan, error) {
	p := &plan{log: ch.Log, after: ch.After}
	q, st := snap.q, snap.st
	if len(ch.Move) > 0 {
		b, whole, err := readState(ctx, s.Archive())
		if err != nil {
			return nil, err
		}
		if err := unleasedEmpty(s.Archive(), b, whole); err != nil {
			return nil, err
		}
		archived := ParseArchive(s.Archive(), b)
		for _, id := range ch.Move {
			m := intentMove{ID: id, Block: string(q.IssueSource(id))}
			m.Held = archived.copyOf(m) != nil
			p.moves = append(p.moves, m)
			ch.Queue = append(ch.Queue, RemoveIssue(id))
		}
		fix := s.archiveFix(p.moves, nil)
		next, err := fix(b)
		if err != nil {
			return nil, err
		}
		p.writes = append(p.writes, fileWrite{s.Archive(), b, next, fix})
	}
	var qNext, sNext []byte
	var err error
	if len(ch.Queue) > 0 {
		if qNext, err = q.Apply(ch.Queue...); err != nil {
			return nil, err
		}
		p.writes = append(p.writes, fileWrite{s.Queue(), snap.qOrig, qNext, func(cur []byte) ([]byte, error) { return q.Rebase(cur, ch.Queue...) }})
	}
	if len(ch.State) > 0 {
		if sNext, err = st.Apply(ch.State...); err != nil {
			return nil, err
		}
		p.writes = append(p.writes, fileWrite{s.State(), snap.sOrig, sNext, func(cur []byte) ([]byte, error) { return st.Rebase(cur, ch.State...) }})
	}
	// A change that writes more than one of the archive, the queue, the
	// state and the logs needs its record.
	writes := 0
	for _, n := range []int{len(ch.Move), len(ch.Queue), len(ch.State), len(ch.Log)} {
		if n > 0 {
			writes++
		}
	}
	if writes < 2 {
		return p, nil
	}
	// The record holds the edits and what they change as it was: the
	// next command re-applies them to what the file holds then, which
	// makes no change where they were made already, and keeps a person's
	// edit made since (a conflict leaves their version).
	files := []intentFile{{Name: StateFile, Edits: encodeEdits(ch.State), Old: string(st.d.src)}}
	if len(ch.Queue) > 0 {
		files = slices.Insert(files, 0, intentFile{Name: QueueFile, Edits: encodeEdits(ch.Queue), Old: excerpt(q.d, ch.Queue)})
	}
	p.intent = &intent{Moves: p.moves, Log: logIntent(ch.Log), Files: files}
	return p, nil
}

// commit writes a planned change: its intent record, if it has one, then
// each file in order, then the log lines. It is the one place where an
// update's first write happens. A failure before that first write leaves
// nothing written; one after it is an *UnfinishedError, which the next
// update completes from the record.
func (s *Store) commit(ctx context.Context, p *plan) error {
	if p.intent != nil {
		if err := s.writeIntent(*p.intent); err != nil {
			return err
		}
	}
	stop := func(err error, wrote bool) error {
		if !wrote && p.intent != nil {
			return errors.Join(err, s.removeIntent()) // nothing was written
		}
		if wrote && p.intent != nil {
			return &UnfinishedError{Err: err, Intent: s.Intent()}
		}
		return err
	}
	for i, w := range p.writes {
		if i > 0 && s.betweenWrites != nil {
			if err := s.betweenWrites(); err != nil {
				return stop(err, true)
			}
		}
		kept, err := statefile.Replace(ctx, w.path, w.orig, w.next, w.rebase)
		s.report(w.path, kept)
		if err != nil {
			return stop(err, i > 0)
		}
		if p.intent != nil && i+1 < len(p.writes) {
			p.intent.Written = append(p.intent.Written, filepath.Base(w.path))
			if err := s.writeIntent(*p.intent); err != nil {
				return stop(err, true)
			}
		}
	}
	if err := AppendLog(p.log...); err != nil {
		return stop(err, len(p.writes) > 0)
	}
	if p.intent != nil {
		if err := s.removeIntent(); err != nil {
			return err
		}
	}
	if p.after != nil {
		return p.after()
	}
	return nil
}

// replace rewrites the file at path with what fix makes of it (nil: leave
// it alone), re-applying fix if someone saves it meanwhile.
func (s *Store) replace(ctx context.Context, path string, fix func([]byte) ([]byte, error)) error {
	cur, whole, err := readState(ctx, path)
	if err != nil {
		return err
	}
	if err := unleasedEmpty(path, cur, whole); err != nil {
		return err
	}
	next, err := fix(cur)
	if next == nil || err != nil {
		return err
	}
	kept, err := statefile.Replace(ctx, path, cur, next, func(b []byte) ([]byte, error) {
		n, err := fix(b)
		if n == nil && err == nil {
			return b, nil
		}
		return n, err
	})
	s.report(path, kept)
	return err
}

// report tells Kept of the saves kept beside path.
func (s *Store) report(path string, kept []string) {
	for _, k := range kept {
		if s.Kept != nil {
			s.Kept(KeptSave{File: path, Saved: k})
		}
	}
}

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
