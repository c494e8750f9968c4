package main

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/autoretry/orchestrator/internal/foundations/suggest"
	"github.com/autoretry/orchestrator/signature"
)

// commandGroups orders "orchestrator help": the main job first, then what
// changes issues, then what only reads.
var commandGroups = []struct {
	title string
	names []string
}{
	{"Running loops", []string{"run", "demo", "begin", "check", "abort", "watch"}},
	{"Changing issues", []string{"add", "fail", "resolve", "retry", "skip", "fix", "archive"}},
	{"Stopping and resuming", []string{"pause", "resume", "breaker"}},
	{"Reading state", []string{"status", "explain", "lint", "context", "signature", "agent-output", "report", "diff", "replay", "logs"}},
	{"Many repositories", []string{"fleet", "serve"}},
	{"Setting up", []string{"init", "doctor", "help", "version"}},
}

func topUsage() string {
	var b strings.Builder
	b.WriteString(`orchestrator decides, at the end of every improvement loop, whether another
loop should run to fix critical issues, and stops runaway loops.

Usage:
    orchestrator [--dir DIR] [--config FILE] COMMAND [ARGS]

`)
	listed := map[string]bool{}
	for _, g := range commandGroups {
		var lines []string
		for _, n := range g.names {
			if c, ok := commands[n]; ok {
				lines = append(lines, fmt.Sprintf("    %-12s %s\n", n, c.summary))
				listed[n] = true
			}
		}
		if len(lines) > 0 {
			b.WriteString(g.title + ":\n" + strings.Join(lines, "") + "\n")
		}
	}
	for _, n := range commandNames() {
		if !listed[n] {
			fmt.Fprintf(&b, "    %-12s %s\n", n, commands[n].summary)
		}
	}
	b.WriteString(`Global flags (before or after the command):
    --dir DIR       state directory (default $ORCHESTRATOR_DIR, else .orchestrator)
    --config FILE   configuration file (default DIR/config.toml)

Exit codes:
    0  success; for check: run another loop
    1  check: nothing needs a loop; lint, doctor: findings
    2  bad usage, bad config, an invalid state file or an invalid issue
       named by the command: nothing was changed
    3  stopped by a safeguard or a human is needed
    4  busy: another orchestrator holds the lock

Run 'orchestrator help COMMAND' for details and examples.
`)
	return b.String()
}

func init() {
	register(&command{
		name:    "help",
		summary: "show help for orchestrator or one command",
		usage: `Usage: orchestrator help [COMMAND]

Shows the list of commands, or the full help of one command, with examples.
"orchestrator COMMAND -h" shows the same.

Examples:
    orchestrator help
    orchestrator help run
`,
		run: runHelp,
	})
	register(&command{
		name:    "version",
		summary: "print the version",
		usage: `Usage: orchestrator version     (also: orchestrator --version, -v)

Prints the version of this build, the commit it was built from, the Go
version, and the failure-signature rule set. A release build sets the
version with -ldflags "-X main.version=v1.2.3"; a 'go install …@v1.2.3'
build reads it from the module.
`,
		run: runVersion,
	})
}

func runHelp(ctx context.Context, e *env, args []string) error {
	args, err := e.parseFlags(commands["help"], flag.NewFlagSet("help", flag.ContinueOnError), args)
	if err != nil {
		return err
	}
	if len(args) == 0 {
		fmt.Fprint(e.stdout, topUsage())
		return nil
	}
	c, ok := commands[args[0]]
	if !ok {
		hint := "run '" + self + " help' for the list of commands"
		if near := suggest.Nearest(args[0], commandNames()); near != "" {
			hint = "did you mean '" + self + " help " + near + "'?"
		}
		return withCode(exitUsage, fmt.Errorf("unknown command %q", args[0]), hint)
	}
	fmt.Fprint(e.stdout, c.usage)
	return nil
}

// version and commit are set by release builds (scripts/release.sh):
// -ldflags "-X main.version=v1.2.3 -X main.commit=abc123".
var version, commit = "", ""

func runVersion(ctx context.Context, e *env, args []string) error {
	if _, err := e.parseFlags(commands["version"], flag.NewFlagSet("version", flag.ContinueOnError), args); err != nil {
		return err
	}
	v, rev, goVersion := version, commit, runtime.Version()
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v == "" && bi.Main.Version != "" {
			v = bi.Main.Version
		}
		for _, st := range bi.Settings {
			switch st.Key {
			case "vcs.revision":
				if rev == "" {
					rev = st.Value[:min(12, len(st.Value))]
				}
			case "vcs.modified":
				if st.Value == "true" && commit == "" {
					rev += "+dirty"
				}
			}
		}
	}
	if v == "" {
		v = "(devel)"
	}
	if rev == "" || strings.HasPrefix(rev, "+") {
		rev = "unknown"
	}
	fmt.Fprintf(e.stdout, "orchestrator %s\ncommit %s\n%s\nsignature rules %s\n", v, rev, goVersion, signature.Current)
	return nil
}
