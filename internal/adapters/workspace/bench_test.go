package workspace

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// genRepo makes a committed repository of n files of 20 to 60 lines in
// directories of 100, as bench/genworkspace does.
func genRepo(b *testing.B, n int) string {
	b.Helper()
	needGit(b)
	root := b.TempDir()
	for i := range n {
		body := fmt.Sprintf("package pkg%03d\n\n", i/100)
		for l := range 20 + i%41 {
			body += fmt.Sprintf("// line %d of file %d: the quick brown fox jumps over the lazy dog\n", l, i)
		}
		write(b, filepath.Join(root, fmt.Sprintf("pkg%03d", i/100), fmt.Sprintf("file%05d.go", i)), body)
	}
	write(b, filepath.Join(root, ".gitignore"), "build/\n")
	write(b, filepath.Join(root, "build", "out.bin"), "x\n")
	git(b, root, "init", "-q")
	git(b, root, "add", "-A")
	git(b, root, "commit", "-qm", "generated")
	write(b, filepath.Join(root, "untracked.txt"), "u\n")
	write(b, filepath.Join(root, ".orchestrator", "issue_queue.md"), "# Queue\n")
	return root
}

// BenchmarkState10k records the state of a 10,000-file repository, warm,
// beside "git status --porcelain" on it: compare the two ns/op.
func BenchmarkState10k(b *testing.B) {
	root := genRepo(b, 10000)
	w := &Workspace{Root: root, StateDir: filepath.Join(root, ".orchestrator")}
	files := &Workspace{Root: root, StateDir: filepath.Join(root, ".orchestrator"), Git: "no-such-git"}
	ctx := context.Background()
	b.Run("git-status", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command("git", "status", "--porcelain")
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0")
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, c := range []struct {
		name string
		w    *Workspace
	}{{"git", w}, {"files", files}} {
		b.Run(c.name, func(b *testing.B) {
			if _, err := c.w.State(ctx); err != nil { // the cold recording
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := c.w.State(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
