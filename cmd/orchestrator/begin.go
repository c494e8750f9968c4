package main

import (
	"context"
	"fmt"
)

func init() {
	register(&command{
		name:    "begin",
		summary: "open a run, for scripts that drive the loop themselves",
		usage: `Usage: orchestrator begin [--dir DIR]

Opens a run: resets the run's counters (total_auto_retries, last_retry_reason
and the Run section of session_state.md) and prints the run id. The circuit
breaker and auto_retry_enabled are kept. Exit 4 if an 'orchestrator run' is
running.

Examples (a whole driver in a crontab line):
    orchestrator begin && ./agent.sh; while orchestrator check; do ./agent.sh; done
`,
		run: func(ctx context.Context, e *env, args []string) error {
			c := commands["begin"]
			o, err := e.noArgsEngine(c, nil, args)
			if err != nil {
				return err
			}
			id, err := o.Begin(ctx)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "run %s\n", id)
			return nil
		},
	})
}
