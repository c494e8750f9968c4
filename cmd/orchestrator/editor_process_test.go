//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/autoretry/orchestrator/internal/foundations/statefile"
	"github.com/autoretry/orchestrator/issuequeue"
)

// TestProcessEditorSaveNotLost proves: a person's save that
// lands while commands are writing is not lost, and neither are the
// commands' changes.
//
// The editor saves as vim does: it reads the file, appends a word to a line
// of the preamble, writes a new file beside it, checks that the file was
// not changed since it read it, and renames the new file over it. It saves
// once during each fail's hold of the write lock, so that nearly every fail
// finds the file changed under it and must re-apply its change. Editors
// take no lock, so a command may still commit in the instant between the
// check and the rename, and the editor then overwrites it, as vim would.
// To account for that precisely the rename is an exchange, which leaves the
// replaced file at the temporary name: the test sees exactly what each save
// replaced, and the rows such a save threw away are the editor's doing.
// Everything else must be in the final file: every word the editor saved,
// and the row of every fail that reported success. A fail that reported an
// error must have written nothing.
func TestProcessEditorSaveNotLost(t *testing.T) {
	skipShort(t)
	ctx := testContext(t, 50*time.Second)
	c, ids := cliWithNotes(t, ctx, 8)
	const attempts = 8
	ed := &editor{t: t, path: filepath.Join(c.dir(), issuequeue.QueueFile), notes: notesLine, lostRows: map[string]bool{}}
	outcomes := raceFails(ctx, c, ids, attempts, failRow, func(stop <-chan struct{}) { ed.run(ctx, stop) }, nil)

	final := c.read(".orchestrator/issue_queue.md")
	present := rowsOf(final)
	reported, raced := 0, false
	for _, o := range outcomes {
		switch {
		case o.err != nil:
			t.Error(o.err)
		case o.res.code == 0:
			if present[o.row] == 0 && !ed.lostRows[o.row] {
				t.Errorf("%q: fail reported success, but its row is not in the queue", o.row)
			}
			if present[o.row] > 1 {
				t.Errorf("%q: the row is in the queue %d times", o.row, present[o.row])
			}
		case o.res.code == 2 && (strings.Contains(o.res.stderr, "changed meanwhile") || strings.Contains(o.res.stderr, "changed since it was read")):
			reported++
			if present[o.row] > 0 {
				t.Errorf("%q: fail reported a conflict, but its row is in the queue", o.row)
			}
		case o.res.code == 2 && strings.Contains(o.res.stderr, "raced"):
			// Two saves within microseconds of each other (statefile's
			// documented limit): the write is refused and the other save
			// kept beside the file.
			reported++
			raced = true
			if present[o.row] > 0 {
				t.Errorf("%q: fail reported a race, but its row is in the queue", o.row)
			}
		default:
			t.Errorf("%q: fail: exit %d\n%s", o.row, o.res.code, o.res.stderr)
		}
		delete(present, o.row)
	}
	for row := range present {
		t.Errorf("the queue holds a row no fail reported: %q", row)
	}

	words := notesWords(final, notesLine)
	if raced {
		// The save that raced is in a .saved file, which a person merges.
		var kept [][]byte
		saved := statefile.SetAsideBeside(filepath.Join(c.dir(), issuequeue.QueueFile))
		for _, s := range saved {
			b, _ := os.ReadFile(s)
			kept = append(kept, b)
		}
		for _, w := range ed.placed {
			found := slices.Contains(words, w)
			for _, b := range kept {
				found = found || slices.Contains(notesWords(b, notesLine), w)
			}
			if !found {
				t.Errorf("the editor's saved word %q is neither in the queue nor in %v", w, saved)
			}
		}
	} else {
		if !slices.Equal(words, ed.placed) {
			t.Errorf("the final preamble holds the words %v, want the editor's saves %v", words, ed.placed)
		}
		for _, w := range ed.lostWords {
			if !slices.Contains(words, w) {
				t.Errorf("a command's write dropped the editor's saved word %q", w)
			}
		}
	}
	c.lint(ctx)
	t.Logf("%d fails, %d editor saves (%d in the middle of a command's write), %d saves displaced a command's commit (%d rows), %d fails reported a conflict",
		len(outcomes), ed.saves, ed.duringWrite, ed.clobbers, len(ed.lostRows), reported)
	if ed.duringWrite == 0 {
		t.Errorf("no editor save landed in the middle of a command's write")
	}
}

// notesLine is the preamble line the editors of the race tests append their
// words to.
const notesLine = "Notes:"

// cliWithNotes sets up a CLI whose queue holds n issues below the preamble
// line notesLine; it returns the CLI and the issues' IDs.
func cliWithNotes(t *testing.T, ctx context.Context, n int) (*cli, []string) {
	t.Helper()
	c := newCLI(t)
	ids := issueIDs(n)
	c.setup(ctx, "[loop]\ncommand = \"true\"\n", queueOf(notesLine+"\n", ids))
	return c, ids
}

// editor plays a person saving issue_queue.md while commands write it.
type editor struct {
	t     *testing.T
	path  string
	notes string // the preamble line it appends words to

	placed    []string        // the words of the line in its last save
	lostWords []string        // words it had saved that a later read lacked
	lostRows  map[string]bool // rows its own saves overwrote
	saves     int
	clobbers  int
	// saves made while the command that held the write lock before the
	// save still held it after
	duringWrite int
}

// run saves once while each command holds the write lock, so that the
// saves land in the middle of the commands' writes, until stop is closed.
func (e *editor) run(ctx context.Context, stop <-chan struct{}) {
	tmp := filepath.Join(filepath.Dir(e.path), ".issue_queue.md.editor")
	e.duringWrite = saveDuringWrites(ctx, e.t, stop, filepath.Dir(e.path), func(n int) (bool, error) {
		cur, err := os.ReadFile(e.path)
		if err != nil {
			return false, err
		}
		next := appendWord(cur, e.notes, fmt.Sprintf("edit%03d", n))
		if err := os.WriteFile(tmp, next, 0o644); err != nil {
			return false, err
		}
		if now, _ := os.ReadFile(e.path); !bytes.Equal(now, cur) {
			return false, nil // changed since reading: read it again
		}
		if err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, e.path, unix.RENAME_EXCHANGE); err != nil {
			return false, err
		}
		displaced, err := os.ReadFile(tmp)
		if err != nil {
			return false, err
		}
		os.Remove(tmp)
		// A word of an earlier save missing from what the editor read, and
		// from what its save replaced, was dropped by a command.
		for _, w := range e.placed {
			if !slices.Contains(notesWords(cur, e.notes), w) && !slices.Contains(notesWords(displaced, e.notes), w) {
				e.lostWords = append(e.lostWords, w)
			}
		}
		if clobbered(e.lostRows, cur, next, displaced) {
			e.clobbers++
		}
		e.placed = notesWords(next, e.notes)
		e.saves++
		return true, nil
	})
}

// saveDuringWrites calls save once while each command holds the write lock
// of the state directory dir, so that saves land in the middle of the
// commands' writes, until stop is closed; save(n) is the nth save, and
// returns false to be called again for the same command (the file changed
// under it). It only looks at the lock (as F_OFD_GETLK does, without taking
// it) to time the saves; the saves themselves ignore it, as editors do. It
// returns how many saves ended while the command holding the lock when they
// began still held it.
func saveDuringWrites(ctx context.Context, t *testing.T, stop <-chan struct{}, dir string, save func(n int) (bool, error)) (duringWrite int) {
	savedDuring := map[int]bool{} // holders' pids
	tick := time.NewTicker(500 * time.Microsecond)
	defer tick.Stop()
	for n := 1; ; {
		select {
		case <-stop:
			return duringWrite
		case <-ctx.Done():
			return duringWrite
		case <-tick.C:
		}
		holder, held, err := statefile.WriteHolder(dir)
		if err != nil {
			t.Errorf("editor: %v", err)
			return duringWrite
		}
		if !held || holder.PID == 0 || savedDuring[holder.PID] {
			continue
		}
		ok, err := save(n)
		if err != nil {
			t.Errorf("editor: %v", err)
			return duringWrite
		}
		if !ok {
			continue
		}
		if h, held, _ := statefile.WriteHolder(dir); held && h.PID == holder.PID {
			duringWrite++
		}
		savedDuring[holder.PID] = true
		n++
	}
}

// clobbered reports whether a vim-style save of next, checked against cur,
// displaced something else: a command committed after the check, and the
// save overwrote it, as vim would have. The rows it threw away go into
// lostRows.
func clobbered(lostRows map[string]bool, cur, next, displaced []byte) bool {
	if bytes.Equal(displaced, cur) {
		return false
	}
	kept := rowsOf(next)
	for r := range rowsOf(displaced) {
		if kept[r] == 0 {
			lostRows[r] = true
		}
	}
	return true
}

// appendWord appends " word" to the first line of src that starts with
// prefix.
func appendWord(src []byte, prefix, word string) []byte {
	i := bytes.Index(src, []byte("\n"+prefix))
	if i < 0 {
		return src
	}
	end := i + 1 + bytes.IndexByte(src[i+1:], '\n')
	out := append([]byte(nil), src[:end]...)
	out = append(out, " "+word...)
	return append(out, src[end:]...)
}

// notesWords returns the words after prefix on the first line of src that
// starts with it.
func notesWords(src []byte, prefix string) []string {
	i := bytes.Index(src, []byte("\n"+prefix))
	if i < 0 {
		return nil
	}
	line := src[i+1+len(prefix):]
	if j := bytes.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	return strings.Fields(string(line))
}

// rowsOf counts the Error cells of the Attempt History rows; in these tests
// each fail's is unique.
func rowsOf(src []byte) map[string]int {
	q := issuequeue.ParseQueue(issuequeue.QueueFile, src)
	rows := map[string]int{}
	for _, is := range q.Issues {
		_, rs, _ := is.Table(issuequeue.SectionAttemptHistory)
		for _, r := range rs {
			if len(r) > 4 {
				rows[r[4]]++
			}
		}
	}
	return rows
}
