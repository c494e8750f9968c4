package orchestrator

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/config"
	"github.com/autoretry/orchestrator/issuequeue"
	"github.com/autoretry/orchestrator/templates"
)

// Orchestrator performs the commands that read and change the state of one
// state directory. Its fields are the outside world: nil functions default
// to the real thing.
type Orchestrator struct {
	Dir string
	// Config is the effective configuration: defaults, config.toml, the
	// environment and flags applied.
	Config    *config.Config
	Templates *templates.Set
	Stdout    io.Writer
	// Stderr, if not nil, gets warnings: the issues of the queue that are
	// not valid and so are left alone, each told once.
	Stderr io.Writer
	// Now returns the current time. If Now is nil, time.Now is used.
	Now func() time.Time
	// Invocation is how a person runs this tool for this directory, used in
	// suggested commands, e.g. "orchestrator --dir ci/.orchestrator". If
	// empty, "orchestrator".
	Invocation string
	// Command names the running command in the lock file, e.g. "fail".
	Command  string
	LockWait time.Duration
	// NewSignature starts a failure signature: the output is written to
	// it as it comes, then Sum returns the signature. It must be set for
	// Fail and FailFrom.
	NewSignature func() (SignatureWriter, error)

	warnMu sync.Mutex
	warned map[string]bool // findings told on Stderr
}

// SignatureWriter computes a failure signature of what is written to it
// (signature.Digest is one).
type SignatureWriter interface {
	io.Writer
	Sum() string
}

// OlderSignatures is a SignatureWriter that also computes the signatures
// of the output under older rule sets, so that a failure recorded before
// the rules changed is still recognised.
type OlderSignatures interface {
	SignatureWriter
	OlderSums() []string
}

// sums closes sw and returns the signature and, if sw computes them, the
// signatures under older rules.
func sums(sw SignatureWriter) (sig string, older []string) {
	sig = sw.Sum()
	if o, ok := sw.(OlderSignatures); ok {
		older = o.OlderSums()
	}
	return sig, older
}

func (o *Orchestrator) now() time.Time {
	if o.Now != nil {
		return o.Now().UTC()
	}
	return time.Now().UTC()
}

func (o *Orchestrator) paths() Paths { return PathsIn(o.Dir) }

func (o *Orchestrator) store() *issuequeue.Store {
	return &issuequeue.Store{Paths: o.paths().Paths, LockWait: o.LockWait, Command: o.Command, Warn: o.WarnQuarantined, Kept: o.warnKept}
}

// updateIssue changes the queue and the state in one transaction, as
// Store.Update, for issue id: an id the queue does not hold changes nothing.
func (o *Orchestrator) updateIssue(ctx context.Context, id string, f func(*issuequeue.Issue, *issuequeue.State) (issuequeue.Change, error)) error {
	return o.store().Update(ctx, func(q *issuequeue.Queue, st *issuequeue.State) (issuequeue.Change, error) {
		is, err := q.Lookup(id)
		if err != nil {
			return issuequeue.Change{}, err
		}
		return f(is, st)
	})
}

// WarnQuarantined tells Stderr about findings that quarantine issues, each
// once however often the queue is read.
func (o *Orchestrator) WarnQuarantined(fs []issuequeue.Finding) {
	if o.Stderr == nil {
		return
	}
	o.warnMu.Lock()
	defer o.warnMu.Unlock()
	if o.warned == nil {
		o.warned = map[string]bool{}
	}
	var fresh []issuequeue.Finding
	for _, f := range fs {
		if s := f.String(); !o.warned[s] {
			o.warned[s] = true
			fresh = append(fresh, f)
		}
	}
	WarnQuarantined(o.Stderr, fresh)
}

// warnKept warns of a save that a change could not merge and kept beside
// its file.
func (o *Orchestrator) warnKept(k issuequeue.KeptSave) {
	if o.Stderr != nil {
		fmt.Fprintf(o.Stderr, "orchestrator: warning: %s\n", k)
	}
}

// WarnQuarantined writes a warning for each finding that quarantines an issue.
func WarnQuarantined(w io.Writer, fs []issuequeue.Finding) {
	for _, f := range fs {
		fmt.Fprintf(w, "orchestrator: warning: %s (the issue is left alone)\n", f)
	}
}

func (o *Orchestrator) log() EventLog { return EventLog{Dir: o.Dir} }

func (o *Orchestrator) invocation() string {
	if o.Invocation != "" {
		return o.Invocation
	}
	return "orchestrator"
}

func (o *Orchestrator) render(name string, data any) error {
	return o.Templates.Render(o.Stdout, name, data)
}

// tmplIssue is the view of an issue the templates show.
func (o *Orchestrator) tmplIssue(is *issuequeue.Issue) templates.Issue {
	t := templates.Issue{
		ID: is.ID, Summary: is.Summary(), Type: is.Type, Priority: is.Priority, Status: is.Status,
		Blocking: is.Blocking, RetryCount: is.RetryCount, MaxRetries: MaxRetries(o.Config, is),
		Signature: is.FailureSignature, RepeatCount: is.SignatureRepeatCount, Verify: is.Verify,
	}
	t.FailureDetails, _ = is.Section(issuequeue.SectionFailureDetails)
	t.FailureDetails = stripCutNote(t.FailureDetails)
	t.VerificationStep, _ = is.Section(issuequeue.SectionVerification)
	t.SuggestedFix, _ = is.Section(issuequeue.SectionSuggestedFix)
	t.FixInstruction, _ = is.Section(issuequeue.SectionFixInstruction)
	if _, rows, ok := is.Table(issuequeue.SectionAttemptHistory); ok {
		for _, r := range rows {
			a := templates.Attempt{}
			get := func(i int) string {
				if i < len(r) {
					return r[i]
				}
				return ""
			}
			a.Number, _ = strconv.Atoi(get(0))
			a.Time, a.Type, a.Signature, a.Error = get(1), get(2), get(3), get(4)
			t.History = append(t.History, a)
		}
	}
	return t
}

// stripCutNote returns the fenced output of a Failure Details section
// written by Output.Details, without the note about what was cut.
func stripCutNote(s string) string {
	if !strings.HasPrefix(s, "(the first ") {
		return s
	}
	if i := strings.Index(s, "\n\n"); i >= 0 {
		return issuequeue.Unfence(s[i+2:])
	}
	return s
}

// FailReport is the result of Fail, for --json.
type FailReport struct {
	ID          string `json:"id"`
	Signature   string `json:"signature"`
	RepeatCount int    `json:"signature_repeat_count"`
	Progressed  bool   `json:"progressed"` // fewer failing tests than its last failure: the count starts at 0, the attempt is given back
	Threshold   int    `json:"halt_after_repeats"`
	Halted      bool   `json:"halted"`
	Code        Code   `json:"code,omitempty"` // why it halted
	Attempt     int    `json:"attempt"`
	Status      string `json:"status"`
}

// Fail records a failure of issue id.
func (o *Orchestrator) Fail(ctx context.Context, id string, output []byte, failType string) (FailReport, error) {
	return o.FailFrom(ctx, id, bytes.NewReader(output), failType)
}

// MaxKeptOutput is how much of a failing command's output FailFrom holds in
// memory: its end, which Failure Details and the error summary come from.
// The signature is of all of it.
const MaxKeptOutput = 1 << 20

// FailFrom is Fail for output of any size, read from r as it comes: the
// signature is computed over all of it, and only its last MaxKeptOutput
// bytes are held.
func (o *Orchestrator) FailFrom(ctx context.Context, id string, r io.Reader, failType string) (FailReport, error) {
	sw, err := o.NewSignature()
	if err != nil {
		return FailReport{ID: id}, err
	}
	out, err := ReadOutput(r, sw)
	if err != nil {
		return FailReport{ID: id}, fmt.Errorf("reading the output: %w", err)
	}
	sig, older := sums(sw)
	return o.recordFailure(ctx, id, Failure{Type: failType, Output: out, Signature: sig, Older: older,
		Silent: isSilent(out), Tests: testRunOf(false, out.Tail, "")}, "")
}

// recordFailure records the failure f of issue id, at the current time;
// check names the Verify check that failed, if one did.
func (o *Orchestrator) recordFailure(ctx context.Context, id string, f Failure, check string) (FailReport, error) {
	threshold := o.Config.AutoRetry.HaltAfterRepeats
	sig, failType := f.Signature, f.Type
	rep := FailReport{ID: id, Threshold: threshold, Signature: sig}
	output := f.Output.Tail
	now := o.now()
	f.Time = now
	err := o.updateIssue(ctx, id, func(is *issuequeue.Issue, st *issuequeue.State) (issuequeue.Change, error) {
		u, err := ReadUsage(o.Dir, now)
		if err != nil {
			return issuequeue.Change{}, fmt.Errorf("reading the event log: %w", err)
		}
		if u.Spend, err = ReadIssueLedger(o.Dir); err != nil {
			return issuequeue.Change{}, fmt.Errorf("reading the event log: %w", err)
		}
		d := DecideFail(is, f, o.Config, u)
		rep.RepeatCount, rep.Progressed, rep.Halted, rep.Code, rep.Attempt = d.RepeatCount, d.Progressed, d.Halted, d.Code, d.Attempt
		rep.Status = issuequeue.StatusPending
		if d.Halted {
			rep.Status = issuequeue.StatusEscalated
		}
		// The events are part of the change: the daily budgets and the
		// repeats across issues count failures from the ledger.
		events := []Event{{Time: now, Event: EvAttempt, IssueID: id, RunID: st.RunID, Attempt: d.Attempt, Status: "failed",
			FailureType: failType, Signature: sig, RepeatCount: d.RepeatCount, Error: d.Error, Silent: f.Silent, Check: check,
			FailingTests: loggedTests(f.Tests)}}
		if d.Halted {
			events = append(events, Event{Time: now, Event: EvEscalated, IssueID: id, RunID: st.RunID, Reason: string(d.Code),
				Code: d.Code, Signature: sig, RepeatCount: d.RepeatCount, Error: d.Because, Silent: f.Silent, Fingerprint: o.fingerprint(is)})
		}
		lines, err := o.log().Lines(events...)
		if err != nil {
			return issuequeue.Change{}, err
		}
		after := func() error {
			fmt.Fprintf(o.Stdout, "%s %s: signature %s, repeat %d/%d\n", id, failType, sig, d.RepeatCount, threshold)
			if d.Progressed {
				fmt.Fprintf(o.Stdout, "%s: fewer failing tests than its last failure: the count starts again and the attempt is given back\n", id)
			}
			if !d.Halted {
				return nil
			}
			ti := o.tmplIssue(is)
			ti.Signature, ti.RepeatCount, ti.Status = sig, d.RepeatCount, issuequeue.StatusEscalated
			ti.FailureDetails = string(output)
			if tail, _, _ := Tail(output, DetailsMaxLines, DetailsMaxBytes); len(tail) < len(output) {
				ti.FailureDetails = string(tail)
			}
			if d.Code != CodeRepeatedFailure {
				fmt.Fprintf(o.Stdout, "%s halted (%s): %s\n", id, d.Code, d.Because)
			}
			return o.render("halted", templates.Halted{Issue: ti, Threshold: threshold, Command: o.invocation()})
		}
		return issuequeue.Change{Queue: d.Edits, Log: lines, After: after}, nil
	})
	return rep, err
}

// maxLoggedTests bounds the failing tests an attempt's event names.
const maxLoggedTests = 200

// loggedTests are the failing tests a failure's output named, for its
// attempt's event: none where no runner's report was read, or too many.
func loggedTests(t TestRun) []string {
	if !t.Known || len(t.Failing) > maxLoggedTests {
		return nil
	}
	return t.Failing
}

// ResolveFromLoop is resolve run by a loop of "orchestrator run": a claim.
// An issue with a Verify check keeps its Status until the tool's own
// verification passes; one without is resolved, recorded as resolved by
// the loop, unverified.
func (o *Orchestrator) ResolveFromLoop(ctx context.Context, id string) error {
	now := o.now()
	return o.updateIssue(ctx, id, func(is *issuequeue.Issue, st *issuequeue.State) (issuequeue.Change, error) {
		if is.Verify != "" {
			return issuequeue.Change{After: func() error {
				fmt.Fprintf(o.Stdout, "%s: the loop says it is fixed; it stays %s until its Verify check %q passes\n", id, is.Status, is.Verify)
				return o.log().Record(Event{Time: now, Event: EvResolveClaimed, IssueID: id, RunID: st.RunID})
			}}, nil
		}
		lines, err := o.log().Lines(Event{Time: now, Event: EvResolved, IssueID: id, RunID: st.RunID, Resolution: ResolvedUnverified,
			TotalAttempts: is.RetryCount + 1})
		if err != nil {
			return issuequeue.Change{}, err
		}
		return issuequeue.Change{Queue: []issuequeue.Edit{issuequeue.SetField(id, issuequeue.FieldStatus, issuequeue.StatusResolved)}, Log: lines,
			After: func() error {
				fmt.Fprintf(o.Stdout, "%s resolved by the loop, unverified (it has no Verify check)\n", id)
				return nil
			}}, nil
	})
}

// Resolve marks issue id resolved, with the SUCCEEDED banner if it took retries.
func (o *Orchestrator) Resolve(ctx context.Context, id string) error {
	now := o.now()
	return o.updateIssue(ctx, id, func(is *issuequeue.Issue, st *issuequeue.State) (issuequeue.Change, error) {
		lines, err := o.log().Lines(Event{Time: now, Event: EvResolved, IssueID: id, RunID: st.RunID, Resolution: issuequeue.StatusResolved,
			TotalAttempts: is.RetryCount + 1})
		if err != nil {
			return issuequeue.Change{}, err
		}
		after := func() error {
			if is.RetryCount > 0 {
				ti := o.tmplIssue(is)
				ti.Status = issuequeue.StatusResolved
				return o.render("succeeded", templates.Succeeded{Issue: ti})
			}
			fmt.Fprintf(o.Stdout, "%s resolved\n", id)
			return nil
		}
		return issuequeue.Change{Queue: []issuequeue.Edit{issuequeue.SetField(id, issuequeue.FieldStatus, issuequeue.StatusResolved)}, Log: lines, After: after}, nil
	})
}
