package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/autoretry/orchestrator/internal/foundations/statefile"
	"github.com/autoretry/orchestrator/internal/views/lintcheck"
	"github.com/autoretry/orchestrator/issuequeue"
	"github.com/autoretry/orchestrator/orchestrator"
)

func init() {
	register(&command{
		name:    "lint",
		summary: "validate issue_queue.md, session_state.md and issue_archive.md",
		usage: `Usage: orchestrator lint [--dir DIR]

Validates issue_queue.md, session_state.md and issue_archive.md (if there is
one) and prints every problem at once, one per line, as FILE:LINE:COL: message
— the format editors jump to. Warnings (an ISSUE heading hidden in a comment or
code block, say) are printed too; they stop nothing. An error in one issue (a
bad value, a malformed table, an ID used twice in the queue) quarantines that
issue: every command warns about it and leaves it alone, and works on the
others. An error in the file as a whole (a code fence never closed, say) stops
every command that would change it, as does a state file that is a link, which
is reported too. The archive is a history: an issue archived more than once is
there once per copy, the newest last, and that is no problem. It also warns,
at its table in config.toml, about a Verify check whose last recorded failure
printed nothing: such a failure tells the loop nothing, and never counts
against another issue. And it warns of a person's save that a change could
not merge, kept beside its file as <name>.saved-<hex> (status lists these
too): merge it by hand, then remove the file.

It checks config.toml (or the --config file) and the ORCHESTRATOR_*
environment as every command loads them: an unknown key or section, a value
of the wrong type, a [verify.NAME] check without a command, each at its line,
with "did you mean" for near misses. And it reports an issue whose Verify
names no [verify.NAME] check, with the nearest check's name.

Exit status: 0 when the files are clean, 1 when anything was found, 2 when the
state directory is missing or the --config file cannot be read.

Examples:
    orchestrator lint
    orchestrator lint --dir ~/proj/.orchestrator
`,
		run: runLint,
	})
}

func runLint(ctx context.Context, e *env, args []string) error {
	c := commands["lint"]
	if _, err := e.parseFlags(c, flag.NewFlagSet("lint", flag.ContinueOnError), args); err != nil {
		return err
	}
	q, st, err := e.paths().Load()
	if err != nil {
		return err
	}
	cfg, cfgFindings, err := configFindings(e)
	if err != nil {
		return err
	}
	findings := q.Findings()
	if cfg != nil {
		findings = append(slices.Clip(findings), lintcheck.VerifyFindings(q, cfg)...)
	}
	findings = append(slices.Clip(findings), st.Findings()...)
	findings = append(findings, e.paths().KeptFindings()...)
	links := linkFindings(e.paths())
	a, err := e.paths().LoadArchive()
	if err != nil && len(links) == 0 {
		return err
	}
	if a != nil {
		findings = append(findings, a.Findings()...)
	}
	for _, f := range findings {
		fmt.Fprintln(e.stdout, f)
	}
	for _, c := range cfgFindings {
		fmt.Fprintln(e.stdout, c)
	}
	for _, l := range links {
		fmt.Fprintln(e.stdout, l)
	}
	silent := silentCheckFindings(e)
	for _, s := range silent {
		fmt.Fprintln(e.stdout, s)
	}
	if len(findings)+len(cfgFindings)+len(links)+len(silent) > 0 {
		return silentExit(exitNothing)
	}
	fmt.Fprintln(e.stdout, okLine(q, e.paths()))
	return nil
}

// okLine is the one-line summary of a clean queue.
func okLine(q *issuequeue.Queue, p orchestrator.Paths) string {
	pending := 0
	for _, is := range q.Issues {
		if is.PendingAutoRetry() {
			pending++
		}
	}
	return fmt.Sprintf("ok: %s: %d issue(s), %d pending auto-retry", p.Queue(), len(q.Issues), pending)
}

// linkFindings reports the files of the state directory that every write
// refuses: a symbolic link, a file with more than one hard link, anything
// but a regular file. They are checked the way the writes check them.
func linkFindings(p orchestrator.Paths) []string {
	var out []string
	report := func(err error) {
		var ue *statefile.UnsafeFileError
		if errors.As(err, &ue) {
			out = append(out, fmt.Sprintf("%s:1:1: %s", ue.Path, ue.Reason))
		}
	}
	for _, path := range []string{p.Queue(), p.State(), p.Archive()} {
		report(statefile.Check(path))
	}
	for _, path := range []string{filepath.Join(p.Dir, statefile.LockFile), p.Ledger(), p.TextLog(), p.History()} {
		f, err := statefile.OpenNoLink(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			f.Close()
		}
		report(err)
	}
	return out
}
