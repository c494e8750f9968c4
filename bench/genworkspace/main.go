// Command genworkspace makes a git repository of many files for the
// workspace benchmark (bench/workspace.sh), and records the workspace state
// of a directory the way the tool does, so that both can be timed as whole
// processes.
//
// Usage:
//
//	genworkspace -dir DIR [-files N]           make a repository in DIR
//	genworkspace -state -dir DIR -statedir S   print the state of DIR
//	genworkspace -edit N -dir DIR              change N tracked files
//
// The repository has N files (default 10,000) of 20 to 60 lines in
// directories of 100, committed, plus an ignored build directory and a few
// untracked files. The same flags always give the same files.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/autoretry/orchestrator/internal/adapters/workspace"
)

func main() {
	dir := flag.String("dir", "", "the repository's directory")
	files := flag.Int("files", 10000, "number of files")
	state := flag.Bool("state", false, "print the workspace state of -dir instead of making a repository")
	stateDir := flag.String("statedir", "", "the state directory, for -state (default DIR/.orchestrator)")
	edit := flag.Int("edit", 0, "change this many tracked files of -dir (each run alternates their content)")
	flag.Parse()
	if *dir == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: genworkspace -dir DIR [-files N | -state [-statedir S] | -edit N]")
		os.Exit(2)
	}
	var err error
	switch {
	case *state:
		if *stateDir == "" {
			*stateDir = filepath.Join(*dir, ".orchestrator")
		}
		var s workspace.State
		w := &workspace.Workspace{Root: *dir, StateDir: *stateDir}
		if s, err = w.State(context.Background()); err == nil {
			fmt.Println(s.Kind, s.Hex, s.Reason)
		}
	case *edit > 0:
		err = editFiles(*dir, *edit)
	default:
		err = generate(*dir, *files)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "genworkspace:", err)
		os.Exit(1)
	}
}

func path(dir string, i int) string {
	return filepath.Join(dir, fmt.Sprintf("pkg%03d", i/100), fmt.Sprintf("file%05d.go", i))
}

func generate(dir string, n int) error {
	for i := range n {
		p := path(dir, i)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		body := fmt.Sprintf("package pkg%03d\n\n", i/100)
		for l := range 20 + i%41 {
			body += fmt.Sprintf("// line %d of file %d: the quick brown fox jumps over the lazy dog\n", l, i)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return err
		}
	}
	extra := map[string]string{
		".gitignore":                     "build/\n*.o\n",
		"build/out.bin":                  "ignored\n",
		".orchestrator/issue_queue.md":   "# Issue queue\n",
		".orchestrator/logs/retry.jsonl": "{}\n",
	}
	for name, body := range extra {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return err
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A", "--", ".", ":!.orchestrator"}, {"commit", "-qm", "generated"}} {
		cmd := exec.Command("git", append([]string{"-c", "gc.auto=0", "-c", "maintenance.auto=false"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=gen", "GIT_AUTHOR_EMAIL=gen@example.com",
			"GIT_COMMITTER_NAME=gen", "GIT_COMMITTER_EMAIL=gen@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %v: %v\n%s", args, err, out)
		}
	}
	for i := range 5 {
		p := filepath.Join(dir, fmt.Sprintf("untracked%d.txt", i))
		if err := os.WriteFile(p, []byte("untracked\n"), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// editFiles appends a line to n files spread over the tree, or takes it
// away if it is there, so that repeated runs do the same work.
func editFiles(dir string, n int) error {
	for k := range n {
		p := path(dir, k*97%10000)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		const mark = "// edited\n"
		if len(data) >= len(mark) && string(data[len(data)-len(mark):]) == mark {
			data = data[:len(data)-len(mark)]
		} else {
			data = append(data, mark...)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
