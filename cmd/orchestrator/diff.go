package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"

	"github.com/autoretry/orchestrator/internal/adapters/workspace"
	"github.com/autoretry/orchestrator/orchestrator"
)

func init() {
	register(&command{
		name:    "diff",
		summary: "show the files and lines a loop changed",
		usage: `Usage: orchestrator diff [LOOP] [--run ID] [--dir DIR]

Prints, as a unified diff, what a loop changed in the workspace: the
difference between the workspace's states recorded before and after it.
LOOP is a loop of the last run (default: its last loop that recorded the
workspace); --run picks another run. A line on stderr says how many files
and lines changed and the loop's progress verdict.

Nothing is written to the repository: no ref, commit, stash or index entry.
The states are kept in the state directory (DIR/workspace).

Options:
    --run ID   a run other than the last (its ID as in history.csv)

Examples:
    orchestrator diff
    orchestrator diff 3 | less
`,
		run: func(ctx context.Context, e *env, args []string) error {
			c := commands["diff"]
			fs := flag.NewFlagSet("diff", flag.ContinueOnError)
			runID := fs.String("run", "", "")
			args, err := e.parseFlags(c, fs, args)
			if err != nil {
				return err
			}
			loop := 0
			switch len(args) {
			case 0:
			case 1:
				if loop, err = strconv.Atoi(args[0]); err != nil || loop < 1 {
					return usageErr(c, "diff: LOOP is a loop number (1, 2, …), not %q", args[0])
				}
			default:
				return usageErr(c, "diff takes at most one loop number")
			}
			lc, ok, err := orchestrator.FindLoopChange(e.dir, *runID, loop)
			if err != nil {
				return err
			}
			if !ok {
				what := "no loop has recorded the workspace yet"
				if loop != 0 || *runID != "" {
					what = "no such loop recorded the workspace"
				}
				return fmt.Errorf("%s; states are recorded before and after every loop of 'orchestrator run' while [progress] enabled is true", what)
			}
			out, err := lc.DiffText(ctx, e.dir)
			if errors.Is(err, workspace.ErrNotKept) {
				return fmt.Errorf("loop %d of run %s: its states are no longer kept in %s/workspace", lc.Loop, lc.RunID, e.dir)
			}
			if err != nil {
				return err
			}
			w := lc.Workspace
			fmt.Fprintf(e.stderr, "loop %d of run %s (%s): %d file(s) changed, +%d -%d lines\n", lc.Loop, lc.RunID, lc.Progress,
				w.FilesChanged, w.LinesAdded, w.LinesRemoved)
			_, err = e.stdout.Write(out)
			return err
		},
	})
}
