package issuequeue

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/autoretry/orchestrator/internal/foundations/statefile"
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
	// Written names the files already written, in order: the record is
	// written again after each file but the last, so that completing the
	// change never writes a file a second time over what a person made of
	// it since.
	Written []string `json:"written,omitempty"`
}

// wrote reports whether the record says the file named name was written.
func (in *intent) wrote(name string) bool { return slices.Contains(in.Written, name) }

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
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		f, err := statefile.OpenNoLink(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
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
	Old   string     `json:"old"` // the records the edits change, as they were
	// After is the SHA-256 of the content the change wrote, in records of
	// earlier versions: a file that holds it needs nothing.
	After string `json:"after,omitempty"`
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
	return statefile.WriteAtomic(s.Intent(), func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

func (s *Store) removeIntent() error {
	if err := os.Remove(s.Intent()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// readIntent returns the change a killed command left half done, or nil.
// A record torn by a crash of the file system describes a change that was
// not started, as the record is written whole before the first write.
func (p Paths) readIntent() (*intent, error) {
	b, err := statefile.ReadFile(p.Intent())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var in intent
	if json.Unmarshal(b, &in) != nil {
		return nil, nil
	}
	return &in, nil
}

// repair is what completing an interrupted change does to one file: fix
// maps what the file holds (nil: missing) to what it must hold (nil: leave
// it as it is). An edit of something a person changed since is dropped:
// their version stands.
type repair struct {
	path string
	fix  func(cur []byte) ([]byte, error)
}

// repairs returns, in the change's order, what completing in does to each
// file, given queue, what the queue holds now (nil: missing).
func (p Paths) repairs(in *intent, queue []byte) []repair {
	var out []repair
	// Once the queue is written, every move is made: the archive holds the
	// issues and the queue does not; an issue of the same ID in the queue
	// since is someone else's.
	if len(in.Moves) > 0 && queue != nil && !in.wrote(QueueFile) {
		q := ParseQueue(p.Queue(), queue)
		var done, undo []intentMove
		var edits []Edit
		for _, m := range in.Moves {
			switch src := q.IssueSource(m.ID); {
			case src == nil:
			case string(src) == m.Block:
				done = append(done, m)
				edits = append(edits, RemoveIssue(m.ID))
			case !m.Held:
				undo = append(undo, m)
			}
		}
		if len(done)+len(undo) > 0 {
			out = append(out, repair{p.Archive(), p.archiveFix(done, undo)})
		}
		if len(edits) > 0 {
			out = append(out, repair{p.Queue(), func(cur []byte) ([]byte, error) {
				if cur == nil {
					return nil, nil
				}
				return q.Rebase(cur, edits...)
			}})
		}
	}
	for _, f := range in.Files {
		if in.wrote(f.Name) {
			continue
		}
		if fix := p.fileFix(f); fix != nil {
			out = append(out, repair{filepath.Join(p.Dir, f.Name), fix})
		}
	}
	return out
}

// fileFix returns the fix that makes the edits of f that a kill kept from
// being made, or nil if it has none.
func (p Paths) fileFix(f intentFile) func([]byte) ([]byte, error) {
	edits := decodeEdits(f.Edits)
	path := filepath.Join(p.Dir, f.Name)
	var rebase func([]byte) ([]byte, error)
	switch {
	case len(edits) == 0:
		return nil
	case f.Name == QueueFile:
		old := ParseQueue(path, []byte(f.Old))
		rebase = func(cur []byte) ([]byte, error) {
			return old.Rebase(cur, notApplied(ParseQueue(path, cur), edits)...)
		}
	case f.Name == StateFile:
		old := ParseState(path, []byte(f.Old))
		rebase = func(cur []byte) ([]byte, error) { return old.Rebase(cur, edits...) }
	default:
		return nil
	}
	return func(cur []byte) ([]byte, error) {
		switch {
		case cur != nil && f.After != "" && fmt.Sprintf("%x", sha256.Sum256(cur)) == f.After:
			return nil, nil // written before the kill
		case cur == nil && f.Name != StateFile:
			return nil, nil // removed since: nothing to complete
		case cur == nil:
			// Missing: made from the template with the edits, as the
			// change itself would have made it.
			cur = []byte(StateTemplate)
		}
		next, err := rebase(cur)
		var ce *ConflictError
		var ve *ValidationError
		var qe *QuarantinedError
		if errors.As(err, &ce) || errors.As(err, &ve) || errors.As(err, &qe) {
			return nil, nil // changed by hand since: the person's version stands
		}
		return next, err
	}
}

// recoverIntent completes, on disk, a change that a killed command left
// half done. The caller holds the write lock.
func (s *Store) recoverIntent(ctx context.Context) error {
	in, err := s.readIntent()
	if in == nil || err != nil {
		return err
	}
	queue, _, err := readState(ctx, s.Queue())
	if err != nil {
		return &RecoveryError{Command: in.Command, Err: err}
	}
	for _, r := range s.repairs(in, queue) {
		if err := s.replace(ctx, r.path, r.fix); err != nil {
			return &RecoveryError{Command: in.Command, Err: err}
		}
	}
	if err := recoverLog(in.Log); err != nil {
		return &RecoveryError{Command: in.Command, Err: err}
	}
	return s.removeIntent()
}

// completed returns what the files hold once a change a killed command left
// half done is completed, in memory only: for commands that only read.
// files maps each path to what it holds now (nil: missing); it is changed
// in place. The queue, which decides what became of moved issues, is read
// if files lacks it and a change is half done.
func (p Paths) completed(files map[string][]byte) error {
	in, err := p.readIntent()
	if in == nil || err != nil {
		return err
	}
	queue, ok := files[p.Queue()]
	if !ok {
		if queue, err = readOptional(p.Queue()); err != nil {
			return err
		}
		files[p.Queue()] = queue
	}
	for _, r := range p.repairs(in, queue) {
		cur, ok := files[r.path]
		if !ok {
			if cur, err = readOptional(r.path); err != nil {
				return err
			}
		}
		next, err := r.fix(cur)
		if err != nil {
			return err
		}
		if next != nil {
			files[r.path] = next
		} else {
			files[r.path] = cur
		}
	}
	return nil
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
				if _, rows, ok := is.Table(e.name); ok && slices.ContainsFunc(rows, func(r []string) bool { return slices.EqualFunc(r, e.cells, sameCell) }) {
					continue
				}
			}
		}
		out = append(out, e)
	}
	return out
}

func sameCell(a, b string) bool { return strings.TrimSpace(a) == strings.TrimSpace(b) }

// archiveFix returns the fix that makes the archive hold each issue of
// put as its block says and drops the copy of each issue of take that is
// exactly its block. The archive is a history: a block it holds already,
// byte for byte, is not added again, and one that differs from the copies
// archived before is added after them, which stay as they are.
func (p Paths) archiveFix(put, take []intentMove) func([]byte) ([]byte, error) {
	return func(cur []byte) ([]byte, error) {
		if cur == nil {
			cur = []byte(ArchiveTemplate)
		}
		for _, m := range take {
			a := ParseArchive(p.Archive(), cur)
			if r := a.copyOf(m); r != nil {
				start := r.start
				if r.end == len(cur) && bytes.HasSuffix(cur[:start], []byte(a.d.nl+a.d.nl)) {
					start -= len(a.d.nl) // the blank line appending put before it
				}
				cur = slices.Concat(cur[:start], cur[r.end:])
			}
		}
		a := ParseArchive(p.Archive(), cur)
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
