//go:build unix

package statefile

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A prepared file is the one put in place: the new content is not written
// a second time.
func TestReplacePutsPreparedInPlace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "issue_queue.md")
	writeFile(t, path, orig)
	pre, err := Prepare(path, next)
	if err != nil {
		t.Fatal(err)
	}
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
		{"no change", orig, orig, orig, orig, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "issue_queue.md")
			writeFile(t, path, orig)
			pre, err := Prepare(path, tc.prep)
			if err != nil {
				t.Fatal(err)
			}
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
	dir := t.TempDir()
	path := filepath.Join(dir, "issue_queue.md")
	writeFile(t, path, orig)
	pre, err := Prepare(path, next)
	if err != nil {
		t.Fatal(err)
	}
	pre.Discard()
	(*Prepared)(nil).Discard()
	assertOnly(t, dir, "issue_queue.md")
	assertContent(t, path, orig)
}
