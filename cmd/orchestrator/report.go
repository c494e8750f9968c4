package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"

	"github.com/autoretry/orchestrator"
	"github.com/autoretry/orchestrator/issuequeue"
	analytics "github.com/autoretry/orchestrator/report"
)

func init() {
	register(&command{
		name:    "report",
		summary: "write analytics.html: loops, retries and escalations at a glance",
		usage: `Usage: orchestrator report [--out FILE] [--dir DIR]

Writes analytics.html, one self-contained page made from history.csv,
logs/retry.jsonl, issue_queue.md and issue_archive.md: loops per run, the
outcome of every loop, retries and outcome per issue, repeat-signature
streaks, time to resolution, first-attempt success, escalations and the
retry summary. Charts are inline SVG and the styles inline CSS; the page has
no scripts and loads nothing, so it opens offline, from a mail or a CI
artifact, on a phone or a wide screen.

The file is replaced atomically (a browser never sees half a page), and its
path is printed. The command only reads the state files and takes no lock.
Records that cannot be read are listed at the top of the page and on stderr.

Flags:
    --out FILE   where to write the page (default DIR/analytics.html)

Examples:
    orchestrator report
    orchestrator report --out /var/www/html/loops.html
    xdg-open "$(orchestrator --dir /srv/app/.orchestrator report)"
`,
		run: runReport,
	})
}

func runReport(ctx context.Context, e *env, args []string) error {
	c := commands["report"]
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	out := fs.String("out", "", "")
	args, err := e.parseFlags(c, fs, args)
	if err != nil {
		return err
	}
	if len(args) > 0 {
		return usageErr(c, "report takes no arguments, got %q", args[0])
	}
	now, err := e.now()
	if err != nil {
		return err
	}
	in, err := analytics.Load(e.dir, now)
	if err != nil {
		return err
	}
	cfg, err := e.config()
	if err != nil {
		return err
	}
	in.MaxRetries = func(is *issuequeue.Issue) int { return orchestrator.MaxRetries(cfg, is) }
	if u, err := orchestrator.ReadUsage(e.dir, now); err == nil {
		in.Budgets = orchestrator.Budgets(cfg, u)
	} else {
		in.Problems = append(in.Problems, err)
	}
	path := *out
	if path == "" {
		path = filepath.Join(e.dir, "analytics.html")
	}
	if err := analytics.WriteFile(path, in); err != nil {
		return withCode(exitUsage, err, "check that the directory of --out exists and is writable")
	}
	for _, p := range in.Problems {
		fmt.Fprintf(e.stderr, "orchestrator: warning: %v\n", p)
	}
	fmt.Fprintln(e.stdout, path)
	return nil
}
