package main

import (
	"context"
	"encoding/json"
	"flag"

	"github.com/autoretry/orchestrator/orchestrator"
)

func init() {
	register(&command{
		name:    "check",
		summary: "the end-of-loop check: should another loop run?",
		usage: `Usage: orchestrator check [--json] [--dir DIR]

The end-of-loop check, for scripts that drive the loop themselves. Under the
lock it reads issue_queue.md and decides:

  - auto-retry disabled (the no_auto_retry file exists, or auto_retry_enabled
    is false in session_state.md): says why and changes nothing; exit 3 if an
    issue would otherwise be retried, else 1
  - issues that used all their retries (Retry-Count >= Max-Retries) are
    escalated, with the EXHAUSTED banner
  - the run's global cap reached: the cap message, exit 3
  - otherwise every pending Auto-Retry issue gets Retry-Count + 1 and Status
    in_progress, total_auto_retries + 1, the TRIGGERED banner, exit 0

An issue with errors of its own (a bad value, a misspelt field name, an ID
used twice) is quarantined: a warning on stderr names the problem, and the
check leaves it alone and decides on the others ("quarantined" in --json).

Exit status: 0 run another loop; 1 nothing needs one; 3 a person is needed
(escalated, cap, or disabled with work waiting); 2 bad state file; 4 busy.

Flags:
    --json    print one JSON object (outcome, triggered, exhausted, …)

Examples:
    orchestrator begin && ./agent.sh
    while orchestrator check; do ./agent.sh; done
`,
		run: runCheck,
	})
}

func runCheck(ctx context.Context, e *env, args []string) error {
	c := commands["check"]
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "")
	if _, err := e.parseFlags(c, fs, args); err != nil {
		return err
	}
	o, err := e.engine("check")
	if err != nil {
		return err
	}
	if *asJSON {
		o.Stdout = e.stderr // banners for people; stdout carries the JSON object
	}
	rep, err := o.Check(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		if err := json.NewEncoder(e.stdout).Encode(rep); err != nil {
			return err
		}
	}
	d := rep.Decision
	switch {
	case d.Outcome == orchestrator.CheckRetry:
		return nil
	case d.Stop == nil:
		return silentExit(exitNothing)
	case d.Outcome == orchestrator.CheckNothing:
		// A pause or a rate-limit window with work waiting: no loop now,
		// nothing wrong.
		return &exitError{code: exitNothing, err: orchestrator.StopFor(d.Stop), hints: []string{d.Stop.Hint}}
	}
	return orchestrator.StopFor(d.Stop)
}
