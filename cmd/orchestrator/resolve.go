package main

import (
	"context"
)

func init() {
	register(&command{
		name:    "resolve",
		summary: "mark an issue resolved",
		usage: `Usage: orchestrator resolve ID

Sets the issue's Status to resolved. If it took auto-retries, prints the
SUCCEEDED banner ("Issue fixed after N retry attempt(s).").

Run by the loop of 'orchestrator run', resolve is a claim: an issue with a
Verify check keeps its Status until the tool's own verification passes; one
without is resolved and recorded as resolved by the loop, unverified.

Examples:
    orchestrator resolve ISSUE-20261122-001
`,
		run: func(ctx context.Context, e *env, args []string) error {
			c := commands["resolve"]
			id, o, err := e.oneIDEngine(c, nil, args)
			if err != nil {
				return err
			}
			if e.inLoop() != "" {
				return o.ResolveFromLoop(ctx, id)
			}
			return o.Resolve(ctx, id)
		},
	})
}
