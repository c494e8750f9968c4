//go:build unix

package statefile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The change every test makes: b from 1 to 2. An editor meanwhile changes a.
var (
	orig       = []byte("a: 1\nb: 1\n")
	next       = []byte("a: 1\nb: 2\n")
	theirs     = []byte("a: 9\nb: 1\n")
	rebased    = []byte("a: 9\nb: 2\n")
	errClashed = errors.New("b changed on both sides")
)

// rebaseB re-applies the change to current, recording each call.
func rebaseB(calls *[][]byte) func([]byte) ([]byte, error) {
	return func(cur []byte) ([]byte, error) {
		*calls = append(*calls, slices.Clone(cur))
		if !bytes.Contains(cur, []byte("b: 1\n")) {
			return nil, errClashed
		}
		return bytes.Replace(cur, []byte("b: 1\n"), []byte("b: 2\n"), 1), nil
	}
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func assertContent(t *testing.T, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s holds %q, want %q", filepath.Base(path), got, want)
	}
}

// assertOnly checks that dir holds exactly the named entries: no temporary
// file left behind.
func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	slices.Sort(names)
	if !slices.Equal(got, names) {
		t.Errorf("directory holds %q, want %q", got, names)
	}
}

func TestReplaceKeepsMode(t *testing.T) {
	for _, mode := range []os.FileMode{0o600, 0o640, 0o644, 0o604, 0o755} {
		t.Run(mode.String(), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "issue_queue.md")
			writeFile(t, path, orig)
			if err := os.Chmod(path, mode); err != nil {
				t.Fatal(err)
			}
			if _, err := Replace(context.Background(), path, orig, next, nil); err != nil {
				t.Fatal(err)
			}
			assertContent(t, path, next)
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := fi.Mode(); got != mode {
				t.Errorf("mode %v, want %v", got, mode)
			}
			assertOnly(t, dir, "issue_queue.md")
		})
	}
}

func TestReplaceKeepsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root can give a file to another user")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "issue_queue.md")
	writeFile(t, path, orig)
	if err := os.Chown(path, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if _, err := Replace(context.Background(), path, orig, next, nil); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if st.Uid != 65534 || st.Gid != 65534 {
		t.Errorf("owner %d:%d, want 65534:65534", st.Uid, st.Gid)
	}
}

func TestWriteNewMode(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := t.TempDir()
	path := filepath.Join(dir, "session_state.md")
	if err := WriteNew(path, next); err != nil {
		t.Fatal(err)
	}
	assertContent(t, path, next)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fi.Mode(), os.FileMode(0o644); got != want {
		t.Errorf("mode %v, want %v", got, want)
	}
	if err := WriteNew(path, orig); !errors.Is(err, fs.ErrExist) {
		t.Errorf("WriteNew over an existing file: got %v, want fs.ErrExist", err)
	}
	assertContent(t, path, next)
	assertOnly(t, dir, "session_state.md")
}

func TestRefusesLinkedFiles(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(t *testing.T, dir, path string) // makes path unsafe
		want string
	}{
		{"symlink", func(t *testing.T, dir, path string) {
			writeFile(t, filepath.Join(dir, "real.md"), orig)
			makeSymlink(t, "real.md", path)
		}, "issue_queue.md is a symbolic link: the tool does not write through links; remove the link, or point the tool at the real file"},
		{"hardlink", func(t *testing.T, dir, path string) {
			writeFile(t, filepath.Join(dir, "real.md"), orig)
			makeHardlink(t, filepath.Join(dir, "real.md"), path)
		}, "issue_queue.md has more than one hard link: the tool does not write a file that has other names; replace it with a copy of its own"},
		{"directory", func(t *testing.T, dir, path string) { makeDir(t, path) }, "issue_queue.md is not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			tc.make(t, dir, filepath.Join(dir, "issue_queue.md"))
			before := snapshot(t, dir)

			_, err := ReadFile("issue_queue.md")
			var unsafe *UnsafeFileError
			if !errors.As(err, &unsafe) || err.Error() != tc.want {
				t.Errorf("ReadFile: got %v, want %q", err, tc.want)
			}
			_, err = Replace(context.Background(), "issue_queue.md", orig, next, nil)
			if !errors.As(err, &unsafe) || err.Error() != tc.want {
				t.Errorf("Replace: got %v, want %q", err, tc.want)
			}
			if after := snapshot(t, dir); after != before {
				t.Errorf("directory changed:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

// A link made between the read and the replacement is refused too.
func TestRefusesLinkMadeMeanwhile(t *testing.T) {
	h := new(seams)
	dir := t.TempDir()
	path := filepath.Join(dir, "issue_queue.md")
	writeFile(t, path, orig)
	h.beforeRead = func() {
		if err := os.Link(path, filepath.Join(dir, "backup.md")); err != nil {
			t.Fatal(err)
		}
	}
	var unsafe *UnsafeFileError
	if _, err := h.replace(context.Background(), path, orig, next, nil); !errors.As(err, &unsafe) {
		t.Fatalf("got %v, want an *UnsafeFileError", err)
	}
	assertContent(t, path, orig)
	assertOnly(t, dir, "backup.md", "issue_queue.md")
}

// snapshot describes every entry of dir: name, type, link target, content.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %v", e.Name(), fi.Mode())
		if target, err := os.Readlink(p); err == nil {
			fmt.Fprintf(&b, " -> %s", target)
		} else if fi.Mode().IsRegular() {
			data, _ := os.ReadFile(p)
			fmt.Fprintf(&b, " %q", data)
		}
		b.WriteString("; ")
	}
	return b.String()
}

// Nothing is written when there is nothing to change: same inode after.
func TestNoChangeWritesNothing(t *testing.T) {
	h := new(seams)
	dir := t.TempDir()
	path := filepath.Join(dir, "issue_queue.md")
	writeFile(t, path, orig)
	before, _ := os.Stat(path)

	if _, err := h.replace(context.Background(), path, orig, orig, nil); err != nil {
		t.Fatal(err)
	}
	// The editor's save already holds the change: rebase returns it as is.
	h.beforeRead = once(func() { saveInPlace(t, path, next) })
	if _, err := h.replace(context.Background(), path, orig, next, func(cur []byte) ([]byte, error) { return cur, nil }); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(path)
	if !os.SameFile(before, after) {
		t.Error("the file was replaced")
	}
	assertContent(t, path, next)
	assertOnly(t, dir, "issue_queue.md")
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "empty.md")
	writeFile(t, path, nil)
	data, err := ReadFile(path)
	if err != nil || data == nil || len(data) != 0 {
		t.Errorf("ReadFile(empty) = %q (nil %v), %v; want a non-nil empty slice", data, data == nil, err)
	}
	if b, err := ReadThrough(path); err != nil || b == nil || len(b) != 0 {
		t.Errorf("ReadThrough(empty) = %q (nil %v), %v; want a non-nil empty slice", b, b == nil, err)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile(missing): got %v, want fs.ErrNotExist", err)
	}
	// An empty existing file is replaced, not created.
	if _, err := Replace(context.Background(), path, data, next, nil); err != nil {
		t.Fatal(err)
	}
	assertContent(t, path, next)
}

func TestReadCompare(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB: several chunks
	changed := func(i int) []byte { c := slices.Clone(big); c[i] = 'x'; return c }
	for _, tc := range []struct {
		name       string
		base, file []byte
	}{
		{"same", big, big},
		{"same empty", []byte{}, []byte{}},
		{"first byte", big, changed(0)},
		{"second chunk", big, changed(300 << 10)},
		{"last byte", big, changed(len(big) - 1)},
		{"longer", big, append(slices.Clone(big), 'x')},
		{"shorter", big, big[:len(big)-1]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f")
			writeFile(t, path, tc.file)
			same, data, err := compareFile(path, tc.base)
			if err != nil {
				t.Fatal(err)
			}
			if want := bytes.Equal(tc.base, tc.file); same != want {
				t.Errorf("same = %v, want %v", same, want)
			}
			if !same && !bytes.Equal(data, tc.file) {
				t.Errorf("data differs from the file (len %d, want %d)", len(data), len(tc.file))
			}
		})
	}
}

func TestCleanup(t *testing.T) {
	h := new(seams)
	dir := t.TempDir()
	const (
		queueTemp1 = ".issue_queue.md.tmp-0123456789abcdef"
		queueTemp2 = ".issue_queue.md.tmp-fedcba9876543210"
		linked     = ".session_state.md.tmp-00112233445566ff"
		otherTemp  = ".session_state.md.tmp-aaaaaaaaaaaaaaaa"
	)
	for _, name := range []string{"issue_queue.md", "session_state.md", queueTemp1, queueTemp2, otherTemp,
		"issue_queue.md.saved-0123456789abcdef", ".notes.tmp-short", ".vimrc.tmp-0123456789ABCDEF", "x.tmp-0123456789abcdef"} {
		writeFile(t, filepath.Join(dir, name), orig)
	}
	if err := os.Link(filepath.Join(dir, "session_state.md"), filepath.Join(dir, linked)); err != nil {
		t.Fatal(err)
	}
	// Every file here was just written: only the temporary file still
	// linked to its target goes.
	now := time.Now()
	h.now = func() time.Time { return now }
	if err := h.cleanup(dir, ""); err != nil {
		t.Fatal(err)
	}
	assertOnly(t, dir, "issue_queue.md", "session_state.md", queueTemp1, queueTemp2, otherTemp,
		"issue_queue.md.saved-0123456789abcdef", ".notes.tmp-short", ".vimrc.tmp-0123456789ABCDEF", "x.tmp-0123456789abcdef")

	// A minute on, Replace of issue_queue.md removes that file's temporaries
	// only; Cleanup removes all.
	h.now = func() time.Time { return now.Add(staleAge + time.Second) }
	if _, err := h.replace(context.Background(), filepath.Join(dir, "issue_queue.md"), orig, next, nil); err != nil {
		t.Fatal(err)
	}
	assertOnly(t, dir, "issue_queue.md", "session_state.md", otherTemp,
		"issue_queue.md.saved-0123456789abcdef", ".notes.tmp-short", ".vimrc.tmp-0123456789ABCDEF", "x.tmp-0123456789abcdef")
	if err := h.cleanup(dir, ""); err != nil {
		t.Fatal(err)
	}
	assertOnly(t, dir, "issue_queue.md", "session_state.md",
		"issue_queue.md.saved-0123456789abcdef", ".notes.tmp-short", ".vimrc.tmp-0123456789ABCDEF", "x.tmp-0123456789abcdef")
}

func TestTempTarget(t *testing.T) {
	for _, tc := range []struct {
		name, target string
		ok           bool
	}{
		{".issue_queue.md.tmp-0123456789abcdef", "issue_queue.md", true},
		{".a.tmp-0123456789abcdef", "a", true},
		{"..tmp-0123456789abcdef", "", false},
		{".issue_queue.md.tmp-0123456789abcde", "", false},
		{".issue_queue.md.tmp-0123456789abcdeg", "", false},
		{"issue_queue.md.tmp-0123456789abcdef", "", false},
		{".issue_queue.md", "", false},
	} {
		target, ok := tempTarget(tc.name)
		if target != tc.target || ok != tc.ok {
			t.Errorf("tempTarget(%q) = %q, %v; want %q, %v", tc.name, target, ok, tc.target, tc.ok)
		}
	}
}

// The saves kept beside a file are found by their names alone, in a
// directory whose own name has characters a glob would read as a pattern.
func TestSetAsideBesideFindsKeptSaves(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "proj[1]*")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "issue_queue.md")
	saved := path + savedMark + "0123456789abcdef"
	writeFile(t, saved, []byte("a person's save\n"))
	for _, other := range []string{"issue_queue.md.saved-notakeptsave", "issue_queue.md.saved-0123456789ABCDEF", "state.md.saved-0123456789abcdef"} {
		if err := os.WriteFile(filepath.Join(dir, other), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := SetAsideBeside(path); len(got) != 1 || got[0] != saved {
		t.Errorf("SetAsideBeside = %q, want [%q]", got, saved)
	}
}
