package main

import (
	"context"
	"flag"
)

func init() {
	register(&command{
		name:    "resolve",
		summary: "mark an issue resolved",
		usage: `Usage: orchestrator resolve ID

Sets the issue's Status to resolved. If it took auto-retries, prints the
SUCCEEDED banner ("Issue fixed after N retry attempt(s).").

Examples:
    orchestrator resolve ISSUE-20261122-001
`,
		run: func(ctx context.Context, e *env, args []string) error {
			c := commands["resolve"]
			args, err := e.parseFlags(c, flag.NewFlagSet("resolve", flag.ContinueOnError), args)
			if err != nil {
				return err
			}
			if len(args) != 1 {
				return usageErr(c, "resolve takes one issue ID")
			}
			o, err := e.engine("resolve")
			if err != nil {
				return err
			}
			return o.Resolve(ctx, args[0])
		},
	})
}
