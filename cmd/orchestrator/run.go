package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/autoretry/orchestrator/internal/foundations/statefile"
	"github.com/autoretry/orchestrator/issuequeue"
	"github.com/autoretry/orchestrator/orchestrator"
)

func init() {
	register(&command{
		name:        "run",
		longRunning: true,
		summary:     "the main job: run the loop, retry critical issues, stop runaways",
		usage: `Usage: orchestrator run [--max-loops N] [--ignore-schedule] [--dry-run] [--json] [--quiet] [--dir DIR]

The main job, for cron. Opens a run, runs [loop] command (sh -c, in the
directory that holds the state directory, in its own process group, with
[loop] timeout), verifies the issues it worked on, and runs auto-retry loops
while the end-of-loop check asks for them. Each auto-retry loop gets the retry
context (previous failures, fix instructions) in $ORCHESTRATOR_RETRY_CONTEXT.

It stops, with exit status 3 and the reason on stderr, for: the global cap,
max loops, an issue halted or out of retries, the circuit breaker, a stall,
a cascade of new failures, a permanent error (bad credentials, command not
found), the no_auto_retry sentinel, or 'orchestrator abort'. Transient
failures (rate limits, 5xx, resets) are run again after a backoff without
using up retries. A second run while one is running exits 4 at once.
Outside [schedule] active_hours, inside a rate-limit window or a pause, or
ahead of the agent's usage window ([budget] window_pace), it starts no loop
and exits 0: nothing is wrong. A loop running when the active hours end
finishes; no further loop starts.

Environment given to the loop:
    ORCHESTRATOR_DIR            the state directory (absolute)
    ORCHESTRATOR_ROOT           the workspace root (the directory that holds
                                the state directory; Verify checks get it too)
    ORCHESTRATOR_RUN_ID         e.g. 20261122T101500Z-4242
    ORCHESTRATOR_LOOP           1, 2, …
    ORCHESTRATOR_LOOP_KIND      regular | auto_retry
    ORCHESTRATOR_ISSUES         IDs being retried, comma-separated, in order
    ORCHESTRATOR_RETRY_CONTEXT  path of the rendered retry context
    ORCHESTRATOR_RETRY_TIER     same_agent | fresh_agent | escalate_model
    ORCHESTRATOR_MODEL          from [tiers]

Flags:
    --max-loops N   at most N loops in this run (default [loop] max_loops, 16)
    --ignore-schedule
                    start loops in this run even outside [schedule]
                    active_hours (once: the next run keeps them again)
    --dry-run       say what would happen; run and write nothing
    --json          print one JSON object at the end; loop output goes to stderr
    --quiet         print nothing unless a person is needed (exit 3) or an
                    error occurs: for cron, which mails whatever a job
                    prints. A pause, a rate-limit window or a busy lock
                    print nothing either. Loop output is in logs/loops/.

Examples:
    */10 * * * * cd /home/me/proj && /home/me/go/bin/orchestrator run --quiet
    orchestrator run --dry-run
`,
		run: runRun,
	})
}

func runRun(ctx context.Context, e *env, args []string) (err error) {
	c := commands["run"]
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	maxLoops := fs.Int("max-loops", 0, "")
	dry := fs.Bool("dry-run", false, "")
	asJSON := fs.Bool("json", false, "")
	quiet := fs.Bool("quiet", false, "")
	ignoreSchedule := fs.Bool("ignore-schedule", false, "")
	if err := e.noArgs(c, fs, args); err != nil {
		return err
	}
	if fi, err := os.Stat(e.dir); err != nil || !fi.IsDir() {
		return &issuequeue.NoStateDirError{Dir: e.dir}
	}
	cfg, err := e.config()
	if err != nil {
		return err
	}
	// Every run that got as far as its configuration tells [notify]
	// heartbeat how it ended, exactly once; a dry run runs nothing.
	var rep orchestrator.RunReport
	defer func() {
		if !*dry {
			e.heartbeat(ctx, cfg, rep, err)
		}
	}()
	if strings.TrimSpace(cfg.Loop.Command) == "" {
		// A dry run too: it would say that a loop runs, and none can.
		return withCode(exitUsage, fmt.Errorf("no loop command: set [loop] command in %s (the script that runs one improvement loop)", filepath.Join(e.dir, "config.toml")),
			"it runs with sh -c in the directory that holds the state directory; '"+self+" help run' shows what it is given")
	}
	if *maxLoops != 0 {
		if err := cfg.Set("loop.max_loops", strconv.Itoa(*maxLoops)); err != nil {
			return usageErr(c, "--max-loops: %v", err)
		}
	}
	if *ignoreSchedule {
		cfg.Schedule.ActiveHours = nil
	}
	o, err := e.engine("run")
	if err != nil {
		return err
	}
	out := e.stdout
	if *asJSON {
		out = e.stderr
		o.Stdout = e.stderr
	}
	stderr := e.stderr
	var held *orchestrator.TailBuffer
	if *quiet {
		// Everything is held back, and printed only if a person is needed:
		// cron mails what a job prints, so it mails exactly then. The
		// loops' output is still in logs/loops/.
		held = &orchestrator.TailBuffer{Max: heldOutput}
		out, stderr, o.Stdout = io.Discard, held, held
	}
	r := &orchestrator.Runner{O: o, Terminal: out, Stderr: stderr, AfterLoop: e.metricsHook()}
	if cfg.Loop.Command != "" {
		if err := r.CheckCommand(); err != nil {
			return err
		}
	}
	if *dry {
		return r.DryRun(out)
	}
	rep, err = r.Run(ctx)
	if held != nil {
		var se *orchestrator.StopError
		var be *statefile.BusyError
		switch {
		case err == nil, errors.As(err, &se) && se.Wait:
			return nil
		case errors.As(err, &be):
			return silentExit(exitBusy) // another run is at work: nothing to tell
		}
		kept, cut := held.Last(heldOutput)
		if cut {
			io.WriteString(e.stdout, "[earlier output cut]\n")
		}
		e.stdout.Write(kept)
	}
	if *asJSON {
		if jerr := json.NewEncoder(e.stdout).Encode(rep); jerr != nil && err == nil {
			err = jerr
		}
	}
	return err
}

// heldOutput is how much of its output "run --quiet" keeps, to print if a
// person is needed.
const heldOutput = 256 << 10
