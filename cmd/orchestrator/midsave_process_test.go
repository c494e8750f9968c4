//go:build linux

package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/autoretry/orchestrator/internal/foundations/statefile"
	"github.com/autoretry/orchestrator/issuequeue"
)

var editorRaceFails = flag.Int("editor-race-fails", 40, "how many fails TestProcessFailRacesEditorSaves races with the editor")

// TestProcessFailRacesEditorSaves proves: a fail that reads the queue while
// a person's editor is saving it (the file briefly missing, empty or half
// written) waits for the save to end instead of reporting the issue
// missing or changed: no failure is lost and no word the person saved is
// dropped.
//
// The editor saves in three ways, in turn, each time while a fail holds
// the write lock: as vim does (a new file renamed over the old one, after
// checking that the old one did not change since it was read), by renaming
// the old file away before putting the new one in place (the name is
// missing meanwhile), and in place (truncated, then written in two parts,
// synced in between). Each save appends a word to the preamble's Notes
// line. A vim-style rename can still land between a fail's commit and the
// editor's check; the rename is an exchange, so the test sees what each
// save replaced and knows the rows such a save threw away. Everything else
// must be in the final file: every fail's row, once, and every word saved.
func TestProcessFailRacesEditorSaves(t *testing.T) {
	skipShort(t)
	ctx := testContext(t, 150*time.Second)
	c, ids := cliWithNotes(t, ctx, 4)
	attempts := *editorRaceFails / len(ids)
	ed := &saver{t: t, path: filepath.Join(c.dir(), issuequeue.QueueFile), notes: notesLine, lostRows: map[string]bool{}}
	outcomes := raceFails(ctx, c, ids, attempts, failRow, func(stop <-chan struct{}) { ed.run(ctx, stop) }, nil)

	final := c.read(".orchestrator/issue_queue.md")
	refused, lost := checkFailRows(t, outcomes, final, ed.lostRows)
	words := notesWords(final, notesLine)
	dropped := 0
	for _, w := range ed.saved {
		if !slices.Contains(words, w) {
			t.Errorf("the editor's saved word %q is not in the final queue", w)
			dropped++
		}
	}
	c.lint(ctx)
	t.Logf("%d fails, %d refused, %d rows lost or doubled; %d editor saves (rename over %d, rename away %d, in place %d; %d in the middle of a fail's write), %d words dropped, %d saves into a file a fail had just replaced; %d vim-style saves displaced a fail's commit (%d rows)",
		len(outcomes), refused, lost, len(ed.saved)+len(ed.orphaned), ed.styles[0], ed.styles[1], ed.styles[2], ed.duringWrite, dropped, len(ed.orphaned), ed.clobbers, len(ed.lostRows))
	for i, n := range ed.styles {
		if n == 0 {
			t.Errorf("the editor never saved in style %d while a fail held the write lock", i)
		}
	}
}

// failOutcome is how one fail of a race ended: the kth of issue w, whose
// failure output is the line row.
type failOutcome struct {
	w, k int
	row  string
	res  result
	err  error
}

// checkFailRows checks the fails of a race against final, the queue once
// it is over: every fail succeeded, its row is in final once, and final
// holds no row that no fail reported. A row in lostRows, which an editor's
// save threw away, may be missing. It returns how many fails were refused
// and how many rows are missing or doubled.
func checkFailRows(t *testing.T, outcomes []failOutcome, final []byte, lostRows map[string]bool) (refused, lost int) {
	t.Helper()
	present := rowsOf(final)
	for _, o := range outcomes {
		switch {
		case o.err != nil:
			t.Error(o.err)
			refused++
		case o.res.code != 0:
			t.Errorf("%q: fail: exit %d after %v, want 0: the failure is lost\n%s", o.row, o.res.code, o.res.wall, o.res.stderr)
			refused++
		case present[o.row] == 0 && !lostRows[o.row]:
			t.Errorf("%q: fail reported success, but its row is not in the queue", o.row)
			lost++
		case present[o.row] > 1:
			t.Errorf("%q: fail reported success, and the row is in the queue %d times", o.row, present[o.row])
			lost++
		}
		delete(present, o.row)
	}
	for row := range present {
		t.Errorf("the queue holds a row no fail reported: %q", row)
	}
	return refused, lost
}

func failRow(w, k int) string { return fmt.Sprintf("FAIL: writer %d attempt %d", w, k) }

// raceFails runs attempts fails of each issue, the issues' at once, the
// kth fail of issue w with the failure output row(w, k), a line; other,
// if not nil, runs until they are done (it must return once stop is
// closed). An issue's fails stop early once until, if not nil, is closed.
// It returns how each fail ended.
func raceFails(ctx context.Context, c *cli, ids []string, attempts int, row func(w, k int) string, other func(stop <-chan struct{}), until <-chan struct{}) []failOutcome {
	for w := range ids {
		for k := 1; k <= attempts; k++ {
			c.write(fmt.Sprintf("out-%d-%d.txt", w, k), row(w, k)+"\n")
		}
	}
	var mu sync.Mutex
	var outcomes []failOutcome
	ready, stop, otherDone := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	for w, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-ready
			for k := 1; k <= attempts; k++ {
				select {
				case <-until: // a nil until is never ready
					return
				default:
				}
				r, err := c.try(ctx, nil, "fail", id, "--output", c.path(fmt.Sprintf("out-%d-%d.txt", w, k)))
				mu.Lock()
				outcomes = append(outcomes, failOutcome{w, k, row(w, k), r, err})
				mu.Unlock()
			}
		}()
	}
	go func() {
		defer close(otherDone)
		if other != nil {
			other(stop)
		}
	}()
	close(ready)
	wg.Wait()
	close(stop)
	<-otherDone
	return outcomes
}

// saver plays a person's editor saving issue_queue.md in the three ways
// editors save, while commands write it.
type saver struct {
	t     *testing.T
	path  string
	notes string

	saved    []string        // words of saves that reached the file
	orphaned []string        // words written in place into a file a command had just replaced
	lostRows map[string]bool // rows a vim-style save overwrote
	styles   [3]int
	clobbers int
	// saves that ended while the command holding the write lock when they
	// began still held it
	duringWrite int
}

func (e *saver) run(ctx context.Context, stop <-chan struct{}) {
	e.duringWrite = saveDuringWrites(ctx, e.t, stop, filepath.Dir(e.path), func(n int) (bool, error) {
		word := fmt.Sprintf("edit%03d", n)
		style := n % 3
		var ok bool
		var err error
		switch style {
		case 0:
			ok, err = e.renameOver(word)
		case 1:
			ok, err = e.renameAway(word)
		default:
			ok, err = e.inPlace(word)
		}
		if ok {
			e.styles[style]++
		}
		return ok, err
	})
}

// renameOver saves as vim does: a new file, checked against what was read,
// then renamed over the old one (an exchange, to see what it replaced).
func (e *saver) renameOver(word string) (bool, error) {
	tmp := e.path + ".editor"
	cur, err := os.ReadFile(e.path)
	if err != nil {
		return false, err
	}
	next := appendWord(cur, e.notes, word)
	if err := os.WriteFile(tmp, next, 0o644); err != nil {
		return false, err
	}
	defer os.Remove(tmp)
	if now, _ := os.ReadFile(e.path); !bytes.Equal(now, cur) {
		return false, nil
	}
	if err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, e.path, unix.RENAME_EXCHANGE); err != nil {
		return false, err
	}
	displaced, err := os.ReadFile(tmp)
	if err != nil {
		return false, err
	}
	if clobbered(e.lostRows, cur, next, displaced) {
		e.clobbers++
	}
	e.saved = append(e.saved, word)
	return true, nil
}

// renameAway saves by moving the old file to a backup name and writing the
// new one in its place: the name is missing meanwhile. A commit that landed
// since the read is put back and the save tried again.
func (e *saver) renameAway(word string) (bool, error) {
	backup, tmp := e.path+"~", e.path+".editor"
	cur, err := os.ReadFile(e.path)
	if err != nil {
		return false, err
	}
	if err := os.Rename(e.path, backup); err != nil {
		return false, err
	}
	moved, err := os.ReadFile(backup)
	if err != nil {
		return false, err
	}
	if !bytes.Equal(moved, cur) {
		return false, unix.Renameat2(unix.AT_FDCWD, backup, unix.AT_FDCWD, e.path, unix.RENAME_NOREPLACE)
	}
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return false, err
	}
	_, err = f.Write(appendWord(cur, e.notes, word))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, e.path, unix.RENAME_NOREPLACE)
	}
	if err != nil {
		return false, err
	}
	e.saved = append(e.saved, word)
	return true, os.Remove(backup)
}

// inPlace saves as nano does: the file itself truncated and written again,
// here in two parts with a sync between them, so that readers can see it
// empty and half written.
func (e *saver) inPlace(word string) (bool, error) {
	f, err := os.OpenFile(e.path, os.O_RDWR, 0)
	if err != nil {
		return false, err
	}
	defer f.Close()
	cur, err := readAllFrom(f)
	if err != nil {
		return false, err
	}
	if !bytes.Contains(cur, []byte("\n"+e.notes)) {
		return false, fmt.Errorf("the queue lost its %q line:\n%s", e.notes, cur)
	}
	next := appendWord(cur, e.notes, word)
	half := len(next) / 2
	if err := f.Truncate(0); err != nil {
		return false, err
	}
	if _, err := f.WriteAt(next[:half], 0); err != nil {
		return false, err
	}
	if err := f.Sync(); err != nil {
		return false, err
	}
	if _, err := f.WriteAt(next[half:], int64(half)); err != nil {
		return false, err
	}
	if err := f.Sync(); err != nil {
		return false, err
	}
	// A command that replaced the file after it was opened, and checked
	// the replaced file before the save reached it, unlinked the file the
	// save went to.
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return false, err
	}
	if st.Nlink == 0 {
		e.orphaned = append(e.orphaned, word)
	} else {
		e.saved = append(e.saved, word)
	}
	return true, nil
}

func readAllFrom(f *os.File) ([]byte, error) {
	var b bytes.Buffer
	_, err := b.ReadFrom(f)
	return b.Bytes(), err
}

var (
	inPlaceSaves = flag.Int("midsave-inplace-saves", 600, "how many in-place saves TestProcessFailRacesInPlaceSaves races with fails")
	inPlaceEvery = flag.Duration("midsave-inplace-every", 15*time.Millisecond, "how often TestProcessFailRacesInPlaceSaves's editor saves")
)

// TestProcessFailRacesInPlaceSaves proves, by count: a person's editor
// saving issue_queue.md in place (truncated, then written in two parts),
// hundreds of times while fails of four issues run back to back, costs no
// fail (none refused, as "no issue" or "still being written" would, none
// recorded twice or lost) and no word of any save, including a save that
// had the file open when a fail put its new file in place.
func TestProcessFailRacesInPlaceSaves(t *testing.T) {
	skipShort(t)
	ctx := testContext(t, 60*time.Second)
	c, ids := cliWithNotes(t, ctx, 4)
	ed := &saver{t: t, path: filepath.Join(c.dir(), issuequeue.QueueFile), notes: notesLine, lostRows: map[string]bool{}}
	saves := *inPlaceSaves
	// The editor saves every few milliseconds until it has saved enough
	// times; meanwhile each issue's fails run one after another.
	editorDone := make(chan struct{})
	var editing time.Duration
	editor := func(<-chan struct{}) {
		defer close(editorDone)
		start := time.Now()
		defer func() { editing = time.Since(start) }()
		tick := time.NewTicker(*inPlaceEvery)
		defer tick.Stop()
		for n := 1; n <= saves; n++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if _, err := ed.inPlace(fmt.Sprintf("edit%03d", n)); err != nil {
				t.Errorf("editor: %v", err)
				return
			}
		}
	}
	outcomes := raceFails(ctx, c, ids, saves, failRow, editor, editorDone)

	final := c.read(".orchestrator/issue_queue.md")
	// In-place saves overwrite no commit: every row must be there.
	refused, lost := checkFailRows(t, outcomes, final, nil)
	words := notesWords(final, notesLine)
	// A save into a replaced file that a fail could not merge is kept
	// beside the queue, with a warning: a person merges it.
	keptFiles := statefile.SetAsideBeside(filepath.Join(c.dir(), issuequeue.QueueFile))
	var kept []string
	for _, name := range keptFiles {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		kept = append(kept, notesWords(b, notesLine)...)
	}
	dropped, keptAside := 0, 0
	for _, w := range append(slices.Clip(ed.saved), ed.orphaned...) {
		switch {
		case slices.Contains(words, w):
		case slices.Contains(kept, w):
			keptAside++
		default:
			dropped++
		}
	}
	if dropped > 0 {
		t.Errorf("%d of the editor's %d saved words are neither in the final queue nor kept beside it (%d were written into a file a fail had just replaced)", dropped, len(ed.saved)+len(ed.orphaned), len(ed.orphaned))
	}
	warned := 0 // warnings naming a kept save
	for _, o := range outcomes {
		for _, line := range strings.Split(o.res.stderr, "\n") {
			if strings.Contains(line, "warning:") && strings.Contains(line, issuequeue.QueueFile+".saved-") {
				warned++
			}
		}
	}
	if warned != len(keptFiles) {
		t.Errorf("%d saves were kept beside the queue, and the fails warned of %d", len(keptFiles), warned)
	}
	if got := len(ed.saved) + len(ed.orphaned); got != saves {
		t.Errorf("the editor saved %d times, want %d", got, saves)
	}
	if len(outcomes) < len(ids) {
		t.Errorf("only %d fails ran during the saves", len(outcomes))
	}
	c.lint(ctx)
	t.Logf("%d in-place saves in %v (%d into a replaced file), %d fails: %d refused, %d lost, %d words dropped, %d kept beside the queue in %d files",
		len(ed.saved)+len(ed.orphaned), editing.Round(time.Millisecond), len(ed.orphaned), len(outcomes), refused, lost, dropped, keptAside, len(keptFiles))
}
