package workspace

import (
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
	k, err := entriesKey(index, 20)
	if err != nil {
		t.Fatal(err)
	}
	return k
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
	if _, err := entriesKey(filepath.Join(root, "garbage"), 20); err == nil {
		t.Error("a truncated index was read")
	}
}

// TestGitStateSparesWriteTree checks that a recording that finds the
// entries of the last one runs "git add" alone, even when git rewrote the
// index to refresh the stat data of touched files.
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
	if got, want := runs(), "add write-tree"; got != want {
		t.Errorf("after an edit: ran %q, want %q", got, want)
	}
}
