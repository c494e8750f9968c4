package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	analytics "github.com/autoretry/orchestrator/internal/views/report"
	"github.com/autoretry/orchestrator/issuequeue"
	"github.com/autoretry/orchestrator/orchestrator"
)

func init() {
	register(&command{
		name:    "report",
		summary: "write analytics.html: loops, retries and escalations at a glance",
		usage: `Usage: orchestrator report [--out FILE] [--since DURATION] [--dir DIR]

Writes analytics.html, one self-contained page made from the history
(history.csv and the months rotated out of it, history-YYYY-MM.csv),
logs/retry.jsonl, issue_queue.md and issue_archive.md: loops per run, the
outcome of every loop, retries and outcome per issue, repeat-signature
streaks, time to resolution, first-attempt success, escalations and the
retry summary. An issue archived more than once is one issue on the page,
as its newest copy (the last in the archive) describes it. Charts are inline SVG and the styles inline CSS; the page has
no scripts and loads nothing, so it opens offline, from a mail or a CI
artifact, on a phone or a wide screen.

The page says what period it covers. The history is read a row at a time
and aggregated, so a long history costs time in proportion, not memory.

The file is replaced atomically (a browser never sees half a page), and its
path is printed. The command only reads the state files and takes no lock.
Records that cannot be read are listed at the top of the page and on stderr.

Flags:
    --out FILE        where to write the page (default DIR/analytics.html)
    --since DURATION  cover only the last DURATION: the loops that finished
                      and the events logged in it, the issues of the queue,
                      and the archived ones filed in it or named by its
                      events (Go syntax such as "36h", or whole days: "30d")

Examples:
    orchestrator report
    orchestrator report --since 7d
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
	sinceFlag := fs.String("since", "", "")
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
	since, err := sinceStart(c, *sinceFlag, func() (time.Time, error) { return now, nil })
	if err != nil {
		return err
	}
	in, err := analytics.LoadSince(e.dir, now, since)
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
	for _, p := range in.AllProblems() {
		fmt.Fprintf(e.stderr, "orchestrator: warning: %v\n", p)
	}
	fmt.Fprintln(e.stdout, path)
	return nil
}

// sinceStart is where the window of a --since flag starts, now less the
// window; the zero time when the flag is empty, and then now is not asked.
func sinceStart(c *command, flag string, now func() (time.Time, error)) (time.Time, error) {
	if flag == "" {
		return time.Time{}, nil
	}
	d, err := parseSince(flag)
	if err != nil {
		return time.Time{}, usageErr(c, "--since %v", err)
	}
	t, err := now()
	if err != nil {
		return time.Time{}, err
	}
	return t.Add(-d), nil
}

// parseSince reads a --since window: a Go duration ("36h", "90m") or whole
// days ("30d").
func parseSince(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if days, ok := strings.CutSuffix(s, "d"); ok && err != nil {
		n, nerr := strconv.Atoi(days)
		if nerr == nil && n > 0 && n <= 100*366 {
			return time.Duration(n) * 24 * time.Hour, nil
		}
	}
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not a positive duration (use \"36h\" or \"30d\")", s)
	}
	return d, nil
}
