package workspace

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// newFiles makes a directory recorded outside git (the git program is
// made unfindable, so the test does not depend on where the temporary
// directory is).
func newFiles(t testing.TB) (root string, w *Workspace) {
	t.Helper()
	root = t.TempDir()
	write(t, filepath.Join(root, "a.txt"), "a\nb\nc\n")
	write(t, filepath.Join(root, "gone.txt"), "1\n2\n")
	write(t, filepath.Join(root, "sub", "s.go"), "package sub\n")
	write(t, filepath.Join(root, ".git", "HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(root, ".orchestrator", "issue_queue.md"), "# Queue\n")
	if err := os.Symlink("a.txt", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	return root, &Workspace{Root: root, StateDir: filepath.Join(root, ".orchestrator"), Git: filepath.Join(root, "no-such-git")}
}

func TestFilesStateSameWhenNothingCounts(t *testing.T) {
	root, w := newFiles(t)
	s1 := state(t, w)
	if s1.Kind != KindFiles || len(s1.Hex) != 64 {
		t.Fatalf("state = %+v, want a files hash", s1)
	}
	wantSameAfter(t, w, s1, []change{
		{"nothing", func() {}},
		{"touch every file", func() { touchAhead(t, root, "a.txt", "gone.txt", "sub/s.go") }},
		{"state directory", func() { write(t, filepath.Join(root, ".orchestrator", "issue_queue.md"), "more\n") }},
		{".git", func() { write(t, filepath.Join(root, ".git", "index"), "x") }},
		{"empty directory", func() { os.MkdirAll(filepath.Join(root, "empty"), 0o755) }},
	})
}

func TestFilesStateCycles(t *testing.T) {
	root, w := newFiles(t)
	s1 := state(t, w)
	for _, change := range []struct {
		name     string
		do, undo func()
	}{
		{"new file",
			func() { write(t, filepath.Join(root, "new.txt"), "n\n") },
			func() { os.Remove(filepath.Join(root, "new.txt")) }},
		{"same-size edit", // within the stat cache's racy window
			func() { write(t, filepath.Join(root, "a.txt"), "a\nB\nc\n") },
			func() { write(t, filepath.Join(root, "a.txt"), "a\nb\nc\n") }},
		{"executable bit",
			func() { os.Chmod(filepath.Join(root, "a.txt"), 0o755) },
			func() { os.Chmod(filepath.Join(root, "a.txt"), 0o644) }},
		{"link target",
			func() { os.Remove(filepath.Join(root, "link")); os.Symlink("gone.txt", filepath.Join(root, "link")) },
			func() { os.Remove(filepath.Join(root, "link")); os.Symlink("a.txt", filepath.Join(root, "link")) }},
		{"removed file",
			func() { os.Rename(filepath.Join(root, "gone.txt"), filepath.Join(root, ".orchestrator", "gone.txt")) },
			func() { os.Rename(filepath.Join(root, ".orchestrator", "gone.txt"), filepath.Join(root, "gone.txt")) }},
	} {
		change.do()
		if got := state(t, w); got == s1 {
			t.Errorf("%s did not change the state", change.name)
		}
		change.undo()
		if got := state(t, w); got != s1 {
			t.Errorf("undoing %s: state %s, want %s", change.name, got.Hex, s1.Hex)
		}
	}
}

// TestFilesStatCache shows that an unchanged file is not read again, and
// that the cache is only a cache: without it the content is read.
func TestFilesStatCache(t *testing.T) {
	root, w := newFiles(t)
	path := filepath.Join(root, "a.txt")
	old := time.Now().Add(-time.Hour)
	os.Chtimes(path, old, old)
	s1 := state(t, w)
	// Same size, modification time and inode: the file, hashed an hour
	// after its last modification, is taken as unchanged, as git does. A
	// change within the racy window is caught (TestFilesStateCycles).
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("X")
	f.Close()
	os.Chtimes(path, old, old)
	if got := state(t, w); got != s1 {
		t.Errorf("a file with unchanged stat data was read again")
	}
	caches, _ := filepath.Glob(filepath.Join(root, ".orchestrator", "workspace", "files", "cache-*"))
	if len(caches) != 1 {
		t.Fatalf("stat caches: %q, want one", caches)
	}
	os.Remove(caches[0])
	if got := state(t, w); got == s1 {
		t.Errorf("without the stat cache the content change was not seen")
	}
}

func TestFilesDiff(t *testing.T) {
	root, w := newFiles(t)
	s1 := state(t, w)
	sampleEdits(t, root, "1\n2\n3")
	os.Chmod(filepath.Join(root, "sub", "s.go"), 0o755)
	s2 := state(t, w)
	text := wantDiff(t, w, s1, s2, Stats{FilesChanged: 5, LinesAdded: 5, LinesRemoved: 3,
		Files: append(sampleChanges(), FileChange{Path: "sub/s.go"})})
	wantText := `diff --git a/a.txt b/a.txt
--- a/a.txt
+++ b/a.txt
@@ -1,3 +1,4 @@
 a
-b
+B
 c
+d
diff --git a/bin.dat b/bin.dat
new file mode 100644
Binary files a/bin.dat and b/bin.dat differ, or their content is no longer kept
diff --git a/gone.txt b/gone.txt
deleted file mode 100644
--- a/gone.txt
+++ /dev/null
@@ -1,2 +0,0 @@
-1
-2
diff --git a/new.txt b/new.txt
new file mode 100644
--- /dev/null
+++ b/new.txt
@@ -0,0 +1,3 @@
+1
+2
+3
\ No newline at end of file
diff --git a/sub/s.go b/sub/s.go
old mode 100644
new mode 100755
`
	if string(text) != wantText {
		t.Errorf("DiffText:\n%s\nwant\n%s", text, wantText)
	}
}

func TestFilesManifestsBounded(t *testing.T) {
	root, w := newFiles(t)
	first := state(t, w)
	var last State
	for i := range maxManifests + 2 {
		write(t, filepath.Join(root, "n.txt"), fmt.Sprintln(i))
		// Manifests age by modification time; make the order certain.
		last = state(t, w)
		m := filepath.Join(root, ".orchestrator", "workspace", "files", "manifests", last.Hex)
		at := time.Now().Add(time.Duration(i+1) * time.Second)
		os.Chtimes(m, at, at)
	}
	if _, err := w.Diff(context.Background(), first, last); !errors.Is(err, ErrNotKept) {
		t.Errorf("Diff from a pruned state: %v, want ErrNotKept", err)
	}
	ms, _ := filepath.Glob(filepath.Join(root, ".orchestrator", "workspace", "files", "manifests", "*"))
	if len(ms) != maxManifests {
		t.Errorf("%d manifests kept, want %d", len(ms), maxManifests)
	}
}

func TestFilesNotInGit(t *testing.T) {
	needGit(t)
	root := t.TempDir()
	write(t, filepath.Join(root, "f"), "f\n")
	s := state(t, &Workspace{Root: root, StateDir: filepath.Join(root, "s")})
	if s.Kind == KindGit {
		t.Skip("the temporary directory is inside a git work tree")
	}
	if s.Kind != KindFiles || s.Reason != "" {
		t.Errorf("state = %+v, want files with no reason", s)
	}
}

// TestDiffLinesShortest checks the edit scripts against the length of a
// longest common subsequence, and that applying them gives the new lines.
func TestDiffLinesShortest(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		a, b := randomLines(r), randomLines(r)
		ops := diffLines(a, b)
		var gotA, gotB []string
		for _, o := range ops {
			if o.kind != '+' {
				gotA = append(gotA, o.line)
			}
			if o.kind != '-' {
				gotB = append(gotB, o.line)
			}
		}
		if strings.Join(gotA, "") != strings.Join(a, "") || strings.Join(gotB, "") != strings.Join(b, "") {
			t.Fatalf("script for %q -> %q does not give them: %v", a, b, ops)
		}
		added, removed := countLines(ops)
		if l := lcs(a, b); added != len(b)-l || removed != len(a)-l {
			t.Fatalf("%q -> %q: +%d -%d, want +%d -%d", a, b, added, removed, len(b)-l, len(a)-l)
		}
	}
}

func randomLines(r *rand.Rand) []string {
	lines := make([]string, r.IntN(12))
	for i := range lines {
		lines[i] = string(rune('a'+r.IntN(4))) + "\n"
	}
	return lines
}

func lcs(a, b []string) int {
	t := make([][]int, len(a)+1)
	for i := range t {
		t[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				t[i][j] = t[i+1][j+1] + 1
			} else {
				t[i][j] = max(t[i+1][j], t[i][j+1])
			}
		}
	}
	return t[0][0]
}

func TestDiffLinesPastTheBound(t *testing.T) {
	var a, b []string
	for i := range maxEdits {
		a = append(a, fmt.Sprintln("a", i))
		b = append(b, fmt.Sprintln("b", i))
	}
	added, removed := countLines(diffLines(a, b))
	if added != maxEdits || removed != maxEdits {
		t.Errorf("+%d -%d, want +%d -%d", added, removed, maxEdits, maxEdits)
	}
}
