package main

import (
	"context"
	"flag"
	"strings"

	"github.com/autoretry/orchestrator/orchestrator"
)

func init() {
	register(&command{
		name:      "retry",
		forPeople: true,
		summary:   "give an escalated or halted issue a fresh start",
		usage: `Usage: orchestrator retry ID

A person's answer to an escalation: the issue starts again from attempt 1
(Retry-Count 0, Halted false, Signature-Repeat-Count 0, Status pending), so the
next check retries it. Logged as a user response.

Examples:
    orchestrator retry ISSUE-20261122-001
`,
		run: func(ctx context.Context, e *env, args []string) error {
			c := commands["retry"]
			id, o, err := e.oneIDEngine(c, nil, args)
			if err != nil {
				return err
			}
			return o.TellRun(orchestrator.RetryChange(id), func() error { return o.Retry(ctx, id) })
		},
	})
	register(&command{
		name:      "skip",
		forPeople: true,
		summary:   "give up on an issue",
		usage: `Usage: orchestrator skip ID [--reason R]

Sets the issue's Status to skipped: it is never retried again. The reason is
logged with the user response.

Examples:
    orchestrator skip ISSUE-20261122-001 --reason "flaky upstream, tracked elsewhere"
`,
		run: func(ctx context.Context, e *env, args []string) error {
			c := commands["skip"]
			fs := flag.NewFlagSet("skip", flag.ContinueOnError)
			reason := fs.String("reason", "", "")
			id, o, err := e.oneIDEngine(c, fs, args)
			if err != nil {
				return err
			}
			return o.TellRun(orchestrator.SkipChange(id), func() error { return o.Skip(ctx, id, *reason) })
		},
	})
	register(&command{
		name:      "fix",
		forPeople: true,
		summary:   "retry an issue with your instruction",
		usage: `Usage: orchestrator fix ID "instruction"

A person's answer to an escalation with guidance: the instruction is stored in
the issue's "Fix Instruction" section, where the retry context puts it first,
as high-priority guidance; then the issue is retried from attempt 1 as with
'orchestrator retry'.

Examples:
    orchestrator fix ISSUE-20261122-001 "check for whitespace with .trim() before validating"
`,
		run: func(ctx context.Context, e *env, args []string) error {
			c := commands["fix"]
			args, err := e.parseFlags(c, flag.NewFlagSet("fix", flag.ContinueOnError), args)
			if err != nil {
				return err
			}
			if len(args) < 2 {
				return usageErr(c, "fix takes an issue ID and an instruction")
			}
			o, err := e.engine("fix")
			if err != nil {
				return err
			}
			return o.TellRun(orchestrator.FixChange(args[0]), func() error { return o.Fix(ctx, args[0], strings.Join(args[1:], " ")) })
		},
	})
}
