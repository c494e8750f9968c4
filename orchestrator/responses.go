package orchestrator

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/autoretry/orchestrator/issuequeue"
	"github.com/autoretry/orchestrator/templates"
)

// The human responses to an escalation: retry, skip, fix and (in the runner) abort.

// Retry gives an issue a fresh start: Retry-Count 0, not halted, repeat
// count 0, pending.
func (o *Orchestrator) Retry(ctx context.Context, id string) error {
	return o.respond(ctx, id, "retry", "", func(is *issuequeue.Issue) []issuequeue.Edit {
		return RetryChange(id).issueEdits() // what a running run is told it sets
	}, "%s will be retried from attempt 1\n")
}

// Skip marks an issue skipped.
func (o *Orchestrator) Skip(ctx context.Context, id, reason string) error {
	return o.respond(ctx, id, "skip", reason, func(is *issuequeue.Issue) []issuequeue.Edit {
		return SkipChange(id).issueEdits()
	}, "%s skipped\n")
}

// Fix stores a person's instruction for the retry context and then retries
// the issue, as "fix: <instruction>" does.
func (o *Orchestrator) Fix(ctx context.Context, id, instruction string) error {
	instruction = strings.TrimSpace(instruction)
	if instruction == "" {
		return fmt.Errorf("the fix instruction is empty")
	}
	return o.respond(ctx, id, "fix", instruction, func(is *issuequeue.Issue) []issuequeue.Edit {
		return append([]issuequeue.Edit{issuequeue.SetSection(id, issuequeue.SectionFixInstruction, instruction)}, FixChange(id).issueEdits()...)
	}, "%s will be retried with your instruction as high-priority guidance\n")
}

func (o *Orchestrator) respond(ctx context.Context, id, response, detail string, edits func(*issuequeue.Issue) []issuequeue.Edit, done string) error {
	now := o.now()
	return o.updateIssue(ctx, id, func(is *issuequeue.Issue, st *issuequeue.State) (issuequeue.Change, error) {
		// The answer is logged with the change: the loop guard reads
		// from the log whether a person answered an issue.
		events := []Event{{Time: now, Event: EvUserResponse, IssueID: id, RunID: st.RunID, Response: response, Reason: detail}}
		l, err := ReadIssueLedger(o.Dir)
		if err != nil {
			return issuequeue.Change{}, fmt.Errorf("reading the event log: %w", err)
		}
		h := l.Halt(id)
		if cause := ReleaseHalt(ReleaseFacts{Halted: is.Halted, Person: true, Halt: h, Now: FingerprintOf(is, o.Config)}); cause != "" {
			ev := Event{Time: now, Event: EvHaltReleased, IssueID: id, RunID: st.RunID, Cause: cause, Response: response}
			if h != nil {
				ev.Code = h.Code
			}
			events = append(events, ev)
		}
		if response == "skip" {
			events = append(events, Event{Time: now, Event: EvResolved, IssueID: id, RunID: st.RunID, Resolution: issuequeue.StatusSkipped,
				TotalAttempts: is.RetryCount})
		}
		lines, err := o.log().Lines(events...)
		if err != nil {
			return issuequeue.Change{}, err
		}
		return issuequeue.Change{Queue: edits(is), Log: lines, After: func() error {
			fmt.Fprintf(o.Stdout, done, id)
			return nil
		}}, nil
	})
}

// NewIssue describes an issue for Add.
type NewIssue struct {
	Summary    string
	Type       string
	Priority   string
	AutoRetry  bool
	Blocking   bool
	MaxRetries int // < 0: the per-type default
	Verify     string
	Details    Output
	Category   string
	Source     string
	// New files a new issue even when an open one has the same summary or
	// failure.
	New bool
	// FromLoop marks an issue filed from inside a loop: [budget]
	// issues_filed_per_day bounds these.
	FromLoop bool
}

// Add appends a new issue and returns its ID; an open issue filed again
// returns that issue's ID (see File).
func (o *Orchestrator) Add(ctx context.Context, n NewIssue) (string, error) {
	f, err := o.File(ctx, n)
	return f.ID, err
}

// File appends a new issue, unless n.New is false and an open issue
// (pending, in progress or escalated) has the same summary, or, when
// n.Details is given, the same failure: then it counts the filing in that
// issue's Seen and Last-Seen fields and returns it. A new issue filed from
// inside a loop past [budget] issues_filed_per_day is refused with a
// *FilingLimitError.
func (o *Orchestrator) File(ctx context.Context, n NewIssue) (Filed, error) {
	if strings.TrimSpace(n.Summary) == "" {
		return Filed{}, fmt.Errorf("the summary is empty")
	}
	if n.Type == "" {
		n.Type = "bug"
	}
	if n.Priority == "" {
		n.Priority = "medium"
	}
	if n.Source == "" {
		n.Source = "user"
	}
	now := o.now()
	var filed Filed
	err := o.store().Update(ctx, func(q *issuequeue.Queue, st *issuequeue.State) (issuequeue.Change, error) {
		filed = Filed{}
		if !n.New {
			if is := o.alreadyFiled(q, n); is != nil {
				seen, edits := refile(is, now)
				filed = Filed{ID: is.ID, Repeat: true, Seen: seen}
				lines, err := o.log().Lines(Event{Time: now, Event: EvRefiled, IssueID: is.ID, RunID: st.RunID, Seen: seen, FromLoop: n.FromLoop})
				if err != nil {
					return issuequeue.Change{}, err
				}
				return issuequeue.Change{Queue: edits, Log: lines}, nil
			}
		}
		if limit := o.Config.Budget.IssuesFiledPerDay; n.FromLoop && limit > 0 {
			u, err := ReadUsage(o.Dir, now)
			if err != nil {
				return issuequeue.Change{}, err
			}
			if len(u.Filed) >= limit {
				return issuequeue.Change{}, &FilingLimitError{Used: len(u.Filed), Limit: limit, Next: u.nextCount(u.Filed, limit), Hint: filedHint(o.invocation())}
			}
		}
		id := o.nextIssueID(q, now)
		filed.ID = id
		maxRetries := n.MaxRetries
		if maxRetries < 0 {
			maxRetries = o.Config.MaxRetriesFor(n.Type)
		}
		details := ""
		if len(bytes.TrimSpace(n.Details.Tail)) > 0 || n.Details.CutBytes > 0 {
			details = n.Details.Details()
		}
		data := templates.NewIssue{
			ID: id, Type: issuequeue.EscapeCell(n.Type), Priority: issuequeue.EscapeCell(n.Priority), Status: issuequeue.StatusPending,
			Source: issuequeue.EscapeCell(n.Source), Category: issuequeue.EscapeCell(n.Category), Created: now.Format(time.RFC3339),
			AutoRetry: strconv.FormatBool(n.AutoRetry), RetryCount: "0", MaxRetries: strconv.Itoa(maxRetries),
			PreviousSignatures: "[]", SignatureRepeatCount: "0", Halted: "false", Blocking: strconv.FormatBool(n.Blocking),
			Verify: issuequeue.EscapeCell(n.Verify), Summary: issuequeue.EscapeLine(oneLine(n.Summary)), Details: details,
		}
		var b bytes.Buffer
		if err := o.Templates.Render(&b, "issue", data); err != nil {
			return issuequeue.Change{}, err
		}
		// The new issue must read back as exactly what was asked for.
		check := issuequeue.ParseQueue("new issue", b.Bytes())
		if err := check.Err(); err != nil || len(check.Issues) != 1 || check.Issues[0].ID != id {
			if err == nil && len(check.Quarantined) > 0 {
				err = &issuequeue.ValidationError{File: "new issue", Findings: check.QuarantineFindings()}
			}
			return issuequeue.Change{}, fmt.Errorf("the issue template renders an invalid issue: %v", err)
		}
		lines, err := o.log().Lines(Event{Time: now, Event: EvAdded, IssueID: id, RunID: st.RunID, FromLoop: n.FromLoop})
		if err != nil {
			return issuequeue.Change{}, err
		}
		return issuequeue.Change{Queue: []issuequeue.Edit{issuequeue.AppendIssue(id, b.String())}, Log: lines}, nil
	})
	if err != nil {
		return Filed{}, err
	}
	return filed, nil
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// Archive moves resolved and skipped issues created (or, lacking Created,
// found) before now-olderThan to issue_archive.md, and returns their IDs.
func (o *Orchestrator) Archive(ctx context.Context, olderThan time.Duration) ([]string, error) {
	now := o.now()
	var moved []string
	err := o.store().Update(ctx, func(q *issuequeue.Queue, st *issuequeue.State) (issuequeue.Change, error) {
		moved = nil
		for _, is := range q.Issues {
			if is.Status != issuequeue.StatusResolved && is.Status != issuequeue.StatusSkipped {
				continue
			}
			if !is.Created.IsZero() && now.Sub(is.Created) < olderThan {
				continue
			}
			moved = append(moved, is.ID)
		}
		return issuequeue.Change{Move: moved}, nil
	})
	return moved, err
}

// nextIssueID returns the ID a new issue gets: the first of now's day
// after every one used. IDs moved to the archive stay used, and so do those
// the event log names: an issue deleted from the queue by hand must not lend
// its ID, and with it its failures, halts and counters in the log, to a new
// issue. IDs carry their day, so today's events are enough.
func (o *Orchestrator) nextIssueID(q *issuequeue.Queue, now time.Time) string {
	day := now.UTC().Truncate(24 * time.Hour)
	prefix := "ISSUE-" + day.Format("20060102") + "-"
	next := 1
	// above raises next to n+by for an ID of the day numbered n.
	above := func(id string, by int) {
		if n, err := strconv.Atoi(strings.TrimPrefix(id, prefix)); err == nil && strings.HasPrefix(id, prefix) {
			next = max(next, n+by)
		}
	}
	above(q.NextID(now), 0)
	if a, err := o.paths().LoadArchive(); err == nil && a != nil {
		above(a.NextID(now), 0)
	}
	// A log that cannot be read leaves the files' IDs as all there is.
	if evs, err := readLedgerSince(o.paths().Ledger(), day, nil, nil); err == nil {
		for _, ev := range evs {
			above(ev.IssueID, 1)
		}
	}
	return fmt.Sprintf("%s%03d", prefix, next)
}
