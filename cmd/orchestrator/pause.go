package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/autoretry/orchestrator/orchestrator"
)

func init() {
	register(&command{
		name:      "pause",
		forPeople: true,
		summary:   "stop every loop until 'orchestrator resume' (or for a while)",
		usage: `Usage: orchestrator pause [--for DURATION] [--dir DIR]

Pauses every loop, regular and auto-retry: while paused, 'orchestrator run'
stops before its first loop (exit 0, reason paused) and 'orchestrator check'
starts no auto-retry loop. A run in progress finishes the loop it is in and
starts no other. The pause is the file 'paused' in the state directory: empty
means until resumed, otherwise it holds the time the pause ends.

The no_auto_retry file, by contrast, stops only auto-retry loops: the
regular loop still runs.

Flags:
    --for DURATION   pause for a while only, e.g. 2h, 90m

Examples:
    orchestrator pause
    orchestrator pause --for 8h
    orchestrator resume
`,
		run: func(ctx context.Context, e *env, args []string) error {
			c := commands["pause"]
			fs := flag.NewFlagSet("pause", flag.ContinueOnError)
			dur := fs.Duration("for", 0, "")
			if err := e.noArgs(c, fs, args); err != nil {
				return err
			}
			if *dur < 0 {
				return usageErr(c, "--for must be a positive duration, e.g. 2h")
			}
			o, err := e.engine("pause")
			if err != nil {
				return err
			}
			var until time.Time
			if *dur > 0 {
				now, err := e.now()
				if err != nil {
					return err
				}
				until = now.Add(*dur).UTC().Truncate(time.Second)
			}
			// A run in progress is told, so that its loop guard keeps the
			// pause even if the loop deletes it.
			if err := o.TellRun(orchestrator.PauseChange(until), func() error { return o.Pause(until) }); err != nil {
				return err
			}
			if until.IsZero() {
				fmt.Fprintln(e.stdout, "Paused: no loop starts until '"+self+" resume'.")
			} else {
				fmt.Fprintf(e.stdout, "Paused until %s: no loop starts before then.\n", until.Local().Format("2006-01-02 15:04"))
			}
			return nil
		},
	})
	register(&command{
		name:      "resume",
		forPeople: true,
		summary:   "lift a pause",
		usage: `Usage: orchestrator resume [--dir DIR]

Lifts 'orchestrator pause': loops run again from the next run or check.

Examples:
    orchestrator resume
`,
		run: func(ctx context.Context, e *env, args []string) error {
			c := commands["resume"]
			o, err := e.noArgsEngine(c, nil, args)
			if err != nil {
				return err
			}
			// The pause is lifted under the write lock, which the loop guard
			// holds while it compares: the guard sees it wholly before or
			// wholly after.
			var was bool
			err = o.TellRun(orchestrator.ResumeChange(), func() error {
				return o.WithWriteLock(ctx, func() (err error) {
					was, err = o.Resume()
					return err
				})
			})
			if err != nil {
				return err
			}
			if was {
				fmt.Fprintln(e.stdout, "Resumed: loops run again.")
			} else {
				fmt.Fprintln(e.stdout, "Not paused: nothing to resume.")
			}
			return nil
		},
	})
}
