package main

import (
	"context"
	"fmt"
	"os"

	"github.com/autoretry/orchestrator/internal/foundations/statefile"
	"github.com/autoretry/orchestrator/issuequeue"
)

func init() {
	register(&command{
		name:      "abort",
		forPeople: true,
		summary:   "stop the running 'orchestrator run'",
		usage: `Usage: orchestrator abort [--dir DIR]

Stops the run in progress, found through the run lock in DIR/.lock: it gets
SIGTERM, stops its loop (SIGTERM to the loop's whole process group, SIGKILL
after 10 s), puts the issues it was working on back to pending, writes the
state and exits 3. Exit 1 if no run is in progress.

Examples:
    orchestrator abort
`,
		run: func(ctx context.Context, e *env, args []string) error {
			c := commands["abort"]
			if err := e.noArgs(c, nil, args); err != nil {
				return err
			}
			if fi, err := os.Stat(e.dir); err != nil || !fi.IsDir() {
				return &issuequeue.NoStateDirError{Dir: e.dir}
			}
			owner, held, err := statefile.RunHolder(e.dir)
			if err != nil {
				return err
			}
			if !held || owner.PID == 0 {
				fmt.Fprintln(e.stdout, "no run is in progress")
				return silentExit(exitNothing)
			}
			if err := terminate(owner.PID); err != nil {
				return fmt.Errorf("signalling the run (pid %d): %w", owner.PID, err)
			}
			fmt.Fprintf(e.stdout, "sent SIGTERM to the run %s (pid %d); it stops its loop and writes the state\n", owner.RunID, owner.PID)
			return nil
		},
	})
}
