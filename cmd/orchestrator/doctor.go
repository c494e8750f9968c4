package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"

	"github.com/autoretry/orchestrator/internal/views/lintcheck"
	"github.com/autoretry/orchestrator/orchestrator"
)

func init() {
	register(&command{
		name:    "doctor",
		summary: "check the setup end to end and say what to fix",
		usage: `Usage: orchestrator doctor [--json] [--dir DIR]

Checks the setup end to end, beyond what lint checks of each file, and says
for each problem found what to do:

  - the loop command resolves: its first word is an executable file, a
    program on PATH or a shell builtin;
  - the agent [agent] kind names is the one the last loops' output showed;
  - a cost budget (budget.cost_per_day, shared_budget.cost_per_day,
    budget.issue_cost, progress.spend_cost) is set while the agent reported
    no cost in its last 10 loops: it would never be spent;
  - every brake is off: no daily budget, and max_loops, the global cap or
    the circuit breaker too large (or 0) to stop a runaway;
  - a state file belongs to another user than the one running: a person's
    editor and the tool then do not share a user;
  - the event log the budgets count from cannot be read;
  - the configuration's errors, and an issue whose Verify names no check,
    as lint reports them.

It changes nothing and takes no lock.

Flags:
    --json   print {"findings": [{"check", "severity", "message", "hint"}]}

Exit status: 0 when nothing was found, 1 when anything was, 2 when the state
directory is missing.

Examples:
    orchestrator doctor
    orchestrator doctor --json | jq '.findings[].check'
`,
		run: runDoctor,
	})
}

func runDoctor(ctx context.Context, e *env, args []string) error {
	c := commands["doctor"]
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "")
	if err := e.noArgs(c, fs, args); err != nil {
		return err
	}
	q, _, err := e.paths().Load()
	if err != nil {
		return err
	}
	cfg, problems, err := configFindings(e)
	if err != nil {
		return err
	}
	findings := []orchestrator.DoctorFinding{}
	for _, p := range problems {
		findings = append(findings, orchestrator.DoctorFinding{Check: "config", Severity: orchestrator.SeverityError, Message: p,
			Hint: "fix the configuration; '" + self + " lint' lists every problem"})
	}
	if cfg != nil {
		for _, f := range lintcheck.VerifyFindings(q, cfg) {
			findings = append(findings, orchestrator.DoctorFinding{Check: "verify", Severity: orchestrator.SeverityWarning, Message: f.String(),
				Hint: "name a [verify.NAME] check of config.toml in the issue's Verify, or add the check"})
		}
		o, err := e.engine("doctor")
		if err != nil {
			return err
		}
		findings = append(findings, o.Doctor(e.getenv)...)
	}
	if *asJSON {
		if err := json.NewEncoder(e.stdout).Encode(struct {
			Findings []orchestrator.DoctorFinding `json:"findings"`
		}{findings}); err != nil {
			return err
		}
	} else {
		for _, f := range findings {
			fmt.Fprintf(e.stdout, "%s: %s: %s\n  hint: %s\n", f.Severity, f.Check, f.Message, f.Hint)
		}
		if len(findings) == 0 {
			fmt.Fprintln(e.stdout, "ok: no problem found in "+e.dir)
		}
	}
	if len(findings) > 0 {
		return silentExit(exitNothing)
	}
	return nil
}
