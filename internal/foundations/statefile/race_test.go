//go:build unix

package statefile

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// The tests here play a person's editor saving the file at each instant
// of Replace where a save matters (before the read, before and after the
// swap), through the seams of a replace, and hold Replace to keeping both
// the save and the change, or refusing with nothing written. Each runs
// with leases where the system has them, and without (as for another
// user's file), where Replace compares content instead.

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

var errNoLeaseHere = errors.New("no lease")

// modes runs fn with leases (where the system has them) and without.
func modes(t *testing.T, fn func(t *testing.T, h *seams)) {
	t.Run("lease", func(t *testing.T) { fn(t, new(seams)) })
	t.Run("no lease", func(t *testing.T) {
		fn(t, &seams{leaseFn: func(*os.File) error { return errNoLeaseHere }})
	})
}

// queueFile gives a queue file holding orig, alone in a new folder.
func queueFile(t *testing.T) (dir, path string) {
	t.Helper()
	dir = t.TempDir()
	path = filepath.Join(dir, "issue_queue.md")
	writeFile(t, path, orig)
	return dir, path
}

// wantRebasedOnce checks that rebase was called exactly once, with want.
func wantRebasedOnce(t *testing.T, calls [][]byte, want []byte) {
	t.Helper()
	if len(calls) != 1 || string(calls[0]) != string(want) {
		t.Errorf("rebase called with %q, want once with %q", calls, want)
	}
}

// replaceRebasedOntoTheirs replaces orig with next through h and checks
// that the change was rebased, once, onto the editor's save: the file holds
// both, and nothing else is left in dir.
func replaceRebasedOntoTheirs(t *testing.T, h *seams, dir, path string) {
	t.Helper()
	var calls [][]byte
	kept, err := h.replace(context.Background(), path, orig, next, rebaseB(&calls))
	if err != nil || len(kept) > 0 {
		t.Fatal(kept, err)
	}
	wantRebasedOnce(t, calls, theirs)
	assertContent(t, path, rebased)
	assertOnly(t, dir, "issue_queue.md")
}

// A save at any instant before the swap is not lost: the change is rebased
// onto it.
func TestEditorSaveIsNotLost(t *testing.T) {
	modes(t, func(t *testing.T, h *seams) {
		for _, when := range []string{"before read", "before swap"} {
			t.Run(when, func(t *testing.T) {
				dir, path := queueFile(t)
				hook := once(func() { saveByRename(t, path, theirs) })
				if when == "before read" {
					h.beforeRead = hook
				} else {
					h.beforeSwap = hook
				}
				replaceRebasedOntoTheirs(t, h, dir, path)
			})
		}
	})
}

// Without a lease, a save in place before the swap, or into the displaced
// file before Replace compares it, is seen by its content: the swap is
// undone and the change rebased onto the save.
func TestSaveInPlaceWithoutALease(t *testing.T) {
	for _, when := range []string{"before swap", "after swap"} {
		t.Run(when, func(t *testing.T) {
			h := &seams{leaseFn: func(*os.File) error { return errNoLeaseHere }}
			dir, path := queueFile(t)
			if when == "before swap" {
				h.beforeSwap = once(func() { saveInPlace(t, path, theirs) })
			} else {
				h.afterSwap = func(displaced string) {
					h.afterSwap = nil
					saveInPlace(t, displaced, theirs)
				}
			}
			replaceRebasedOntoTheirs(t, h, dir, path)
		})
	}
}

// A save over the new file right after the swap is a later save: it stays.
func TestSaveAfterSwapWins(t *testing.T) {
	modes(t, func(t *testing.T, h *seams) {
		dir, path := queueFile(t)
		h.afterSwap = func(string) { saveByRename(t, path, theirs) }
		var calls [][]byte
		if _, err := h.replace(context.Background(), path, orig, next, rebaseB(&calls)); err != nil {
			t.Fatal(err)
		}
		if len(calls) != 0 {
			t.Errorf("rebase called with %q, want no call", calls)
		}
		assertContent(t, path, theirs)
		assertOnly(t, dir, "issue_queue.md")
	})
}

// A save that conflicts with the change, at any instant before the swap,
// makes Replace write nothing and return rebase's error.
func TestRebaseConflictWritesNothing(t *testing.T) {
	modes(t, func(t *testing.T, h *seams) {
		for _, when := range []string{"before read", "before swap"} {
			t.Run(when, func(t *testing.T) {
				dir, path := queueFile(t)
				mine := []byte("a: 1\nb: 3\n") // changes b as well
				hook := once(func() { saveByRename(t, path, mine) })
				if when == "before read" {
					h.beforeRead = hook
				} else {
					h.beforeSwap = hook
				}
				var calls [][]byte
				if _, err := h.replace(context.Background(), path, orig, next, rebaseB(&calls)); !errors.Is(err, errClashed) {
					t.Fatalf("got %v, want rebase's error", err)
				}
				assertContent(t, path, mine)
				assertOnly(t, dir, "issue_queue.md")
			})
		}
	})
}

func TestChangeWithoutRebase(t *testing.T) {
	modes(t, func(t *testing.T, h *seams) {
		dir, path := queueFile(t)
		h.beforeSwap = once(func() { saveByRename(t, path, theirs) })
		if _, err := h.replace(context.Background(), path, orig, next, nil); !errors.Is(err, ErrChanged) {
			t.Fatalf("got %v, want ErrChanged", err)
		}
		assertContent(t, path, theirs)
		assertOnly(t, dir, "issue_queue.md")
	})
}

// A file saved again before every attempt is given up on once
// keepRebasing has passed, writing nothing: with a quarter of it passing at
// each save, the change is re-applied three times.
func TestKeepsChangingGivesUp(t *testing.T) {
	modes(t, func(t *testing.T, h *seams) {
		dir, path := queueFile(t)
		now := time.Now()
		h.now = func() time.Time { return now }
		n := 0
		var last []byte
		h.beforeSwap = func() {
			n++
			now = now.Add(keepRebasing / 4)
			last = []byte(fmt.Sprintf("a: %d\nb: 1\n", 100+n))
			saveByRename(t, path, last)
		}
		var calls [][]byte
		if _, err := h.replace(context.Background(), path, orig, next, rebaseB(&calls)); !errors.Is(err, ErrChanged) {
			t.Fatalf("got %v, want ErrChanged", err)
		}
		if got, want := len(calls), 3; got != want {
			t.Errorf("rebase called %d times, want %d", got, want)
		}
		assertContent(t, path, last)
		assertOnly(t, dir, "issue_queue.md")
	})
}

// A file deleted after it was read, and not put back, is not recreated.
func TestDeletedMeanwhileIsNotRecreated(t *testing.T) {
	dir, path := queueFile(t)
	h := &seams{beforeRead: once(func() { os.Remove(path) })}
	start := time.Now()
	if _, err := h.replace(context.Background(), path, orig, next, rebaseB(new([][]byte))); !errors.Is(err, ErrDeleted) {
		t.Fatalf("got %v, want ErrDeleted", err)
	}
	if waited := time.Since(start); waited < WriterWait {
		t.Errorf("gave up after %v, want a wait of %v for the file to be put back", waited, WriterWait)
	}
	assertOnly(t, dir)
}

// An editor that saves by renaming the old file away leaves the name
// missing for a moment: Replace waits for the new file and rebases onto
// it, woken by the directory's notification.
func TestRenamedAwayMidSaveIsWaitedFor(t *testing.T) {
	dir, path := queueFile(t)
	saved := make(chan error, 1)
	h := &seams{beforeRead: once(func() {
		if err := os.Rename(path, path+"~"); err != nil {
			t.Fatal(err)
		}
		go func() {
			err := os.WriteFile(path+".new", theirs, 0o644)
			if err == nil {
				err = os.Rename(path+".new", path)
			}
			if err == nil {
				err = os.Remove(path + "~")
			}
			saved <- err
		}()
	})}
	replaceRebasedOntoTheirs(t, h, dir, path)
	if err := <-saved; err != nil {
		t.Fatal(err)
	}
}

// A file created by someone else while we create it is rebased onto, not
// clobbered.
func TestCreateRace(t *testing.T) {
	for _, tc := range []struct {
		when   string
		create func(int, string, string) error
	}{
		{"before read", renameNoReplace},
		{"before create", renameNoReplace},
		{"before create, without RENAME_NOREPLACE", linkNoReplace},
	} {
		t.Run(tc.when, func(t *testing.T) {
			h := &seams{create: tc.create}
			dir := t.TempDir()
			path := filepath.Join(dir, "issue_queue.md")
			hook := once(func() { saveByRename(t, path, theirs) })
			if tc.when == "before read" {
				h.beforeRead = hook
			} else {
				h.beforeSwap = hook
			}
			var calls [][]byte
			add := func(cur []byte) ([]byte, error) {
				calls = append(calls, slices.Clone(cur))
				return append(slices.Clone(cur), "c: 1\n"...), nil
			}
			if _, err := h.replace(context.Background(), path, nil, []byte("c: 1\n"), add); err != nil {
				t.Fatal(err)
			}
			wantRebasedOnce(t, calls, theirs)
			assertContent(t, path, []byte("a: 9\nb: 1\nc: 1\n"))
			assertOnly(t, dir, "issue_queue.md")
		})
	}
}

func TestCreateWithoutRenameNoReplace(t *testing.T) {
	h := &seams{create: linkNoReplace}
	dir := t.TempDir()
	path := filepath.Join(dir, "issue_queue.md")
	if _, err := h.replace(context.Background(), path, nil, next, nil); err != nil {
		t.Fatal(err)
	}
	assertContent(t, path, next)
	if _, err := ReadFile(path); err != nil {
		t.Errorf("the created file must have one link: %v", err)
	}
	assertOnly(t, dir, "issue_queue.md")
}

// On a file system without RENAME_EXCHANGE, Replace falls back to rename,
// keeping the file's mode.
func TestReplaceWithoutExchange(t *testing.T) {
	h := &seams{swap: func(int, string, string) error { return errUnsupported }}
	dir, path := queueFile(t)
	os.Chmod(path, 0o600)
	h.beforeRead = once(func() { saveInPlace(t, path, theirs) })
	var calls [][]byte
	if _, err := h.replace(context.Background(), path, orig, next, rebaseB(&calls)); err != nil {
		t.Fatal(err)
	}
	assertContent(t, path, rebased)
	if fi, _ := os.Stat(path); fi.Mode() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode())
	}
	assertOnly(t, dir, "issue_queue.md")
}
