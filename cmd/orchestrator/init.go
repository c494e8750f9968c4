package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	exampledir "github.com/autoretry/orchestrator"
	"github.com/autoretry/orchestrator/internal/statefile"
	"github.com/autoretry/orchestrator/issuequeue"
)

func init() {
	register(&command{
		name:      "init",
		forPeople: true,
		summary:   "create .orchestrator/ from the commented example",
		usage: `Usage: orchestrator init [--example] [--dir DIR]

Creates the state directory (default .orchestrator): config.toml with every
setting explained, an empty issue_queue.md, session_state.md, and a
.gitignore for what should not be committed (the lock, logs, the report).
Refuses (exit 2) if the directory exists, so it never overwrites anything.

Then edit config.toml: set [loop] command to the script that runs one loop.
'orchestrator run' checks that it exists before the first loop.

Flags:
    --example   also file the demo's two example issues in issue_queue.md

Examples:
    orchestrator init
    orchestrator init --dir ci/.orchestrator
    orchestrator init --example && orchestrator status
`,
		run: runInit,
	})
}

func runInit(ctx context.Context, e *env, args []string) error {
	c := commands["init"]
	fs := flag.NewFlagSet("init", flag.ContinueOnError)
	example := fs.Bool("example", false, "")
	if _, err := e.parseFlags(c, fs, args); err != nil {
		return err
	}
	if _, err := os.Lstat(e.dir); err == nil {
		return withCode(exitUsage, fmt.Errorf("%s already exists; nothing was changed", e.dir),
			"run 'orchestrator lint' to check it, or choose another directory with --dir")
	}
	if err := copyExample(e.dir); err != nil {
		return err
	}
	if !*example {
		if err := writeBytes(filepath.Join(e.dir, issuequeue.QueueFile), []byte(newProjectQueue)); err != nil {
			return err
		}
	}
	if err := writeBytes(filepath.Join(e.dir, ".gitignore"), []byte(stateGitignore)); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "created %s\n", e.dir)
	fmt.Fprintf(e.stdout, "next: set [loop] command in %s, then run 'orchestrator status'\n", filepath.Join(e.dir, "config.toml"))
	return nil
}

// newProjectQueue is the issue_queue.md of a new project.
const newProjectQueue = `# Issue Queue

Issues are filed here by the loop's QA step ('orchestrator add'), by
'orchestrator fail', or by hand: a heading "## ISSUE-YYYYMMDD-NNN" followed by
a two-column field table. 'orchestrator lint' checks what you write.
`

// stateGitignore keeps out of git what the tool rewrites on every run; the
// queue, the session state and the configuration are worth committing.
const stateGitignore = `# Written by orchestrator on every run: not worth committing.
.lock
.lock.write
logs/
analytics.html
*.rejected
.*.tmp-*
`

// copyExample writes the embedded example state directory to dir, which must
// not exist.
func copyExample(dir string) error {
	if err := os.MkdirAll(filepath.Dir(filepath.Clean(dir)), 0o755); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return withCode(exitUsage, fmt.Errorf("%s already exists; nothing was changed", dir))
		}
		return err
	}
	root, err := fs.Sub(exampledir.Example, exampledir.ExampleRoot)
	if err != nil {
		return err
	}
	return fs.WalkDir(root, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == "." {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(path))
		if d.IsDir() {
			return os.Mkdir(target, 0o755)
		}
		b, err := fs.ReadFile(root, path)
		if err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if filepath.Ext(path) == ".sh" {
			mode = 0o755
		}
		return createFile(target, b, mode)
	})
}

// createFile writes a new file. O_EXCL makes the open fail on anything
// already at path, a symbolic link included, so nothing placed in the new
// directory meanwhile is written through.
func createFile(path string, b []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeBytes replaces the file at path with b, refusing links.
func writeBytes(path string, b []byte) error {
	return statefile.WriteAtomic(path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}
