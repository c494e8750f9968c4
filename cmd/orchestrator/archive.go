package main

import (
	"context"
	"flag"
	"fmt"
	"time"
)

func init() {
	register(&command{
		name:      "archive",
		forPeople: true,
		summary:   "move old resolved and skipped issues to issue_archive.md",
		usage: `Usage: orchestrator archive [--older-than 720h]

Moves resolved and skipped issues created longer ago than --older-than
(default 720h, 30 days) from issue_queue.md to issue_archive.md, byte for byte,
so a long-lived queue stays small and fast. IDs stay used: new issues never
reuse an archived ID.

Examples:
    orchestrator archive
    orchestrator archive --older-than 0s     # everything resolved or skipped
`,
		run: func(ctx context.Context, e *env, args []string) error {
			c := commands["archive"]
			fs := flag.NewFlagSet("archive", flag.ContinueOnError)
			older := fs.Duration("older-than", 720*time.Hour, "")
			o, err := e.noArgsEngine(c, fs, args)
			if err != nil {
				return err
			}
			moved, err := o.Archive(ctx, *older)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "archived %d issue(s) to %s\n", len(moved), e.paths().Archive())
			for _, id := range moved {
				fmt.Fprintf(e.stdout, "  %s\n", id)
			}
			return nil
		},
	})
}
