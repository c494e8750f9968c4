//go:build unix

package statefile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The tests here play a person's editor saving the file at each instant
// of Replace where a save matters (before the re-read, before and after the
// swap), through the seams of a replace, and hold Replace to keeping both
// the save and the change, or refusing with nothing written.

// once wraps fn so that it runs on the first call only.
func once(fn func()) func() {
	done := false
	return func() {
		if !done {
			done = true
			fn()
		}
	}
}

// saveByRename saves the way vim and emacs do: a new file renamed over the
// old one.
func saveByRename(t *testing.T, path string, data []byte) {
	t.Helper()
	tmp := path + ".editor~"
	writeFile(t, tmp, data)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// saveInPlace saves the way nano and VS Code do: truncate and write.
func saveInPlace(t *testing.T, path string, data []byte) {
	t.Helper()
	writeFile(t, path, data)
}

// queueFile gives fresh seams and a queue file holding orig, alone in a new
// folder.
func queueFile(t *testing.T) (h *seams, dir, path string) {
	t.Helper()
	h = new(seams)
	dir = t.TempDir()
	path = filepath.Join(dir, "issue_queue.md")
	writeFile(t, path, orig)
	return h, dir, path
}

// wantRebasedOnce checks that rebase was called exactly once, with want.
func wantRebasedOnce(t *testing.T, calls [][]byte, want []byte) {
	t.Helper()
	if len(calls) != 1 || !bytes.Equal(calls[0], want) {
		t.Errorf("rebase called with %q, want once with %q", calls, want)
	}
}

// replaceRebasedOntoTheirs replaces orig with next through h and checks
// that the change was rebased, once, onto the editor's save: the file holds
// both, and nothing else is left in dir.
func replaceRebasedOntoTheirs(t *testing.T, h *seams, dir, path string) {
	t.Helper()
	var calls [][]byte
	if err := h.replace(path, orig, next, rebaseB(&calls)); err != nil {
		t.Fatal(err)
	}
	wantRebasedOnce(t, calls, theirs)
	assertContent(t, path, rebased)
	assertOnly(t, dir, "issue_queue.md")
}

// An editor's save at any instant up to the swap is not lost: the change is
// rebased onto it.
func TestEditorSaveIsNotLost(t *testing.T) {
	type save func(t *testing.T, path string, data []byte)
	for _, when := range []string{"before re-read", "before swap"} {
		for style, save := range map[string]save{"rename": saveByRename, "in place": saveInPlace} {
			t.Run(when+"/"+style, func(t *testing.T) {
				h, dir, path := queueFile(t)
				hook := once(func() { save(t, path, theirs) })
				if when == "before re-read" {
					h.beforeCheck = hook
				} else {
					h.beforeSwap = hook
				}
				replaceRebasedOntoTheirs(t, h, dir, path)
			})
		}
	}
}

// A writer that had the old file open writes into it after the swap but
// before the check of the displaced file: the swap is undone and the change
// rebased onto that write.
func TestWriteIntoDisplacedFileIsNotLost(t *testing.T) {
	h, dir, path := queueFile(t)
	h.afterSwap = func(displaced string) {
		h.afterSwap = nil
		saveInPlace(t, displaced, theirs)
	}
	replaceRebasedOntoTheirs(t, h, dir, path)
}

// A save over the new file right after the swap is a later save: it stays.
func TestSaveAfterSwapWins(t *testing.T) {
	for style, save := range map[string]func(*testing.T, string, []byte){"rename": saveByRename, "in place": saveInPlace} {
		t.Run(style, func(t *testing.T) {
			h, dir, path := queueFile(t)
			h.afterSwap = func(string) { save(t, path, theirs) }
			var calls [][]byte
			if err := h.replace(path, orig, next, rebaseB(&calls)); err != nil {
				t.Fatal(err)
			}
			if len(calls) != 0 {
				t.Errorf("rebase called with %q, want no call", calls)
			}
			assertContent(t, path, theirs)
			assertOnly(t, dir, "issue_queue.md")
		})
	}
}

// Two saves racing with one write, one into the displaced file and one into
// the new file: both are kept and the write reports them.
func TestTwoRacingSavesAreBothKept(t *testing.T) {
	h, dir, path := queueFile(t)
	second := []byte("a: 1\nb: 7\n")
	h.afterSwap = func(displaced string) {
		h.afterSwap = nil
		saveInPlace(t, displaced, theirs)
		saveInPlace(t, path, second)
	}
	var calls [][]byte
	err := h.replace(path, orig, next, rebaseB(&calls))
	if !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), "merge them by hand") {
		t.Fatalf("got %v, want an ErrChanged asking to merge", err)
	}
	assertContent(t, path, theirs)
	saved, _ := filepath.Glob(filepath.Join(dir, "issue_queue.md.saved-*"))
	if len(saved) != 1 || !strings.Contains(err.Error(), saved[0]) {
		t.Fatalf("saved files %q; error %q must name the one", saved, err)
	}
	assertContent(t, saved[0], second)
	assertOnly(t, dir, "issue_queue.md", filepath.Base(saved[0]))
}

func TestRebaseConflictWritesNothing(t *testing.T) {
	for _, when := range []string{"before re-read", "before swap", "after swap"} {
		t.Run(when, func(t *testing.T) {
			h, dir, path := queueFile(t)
			mine := []byte("a: 1\nb: 3\n") // changes b as well
			switch when {
			case "before re-read":
				h.beforeCheck = once(func() { saveInPlace(t, path, mine) })
			case "before swap":
				h.beforeSwap = once(func() { saveByRename(t, path, mine) })
			case "after swap":
				h.afterSwap = func(displaced string) {
					h.afterSwap = nil
					saveInPlace(t, displaced, mine)
				}
			}
			var calls [][]byte
			if err := h.replace(path, orig, next, rebaseB(&calls)); !errors.Is(err, errClashed) {
				t.Fatalf("got %v, want rebase's error", err)
			}
			assertContent(t, path, mine)
			assertOnly(t, dir, "issue_queue.md")
		})
	}
}

func TestChangeWithoutRebase(t *testing.T) {
	h, dir, path := queueFile(t)
	h.beforeCheck = once(func() { saveByRename(t, path, theirs) })
	if err := h.replace(path, orig, next, nil); !errors.Is(err, ErrChanged) {
		t.Fatalf("got %v, want ErrChanged", err)
	}
	assertContent(t, path, theirs)
	assertOnly(t, dir, "issue_queue.md")
}

func TestKeepsChangingGivesUp(t *testing.T) {
	h, dir, path := queueFile(t)
	n := 0
	var last []byte
	h.beforeCheck = func() {
		n++
		last = []byte(fmt.Sprintf("a: %d\nb: 1\n", 100+n))
		saveInPlace(t, path, last)
	}
	var calls [][]byte
	if err := h.replace(path, orig, next, rebaseB(&calls)); !errors.Is(err, ErrChanged) {
		t.Fatalf("got %v, want ErrChanged", err)
	}
	if got, want := len(calls), maxRebases; got != want {
		t.Errorf("rebase called %d times, want %d", got, want)
	}
	assertContent(t, path, last)
	assertOnly(t, dir, "issue_queue.md")
}

func TestDeletedMeanwhileIsNotRecreated(t *testing.T) {
	h, dir, path := queueFile(t)
	h.beforeCheck = once(func() { os.Remove(path) })
	var calls [][]byte
	if err := h.replace(path, orig, next, rebaseB(&calls)); !errors.Is(err, ErrChanged) {
		t.Fatalf("got %v, want ErrChanged", err)
	}
	assertOnly(t, dir)
}

// A file created by someone else while we create it is rebased onto, not
// clobbered.
func TestCreateRace(t *testing.T) {
	for _, tc := range []struct {
		when   string
		create func(int, string, string) error
	}{
		{"before re-read", renameNoReplace},
		{"before create", renameNoReplace},
		{"before create, without RENAME_NOREPLACE", linkNoReplace},
	} {
		t.Run(tc.when, func(t *testing.T) {
			h := new(seams)
			h.create = tc.create
			dir := t.TempDir()
			path := filepath.Join(dir, "issue_queue.md")
			hook := once(func() { saveByRename(t, path, theirs) })
			if tc.when == "before re-read" {
				h.beforeCheck = hook
			} else {
				h.beforeSwap = hook
			}
			var calls [][]byte
			add := func(cur []byte) ([]byte, error) {
				calls = append(calls, slices.Clone(cur))
				return append(slices.Clone(cur), "c: 1\n"...), nil
			}
			if err := h.replace(path, nil, []byte("c: 1\n"), add); err != nil {
				t.Fatal(err)
			}
			wantRebasedOnce(t, calls, theirs)
			assertContent(t, path, []byte("a: 9\nb: 1\nc: 1\n"))
			assertOnly(t, dir, "issue_queue.md")
		})
	}
}

func TestCreateWithoutRenameNoReplace(t *testing.T) {
	h := new(seams)
	h.create = linkNoReplace
	dir := t.TempDir()
	path := filepath.Join(dir, "issue_queue.md")
	if err := h.writeNew(path, next); err != nil {
		t.Fatal(err)
	}
	assertContent(t, path, next)
	if _, err := ReadFile(path); err != nil {
		t.Errorf("the created file must have one link: %v", err)
	}
	assertOnly(t, dir, "issue_queue.md")
}

// On a file system without RENAME_EXCHANGE, Replace falls back to rename.
func TestReplaceWithoutExchange(t *testing.T) {
	h := new(seams)
	h.swap = func(int, string, string) error { return errUnsupported }
	dir := t.TempDir()
	path := filepath.Join(dir, "issue_queue.md")
	writeFile(t, path, orig)
	os.Chmod(path, 0o600)
	h.beforeCheck = once(func() { saveInPlace(t, path, theirs) })
	var calls [][]byte
	if err := h.replace(path, orig, next, rebaseB(&calls)); err != nil {
		t.Fatal(err)
	}
	assertContent(t, path, rebased)
	if fi, _ := os.Stat(path); fi.Mode() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode())
	}
	assertOnly(t, dir, "issue_queue.md")
}
