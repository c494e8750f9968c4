package orchestrator

import (
	"fmt"
	"strconv"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/config"
	"github.com/autoretry/orchestrator/issuequeue"
)

// Halts: whether an issue stops being retried on its failure. One function,
// Halt, decides it, for a failure being recorded (DecideFail) and for the
// issue's last recorded failure before a loop (the check's issueVerdict), so
// that every rule of it, and the exemption of a failure that printed
// nothing, holds in both.

// HaltFacts are what a halt depends on.
type HaltFacts struct {
	Issue   string
	Failure Failure
	// New is set for a failure being recorded now. Unset, Failure is the
	// issue's last recorded failure, judged again before a loop: its own
	// streak and attempts were judged when it was recorded, and only what
	// other issues did since can halt it.
	New bool
	// Repeats is how often the failure came in a row here, this one
	// included; Recent the issue's signatures since a person last answered
	// it, this one included, oldest first.
	Repeats int
	Recent  []string
	Usage   Usage // the event log's last 24 hours, without this failure
}

// Halt decides whether an issue halts on a failure: the same failure
// halt_after_repeats times in a row (repeated_failure); the failure another
// issue was halted on, or its failures under other issues in the last 24
// hours and its streak here adding up to that (the same failure filed again
// under a new ID: repeated_failure_across_issues); the last four attempts
// alternating between two failures (oscillation); what its loops spent
// reaching a per-issue cap or a limit of the spend since progress
// (SpendVerdicts, when h.Usage.Spend was read). A failure that printed
// nothing says only which check failed how: it is no evidence that another
// issue fails for the same reason, so it never counts across issues. It
// returns the code and the reason in words, or "" when the issue goes on.
func Halt(h HaltFacts, cfg *config.Config) (Code, string) {
	threshold := cfg.AutoRetry.HaltAfterRepeats
	f := h.Failure
	if h.New && h.Repeats >= threshold {
		return CodeRepeatedFailure, fmt.Sprintf("the same failure %d times in a row", h.Repeats)
	}
	if !f.Silent && f.Signature != "" {
		if other, ok := h.Usage.haltedElsewhere(f, h.Issue); ok {
			return CodeRepeatedAcross, "same failure as " + other + ", which was halted on it"
		}
		if n := h.Usage.failuresElsewhere(f, h.Issue); h.New && n+h.Repeats >= threshold {
			return CodeRepeatedAcross, fmt.Sprintf("the same failure %d times in the last 24 hours under other issues, and %d in a row here",
				n, h.Repeats)
		}
	}
	if h.New && oscillates(h.Recent) {
		return CodeOscillation, "the last 4 attempts alternate between two failures"
	}
	if v := spendHalt(h, cfg); v != nil {
		return v.Rule, v.Reason
	}
	return "", ""
}

// haltEdits are the edits that halt issue id: Halted, and escalated to a
// person.
func haltEdits(id string) []issuequeue.Edit {
	return []issuequeue.Edit{issuequeue.SetField(id, issuequeue.FieldHalted, "true"),
		issuequeue.SetField(id, issuequeue.FieldStatus, issuequeue.StatusEscalated)}
}

// FailDecision is what recording a failure changes.
type FailDecision struct {
	Attempt     int
	RepeatCount int
	// Progressed: fewer tests fail than in the issue's last failure. The
	// count starts at 0 and the attempt is given back (Retry-Count lowered
	// by one).
	Progressed bool
	Halted     bool
	Code       Code   // why it halted: repeated_failure, repeated_failure_across_issues, oscillation
	Because    string // the halt's reason in words
	Error      string // one-line summary of the output
	Edits      []issuequeue.Edit
}

// DecideFail records a failure of an issue: the signature's repeat count,
// whether it halts (Halt), Failure Details and an Attempt History row. u is
// the event log's last 24 hours, without this failure.
//
// A failure reached by progress (a test runner's report names fewer failing
// tests than the issue's last failure did) is no
// failed try at what it reached: its repeat count starts at 0, so the same
// failure halts the issue only once it came halt_after_repeats times more,
// and the attempt is given back, so max_retries counts the attempts that
// fixed nothing ([auto_retry] progress_resets, on by default).
func DecideFail(is *issuequeue.Issue, f Failure, cfg *config.Config, u Usage) FailDecision {
	var d FailDecision
	id := is.ID
	set := func(field, v string) { d.Edits = append(d.Edits, issuequeue.SetField(id, field, v)) }
	if sameFailure(is.FailureSignature, f) {
		d.RepeatCount = is.SignatureRepeatCount + 1
		if !isRecorded(is.FailureSignature, f.Signature) {
			set(issuequeue.FieldFailureSignature, f.Signature) // recorded under older rules
		}
	} else {
		if is.FailureSignature != "" {
			prev := append(append([]string(nil), is.PreviousSignatures...), is.FailureSignature)
			set(issuequeue.FieldPreviousSignatures, issuequeue.FormatSignatureList(prev))
		}
		set(issuequeue.FieldFailureSignature, f.Signature)
		d.RepeatCount = 1
		if d.Progressed = cfg.AutoRetry.ProgressResets && fewerTestsFail(detailsTests(is), f.Tests); d.Progressed {
			// Progress earns patience: the attempt that fixed tests is no
			// failed try at the failure it reached, and it is given back.
			d.RepeatCount = 0
			if is.RetryCount > 0 {
				set(issuequeue.FieldRetryCount, strconv.Itoa(is.RetryCount-1))
			}
		}
	}
	set(issuequeue.FieldSignatureRepeatCount, strconv.Itoa(d.RepeatCount))
	d.Code, d.Because = Halt(HaltFacts{Issue: id, Failure: f, New: true, Repeats: d.RepeatCount,
		Recent: append(u.issueSignatures(id), f.Signature), Usage: u}, cfg)
	if d.Halted = d.Code != ""; d.Halted {
		d.Edits = append(d.Edits, haltEdits(id)...)
	} else {
		set(issuequeue.FieldStatus, issuequeue.StatusPending)
	}
	d.Edits = append(d.Edits, issuequeue.SetSectionMarkdown(id, issuequeue.SectionFailureDetails, f.Output.Details()))
	_, rows, _ := is.Table(issuequeue.SectionAttemptHistory)
	d.Attempt = len(rows) + 1
	d.Error = ErrorSummary(f.Output.Tail)
	sig := f.Signature
	if len(sig) > 12 {
		sig = sig[:12]
	}
	d.Edits = append(d.Edits, issuequeue.AppendRow(id, issuequeue.SectionAttemptHistory, AttemptHeader,
		[]string{strconv.Itoa(d.Attempt), f.Time.UTC().Format(time.RFC3339), f.Type, sig, d.Error}))
	return d
}
