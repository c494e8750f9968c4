//go:build unix

package statefile

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// preparedQueue makes a queue file holding orig in a new directory and
// prepares content to replace it.
func preparedQueue(t *testing.T, content []byte) (dir, path string, pre *Prepared) {
	t.Helper()
	dir = t.TempDir()
	path = filepath.Join(dir, "issue_queue.md")
	writeFile(t, path, orig)
	pre, err := Prepare(path, content)
	if err != nil {
		t.Fatal(err)
	}
	return dir, path, pre
}

// A prepared file is the one put in place: the new content is not written
// a second time.
func TestReplacePutsPreparedInPlace(t *testing.T) {
	dir, path, pre := preparedQueue(t, next)
	prepared, err := os.Lstat(filepath.Join(dir, pre.tmp))
	if err != nil {
		t.Fatal(err)
	}
	if err := ReplaceWith(path, orig, next, nil, ReplaceOptions{Prepared: pre}); err != nil {
		t.Fatal(err)
	}
	assertContent(t, path, next)
	assertOnly(t, dir, "issue_queue.md")
	if fi, err := os.Lstat(path); err != nil || !os.SameFile(fi, prepared) {
		t.Errorf("the file in place is not the prepared one (%v)", err)
	}
	if fi, err := os.Lstat(path); err != nil || !WrittenWhole(fi) {
		t.Errorf("the prepared file in place does not carry the mark (%v)", err)
	}
}

// A prepared file that is not what ends up written (a rebase, no change,
// content other than next's own bytes) is removed and the replacement is
// as without it.
func TestReplaceRemovesUnusedPrepared(t *testing.T) {
	for _, tc := range []struct {
		name       string
		prep, next []byte // what is prepared, and what is handed to Replace
		file       []byte // what the file holds when Replace runs
		want       []byte
		rebaseRan  bool
	}{
		{"rebased", next, next, theirs, rebased, true},
		{"copy", next, slices.Clone(next), orig, next, false},
		{"other content", next, rebased, orig, rebased, false},
		{"no change", orig, orig, orig, orig, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, path, pre := preparedQueue(t, tc.prep)
			writeFile(t, path, tc.file)
			var calls [][]byte
			if err := ReplaceWith(path, orig, tc.next, rebaseB(&calls), ReplaceOptions{Prepared: pre}); err != nil {
				t.Fatal(err)
			}
			assertContent(t, path, tc.want)
			assertOnly(t, dir, "issue_queue.md")
			if got := len(calls) > 0; got != tc.rebaseRan {
				t.Errorf("rebase called: %v, want %v", got, tc.rebaseRan)
			}
		})
	}
}

// Discard removes a prepared file; a nil one is left alone.
func TestPreparedDiscard(t *testing.T) {
	dir, path, pre := preparedQueue(t, next)
	pre.Discard()
	(*Prepared)(nil).Discard()
	assertOnly(t, dir, "issue_queue.md")
	assertContent(t, path, orig)
}

// With Unchanged, the file the swap displaced is not read again when it is
// the file compared and the caller vouches for it; a save that put another
// file in place (a rename), or one the caller does not vouch for, is still
// caught and the change rebased onto it.
func TestReplaceUnchanged(t *testing.T) {
	type save func(t *testing.T, path string, data []byte)
	for style, save := range map[string]save{"rename": saveByRename, "in place": saveInPlace} {
		t.Run(style, func(t *testing.T) {
			h, dir, path := queueFile(t)
			saved := false
			h.beforeSwap = once(func() { save(t, path, theirs); saved = true })
			vouch := func(os.FileInfo) bool { return style == "rename" || !saved }
			var calls [][]byte
			if err := h.replaceWith(path, orig, next, rebaseB(&calls), ReplaceOptions{Unchanged: vouch}); err != nil {
				t.Fatal(err)
			}
			wantRebasedOnce(t, calls, theirs)
			assertContent(t, path, rebased)
			assertOnly(t, dir, "issue_queue.md")
		})
	}
	t.Run("vouched", func(t *testing.T) {
		h, dir, path := queueFile(t)
		// A write into the displaced file that the caller's lease would
		// have kept out: vouched for, it is not looked at.
		h.afterSwap = func(tmp string) { writeFile(t, tmp, theirs) }
		var calls [][]byte
		if err := h.replaceWith(path, orig, next, rebaseB(&calls), ReplaceOptions{Unchanged: func(os.FileInfo) bool { return true }}); err != nil {
			t.Fatal(err)
		}
		if len(calls) != 0 {
			t.Errorf("rebase called with %q; the displaced file was read", calls)
		}
		assertContent(t, path, next)
		assertOnly(t, dir, "issue_queue.md")
	})
}
