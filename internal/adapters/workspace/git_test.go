package workspace

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

func needGit(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git program")
	}
}

// git runs git in dir for the test's own setup, isolated from the user's
// configuration, with no maintenance left running in the background.
func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "gc.auto=0", "-c", "maintenance.auto=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(gitEnv(os.Environ()), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func write(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// newRepo makes a repository with a commit, an ignored build directory, a
// state directory that is neither tracked nor ignored, and a stash.
func newRepo(t testing.TB) (root string, w *Workspace) {
	t.Helper()
	needGit(t)
	root = t.TempDir()
	git(t, root, "init", "-q")
	write(t, filepath.Join(root, "a.txt"), "a\nb\nc\n")
	write(t, filepath.Join(root, "gone.txt"), "1\n2\n")
	write(t, filepath.Join(root, ".gitignore"), "build/\n")
	write(t, filepath.Join(root, "sub", "s.go"), "package sub\n")
	git(t, root, "add", "-A")
	git(t, root, "commit", "-qm", "first")
	write(t, filepath.Join(root, "a.txt"), "stashed\n")
	git(t, root, "stash", "-q")
	write(t, filepath.Join(root, "build", "out.o"), "binary\n")
	write(t, filepath.Join(root, ".orchestrator", "issue_queue.md"), "# Queue\n")
	return root, &Workspace{Root: root, StateDir: filepath.Join(root, ".orchestrator")}
}

// repoPrint is everything of the person's repository a recording must not
// change: every file under the git directory, byte for byte, and git's own
// view of the refs, HEAD, stash and index.
func repoPrint(t testing.TB, root string) string {
	t.Helper()
	gitDir := strings.TrimSpace(git(t, root, "rev-parse", "--git-common-dir"))
	if !filepath.IsAbs(gitDir) {
		gitDir = filepath.Join(root, gitDir)
	}
	var b strings.Builder
	objects := 0
	err := filepath.WalkDir(gitDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if strings.Contains(path, string(filepath.Separator)+"objects"+string(filepath.Separator)) {
			objects++
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %x\n", path, sha256.Sum256(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "objects %d\n", objects)
	b.WriteString(git(t, root, "for-each-ref"))
	b.WriteString(git(t, root, "rev-parse", "HEAD"))
	b.WriteString(git(t, root, "stash", "list"))
	b.WriteString(git(t, root, "ls-files", "-s", "--debug"))
	return b.String()
}

func state(t testing.TB, w *Workspace) State {
	t.Helper()
	s, err := w.State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// touchAhead sets the times of the files below root an hour ahead.
func touchAhead(t testing.TB, root string, files ...string) {
	t.Helper()
	future := time.Now().Add(time.Hour)
	for _, f := range files {
		if err := os.Chtimes(filepath.Join(root, f), future, future); err != nil {
			t.Fatal(err)
		}
	}
}

// change is one named edit to a workspace.
type change struct {
	name string
	do   func()
}

// wantSameAfter makes each change in turn and checks that the state is
// still s1 after each.
func wantSameAfter(t *testing.T, w *Workspace, s1 State, changes []change) {
	t.Helper()
	for _, c := range changes {
		c.do()
		if got := state(t, w); got != s1 {
			t.Errorf("after %s: state %s, want %s", c.name, got.Hex, s1.Hex)
		}
	}
}

func TestGitStateLeavesRepositoryAlone(t *testing.T) {
	root, w := newRepo(t)
	write(t, filepath.Join(root, "untracked.txt"), "new\n")
	before := repoPrint(t, root)
	s1 := state(t, w)
	write(t, filepath.Join(root, "a.txt"), "changed\n")
	s2 := state(t, w)
	if _, err := w.Diff(context.Background(), s1, s2); err != nil {
		t.Fatal(err)
	}
	if _, err := w.DiffText(context.Background(), s1, s2); err != nil {
		t.Fatal(err)
	}
	if after := repoPrint(t, root); after != before {
		t.Errorf("the repository changed:\n%s\nwant\n%s", after, before)
	}
	if s1.Kind != KindGit || len(s1.Hex) != 40 || s1.Reason != "" {
		t.Errorf("state = %+v, want a git tree id", s1)
	}
}

func TestGitStateSameWhenNothingCounts(t *testing.T) {
	root, w := newRepo(t)
	s1 := state(t, w)
	wantSameAfter(t, w, s1, []change{
		{"nothing", func() {}},
		{"touch every file", func() { touchAhead(t, root, "a.txt", "gone.txt", ".gitignore", "sub/s.go") }},
		{"ignored file", func() { write(t, filepath.Join(root, "build", "out.o"), "other\n") }},
		{"new ignored file", func() { write(t, filepath.Join(root, "build", "more.o"), "x\n") }},
		{"state directory", func() { write(t, filepath.Join(root, ".orchestrator", "issue_queue.md"), "# Queue\nmore\n") }},
		{"new file in the state directory", func() { write(t, filepath.Join(root, ".orchestrator", "logs", "x.log"), "x\n") }},
		{"empty directory", func() { os.MkdirAll(filepath.Join(root, "empty"), 0o755) }},
	})
}

func TestGitStateCycles(t *testing.T) {
	root, w := newRepo(t)
	s1 := state(t, w)

	write(t, filepath.Join(root, "untracked.txt"), "new\n")
	s2 := state(t, w)
	if s2 == s1 {
		t.Fatal("an untracked file that is not ignored did not change the state")
	}
	os.Remove(filepath.Join(root, "untracked.txt"))
	if got := state(t, w); got != s1 {
		t.Errorf("after removing the untracked file: %s, want %s", got.Hex, s1.Hex)
	}

	write(t, filepath.Join(root, "a.txt"), "a\nB\nc\n") // same size, within the same second
	s3 := state(t, w)
	if s3 == s1 {
		t.Fatal("an edit did not change the state")
	}
	write(t, filepath.Join(root, "a.txt"), "a\nb\nc\n")
	if got := state(t, w); got != s1 {
		t.Errorf("after reverting the edit: %s, want %s", got.Hex, s1.Hex)
	}

	if err := os.Chmod(filepath.Join(root, "a.txt"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := state(t, w); got == s1 {
		t.Error("the executable bit did not change the state")
	}
	os.Chmod(filepath.Join(root, "a.txt"), 0o644)

	// A commit changes nothing in the files; git revert brings back the state.
	write(t, filepath.Join(root, "a.txt"), "a\nb\nc\nd\n")
	s4 := state(t, w)
	git(t, root, "commit", "-qam", "d")
	if got := state(t, w); got != s4 {
		t.Errorf("after committing: %s, want %s", got.Hex, s4.Hex)
	}
	git(t, root, "revert", "--no-edit", "HEAD")
	if got := state(t, w); got != s1 {
		t.Errorf("after git revert: %s, want %s", got.Hex, s1.Hex)
	}
}

func TestGitDiff(t *testing.T) {
	root, w := newRepo(t)
	s1 := state(t, w)
	sampleEdits(t, root, "1\n2\n3\n")
	write(t, filepath.Join(root, ".orchestrator", "issue_queue.md"), "changed\n")
	s2 := state(t, w)
	text := wantDiff(t, w, s1, s2, Stats{FilesChanged: 4, LinesAdded: 5, LinesRemoved: 3, Files: sampleChanges()})
	for _, line := range []string{"diff --git a/a.txt b/a.txt", "-b", "+B", "+d", "+++ b/new.txt", "deleted file mode 100644"} {
		if !strings.Contains(string(text), "\n"+line+"\n") && !strings.HasPrefix(string(text), line+"\n") {
			t.Errorf("DiffText lacks %q:\n%s", line, text)
		}
	}
	if strings.Contains(string(text), "issue_queue") {
		t.Errorf("DiffText shows the state directory:\n%s", text)
	}
	if empty, err := w.Diff(context.Background(), s2, s2); err != nil || empty.FilesChanged != 0 {
		t.Errorf("Diff of a state with itself = %+v, %v", empty, err)
	}
}

// sampleEdits makes the edits that the Diff tests measure in the sample
// tree of newFiles or newRepo: a.txt has a line changed and one added,
// new.txt appears with content newTxt (three lines), gone.txt goes and
// bin.dat appears with binary content.
func sampleEdits(t testing.TB, root, newTxt string) {
	t.Helper()
	write(t, filepath.Join(root, "a.txt"), "a\nB\nc\nd\n")
	write(t, filepath.Join(root, "new.txt"), newTxt)
	os.Remove(filepath.Join(root, "gone.txt"))
	write(t, filepath.Join(root, "bin.dat"), "\x00\x01\x02")
}

// sampleChanges are the file changes of sampleEdits as Diff reports them.
func sampleChanges() []FileChange {
	return []FileChange{
		{Path: "a.txt", LinesAdded: 2, LinesRemoved: 1},
		{Path: "bin.dat", Binary: true},
		{Path: "gone.txt", LinesRemoved: 2},
		{Path: "new.txt", LinesAdded: 3},
	}
}

// wantDiff checks that Diff from s1 to s2 is want, and returns DiffText's
// text for the caller's checks.
func wantDiff(t *testing.T, w *Workspace, s1, s2 State, want Stats) []byte {
	t.Helper()
	got, err := w.Diff(context.Background(), s1, s2)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Diff = %+v\nwant   %+v", got, want)
	}
	text, err := w.DiffText(context.Background(), s1, s2)
	if err != nil {
		t.Fatal(err)
	}
	return text
}

func TestGitNestedRepositories(t *testing.T) {
	root, w := newRepo(t)
	before := repoPrint(t, root)
	s1 := state(t, w)
	// A nested repository with no commit is left out; one with a commit
	// counts by its commit.
	empty := filepath.Join(root, "empty-nested")
	os.MkdirAll(empty, 0o755)
	git(t, empty, "init", "-q")
	write(t, filepath.Join(empty, "f"), "f\n")
	if got := state(t, w); got != s1 {
		t.Errorf("a nested repository with no commit changed the state")
	}
	nested := nestedRepo(t, root)
	s2 := state(t, w)
	if s2 == s1 {
		t.Errorf("a nested repository with a commit did not change the state")
	}
	write(t, filepath.Join(nested, "n"), "dirty\n")
	if got := state(t, w); got != s2 {
		t.Errorf("a change inside a nested repository's files changed the state; only its commit counts")
	}
	git(t, nested, "commit", "-qam", "m")
	if got := state(t, w); got == s2 {
		t.Errorf("a new commit in a nested repository did not change the state")
	}
	if after := repoPrint(t, root); after != before {
		t.Errorf("the repository changed:\n%s\nwant\n%s", after, before)
	}
}

// nestedRepo makes a repository with one commit in root/nested and returns
// its path.
func nestedRepo(t *testing.T, root string) string {
	t.Helper()
	nested := filepath.Join(root, "nested")
	os.MkdirAll(nested, 0o755)
	git(t, nested, "init", "-q")
	write(t, filepath.Join(nested, "n"), "n\n")
	git(t, nested, "add", "n")
	git(t, nested, "commit", "-qm", "n")
	return nested
}

func TestGitLinkedWorktree(t *testing.T) {
	root, _ := newRepo(t)
	wt := filepath.Join(t.TempDir(), "wt")
	git(t, root, "worktree", "add", "-q", wt)
	before := repoPrint(t, root)
	w := &Workspace{Root: filepath.Join(wt, "sub"), StateDir: filepath.Join(wt, ".orchestrator")}
	s1 := state(t, w)
	write(t, filepath.Join(wt, "a.txt"), "a\nb\n")
	s2 := state(t, w)
	st, err := w.Diff(context.Background(), s1, s2)
	if err != nil {
		t.Fatal(err)
	}
	if st.FilesChanged != 1 || st.LinesRemoved != 1 || st.Files[0].Path != "a.txt" {
		t.Errorf("Diff = %+v, want a.txt one line removed", st)
	}
	if after := repoPrint(t, root); after != before {
		t.Errorf("the repository changed:\n%s\nwant\n%s", after, before)
	}
	// The main work tree's state is that of its own files.
	main := &Workspace{Root: root, StateDir: filepath.Join(root, ".orchestrator")}
	if s := state(t, main); s == s2 {
		t.Errorf("the main work tree has the linked worktree's state")
	}
}

func TestGitStateDirOutsideWorkTree(t *testing.T) {
	root, _ := newRepo(t)
	w := &Workspace{Root: root, StateDir: t.TempDir()}
	s1 := state(t, w)
	write(t, filepath.Join(root, ".orchestrator", "issue_queue.md"), "changed\n")
	if got := state(t, w); got == s1 {
		t.Errorf("a directory that is not the state directory was left out")
	}
}

func TestNoGitFallsBackToFiles(t *testing.T) {
	root, w := newRepo(t)
	w.Git = filepath.Join(root, "no-such-git")
	s := state(t, w)
	if s.Kind != KindFiles || !strings.Contains(s.Reason, "no git program") {
		t.Errorf("state = %+v, want files with a reason", s)
	}
}

func TestGitDiffStateNotKept(t *testing.T) {
	root, w := newRepo(t)
	s1 := state(t, w)
	write(t, filepath.Join(root, "x"), "x\n")
	s2 := state(t, w)
	os.RemoveAll(filepath.Join(root, ".orchestrator", "workspace"))
	if _, err := w.Diff(context.Background(), s1, s2); !errors.Is(err, ErrNotKept) {
		t.Errorf("Diff after the objects were removed: %v, want ErrNotKept", err)
	}
}

func TestStaleIndexCopiesRemoved(t *testing.T) {
	root, w := newRepo(t)
	state(t, w)
	dir := filepath.Join(root, ".orchestrator", "workspace", "git")
	old := filepath.Join(dir, fmt.Sprintf("index-0123456789abcdef.%d-%d.tmp", 1, time.Now().Add(-2*time.Hour).UnixNano()))
	recent := filepath.Join(dir, fmt.Sprintf("index-0123456789abcdef.%d-%d.tmp.lock", 1, time.Now().UnixNano()))
	write(t, old, "")
	write(t, recent, "")
	state(t, w)
	names, _ := filepath.Glob(filepath.Join(dir, "index-*"))
	sort.Strings(names)
	if len(names) != 2 || names[0] != recent {
		t.Errorf("index files = %q, want the index and %s", names, recent)
	}
}

func TestGitFoundAgainWhenARepositoryAppears(t *testing.T) {
	root, _ := newRepo(t)
	sub := filepath.Join(root, "sub")
	w := &Workspace{Root: sub, StateDir: filepath.Join(root, ".orchestrator")}
	s1 := state(t, w)
	git(t, sub, "init", "-q")
	got := state(t, w)
	fresh := state(t, &Workspace{Root: sub, StateDir: t.TempDir()})
	if got == s1 || got != fresh {
		t.Errorf("after git init below the top: %s, want %s as a fresh recording has it (was %s)", got.Hex, fresh.Hex, s1.Hex)
	}
}
