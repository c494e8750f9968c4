package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/autoretry/orchestrator/issuequeue"
	"github.com/autoretry/orchestrator/orchestrator"
)

func init() {
	register(&command{
		name:    "add",
		summary: "append a new issue and print its ID",
		usage: `Usage: orchestrator add --summary S [flags]

Appends a new issue to issue_queue.md, laid out like the example, and prints
only its ID (ISSUE-<UTC date>-<NNN>), so a QA script can keep it:

    id=$(orchestrator add --summary "server fails to start" --priority critical \
         --auto-retry --blocking --verify build --details-file build.log)

An issue still open (pending, in_progress or escalated) with the same summary
(compared without case, spacing, trailing punctuation, times or hex numbers),
or with the same failure in --details-file, is not filed twice: add prints
its ID, says "already filed" on standard error, exits 0 and counts the filing
in the issue's Seen (filings, the first included) and Last-Seen fields.

Issues filed from inside a loop of 'orchestrator run' count against
[budget] issues_filed_per_day; past it, add refuses (exit 2) and the run
stops (daily_issues_filed).

Flags:
    --summary S          one line saying what is broken (required)
    --type T             bug (default), build, test, review, security, …
    --priority P         critical, high, medium (default) or low
    --auto-retry         let the end-of-loop check retry it automatically
    --blocking           it makes the build unusable: retried first
    --max-retries N      retry limit (default: [auto_retry] max_retries_by_type
                         for its type, else max_retries)
    --verify NAME        a [verify.NAME] check in config.toml that proves it fixed
    --details-file F|-   failure output for Failure Details (- reads stdin)
    --category C         free text, e.g. backend
    --source S           who filed it (default user)
    --new                file a new issue even if an open one is the same
`,
		run: runAdd,
	})
}

func runAdd(ctx context.Context, e *env, args []string) error {
	c := commands["add"]
	fs := flag.NewFlagSet("add", flag.ContinueOnError)
	var n orchestrator.NewIssue
	fs.StringVar(&n.Summary, "summary", "", "")
	fs.StringVar(&n.Type, "type", "bug", "")
	fs.StringVar(&n.Priority, "priority", "medium", "")
	fs.BoolVar(&n.AutoRetry, "auto-retry", false, "")
	fs.BoolVar(&n.Blocking, "blocking", false, "")
	fs.IntVar(&n.MaxRetries, "max-retries", -1, "")
	fs.StringVar(&n.Verify, "verify", "", "")
	details := fs.String("details-file", "", "")
	fs.StringVar(&n.Category, "category", "", "")
	fs.StringVar(&n.Source, "source", "user", "")
	fs.BoolVar(&n.New, "new", false, "")
	args, err := e.parseFlags(c, fs, args)
	if err != nil {
		return err
	}
	if len(args) > 0 {
		return usageErr(c, "add takes no arguments; did you mean --summary %q?", strings.Join(args, " "))
	}
	if strings.TrimSpace(n.Summary) == "" {
		return usageErr(c, "--summary is required")
	}
	n.Priority = strings.ToLower(n.Priority)
	if !slices.Contains(issuequeue.Priorities, n.Priority) {
		return usageErr(c, "--priority %q is not one of %s", n.Priority, strings.Join(issuequeue.Priorities, ", "))
	}
	if n.MaxRetries < -1 {
		return usageErr(c, "--max-retries must be 0 or more")
	}
	if n.Verify != "" {
		cfg, err := e.config()
		if err != nil {
			return err
		}
		if _, ok := cfg.Verify(n.Verify); !ok {
			return usageErr(c, "--verify %q: config.toml has no [verify.%s] check", n.Verify, n.Verify)
		}
	}
	if *details != "" {
		in, err := e.input(*details, "give the file with the details, or - to read standard input")
		if err != nil {
			return err
		}
		defer in.Close()
		if n.Details, err = orchestrator.ReadOutput(in, nil); err != nil {
			return withCode(exitUsage, fmt.Errorf("reading the details: %w", err))
		}
	}
	o, err := e.engine("add")
	if err != nil {
		return err
	}
	n.FromLoop = e.inLoop() != ""
	f, err := o.File(ctx, n)
	var fl *orchestrator.FilingLimitError
	if errors.As(err, &fl) {
		return withCode(exitUsage, err, fl.Hint)
	}
	if err != nil {
		return err
	}
	// The ID stays the only thing on standard output, so that
	// id=$(orchestrator add …) keeps working when the issue was filed before.
	fmt.Fprintln(e.stdout, f.ID)
	if f.Repeat {
		fmt.Fprintf(e.stderr, "orchestrator: already filed as %s (seen %d times); nothing new was added\n", f.ID, f.Seen)
	}
	return nil
}
