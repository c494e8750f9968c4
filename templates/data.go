package templates

import "time"

// Issue is one issue of the queue as the messages show it. The engine fills
// it once from the parsed issue; each template uses the fields it needs.
type Issue struct {
	ID       string // e.g. "ISSUE-20261122-001"
	Summary  string // the ### Summary section, one line
	Type     string // the Type field: bug, build, test, …
	Priority string // critical, high, medium or low
	Status   string // pending, in_progress, resolved, escalated or skipped
	Blocking bool   // the Blocking field

	// RetryCount is the Retry-Count field. In the triggered banner and the
	// retry context it is the attempt about to run (the count after the
	// check's increment); elsewhere, the attempts made so far.
	RetryCount int
	MaxRetries int // the Max-Retries field (the issue's, or the configured default)

	Signature   string // the Failure-Signature field: 64 lowercase hex, or ""
	RepeatCount int    // the Signature-Repeat-Count field
	Verify      string // the Verify field: a [verify.NAME] check, or ""

	// FailureDetails is the latest failure output, the text of the
	// ### Failure Details section without its markdown fence.
	FailureDetails   string
	VerificationStep string // the ### Verification Step section
	SuggestedFix     string // the ### Suggested Fix section
	// FixInstruction is the instruction a person gave with
	// "orchestrator fix ID …", or "".
	FixInstruction string

	History []Attempt // the ### Attempt History rows, oldest first
}

// Attempt is one row of an issue's Attempt History: one failed attempt.
type Attempt struct {
	Number    int    // the Attempt column, 1 for the first
	Time      string // the Time column as recorded (RFC 3339)
	Type      string // execution_error, verification_failed, timeout or architect_rejected
	Signature string // the failure signature of that attempt's output, 64 hex or ""
	Error     string // one-line summary of the error
}

// Triggered is the data of the "triggered" template: the banner printed by
// the end-of-loop check when it starts an auto-retry loop.
type Triggered struct {
	// Issues are the issues being retried in the order the loop works on them
	// (blocking first, then by priority, fewer retries, creation time).
	// RetryCount is the attempt about to run. There is at least one.
	Issues []Issue
}

// Succeeded is the data of the "succeeded" template: the banner printed when
// an issue that needed at least one retry is resolved.
type Succeeded struct {
	Issue Issue // RetryCount is the number of retry attempts it took
}

// Exhausted is the data of the "exhausted" template: the banner printed when
// issues have used all their retries and are escalated.
type Exhausted struct {
	Issues []Issue // the exhausted issues; RetryCount is the attempts made
	Dir    string  // the state directory as the user named it, e.g. ".orchestrator"
}

// Attempts returns the number of attempts made if every issue made the same
// number, else 0. The banner then says "after N attempts" once.
func (e Exhausted) Attempts() int {
	n := 0
	for i, is := range e.Issues {
		if i > 0 && is.RetryCount != n {
			return 0
		}
		n = is.RetryCount
	}
	return n
}

// Halted is the data of the "halted" template: the banner printed when an
// issue failed with the same signature too many times in a row.
type Halted struct {
	// Issue is the halted issue: Signature is the repeated failure signature,
	// RepeatCount how many times in a row it occurred, FailureDetails the
	// output of the last failure.
	Issue     Issue
	Threshold int // halt_after_repeats from the configuration (003: 3)
	// Command is how to invoke the tool in suggested commands, e.g.
	// "orchestrator" or "orchestrator --dir ci/.orchestrator"; "" means
	// "orchestrator".
	Command string
}

// Cap is the data of the "cap" template: the message printed when the run's
// global auto-retry cap is reached.
type Cap struct {
	GlobalCap        int // [auto_retry] global_cap (003: 15)
	TotalAutoRetries int // total_auto_retries of the run
}

// Escalation is the data of the "escalation" template: the message asking a
// person to decide about an issue automated recovery could not fix.
type Escalation struct {
	Issue Issue
	// Reason says why the issue is escalated: "exhausted" (Retry-Count
	// reached Max-Retries), "halted" (the same failure repeated; see
	// Threshold), or any other word, explained by Detail.
	Reason    string
	Detail    string // more about the reason, e.g. the permanent error matched; may be ""
	Threshold int    // halt_after_repeats, for Reason "halted"
	// Command is how to invoke the tool in suggested commands, as in Halted.
	Command string
}

// RetryContext is the data of the "retry_context" template: the feedback
// given to the agent running an auto-retry loop, one block per issue.
type RetryContext struct {
	// Issues are the issues being retried, in order. RetryCount is the
	// attempt the block is for, History and FailureDetails the earlier
	// failures, FixInstruction a person's instruction.
	Issues []Issue
	// Tier is how the loop is run: "same_agent" (retry with the
	// accumulated context), "fresh_agent" (a clean agent session) or
	// "escalate_model" (a stronger model).
	Tier  string
	Model string // the model for this tier from [tiers], or ""
	// PreviousProgress is the verdict of the run's previous loop:
	// "progressed", "changed", "idle", "cycled", "unknown", or "" when
	// there is none (the context shown outside a run).
	PreviousProgress string
	// LastLoop is how the last loop failed, when it did: its command's
	// exit status (or the signal that killed it) and its last lines.
	LastLoop *LoopFailure
}

// LoopFailure is how a loop's command failed.
type LoopFailure struct {
	Loop   int    // 1, 2, … within its run
	Exit   string // e.g. "exit status 139 (SIGSEGV)", "timed out after 30m0s"
	Output string // its last lines
}

// RunSummary is the data of the "summary" template: the retry summary
// printed at the end of a run.
type RunSummary struct {
	RunID string // e.g. "20261122T101500Z-4242"
	// Issues is the number of issues the run touched (retried or verified).
	Issues         int
	FirstAttempt   int           // issues resolved without an auto-retry
	Retried        int           // issues given at least one auto-retry loop
	RetrySuccesses int           // retried issues that ended resolved
	Escalations    int           // issues escalated (exhausted, halted or permanent error)
	Halted         int           // issues halted by a repeated signature
	Skipped        int           // issues skipped by a person
	Loops          int           // loops run, the regular one included
	Wall           time.Duration // wall time of the run
	Details        []SummaryRow  // one row per issue touched
	Patterns       []Pattern     // failure types by count, most frequent first
	// Outcome is the run's outcome as recorded in session_state.md:
	// "completed", "stopped", "aborted", "failed", …
	Outcome string
	Reason  string // why the run stopped, e.g. "Max auto-retries (15) reached for this run"; may be ""
}

// SummaryRow is one row of the summary's Retry Details table.
type SummaryRow struct {
	ID       string
	Summary  string
	Attempts int // attempts made in the run, the first one included
	// Result is how the issue ended: "success", "success (retry worked)",
	// "escalated", "halted", "skipped (escalated)", "pending", …
	Result string
}

// Pattern is one line of the summary's Common Failure Patterns.
type Pattern struct {
	Name  string // a failure type, e.g. "verification_failed", or a signature
	Count int
}

// NewIssue is the data of the "issue" template: the skeleton of a new issue
// appended to issue_queue.md by "orchestrator add". The field values are
// written into table cells as they are: the caller escapes "|" (as "\|") and
// gives one-line values. Empty values leave the cell empty.
type NewIssue struct {
	ID                   string // "ISSUE-<UTC date>-<NNN>"
	Type                 string
	Priority             string
	Status               string
	Source               string
	Category             string
	Created              string // RFC 3339
	AutoRetry            string // "true" or "false"
	RetryCount           string
	MaxRetries           string
	FailureSignature     string
	PreviousSignatures   string // "[]" or "[h1, h2]"
	SignatureRepeatCount string
	Halted               string
	Blocking             string
	Verify               string

	// Summary is one line. The caller keeps it from reading as markdown
	// block syntax (a heading, fence, HTML block or table row), as it does
	// for the cells.
	Summary string
	// Details is the ### Failure Details section, already fenced by the
	// caller (see Fence), or "".
	Details          string
	VerificationStep string // the ### Verification Step section, or ""
	SuggestedFix     string // the ### Suggested Fix section, or ""
}
