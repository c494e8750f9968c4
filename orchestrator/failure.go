package orchestrator

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

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
	// Tests is what the output said of its tests, when a test runner's
	// report could be read from it.
	Tests TestRun
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
