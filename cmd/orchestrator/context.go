package main

import (
	"context"
	"flag"
	"strings"

	"github.com/autoretry/orchestrator/orchestrator"
)

func init() {
	register(&command{
		name:    "context",
		summary: "print the retry context an agent gets for issues",
		usage: `Usage: orchestrator context ID [ID…]

Prints the retry context that an auto-retry
loop receives in the file named by ORCHESTRATOR_RETRY_CONTEXT: for each issue
its previous failures from Attempt History and Failure Details, a person's fix
instruction as high-priority guidance, and "This is retry attempt N of M".
Rendered from templates/retry_context.tmpl (override it in DIR/templates/).

Examples:
    orchestrator context ISSUE-20261122-001
    claude -p "$(orchestrator context $ORCHESTRATOR_ISSUES | cat - task.md)"
`,
		run: func(ctx context.Context, e *env, args []string) error {
			c := commands["context"]
			args, err := e.parseFlags(c, flag.NewFlagSet("context", flag.ContinueOnError), args)
			if err != nil {
				return err
			}
			if len(args) == 0 {
				return usageErr(c, "context takes one or more issue IDs")
			}
			o, err := e.engine("context")
			if err != nil {
				return err
			}
			q, _, err := e.paths().Load()
			if err != nil {
				return err
			}
			orchestrator.WarnQuarantined(e.stderr, q.QuarantineFindings())
			out, err := o.RetryContext(q, splitIDs(args))
			if err != nil {
				return err
			}
			_, err = e.stdout.Write(out)
			return err
		},
	})
}

// splitIDs accepts IDs as separate arguments or comma-separated, as in
// $ORCHESTRATOR_ISSUES.
func splitIDs(args []string) []string {
	var out []string
	for _, a := range args {
		for _, id := range strings.Split(a, ",") {
			if id = strings.TrimSpace(id); id != "" {
				out = append(out, id)
			}
		}
	}
	return out
}
