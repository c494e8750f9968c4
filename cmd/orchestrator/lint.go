package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/autoretry/orchestrator/issuequeue"
)

func init() {
	register(&command{
		name:    "lint",
		summary: "validate issue_queue.md and session_state.md",
		usage: `Usage: orchestrator lint [--dir DIR]

Validates issue_queue.md and session_state.md and prints every problem at once,
one per line, as FILE:LINE:COL: message — the format editors jump to. Warnings
(an ISSUE heading hidden in a comment or code block, say) are printed too; they
do not stop other commands from changing the file, errors do.

Exit status: 0 when both files are clean, 1 when anything was found, 2 when the
state directory is missing.

Examples:
    orchestrator lint
    orchestrator lint --dir ~/proj/.orchestrator
`,
		run: runLint,
	})
}

func runLint(ctx context.Context, e *env, args []string) error {
	c := commands["lint"]
	if _, err := e.parseFlags(c, flag.NewFlagSet("lint", flag.ContinueOnError), args); err != nil {
		return err
	}
	q, st, err := e.paths().Load()
	if err != nil {
		return err
	}
	findings := append(q.Findings(), st.Findings()...)
	for _, f := range findings {
		fmt.Fprintln(e.stdout, f)
	}
	if len(findings) > 0 {
		return silentExit(exitNothing)
	}
	fmt.Fprintln(e.stdout, okLine(q, e.paths()))
	return nil
}

// okLine is the one-line summary of a clean queue.
func okLine(q *issuequeue.Queue, p issuequeue.Paths) string {
	pending := 0
	for _, is := range q.Issues {
		if is.PendingAutoRetry() {
			pending++
		}
	}
	return fmt.Sprintf("ok: %s: %d issue(s), %d pending auto-retry", p.Queue(), len(q.Issues), pending)
}
