package main

import (
	"context"
	"encoding/json"
	"flag"

	"github.com/autoretry/orchestrator/orchestrator"
)

func init() {
	register(&command{
		name:    "explain",
		summary: "why the next loop will or will not run, rule by rule",
		usage: `Usage: orchestrator explain [ID…] [--json] [--dir DIR]

Decides as the next 'orchestrator run' and the next 'orchestrator check'
would, and changes nothing. For each rule it prints what it read now, its
limit and its verdict; then, for each issue waiting for an auto-retry (or for
each issue named), whether it would be retried and why not. Long reasons
wrap to fit the terminal, as wide as 'orchestrator status' finds it; to a
pipe or a file, nothing wraps unless $COLUMNS is set.

The rules a loop start depends on, in the order they apply:
    paused              a person ran 'orchestrator pause' (all loops)
    breaker_open        the circuit breaker is open (run only)
    rate_limited        inside a rate-limit window a loop's reset hint opened
    sentinel            no_auto_retry exists (auto-retry loops only)
    disabled            auto_retry_enabled is false (auto-retry loops only)
    daily_loops         [budget] loops_per_day over the last 24 hours
    daily_agent_time    [budget] agent_time_per_day
    daily_cost          [budget] cost_per_day
    daily_auto_retries  [budget] auto_retry_loops_per_day
    max_loops           [loop] max_loops of this run (run only)
    run_cap             [auto_retry] global_cap of this run
Per issue: max_retries, repeated_failure_across_issues (and, when a failure
is recorded, repeated_failure and oscillation).

Flags:
    --json    one JSON object: {"run": {...}, "check": {...}}; check.outcome
              and check.code are what 'orchestrator check --json' would say

Examples:
    orchestrator explain
    orchestrator explain ISSUE-20261122-001 --json
`,
		run: func(ctx context.Context, e *env, args []string) error {
			c := commands["explain"]
			fs := flag.NewFlagSet("explain", flag.ContinueOnError)
			asJSON := fs.Bool("json", false, "")
			args, err := e.parseFlags(c, fs, args)
			if err != nil {
				return err
			}
			o, err := e.engine("explain")
			if err != nil {
				return err
			}
			ex, err := o.Explain(splitIDs(args))
			if err != nil {
				return err
			}
			if *asJSON {
				// The last run's loops and the progress rules, beside the
				// decisions.
				pr, err := orchestrator.LastProgress(o.Dir, o.Config)
				if err != nil {
					return err
				}
				return json.NewEncoder(e.stdout).Encode(struct {
					orchestrator.Explanation
					Progress *orchestrator.ProgressReport `json:"progress,omitempty"`
				}{ex, pr})
			}
			// Reasons and hints are long: they wrap inside their
			// column to fit the terminal.
			return ex.PrintWidth(e.stdout, e.outputWidth())
		},
	})
}
