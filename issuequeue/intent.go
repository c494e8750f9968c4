package issuequeue

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/autoretry/orchestrator/internal/statefile"
)

// IntentFile is the record a change of more than one file writes before
// its first write and removes after its last: a command killed between the
// writes leaves it, and the next command that takes the write lock
// completes the change from it (or, for an issue edited since, leaves the
// edited copy alone), so that the files never stay half changed: an issue
// in both the queue and the archive, a Retry-Count raised without the
// run's total_auto_retries.
const IntentFile = ".intent.json"

// Intent returns the path of the intent record.
func (p Paths) Intent() string { return filepath.Join(p.Dir, IntentFile) }

type intent struct {
	Command string       `json:"command"`
	Moves   []intentMove `json:"moves,omitempty"` // issues moved from the queue to the archive; the archive is written first
	Files   []intentFile `json:"files"`           // then the queue, then the session state
	Log     []intentLog  `json:"log,omitempty"`   // then the event logs
}

type intentLog struct {
	Path   string `json:"path"`
	Line   string `json:"line"`
	Offset int64  `json:"offset"` // the log's size before: the line is appended after it
}

// logIntent records the lines to append with the size of their logs now.
func logIntent(lines []LogLine) []intentLog {
	out := make([]intentLog, len(lines))
	for i, l := range lines {
		out[i] = intentLog{Path: l.Path, Line: string(l.Line)}
		if fi, err := os.Lstat(l.Path); err == nil {
			out[i].Offset = fi.Size()
		}
	}
	return out
}

// AppendLog appends lines to their logs, creating them and their
// directories if needed, never through a link. The lines of one log are
// one write to the file opened for appending, so concurrent writers do not
// interleave within them.
func AppendLog(lines ...LogLine) error {
	var paths []string
	text := map[string][]byte{}
	for _, l := range lines {
		if _, ok := text[l.Path]; !ok {
			paths = append(paths, l.Path)
		}
		text[l.Path] = append(text[l.Path], l.Line...)
	}
	for _, path := range paths {
		f, err := openLog(path)
		if err != nil {
			return err
		}
		_, err = f.Write(text[path])
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// openLog opens the log at path for appending, creating it and its
// directory if needed, never through a link.
func openLog(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	return statefile.OpenNoLink(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
}

// recoverLog appends the lines a killed change did not: those missing
// after the offset their log had when the change began.
func recoverLog(lines []intentLog) error {
	for _, l := range lines {
		b, err := os.ReadFile(l.Path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if int64(len(b)) >= l.Offset && bytes.Contains(b[l.Offset:], []byte(l.Line)) {
			continue
		}
		if err := AppendLog(LogLine{Path: l.Path, Line: []byte(l.Line)}); err != nil {
			return err
		}
	}
	return nil
}

type intentMove struct {
	ID    string `json:"id"`
	Block string `json:"block"`          // the issue as it was in the queue
	Held  bool   `json:"held,omitempty"` // the archive held this copy before: undoing the move leaves it there
}

type intentFile struct {
	Name  string     `json:"name"`
	Edits []jsonEdit `json:"edits"`
	Old   string     `json:"old"`   // the records the edits change, as they were
	After string     `json:"after"` // SHA-256 of the content the change wrote
}

type jsonEdit struct {
	Kind   editKind   `json:"kind"`
	Key    string     `json:"key"`
	Name   string     `json:"name,omitempty"`
	Value  string     `json:"value,omitempty"`
	Fenced bool       `json:"fenced,omitempty"`
	Cells  []string   `json:"cells,omitempty"`
	Header []string   `json:"header,omitempty"`
	Rows   [][]string `json:"rows,omitempty"`
}

func encodeEdits(edits []Edit) []jsonEdit {
	out := make([]jsonEdit, len(edits))
	for i, e := range edits {
		out[i] = jsonEdit{e.kind, e.key, e.name, e.value, e.fenced, e.cells, e.header, e.rows}
	}
	return out
}

func decodeEdits(in []jsonEdit) []Edit {
	out := make([]Edit, len(in))
	for i, e := range in {
		out[i] = Edit{kind: e.Kind, key: e.Key, name: e.Name, value: e.Value, fenced: e.Fenced, cells: e.Cells, header: e.Header, rows: e.Rows}
	}
	return out
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// excerpt returns the records of d that edits change, as a file of their
// own: what a rebase needs to tell whether someone changed them since.
func excerpt(d *doc, edits []Edit) string {
	var b strings.Builder
	seen := map[string]bool{}
	for _, e := range edits {
		r, ok := d.byKey[e.key]
		if !ok || seen[e.key] {
			continue
		}
		seen[e.key] = true
		src := d.src[r.start:r.end]
		b.Write(src)
		if !bytes.HasSuffix(src, []byte("\n")) {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// writeIntent records in before its first write a change that writes more
// than one file.
func (s *Store) writeIntent(in intent) error {
	in.Command = s.Command
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	orig, err := statefile.ReadFile(s.Intent())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return statefile.Replace(s.Intent(), orig, b, func([]byte) ([]byte, error) { return b, nil })
}

func (s *Store) removeIntent() error {
	if err := os.Remove(s.Intent()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// recoverIntent completes a change that a killed command left half done.
// An edit of something a person changed since is dropped: their version
// stands. The caller holds the write lock.
func (s *Store) recoverIntent(ctx context.Context, set *settler) error {
	b, err := statefile.ReadFile(s.Intent())
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var in intent
	if err := json.Unmarshal(b, &in); err != nil {
		// A record torn by a crash of the file system: the change it
		// described was not started, as the record is written whole
		// before the first write.
		return s.removeIntent()
	}
	if err := s.complete(ctx, set, in); err != nil {
		return &RecoveryError{Command: in.Command, Err: err}
	}
	return s.removeIntent()
}

// complete makes the writes of the change in that a kill may have kept
// from being made, in the change's order.
func (s *Store) complete(ctx context.Context, set *settler, in intent) error {
	if len(in.Moves) > 0 {
		if err := s.recoverMoves(ctx, set, in.Moves); err != nil {
			return err
		}
	}
	for _, f := range in.Files {
		if err := s.recoverFile(ctx, set, f); err != nil {
			return err
		}
	}
	return recoverLog(in.Log)
}

func (s *Store) recoverFile(ctx context.Context, set *settler, f intentFile) error {
	path := filepath.Join(s.Dir, f.Name)
	cur, err := readSettled(path)
	if err != nil || cur != nil && sum(cur) == f.After {
		return err
	}
	base := cur
	if cur == nil {
		if f.Name != StateFile {
			return nil // removed since: nothing to complete
		}
		// Missing: made from the template with the edits, as the change
		// itself would have made it.
		base = []byte(StateTemplate)
	}
	edits := decodeEdits(f.Edits)
	if len(edits) == 0 {
		return nil
	}
	var rebase func([]byte) ([]byte, error)
	switch f.Name {
	case QueueFile:
		old := ParseQueue(path, []byte(f.Old))
		rebase = func(cur []byte) ([]byte, error) {
			return old.Rebase(cur, notApplied(ParseQueue(path, cur), edits)...)
		}
	case StateFile:
		old := ParseState(path, []byte(f.Old))
		rebase = func(cur []byte) ([]byte, error) { return old.Rebase(cur, edits...) }
	default:
		return nil
	}
	next, err := rebase(base)
	var ce *ConflictError
	var ve *ValidationError
	var qe *QuarantinedError
	if errors.As(err, &ce) || errors.As(err, &ve) || errors.As(err, &qe) {
		return nil // changed by hand since: the person's version stands
	}
	if err != nil {
		return err
	}
	return set.replace(ctx, path, cur, next, rebase, nil)
}

// notApplied drops the edits the queue shows applied already where
// applying them again would add something twice: rows, new issues.
func notApplied(cur *Queue, edits []Edit) []Edit {
	var out []Edit
	for _, e := range edits {
		switch e.kind {
		case editAppend:
			if cur.Issue(e.key) != nil {
				continue
			}
		case editRow:
			if is := cur.Issue(e.key); is != nil {
				if _, rows, ok := is.Table(e.name); ok && slices.ContainsFunc(rows, func(r []string) bool { return sameRow(r, e.cells) }) {
					continue
				}
			}
		}
		out = append(out, e)
	}
	return out
}

func sameRow(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if strings.TrimSpace(a[i]) != strings.TrimSpace(b[i]) {
			return false
		}
	}
	return true
}

// recoverMoves completes an interrupted archive: an issue still in the
// queue as it was moved is put in the archive (if the kill came first) and
// removed from the queue; an issue changed in the queue since is left
// there, the newer copy, and the archive's copy of the moved version is
// taken out again, unless the archive held that copy before the move.
func (s *Store) recoverMoves(ctx context.Context, set *settler, moves []intentMove) error {
	qOrig, err := readSettled(s.Queue())
	if err != nil || qOrig == nil {
		return err
	}
	q := ParseQueue(s.Queue(), qOrig)
	var done, undo []intentMove
	for _, m := range moves {
		switch src := q.IssueSource(m.ID); {
		case src == nil:
		case string(src) == m.Block:
			done = append(done, m)
		case !m.Held:
			undo = append(undo, m)
		}
	}
	if err := s.archiveBlocks(ctx, set, done, undo); err != nil {
		return err
	}
	if len(done) == 0 {
		return nil
	}
	var edits []Edit
	for _, m := range done {
		edits = append(edits, RemoveIssue(m.ID))
	}
	next, err := q.Apply(edits...)
	if err != nil {
		return err
	}
	return set.replace(ctx, s.Queue(), qOrig, next, func(cur []byte) ([]byte, error) { return q.Rebase(cur, edits...) }, nil)
}

// archiveBlocks makes the archive hold each issue of put as its block says
// and drops the copy of each issue of take that is exactly its block. The
// archive is a history: a block it holds already, byte for byte, is not
// added again, and one that differs from the copies archived before is
// added after them, which stay as they are.
func (s *Store) archiveBlocks(ctx context.Context, set *settler, put, take []intentMove) error {
	if len(put)+len(take) == 0 {
		return nil
	}
	orig, err := readSettled(s.Archive())
	if err != nil {
		return err
	}
	change := func(cur []byte) ([]byte, error) {
		if cur == nil {
			cur = []byte(ArchiveTemplate)
		}
		for _, m := range take {
			a := ParseArchive(s.Archive(), cur)
			if r := a.copyOf(m); r != nil {
				start := r.start
				if r.end == len(cur) && bytes.HasSuffix(cur[:start], []byte(a.d.nl+a.d.nl)) {
					start -= len(a.d.nl) // the blank line appending put before it
				}
				cur = slices.Concat(cur[:start], cur[r.end:])
			}
		}
		a := ParseArchive(s.Archive(), cur)
		if err := a.Err(); err != nil {
			return nil, err // a hand-damaged archive is reported, never written to
		}
		var edits []Edit
		for _, m := range put {
			if a.copyOf(m) == nil {
				edits = append(edits, AppendIssue(m.ID, m.Block))
			}
		}
		return a.Apply(edits...)
	}
	next, err := change(orig)
	if err != nil {
		return err
	}
	return set.replace(ctx, s.Archive(), orig, next, change, nil)
}

// copyOf returns the last record of the archive that is the moved block,
// or nil. Where a block ends in the file decides how many blank lines end
// it, and appending writes the file's line endings: neither makes a copy
// of its own.
func (q *Queue) copyOf(m intentMove) *record {
	block := sameText(m.Block)
	for i := len(q.d.records) - 1; i >= 0; i-- {
		if r := q.d.records[i]; r.key == m.ID && sameText(string(q.d.src[r.start:r.end])) == block {
			return r
		}
	}
	return nil
}

func sameText(block string) string { return strings.TrimRight(normalizeNewlines(block), "\n") }
