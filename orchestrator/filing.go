package orchestrator

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/autoretry/orchestrator/issuequeue"
)

// Filing an issue that is already open. An agent given a failure to fix
// often files it again, under a new ID, every loop; each copy would be
// retried on its own and the queue would grow without bound. So "add" of an
// open issue's summary, or of its failure, files nothing new: it counts the
// filing in the open issue (Seen, Last-Seen) and answers with its ID.

// Filed is what Add did.
type Filed struct {
	ID string
	// Repeat is set when an open issue was filed again: nothing new was
	// created, and Seen is how many times it has been filed, the first
	// filing included.
	Repeat bool
	Seen   int
}

// FilingLimitError refuses an issue filed from inside a loop once [budget]
// issues_filed_per_day were filed from loops in the last 24 hours.
type FilingLimitError struct {
	Used, Limit int
	Next        time.Time // when a filing is possible again
	Hint        string
}

func (e *FilingLimitError) Error() string {
	return fmt.Sprintf("issues_filed_per_day spent: %d issues filed from loops in the last 24h (limit %d); nothing was added", e.Used, e.Limit)
}

// openStatus reports whether an issue is still open: filing it again is a
// repeat, not a new issue.
func openStatus(status string) bool {
	switch status {
	case issuequeue.StatusPending, issuequeue.StatusInProgress, issuequeue.StatusEscalated:
		return true
	}
	return false
}

// summaryKeys are the forms under which two summaries are the same issue:
// runs of white space made one space and trailing punctuation trimmed, then
// normalized by the signature rules (times, durations, hexadecimal numbers,
// temporary paths, … as in a failure's output) when norm is not nil, once
// as written and once case folded (the rules read "T" and "Z" in a time,
// which folding would hide). Two summaries are the same when either form
// is.
func summaryKeys(s string, norm func([]byte) string) [2]string {
	s = strings.TrimRight(strings.Join(strings.Fields(s), " "), ".!?;:,… ")
	if s == "" {
		return [2]string{}
	}
	keys := [2]string{s, strings.ToLower(s)}
	if norm != nil {
		for i, k := range keys {
			keys[i] = norm([]byte(k + "\n"))
		}
	}
	return keys
}

func sameSummary(a, b [2]string) bool {
	return a[0] != "" && (a[0] == b[0] || a[1] == b[1])
}

// signatureOf returns the signature of b under the current rules, or ""
// when the orchestrator computes none.
func (o *Orchestrator) signatureOf(b []byte) string {
	if o.NewSignature == nil {
		return ""
	}
	sw, err := o.NewSignature()
	if err != nil {
		return ""
	}
	if _, err := sw.Write(b); err != nil {
		return ""
	}
	return sw.Sum()
}

// alreadyFiled returns the open issue that n files again: the same summary
// (by summaryKey), or, when n has failure output, the same failure (its
// signature is the issue's Failure-Signature or that of its Failure
// Details).
func (o *Orchestrator) alreadyFiled(q *issuequeue.Queue, n NewIssue) *issuequeue.Issue {
	var norm func([]byte) string
	if o.NewSignature != nil {
		norm = o.signatureOf
	}
	key := summaryKeys(n.Summary, norm)
	sig := ""
	if len(strings.TrimSpace(string(n.Details.Tail))) > 0 {
		sig = o.signatureOf(n.Details.Tail)
	}
	for _, is := range q.Issues {
		if !openStatus(is.Status) {
			continue
		}
		if sameSummary(key, summaryKeys(is.Summary(), norm)) {
			return is
		}
		if sig == "" {
			continue
		}
		if isRecorded(is.FailureSignature, sig) {
			return is
		}
		if d, ok := is.Section(issuequeue.SectionFailureDetails); ok && strings.TrimSpace(d) != "" && o.signatureOf([]byte(d)) == sig {
			return is
		}
	}
	return nil
}

// refile counts one more filing of the open issue is.
func refile(is *issuequeue.Issue, now time.Time) (seen int, edits []issuequeue.Edit) {
	seen = 1
	if v, ok := is.Field(issuequeue.FieldSeen); ok {
		if k, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && k > 0 {
			seen = k
		}
	}
	seen++
	return seen, []issuequeue.Edit{
		issuequeue.SetField(is.ID, issuequeue.FieldSeen, strconv.Itoa(seen)),
		issuequeue.SetField(is.ID, issuequeue.FieldLastSeen, now.Format(time.RFC3339)),
	}
}

// filingStop is the stop of a run whose loops spent [budget]
// issues_filed_per_day, checked after each loop: a loop that files issue
// after issue stops the run even when none of them is for an auto-retry
// loop, which the check's gate would not be asked about.
func (o *Orchestrator) filingStop() (*StopError, error) {
	if o.Config.Budget.IssuesFiledPerDay <= 0 {
		return nil, nil
	}
	now := o.now()
	u, err := ReadUsage(o.Dir, now)
	if err != nil {
		return nil, fmt.Errorf("reading the event log: %w", err)
	}
	v := ruleDailyIssuesFiled(Inputs{Usage: u, Config: o.Config, Now: now, Invocation: o.invocation(), Dir: o.Dir})
	if !v.Stop {
		return nil, nil
	}
	return StopFor(&v), nil
}

// SeenNote says how often an open issue was filed again, for status and
// explain: "filed 7 times, last 2026-11-22T10:15:00Z", or "" for an issue
// filed once.
func SeenNote(is *issuequeue.Issue) string {
	v, _ := is.Field(issuequeue.FieldSeen)
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 2 {
		return ""
	}
	s := fmt.Sprintf("filed %d times", n)
	if last, _ := is.Field(issuequeue.FieldLastSeen); strings.TrimSpace(last) != "" {
		s += ", last " + strings.TrimSpace(last)
	}
	return s
}
