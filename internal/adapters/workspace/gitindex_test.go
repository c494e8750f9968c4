package workspace

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// privateIndex returns the path of the one private index of w.
func privateIndex(t *testing.T, w *Workspace) string {
	t.Helper()
	names, _ := filepath.Glob(w.dir("git", "index-*"))
	if len(names) != 1 {
		t.Fatalf("private indexes = %q, want one", names)
	}
	return names[0]
}

func key(t *testing.T, index string) string {
	t.Helper()
	entries, err := readIndex(index, 20)
	if err != nil {
		t.Fatal(err)
	}
	return entriesKey(entries)
}

func TestEntriesKey(t *testing.T) {
	root, w := newRepo(t)
	state(t, w)
	index := privateIndex(t, w)
	k1 := key(t, index)

	// Versions 2, 3 and 4 of the same entries have the same key.
	for _, v := range []string{"4", "3", "2"} {
		data, err := os.ReadFile(index)
		if err != nil {
			t.Fatal(err)
		}
		copied := filepath.Join(t.TempDir(), "index")
		write(t, copied, string(data))
		cmd := exec.Command("git", "update-index", "--index-version", v)
		cmd.Dir = root
		cmd.Env = append(gitEnv(os.Environ()), "GIT_INDEX_FILE="+copied)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git update-index: %v\n%s", err, out)
		}
		if got := key(t, copied); got != k1 {
			t.Errorf("index version %s: key %s, want %s", v, got, k1)
		}
	}

	touchAhead(t, root, "a.txt", "sub/s.go")
	state(t, w)
	if got := key(t, index); got != k1 {
		t.Errorf("after touching files: key %s, want %s", got, k1)
	}
	write(t, filepath.Join(root, "a.txt"), "a\nB\nc\n")
	state(t, w)
	if got := key(t, index); got == k1 {
		t.Error("an edit did not change the key")
	}
	write(t, filepath.Join(root, "garbage"), "DIRC\x00\x00\x00\x02\x00\x00\x00\x05short")
	if _, err := readIndex(filepath.Join(root, "garbage"), 20); err == nil {
		t.Error("a truncated index was read")
	}
}

// TestGitStateSparesWriteTree checks that a recording after the first runs
// "git add" alone: nothing changed, git rewrote the index to refresh the
// stat data of touched files, or files changed and the tree is written
// without git.
func TestGitStateSparesWriteTree(t *testing.T) {
	root, w := newRepo(t)
	log := filepath.Join(t.TempDir(), "git.log")
	w.Git = filepath.Join(t.TempDir(), "git")
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git program")
	}
	write(t, w.Git, "#!/bin/sh\nfor a; do case $a in add|write-tree|rev-parse) echo $a >>"+log+";; esac; done\nexec "+real+" \"$@\"\n")
	os.Chmod(w.Git, 0o755)
	runs := func() string {
		data, _ := os.ReadFile(log)
		os.Remove(log)
		return strings.Join(strings.Fields(string(data)), " ")
	}
	s1 := state(t, w)
	if got, want := runs(), "rev-parse add write-tree"; got != want {
		t.Errorf("first recording ran %q, want %q", got, want)
	}
	for _, c := range []change{
		{"nothing", func() {}},
		{"touch", func() { touchAhead(t, root, "a.txt", "sub/s.go") }},
	} {
		c.do()
		if got := state(t, w); got != s1 {
			t.Errorf("after %s: state %s, want %s", c.name, got.Hex, s1.Hex)
		}
		if got, want := runs(), "add"; got != want {
			t.Errorf("after %s: ran %q, want %q", c.name, got, want)
		}
	}
	write(t, filepath.Join(root, "a.txt"), "changed\n")
	if got := state(t, w); got == s1 {
		t.Error("an edit did not change the state")
	}
	if got, want := runs(), "add"; got != want {
		t.Errorf("after an edit: ran %q, want %q", got, want)
	}
}

// TestGitTreeAsWriteTree checks that the trees a recording writes itself
// are those git writes: the same ids, readable by git.
func TestGitTreeAsWriteTree(t *testing.T) {
	root, w := newRepo(t)
	s1 := state(t, w) // by git write-tree
	for name, text := range map[string]string{
		"a-": "1\n", "a.c": "2\n", "a0": "3\n", "a/b": "4\n", "a/b.c/d": "5\n", "a/b-/e": "6\n",
		"deep/er/and/deeper/f": "7\n", "sub/new.go": "package sub\n", "sp ace/x y": "8\n",
	} {
		write(t, filepath.Join(root, filepath.FromSlash(name)), text)
	}
	os.Chmod(filepath.Join(root, "a0"), 0o755)
	os.Symlink("a.c", filepath.Join(root, "link"))
	os.Remove(filepath.Join(root, "gone.txt"))
	nestedRepo(t, root)

	s2 := state(t, w) // by writeTree
	st, err := w.Diff(context.Background(), s1, s2)
	if err != nil || st.FilesChanged != 12 {
		t.Errorf("Diff = %+v, %v; want 12 files", st, err)
	}
	// Without the index and what is known of the last recording, the
	// next one starts afresh, by git write-tree.
	for _, name := range []string{"index-*", "tree-*"} {
		names, _ := filepath.Glob(w.dir("git", name))
		for _, name := range names {
			os.Remove(name)
		}
	}
	if fresh := state(t, w); fresh != s2 {
		t.Errorf("state %s, git write-tree has %s", s2.Hex, fresh.Hex)
	}
}

// FuzzReadIndex checks that any file is read without a panic, as an index
// or as an error.
func FuzzReadIndex(f *testing.F) {
	f.Add([]byte("DIRC\x00\x00\x00\x02\x00\x00\x00\x00"))
	f.Add([]byte("DIRC\x00\x00\x00\x04\x00\x00\x00\x01" + strings.Repeat("\x00", 60) + "\x05abc\x00"))
	if _, err := exec.LookPath("git"); err == nil {
		root := f.TempDir()
		git(f, root, "init", "-q")
		write(f, filepath.Join(root, "a"), "a\n")
		write(f, filepath.Join(root, "d", "b"), "b\n")
		git(f, root, "add", "-A")
		git(f, root, "update-index", "--index-version", "4")
		if data, err := os.ReadFile(filepath.Join(root, ".git", "index")); err == nil {
			f.Add(data)
		}
	}
	path := filepath.Join(f.TempDir(), "index")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, size := range []int{20, 32} {
			if entries, err := readIndex(path, size); err == nil {
				entriesKey(entries)
			}
		}
	})
}

// TestGitObjectsRemoved checks that a recording after the private objects
// were removed, the index kept, starts afresh and gives the same state.
func TestGitObjectsRemoved(t *testing.T) {
	root, w := newRepo(t)
	write(t, filepath.Join(root, "untracked.txt"), "new\n")
	s1 := state(t, w)
	os.RemoveAll(w.dir("git", "objects"))
	if got := state(t, w); got != s1 {
		t.Errorf("state %s, want %s", got.Hex, s1.Hex)
	}
	write(t, filepath.Join(root, "a.txt"), "changed\n")
	s2 := state(t, w)
	if st, err := w.Diff(context.Background(), s1, s2); err != nil || st.FilesChanged != 1 {
		t.Errorf("Diff = %+v, %v; want a.txt", st, err)
	}
}

// TestIndexMark checks that an index with no checksum (index.skipHash) has
// no mark: its tail says nothing of its content.
func TestIndexMark(t *testing.T) {
	dir := t.TempDir()
	body := strings.Repeat("e", 100)
	for _, c := range []struct {
		name, tail string
		want       bool
	}{
		{"checksum", strings.Repeat("\x01", 20), true},
		{"no checksum", strings.Repeat("\x00", 20), false},
	} {
		path := filepath.Join(dir, c.name)
		write(t, path, body+c.tail)
		if got := indexMark(path) != ""; got != c.want {
			t.Errorf("%s: marked %v, want %v", c.name, got, c.want)
		}
	}
}
