package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/autoretry/orchestrator/orchestrator"
)

func init() {
	register(&command{
		name:      "breaker",
		forPeople: true,
		summary:   "reset the circuit breaker",
		usage: `Usage: orchestrator breaker reset [--dir DIR]

The circuit breaker opens after [circuit_breaker] threshold failed loops in
a row; while it is open, 'orchestrator run' stops at once (reason
breaker_open) until the cooldown is over. Once you have fixed the cause,
'breaker reset' closes it and clears its count of failed loops, so the next
run starts normally and one more failure does not open it again.

Examples:
    orchestrator status            # Circuit breaker: open, 3 consecutive failed loop(s)
    orchestrator breaker reset
`,
		run: func(ctx context.Context, e *env, args []string) error {
			c := commands["breaker"]
			args, err := e.parseFlags(c, flag.NewFlagSet("breaker", flag.ContinueOnError), args)
			if err != nil {
				return err
			}
			if len(args) != 1 || args[0] != "reset" {
				return usageErr(c, "the breaker command takes one word: reset")
			}
			o, err := e.engine("breaker")
			if err != nil {
				return err
			}
			var was string
			err = o.TellRun(orchestrator.BreakerResetChange(), func() (err error) {
				was, err = o.ResetBreaker(ctx)
				return err
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "Circuit breaker closed (it was %s); its count of failed loops is 0.\n", was)
			return nil
		},
	})
}
