package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/autoretry/orchestrator/internal/foundations/columns"
	"github.com/autoretry/orchestrator/issuequeue"
	"github.com/autoretry/orchestrator/orchestrator"
)

func init() {
	register(&command{
		name:    "status",
		summary: "show the queue, the run and the circuit breaker",
		usage: `Usage: orchestrator status [--limit N | --all] [--status S] [--json] [--dir DIR]

Shows the issue queue (counts by status; every open issue in retry order with
its retries, repeat count and whether it is halted), whether auto-retry is
enabled and why not, the current or last run, and the circuit breaker.
It only reads; it takes no lock and is fast enough to call from a prompt.

It fits the terminal: as wide as the terminal it writes to says (else
$COLUMNS, else 80 columns), 24 lines unless $LINES says otherwise.
Summaries are cut to the width, longer lines wrapped, and when more open
issues exist than fit, the first ones in retry order are listed with a
line saying how many more there are. Written to a pipe or a file, no line
is cut or wrapped unless $COLUMNS is set.

Flags:
    --limit N    list at most N issues
    --all        list every issue that matches
    --status S   list only issues with Status S (pending, in_progress,
                 resolved, escalated, skipped; resolved and skipped
                 issues are listed only when asked for), or the
                 quarantined ones: issues with errors of their own,
                 which every command leaves alone until a person fixes
                 them (listed first, always)
    --json       print one JSON object instead, for scripts (every issue
                 that matches; --limit applies)

Examples:
    orchestrator status
    orchestrator status --json | jq '.issues[] | select(.halted)'
`,
		run: runStatus,
	})
}

type statusIssue struct {
	ID          string `json:"id"`
	Summary     string `json:"summary"`
	Priority    string `json:"priority"`
	Status      string `json:"status"`
	Blocking    bool   `json:"blocking"`
	AutoRetry   bool   `json:"auto_retry"`
	RetryCount  int    `json:"retry_count"`
	MaxRetries  int    `json:"max_retries"`
	RepeatCount int    `json:"signature_repeat_count"`
	Halted      bool   `json:"halted"`
	// Seen is how many times the issue was filed, when more than once.
	Seen int `json:"seen,omitempty"`
	// Problems are the errors that quarantine the issue.
	Problems []string `json:"problems,omitempty"`
}

// statusQuarantined is the Status status shows for an issue with errors of
// its own, which no command changes or retries.
const statusQuarantined = "quarantined"

type statusReport struct {
	Dir              string         `json:"dir"`
	Counts           map[string]int `json:"counts"`
	Issues           []statusIssue  `json:"issues"`
	AutoRetryEnabled bool           `json:"auto_retry_enabled"`
	DisabledReason   string         `json:"disabled_reason,omitempty"`
	TotalAutoRetries int            `json:"total_auto_retries"`
	GlobalCap        int            `json:"global_cap"`
	Run              struct {
		ID         string `json:"id"`
		StartedAt  string `json:"started_at"`
		FinishedAt string `json:"finished_at"`
		Loops      int    `json:"loops"`
		Outcome    string `json:"outcome"`
	} `json:"run"`
	Breaker struct {
		State               string `json:"state"`
		ConsecutiveFailures int    `json:"consecutive_failures"`
		OpenedAt            string `json:"opened_at"`
	} `json:"circuit_breaker"`
	Budgets []orchestrator.Budget `json:"budgets"`
	// Progress is how the last run's loops went; omitted before any loop
	// was judged.
	Progress       *orchestrator.ProgressReport `json:"progress,omitempty"`
	PausedUntil    string                       `json:"paused_until,omitempty"` // "indefinitely" or a time
	RateLimitUntil string                       `json:"rate_limited_until,omitempty"`
	Findings       []string                     `json:"findings"`
	More           int                          `json:"more,omitempty"` // matching issues not listed
	width          int
}

// termSize returns the terminal's size for status: its width as
// outputWidth finds it (at least 40; 0 for no limit), its height from
// $LINES, else 24.
func termSize(e *env) (width, height int) {
	width, height = e.outputWidth(), 24
	if width > 0 {
		width = max(width, 40)
	}
	if n, err := strconv.Atoi(e.getenv("LINES")); err == nil && n >= 10 {
		height = n
	}
	return width, height
}

func runStatus(ctx context.Context, e *env, args []string) error {
	c := commands["status"]
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "")
	limit := fs.Int("limit", -1, "")
	all := fs.Bool("all", false, "")
	only := fs.String("status", "", "")
	if _, err := e.parseFlags(c, fs, args); err != nil {
		return err
	}
	if *only != "" && *only != statusQuarantined && !slices.Contains(issuequeue.Statuses, *only) {
		return usageErr(c, "--status %q is not a status (%s, %s)", *only, strings.Join(issuequeue.Statuses, ", "), statusQuarantined)
	}
	p := e.paths()
	q, st, err := p.Load()
	if err != nil {
		return err
	}
	orchestrator.WarnQuarantined(e.stderr, q.QuarantineFindings())
	cfg, err := e.config()
	if err != nil {
		return err
	}
	r := statusReport{Dir: e.dir, Counts: map[string]int{}, GlobalCap: cfg.AutoRetry.GlobalCap, Issues: []statusIssue{}, Findings: []string{}}
	for _, s := range issuequeue.Statuses {
		r.Counts[s] = 0
	}
	r.Counts[statusQuarantined] = len(q.Quarantined)
	var open []*issuequeue.Issue
	for _, is := range q.Issues {
		r.Counts[is.Status]++
		switch {
		case *only != "":
			if is.Status == *only {
				open = append(open, is)
			}
		case is.Status != issuequeue.StatusResolved && is.Status != issuequeue.StatusSkipped:
			open = append(open, is)
		}
	}
	orchestrator.SortForRetry(open)
	width, height := termSize(e)
	switch {
	case *limit >= 0:
	case *all || *asJSON:
		*limit = len(open)
	default:
		*limit = max(3, height-12) // the lines around the table
	}
	// Quarantined issues come first: each needs a person.
	var bad []*issuequeue.Issue
	if *only == "" || *only == statusQuarantined {
		bad = q.Quarantined
	}
	open = append(slices.Clip(bad), open...)
	if len(open) > *limit {
		r.More = len(open) - *limit
		open = open[:*limit]
	}
	r.width = width
	for i, is := range open {
		si := statusIssue{ID: is.ID, Summary: is.Summary(), Priority: is.Priority, Status: is.Status,
			Blocking: is.Blocking, AutoRetry: is.AutoRetry, RetryCount: is.RetryCount, MaxRetries: orchestrator.MaxRetries(cfg, is),
			RepeatCount: is.SignatureRepeatCount, Halted: is.Halted, Seen: seenCount(is)}
		if i < len(bad) {
			si.Status = statusQuarantined
			for _, f := range is.Findings() {
				si.Problems = append(si.Problems, f.String())
			}
		}
		r.Issues = append(r.Issues, si)
	}
	r.AutoRetryEnabled = st.AutoRetryEnabled && !p.SentinelPresent()
	switch {
	case p.SentinelPresent():
		r.DisabledReason = "sentinel " + p.Sentinel() + " exists"
	case !st.AutoRetryEnabled:
		r.DisabledReason = "auto_retry_enabled is false in " + p.State()
	}
	r.TotalAutoRetries = st.TotalAutoRetries
	r.Run.ID, r.Run.Loops, r.Run.Outcome = st.RunID, st.Loops, st.Outcome
	r.Run.StartedAt, r.Run.FinishedAt = issuequeue.FormatTime(st.StartedAt), issuequeue.FormatTime(st.FinishedAt)
	r.Breaker.State, r.Breaker.ConsecutiveFailures = st.Breaker, st.ConsecutiveFailures
	r.Breaker.OpenedAt = issuequeue.FormatTime(st.OpenedAt)
	now, err := e.now()
	if err != nil {
		return err
	}
	u, err := orchestrator.ReadUsage(e.dir, now)
	if err != nil {
		return err
	}
	r.Budgets = orchestrator.Budgets(cfg, u)
	if *asJSON {
		if r.Progress, err = orchestrator.LastProgress(e.dir, cfg); err != nil {
			return err
		}
	}
	if pz, err := orchestrator.ReadPause(e.dir); err == nil && pz.Paused && (pz.Until.IsZero() || now.Before(pz.Until)) {
		r.PausedUntil = "indefinitely"
		if !pz.Until.IsZero() {
			r.PausedUntil = issuequeue.FormatTime(pz.Until)
		}
	}
	if now.Before(st.LimitedUntil) {
		r.RateLimitUntil = issuequeue.FormatTime(st.LimitedUntil)
	}
	for _, f := range slices.Concat(q.Findings(), st.Findings(), p.KeptFindings()) {
		r.Findings = append(r.Findings, f.String())
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	var out strings.Builder
	printStatus(&out, r)
	printOverdue(&out, e.dir, now)
	_, err = io.WriteString(e.stdout, columns.Wrap(out.String(), r.width))
	return err
}

// printStatus writes the report for people; lines too wide for the
// terminal are wrapped by the caller.
func printStatus(w io.Writer, r statusReport) {
	var parts []string
	total := 0
	for _, s := range append(slices.Clip(issuequeue.Statuses), statusQuarantined) {
		total += r.Counts[s]
		if r.Counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", r.Counts[s], s))
		}
	}
	fmt.Fprintf(w, "Queue: %d issue(s)", total)
	if len(parts) > 0 {
		fmt.Fprintf(w, ": %s", strings.Join(parts, ", "))
	}
	fmt.Fprintln(w)
	if len(r.Issues) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		rows := [][]string{{"ID", "PRIORITY", "STATUS", "AUTO", "RETRIES", "REPEAT", "HALTED"}}
		for _, is := range r.Issues {
			prio := is.Priority
			if is.Blocking {
				prio += "*"
			}
			rows = append(rows, []string{is.ID, prio, is.Status, yesNo(is.AutoRetry),
				fmt.Sprintf("%d/%d", is.RetryCount, is.MaxRetries), strconv.Itoa(is.RepeatCount), yesNo(is.Halted)})
		}
		// The summary gets what the other columns leave of the width
		// (0: no limit).
		room := r.width
		for c := range rows[0] {
			wid := 0
			for _, row := range rows {
				wid = max(wid, utf8.RuneCountInString(row[c]))
			}
			room -= wid + 2
		}
		if r.width > 0 {
			room = max(room, 4)
		}
		for i, row := range rows {
			sum, tag := "SUMMARY", ""
			if i > 0 {
				sum = r.Issues[i-1].Summary
				if n := r.Issues[i-1].Seen; n > 1 && (r.width == 0 || room >= 24) {
					tag = fmt.Sprintf(" (filed %d×)", n)
				}
			}
			if r.width > 0 {
				sum = columns.Cut(sum, max(room-columns.Width(tag), 4))
			}
			sum += tag
			fmt.Fprintln(tw, strings.Join(append(row, sum), "\t"))
		}
		tw.Flush()
		if r.More > 0 {
			fmt.Fprintf(w, "… %d more (use --all, or --limit N)\n", r.More)
		}
		fmt.Fprintln(w, "(* blocking; listed in retry order)")
	}
	fmt.Fprintln(w)
	if r.AutoRetryEnabled {
		fmt.Fprintf(w, "Auto-retry: enabled, %d of %d auto-retry loops used this run\n", r.TotalAutoRetries, r.GlobalCap)
	} else {
		fmt.Fprintf(w, "Auto-retry: disabled (%s)\n", r.DisabledReason)
	}
	if r.PausedUntil != "" {
		fmt.Fprintf(w, "Paused %s: no loop runs ('"+self+" resume' lifts it)\n", strings.TrimPrefix("until "+r.PausedUntil, "until indefinitely"))
	}
	if r.RateLimitUntil != "" {
		fmt.Fprintf(w, "Rate-limited until %s: runs before then exit at once\n", r.RateLimitUntil)
	}
	printBudgets(w, r.Budgets)
	if r.Run.ID == "" {
		fmt.Fprintln(w, "Run: none yet")
	} else {
		fmt.Fprintf(w, "Run: %s, %s, %d loop(s), started %s", r.Run.ID, r.Run.Outcome, r.Run.Loops, r.Run.StartedAt)
		if r.Run.FinishedAt != issuequeue.Null {
			fmt.Fprintf(w, ", finished %s", r.Run.FinishedAt)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "Circuit breaker: %s, %d consecutive failed loop(s)", r.Breaker.State, r.Breaker.ConsecutiveFailures)
	if r.Breaker.OpenedAt != issuequeue.Null {
		fmt.Fprintf(w, ", opened %s", r.Breaker.OpenedAt)
	}
	fmt.Fprintln(w)
	if n := len(r.Findings); n > 0 {
		fmt.Fprintf(w, "\n%d problem(s) in the state files; run '"+self+" lint' to see them\n", n)
	}
}

// printBudgets prints the daily budgets on one line, and a line for each
// spent one saying when the next loop is possible.
func printBudgets(w io.Writer, bs []orchestrator.Budget) {
	var parts, spent []string
	for _, b := range bs {
		used, limit := strconv.FormatFloat(b.Used, 'f', -1, 64), strconv.FormatFloat(b.Limit, 'f', -1, 64)
		switch b.Code {
		case orchestrator.CodeDailyAgentTime:
			used, limit = (time.Duration(b.Used) * time.Second).String(), (time.Duration(b.Limit) * time.Second).String()
		case orchestrator.CodeDailyCost:
			used, limit = strconv.FormatFloat(b.Used, 'f', 2, 64), strconv.FormatFloat(b.Limit, 'f', 2, 64)
		}
		if b.Limit <= 0 {
			limit = "off"
		}
		parts = append(parts, fmt.Sprintf("%s %s/%s", strings.TrimSuffix(b.Key, "_per_day"), used, limit))
		if b.Spent {
			spent = append(spent, fmt.Sprintf("  %s spent: next loop possible at %s", b.Key, b.NextAt.Local().Format("2006-01-02 15:04")))
		}
	}
	fmt.Fprintf(w, "Budgets (last 24 h): %s\n", strings.Join(parts, ", "))
	for _, l := range spent {
		fmt.Fprintln(w, l)
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// seenCount is an issue's Seen field, 0 when missing or not a number.
func seenCount(is *issuequeue.Issue) int {
	v, _ := is.Field(issuequeue.FieldSeen)
	n, _ := strconv.Atoi(strings.TrimSpace(v))
	return n
}
