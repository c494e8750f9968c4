package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/autoretry/orchestrator/internal/adapters/agentout"
)

func init() {
	register(&command{
		name:    "agent-output",
		streams: true,
		summary: "show what a coding agent's output says: cost, tokens, errors, limits",
		usage: `Usage: orchestrator agent-output [--agent KIND] [--at TIME] [--json] [FILE|-]

Reads the output of a coding agent (FILE, or standard input when FILE is "-"
or missing) as "orchestrator run" reads each loop's output, and shows what
it says: the cost the agent stated, its tokens, whether it ended in an
error and of which kind (max_turns, budget, execution, rate_limit,
usage_limit, overloaded, auth), and a rate or usage limit with the instant
it lifts. Use it on a loop's log in logs/loops/ to see why a run stopped,
or on a sample before setting [agent] kind.

It exits 0 whenever it could read the input, whatever the input says; 2
for bad usage or a file it cannot read.

Flags:
    --agent KIND   claude, codex, gemini, aider, opencode, or auto (default:
                   recognised from the output)
    --at TIME      the instant the output was produced (RFC 3339), against
                   which "resets in 3h" or "resets 3pm" is read (default:
                   now, or $ORCHESTRATOR_NOW); a time without a zone in the
                   output is local time
    --json         print one JSON object:
                   {"agent": K, "cost_usd": N|null,
                    "tokens": {"input": N, "output": N, "cache_read": N, "cache_write": N},
                    "error": bool, "error_kind": S|null,
                    "limit": {"until": RFC3339|null, "text": S}|null}
                   (a count the agent did not state is null)

Examples:
    orchestrator agent-output .orchestrator/logs/loops/20261122T101500-4242-01.log
    claude -p --output-format stream-json --verbose "hi" | orchestrator agent-output --agent claude
    orchestrator agent-output --json --at 2026-05-12T05:00:00Z session.jsonl
`,
		run: runAgentOutput,
	})
}

func runAgentOutput(ctx context.Context, e *env, args []string) error {
	c := commands["agent-output"]
	fs := flag.NewFlagSet("agent-output", flag.ContinueOnError)
	agent := fs.String("agent", "auto", "")
	atFlag := fs.String("at", "", "")
	asJSON := fs.Bool("json", false, "")
	args, err := e.parseFlags(c, fs, args)
	if err != nil {
		return err
	}
	if len(args) > 1 {
		return usageErr(c, "agent-output takes one FILE, got %d", len(args))
	}
	kind, err := agentout.ParseKind(*agent)
	if err != nil {
		return usageErr(c, "--agent: %v", err)
	}
	var at time.Time
	if *atFlag != "" {
		at, err = time.Parse(time.RFC3339, *atFlag)
		if err != nil {
			return usageErr(c, "--at %q is not an RFC 3339 time such as 2026-11-22T10:15:00Z", *atFlag)
		}
	} else if at, err = e.now(); err != nil {
		return err
	}
	name, in, err := e.inputArg(args)
	if err != nil {
		return err
	}
	defer in.Close()
	r := agentout.NewReader(kind, at, time.Local)
	if _, err := io.Copy(r, in); err != nil {
		return withCode(exitUsage, fmt.Errorf("reading %s: %w", name, err))
	}
	rep := r.Report()
	if *asJSON {
		_, err := fmt.Fprintf(e.stdout, "%s\n", rep.JSON())
		return err
	}
	_, err = io.WriteString(e.stdout, describeReport(rep, at))
	return err
}

// describeReport is the short listing agent-output prints for people.
func describeReport(rep agentout.Report, now time.Time) string {
	var b strings.Builder
	line := func(k, v string) { fmt.Fprintf(&b, "%-8s %s\n", k+":", v) }
	line("agent", string(rep.Agent))
	if rep.CostUSD != nil {
		line("cost", "$"+strconv.FormatFloat(*rep.CostUSD, 'f', -1, 64))
	} else {
		line("cost", "not stated")
	}
	t := rep.Tokens
	if t.Known() {
		var parts []string
		add := func(has bool, n int64, what string) {
			if has {
				parts = append(parts, strconv.FormatInt(n, 10)+" "+what)
			}
		}
		add(t.HasInput, t.Input, "input")
		add(t.HasOutput, t.Output, "output")
		add(t.HasCacheRead, t.CacheRead, "cache read")
		add(t.HasCacheWrite, t.CacheWrite, "cache write")
		line("tokens", strings.Join(parts, ", "))
	} else {
		line("tokens", "not stated")
	}
	switch {
	case rep.ErrorKind != "":
		line("error", rep.ErrorKind)
	case rep.Error:
		line("error", "yes (kind not said)")
	default:
		line("error", "none")
	}
	if l := rep.Limit; l != nil {
		when := "lifts at a time not stated"
		if !l.Until.IsZero() {
			when = "until " + l.Until.UTC().Format(time.RFC3339)
			if d := l.Until.Sub(now); d > 0 {
				when += " (in " + d.Round(time.Minute).String() + ")"
			}
		}
		line("limit", when+": "+l.Text)
	}
	if w := rep.Window; w != nil {
		s := w.Name
		if w.Used != nil {
			s += fmt.Sprintf(", %.0f%% used", *w.Used*100)
		}
		if w.Status != "" {
			s += ", " + w.Status
		}
		if !w.ResetsAt.IsZero() {
			s += ", resets " + w.ResetsAt.UTC().Format(time.RFC3339)
		}
		line("window", strings.TrimPrefix(s, ", "))
	}
	return b.String()
}
