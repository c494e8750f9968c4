package orchestrator

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/autoretry/orchestrator/internal/config"
	"github.com/autoretry/orchestrator/issuequeue"
	"github.com/autoretry/orchestrator/signature"
)

// Failure types.
const (
	FailExecution    = "execution_error"
	FailVerification = "verification_failed"
	FailTimeout      = "timeout"
	FailRejected     = "architect_rejected"
)

// FailureTypes lists the valid failure types.
var FailureTypes = []string{FailExecution, FailVerification, FailTimeout, FailRejected}

// Limits on the failure output kept in the queue: the queue must stay small
// however much a failing command printed.
const (
	DetailsMaxLines = 200
	DetailsMaxBytes = 64 << 10
	errorSummaryMax = 200 // error messages in the logs are cut to 200 characters
)

// AttemptHeader is the header of the Attempt History table.
var AttemptHeader = []string{"Attempt", "Time", "Type", "Signature", "Error"}

// Failure is one recorded failure of an issue.
type Failure struct {
	Type      string
	Output    Output // the failing command's output, or its end
	Signature string // failure signature of the whole output
	// Older holds the output's signatures under older rule sets: a
	// signature recorded before the rules changed is one of them.
	Older []string
	Time  time.Time
	// Silent is a failure whose command printed nothing: no evidence that
	// another issue failing the same check fails for the same reason, so
	// it counts only against its own issue.
	Silent bool
}

// FailDecision is what recording a failure changes.
type FailDecision struct {
	Attempt     int
	RepeatCount int
	Halted      bool
	Code        Code   // why it halted: repeated_failure, repeated_failure_across_issues, oscillation
	Because     string // the halt's reason in words
	Error       string // one-line summary of the output
	Edits       []issuequeue.Edit
}

// DecideFail records a failure of an issue: the signature's repeat count,
// and a halt when the same failure came halt_after_repeats times in a row;
// when its failures under other issues in the last 24 hours and its streak
// here add up to that (or another issue was halted on it): the same failure
// filed again under a new ID; or when the issue's last four attempts since
// a person last answered it alternate between two failures. u is the event
// log's last 24 hours, without this failure.
func DecideFail(is *issuequeue.Issue, f Failure, cfg *config.Config, u Usage) FailDecision {
	var d FailDecision
	id := is.ID
	threshold := cfg.AutoRetry.HaltAfterRepeats
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
	}
	set(issuequeue.FieldSignatureRepeatCount, strconv.Itoa(d.RepeatCount))
	recent := append(u.issueSignatures(id), f.Signature)
	switch other, elsewhere := u.haltedElsewhere(f, id); {
	case d.RepeatCount >= threshold:
		d.Code, d.Because = CodeRepeatedFailure, fmt.Sprintf("the same failure %d times in a row", d.RepeatCount)
	case elsewhere && !f.Silent:
		d.Code, d.Because = CodeRepeatedAcross, "same failure as "+other+", which was halted on it"
	case !f.Silent && f.Signature != "" && u.failuresElsewhere(f, id)+d.RepeatCount >= threshold:
		d.Code, d.Because = CodeRepeatedAcross, fmt.Sprintf("the same failure %d times in the last 24 hours under other issues, and %d in a row here",
			u.failuresElsewhere(f, id), d.RepeatCount)
	case oscillates(recent):
		d.Code, d.Because = CodeOscillation, "the last 4 attempts alternate between two failures"
	}
	if d.Code != "" {
		d.Halted = true
		set(issuequeue.FieldHalted, "true")
		set(issuequeue.FieldStatus, issuequeue.StatusEscalated)
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

// sameFailure reports whether f is the failure that the signature recorded
// stands for: recorded under the current rules, or under older ones (f's
// signature under those rules equals it). A change of rules thus neither
// starts a streak over nor makes a new one.
func sameFailure(recorded string, f Failure) bool {
	return isRecorded(recorded, f.Signature) || slices.ContainsFunc(f.Older, func(s string) bool { return isRecorded(recorded, s) })
}

// isRecorded reports whether signature s is the one recorded: the same, or
// the same by sameSignature.
func isRecorded(recorded, s string) bool {
	return recorded != "" && (recorded == s || sameSignature(recorded, s))
}

// oscillates reports whether the last four signatures alternate between two
// different ones: A B A B.
func oscillates(sigs []string) bool {
	if len(sigs) < 4 {
		return false
	}
	a, b, c, e := sigs[len(sigs)-4], sigs[len(sigs)-3], sigs[len(sigs)-2], sigs[len(sigs)-1]
	return a != "" && b != "" && a != b && sameSignature(a, c) && sameSignature(b, e)
}

// Details renders the output for the Failure Details section: its last
// DetailsMaxLines lines, at most DetailsMaxBytes bytes, fenced, with a note
// saying how much was cut, counting what came before Tail.
func (o Output) Details() string {
	tail, lines, n := Tail(o.Tail, DetailsMaxLines, DetailsMaxBytes)
	cutLines := o.CutLines + int64(lines)
	cutBytes := o.CutBytes + int64(n)
	var b strings.Builder
	if cutBytes > 0 {
		fmt.Fprintf(&b, "(the first %d line(s), %d byte(s), of the output were cut; the last %d line(s) follow)\n\n",
			cutLines, cutBytes, bytes.Count(tail, []byte{'\n'})+1)
	}
	b.WriteString(issuequeue.Fence(string(tail)))
	return b.String()
}

// ErrorSummary returns the line of out that best says what went wrong, for
// the Attempt History and the logs: the first line that starts with an
// error word (error, panic, fatal, FAIL, exception, traceback, after any
// leading "[timestamp]" or "---"), or pytest's "E   ", else the first line that mentions
// one, else the last line; ANSI colours stripped, at most errorSummaryMax
// characters.
func ErrorSummary(out []byte) string {
	var last, mention string
	for _, l := range strings.Split(string(out), "\n") {
		l = strings.TrimSpace(string(signature.StripANSI(nil, []byte(l))))
		if l == "" {
			continue
		}
		last = l
		ll := strings.ToLower(l)
		if startsWithErrorWord(ll) {
			return truncate(l, errorSummaryMax)
		}
		if mention == "" && containsErrorWord(ll) {
			mention = l
		}
	}
	if mention != "" {
		return truncate(mention, errorSummaryMax)
	}
	return truncate(last, errorSummaryMax)
}

var errorWords = []string{"error", "panic", "fatal", "fail", "exception", "traceback"}

func containsErrorWord(l string) bool {
	for _, w := range errorWords {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

// startsWithErrorWord reports whether the lower-cased line l begins with an
// error word, once a leading "[…]" (a timestamp), "---", "!" or ">" are
// skipped, or is one of pytest's "E   " lines.
func startsWithErrorWord(l string) bool {
	if strings.HasPrefix(l, "[") {
		if i := strings.IndexByte(l, ']'); i > 0 {
			l = strings.TrimSpace(l[i+1:])
		}
	}
	if strings.HasPrefix(l, "e   ") {
		return true // pytest's lines of the error itself
	}
	l = strings.TrimLeft(l, "-!> ")
	for _, w := range errorWords {
		if strings.HasPrefix(l, w) {
			return true
		}
	}
	return false
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
