package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/autoretry/orchestrator/issuequeue"
	// Aliased: the package's tests have a helper named watch.
	dirwatch "github.com/autoretry/orchestrator/internal/views/watch"
)

func init() {
	register(&command{
		name:        "watch",
		longRunning: true,
		summary:     "lint the state files on every change; with --run, start runs",
		usage: `Usage: orchestrator watch [--run] [--dir DIR] [--config FILE]

Watches the state directory and lints it, as 'orchestrator lint' does, every
time issue_queue.md, session_state.md, the config file, no_auto_retry or a
template override in DIR/templates changes. Each problem is printed on a line
of its own as FILE:LINE:COL: message (the format editors jump to), or one ok
line when there is none; every line starts with the time of day. A save that
leaves a file as it was prints nothing. It also says when auto-retry becomes
disabled (no_auto_retry created, auto_retry_enabled set false) or enabled
again.

It watches the directory, not the files, so editors that save by writing a
new file and renaming it over the old one are followed, and so is a file that
is deleted and created again. If the whole directory is removed, watch says
so and waits for it to come back.

With --run it also starts 'orchestrator run' (with the same --dir and
--config) when a change leaves an issue pending auto-retry (Auto-Retry true,
Status pending, not Halted), the files valid, auto-retry enabled and the run
lock free. The run's output is shown as it comes. One run at a time: changes
made while a run (this one or a cron job's) holds the lock are that run's to
handle, and after it ends only a new change starts the next one. At start,
what watch finds counts as a change.

Ctrl-C (or SIGTERM) stops watching with exit status 0; a run started by
watch gets SIGTERM and ends its loop cleanly first.

Changes are noticed through the operating system's file events (inotify,
kqueue, ReadDirectoryChangesW). Network file systems (NFS, SMB/CIFS) and many
FUSE mounts deliver none for changes made on another machine, and sometimes
none at all: there watch stays silent. Run 'orchestrator lint' instead.

Flags:
    --run   start 'orchestrator run' when an issue is pending auto-retry

Exit status: 0 when stopped by Ctrl-C, 2 when the state directory is missing.

Examples:
    orchestrator watch
    orchestrator watch --run
    orchestrator watch --dir ~/proj/.orchestrator
`,
		run: runWatch,
	})
}

func runWatch(ctx context.Context, e *env, args []string) error {
	c := commands["watch"]
	fs := flag.NewFlagSet("watch", flag.ContinueOnError)
	startRuns := fs.Bool("run", false, "")
	if err := e.noArgs(c, fs, args); err != nil {
		return err
	}
	cfgPath := e.configPath
	if cfgPath == "" {
		cfgPath = filepath.Join(e.dir, "config.toml")
	} else if _, err := os.Stat(cfgPath); err != nil {
		// A config file named on the command line must exist, as for every
		// command; problems inside it are for watch to report.
		return withCode(exitUsage, fmt.Errorf("reading config: %w", err))
	}
	// ORCHESTRATOR_NOW fixes the clock of every line, for examples and tests.
	now := time.Now
	if e.getenv("ORCHESTRATOR_NOW") != "" {
		t, err := e.now()
		if err != nil {
			return err
		}
		now = func() time.Time { return t }
	}
	o := dirwatch.Options{
		Dir:        e.dir,
		ConfigPath: cfgPath,
		Getenv:     e.getenv,
		Out:        e.stdout,
		Now:        now,
		OKLine:     func(q *issuequeue.Queue) string { return okLine(q, e.paths()) },
	}
	if *startRuns {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("finding this program to start runs: %w", err)
		}
		runArgs := []string{"orchestrator", "--dir", e.dir}
		if e.configPath != "" {
			runArgs = append(runArgs, "--config", e.configPath)
		}
		runArgs = append(runArgs, "run")
		o.OnPending = (&dirwatch.Process{Path: exe, Args: runArgs, Stderr: e.stderr}).Run
	}
	return dirwatch.Watch(ctx, o)
}
