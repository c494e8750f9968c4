package orchestrator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/autoretry/orchestrator/issuequeue"
	"github.com/autoretry/orchestrator/templates"
)

// CheckOutcome is what the end-of-loop check decided.
type CheckOutcome int

const (
	// CheckRetry: another loop should run for the triggered issues (exit 0).
	CheckRetry CheckOutcome = iota
	// CheckNothing: no issue needs a loop now (exit 1).
	CheckNothing
	// CheckHuman: a safeguard stopped auto-retry or a person is needed (exit 3).
	CheckHuman
)

// Decision is the result of the end-of-loop check, before anything is written.
type Decision struct {
	Outcome CheckOutcome

	// Stop is the rule that kept the check from starting a loop although
	// issues were waiting, or that escalated issues; nil when it retries or
	// nothing waits.
	Stop *Verdict
	// Verdicts are the answers of every rule a loop start depends on, in
	// the order they are applied; Issues says for every auto-retry
	// candidate whether it is retried and why.
	Verdicts []Verdict
	Issues   []IssueVerdict

	// Disabled says why auto-retry is off or paused ("" when it is on).
	// When it is set, nothing is changed.
	Disabled string
	// WouldQualify lists the issues that would have qualified had no rule
	// stopped the check.
	WouldQualify []*issuequeue.Issue

	// Exhausted lists candidates that reached their retry limit; Halted
	// those that carry a signature another issue was halted on. Both are
	// escalated.
	Exhausted []*issuequeue.Issue
	Halted    []*issuequeue.Issue
	// CapReached is set when the run's global cap stopped the retry.
	CapReached bool
	// Triggered lists the issues another loop is for, in retry order.
	Triggered []*issuequeue.Issue
	// Quarantined lists the issues left out because they have errors of
	// their own.
	Quarantined []*issuequeue.Issue

	Total      int // total_auto_retries after the check
	QueueEdits []issuequeue.Edit
	StateEdits []issuequeue.Edit
}

// Decide performs the end-of-loop check on parsed files and the other
// inputs. It changes nothing itself: the edits it returns are written by
// the caller.
func Decide(in Inputs) Decision {
	q, st := in.Queue, in.State
	var d Decision
	d.Total = st.TotalAutoRetries
	d.Quarantined = q.Quarantined
	var qualifying []*issuequeue.Issue
	for _, is := range q.Issues {
		if !is.PendingAutoRetry() {
			continue
		}
		iv := issueVerdict(in, is)
		d.Issues = append(d.Issues, iv)
		switch {
		case iv.Retry:
			qualifying = append(qualifying, is)
		case iv.Code == CodeMaxRetries:
			d.Exhausted = append(d.Exhausted, is)
		default:
			d.Halted = append(d.Halted, is)
		}
	}
	SortForRetry(qualifying)

	all, stop := Gate(in, KindAutoRetry)
	d.Verdicts = all
	if stop != nil && (stop.Rule == CodePaused || stop.Rule == CodeSentinel || stop.Rule == CodeDisabled) {
		// A person's stop: nothing is changed, not even escalations.
		d.Stop, d.Disabled = stop, stop.Reason
		d.WouldQualify = qualifying
		d.Exhausted, d.Halted = nil, nil
		d.Outcome = CheckNothing
		if len(qualifying) > 0 && NeedsPerson(stop.Rule) {
			d.Outcome = CheckHuman
		}
		return d
	}

	for _, is := range d.Exhausted {
		d.QueueEdits = append(d.QueueEdits, issuequeue.SetField(is.ID, issuequeue.FieldStatus, issuequeue.StatusEscalated))
	}
	for _, is := range d.Halted {
		d.QueueEdits = append(d.QueueEdits, haltEdits(is.ID)...)
	}
	if len(qualifying) == 0 {
		d.Outcome = CheckNothing
		if len(d.Exhausted)+len(d.Halted) > 0 {
			d.Outcome = CheckHuman
			d.Stop = escalationVerdict(d, in.inv())
		}
		return d
	}
	if stop != nil {
		d.Stop = stop
		d.CapReached = stop.Rule == CodeRunCap
		d.WouldQualify = qualifying
		d.Outcome = CheckHuman
		if !NeedsPerson(stop.Rule) {
			d.Outcome = CheckNothing
		}
		return d
	}
	var reasons []string
	for _, is := range qualifying {
		d.QueueEdits = append(d.QueueEdits,
			issuequeue.SetField(is.ID, issuequeue.FieldRetryCount, strconv.Itoa(is.RetryCount+1)),
			issuequeue.SetField(is.ID, issuequeue.FieldStatus, issuequeue.StatusInProgress))
		reasons = append(reasons, is.ID+": "+is.Summary())
	}
	d.Triggered = qualifying
	d.Total = st.TotalAutoRetries + 1
	d.StateEdits = append(d.StateEdits,
		issuequeue.SetField(issuequeue.SectionAutoRetry, issuequeue.StateTotalAutoRetries, strconv.Itoa(d.Total)),
		issuequeue.SetField(issuequeue.SectionAutoRetry, issuequeue.StateLastRetryReason, strings.Join(reasons, "; ")))
	d.Outcome = CheckRetry
	return d
}

// priorityRank orders priorities critical → low; unknown values sort last.
func priorityRank(p string) int {
	for i, v := range issuequeue.Priorities {
		if v == p {
			return i
		}
	}
	return len(issuequeue.Priorities)
}

// SortForRetry orders issues the way every list of retried issues is shown
// and handed to the loop: blocking first, then by priority, then fresh work
// before retries (fewer previous retries first), then oldest first.
func SortForRetry(issues []*issuequeue.Issue) {
	sort.SliceStable(issues, func(i, j int) bool {
		a, b := issues[i], issues[j]
		if a.Blocking != b.Blocking {
			return a.Blocking
		}
		if ra, rb := priorityRank(a.Priority), priorityRank(b.Priority); ra != rb {
			return ra < rb
		}
		if a.RetryCount != b.RetryCount {
			return a.RetryCount < b.RetryCount
		}
		if !a.Created.Equal(b.Created) {
			if a.Created.IsZero() || b.Created.IsZero() {
				return !a.Created.IsZero()
			}
			return a.Created.Before(b.Created)
		}
		return false
	})
}

// CheckReport is the result of Check, for --json.
type CheckReport struct {
	Outcome          string         `json:"outcome"` // "retry", "nothing" or "stop"
	Code             Code           `json:"code,omitempty"`
	Reason           string         `json:"reason,omitempty"`
	Hint             string         `json:"hint,omitempty"`
	Triggered        []string       `json:"triggered"`
	Exhausted        []string       `json:"exhausted"`
	Halted           []string       `json:"halted"`
	WouldQualify     []string       `json:"would_qualify"`
	Quarantined      []string       `json:"quarantined"` // left out: errors of their own
	TotalAutoRetries int            `json:"total_auto_retries"`
	GlobalCap        int            `json:"global_cap"`
	Rules            []Verdict      `json:"rules"`
	Issues           []IssueVerdict `json:"issues"`
	Decision         Decision       `json:"-"`
}

// runCheck says that a check is the one a run makes after its loop number
// loops: [loop] max_loops and the circuit breaker apply.
type runCheck struct {
	run   bool
	loops int
}

// Check performs the end-of-loop check under the write lock and prints its
// banners.
func (o *Orchestrator) Check(ctx context.Context) (CheckReport, error) {
	return o.check(ctx, runCheck{})
}

// errReleaseFirst stops a check that found a halt to release: the release
// is a change of its own, made first (see releaseChanged).
var errReleaseFirst = errors.New("a halt to release first")

func (o *Orchestrator) check(ctx context.Context, rc runCheck) (CheckReport, error) {
	rep, err := o.checkOnce(ctx, rc, true)
	if errors.Is(err, errReleaseFirst) {
		if err := o.releaseChanged(ctx); err != nil {
			return rep, err
		}
		rep, err = o.checkOnce(ctx, rc, false)
	}
	return rep, err
}

// checkOnce is one transaction of the check. Unless released is false it
// first looks for halts to release, and gives way (errReleaseFirst) if
// there are any, so that a check reads and writes the files once when
// there are none, as nearly always.
func (o *Orchestrator) checkOnce(ctx context.Context, rc runCheck, release bool) (CheckReport, error) {
	var rep CheckReport
	err := o.store().Update(ctx, func(q *issuequeue.Queue, st *issuequeue.State) (issuequeue.Change, error) {
		if release {
			l, err := ReadIssueLedger(o.Dir)
			if err != nil {
				return issuequeue.Change{}, fmt.Errorf("reading the event log: %w", err)
			}
			if _, evs := releaseHalts(q, l, o.Config, o.now(), st.RunID); len(evs) > 0 {
				return issuequeue.Change{}, errReleaseFirst
			}
		}
		in, err := o.inputs(q, st)
		if err != nil {
			return issuequeue.Change{}, err
		}
		in.Run, in.RunLoops = rc.run, rc.loops
		var kept map[string]string
		if !rc.run {
			kept = keepClaimedCounts(q, in.Usage)
		}
		d := Decide(in)
		rep = o.checkReport(d)
		var edits []issuequeue.Edit
		for id := range kept {
			if !slices.ContainsFunc(d.Triggered, func(is *issuequeue.Issue) bool { return is.ID == id }) {
				edits = append(edits, issuequeue.SetField(id, issuequeue.FieldRetryCount, strconv.Itoa(q.Issue(id).RetryCount)))
			}
		}
		edits = append(edits, d.QueueEdits...)
		// The events are written with the files, as part of the change:
		// the daily budgets and the loop guard count from them.
		var events []Event
		for _, id := range slices.Sorted(maps.Keys(kept)) {
			events = append(events, Event{Time: o.now(), Event: EvGuard, RunID: st.RunID, Code: CodeGuard, Reason: kept[id]})
		}
		// The banners are rendered now, with the events, and printed
		// once the files are written.
		var banners bytes.Buffer
		announced, err := o.announceCheck(d, st, &banners)
		if err != nil {
			return issuequeue.Change{}, err
		}
		lines, err := o.log().Lines(append(events, announced...)...)
		if err != nil {
			return issuequeue.Change{}, err
		}
		return issuequeue.Change{Queue: edits, State: d.StateEdits, Log: lines, After: func() error {
			for _, id := range slices.Sorted(maps.Keys(kept)) {
				fmt.Fprintf(o.Stdout, "guard: %s (a person resets it with '%s retry ID')\n", kept[id], o.invocation())
			}
			_, err := o.Stdout.Write(banners.Bytes())
			return err
		}}, nil
	})
	return rep, err
}

// keepClaimedCounts is the loop guard of a driver's loop (begin, then
// check after each loop the driver runs itself): the agent runs between
// the tool's commands, so a Retry-Count below the one the check last wrote,
// with no person's answer to the issue since, was lowered by the loop. The
// issue keeps the count the check wrote (in q, for the decision; the caller
// writes it); the returned map says so, by issue.
func keepClaimedCounts(q *issuequeue.Queue, u Usage) map[string]string {
	kept := map[string]string{}
	for _, is := range q.Issues {
		if n := u.Claimed[is.ID]; is.RetryCount < n {
			kept[is.ID] = fmt.Sprintf("%s: Retry-Count %d is below the %d the check wrote, and no person answered the issue since: kept at %d",
				is.ID, is.RetryCount, n, n)
			is.RetryCount = n
		}
	}
	return kept
}

// inputs gathers what a decision depends on besides the two files.
func (o *Orchestrator) inputs(q *issuequeue.Queue, st *issuequeue.State) (Inputs, error) {
	now := o.now()
	u, err := ReadUsage(o.Dir, now)
	if err != nil && u.Unreadable == nil { // an unreadable budget stops loops: ruleBudgetReadable
		return Inputs{}, fmt.Errorf("reading the event log: %w", err)
	}
	if u.Spend, err = ReadIssueLedger(o.Dir); err != nil {
		return Inputs{}, fmt.Errorf("reading the event log: %w", err)
	}
	p, err := ReadPause(o.Dir)
	if err != nil {
		return Inputs{}, err
	}
	return Inputs{Queue: q, State: st, Usage: u, Config: o.Config, Now: now, Sentinel: o.paths().SentinelPresent(), Pause: p,
		Invocation: o.invocation(), Dir: o.Dir}, nil
}

func ids(is []*issuequeue.Issue) []string {
	out := []string{}
	for _, i := range is {
		out = append(out, i.ID)
	}
	return out
}

func (o *Orchestrator) checkReport(d Decision) CheckReport {
	rep := CheckReport{Triggered: ids(d.Triggered), Exhausted: ids(d.Exhausted), Halted: ids(d.Halted), WouldQualify: ids(d.WouldQualify), Quarantined: ids(d.Quarantined),
		TotalAutoRetries: d.Total, GlobalCap: o.Config.AutoRetry.GlobalCap, Rules: d.Verdicts, Issues: d.Issues, Decision: d}
	if rep.Issues == nil {
		rep.Issues = []IssueVerdict{}
	}
	switch d.Outcome {
	case CheckRetry:
		rep.Outcome = "retry"
	case CheckNothing:
		rep.Outcome = "nothing"
	default:
		rep.Outcome = "stop"
	}
	if d.Stop != nil {
		rep.Code, rep.Reason, rep.Hint = d.Stop.Rule, d.Stop.Reason, d.Stop.Hint
	}
	return rep
}

// announceCheck writes the check's banners to w and returns its events, in
// order.
func (o *Orchestrator) announceCheck(d Decision, st *issuequeue.State, w io.Writer) ([]Event, error) {
	now := o.now()
	var evs []Event
	if d.Stop != nil && (d.Outcome == CheckHuman || len(d.WouldQualify) > 0) {
		evs = append(evs, StopFor(d.Stop).Event(now, st.RunID))
	}
	if d.Disabled != "" {
		if d.Stop.Rule == CodePaused {
			fmt.Fprintf(w, "No loop runs: %s.\n", d.Disabled)
		} else {
			fmt.Fprintf(w, "Auto-retry is disabled: %s.\n", d.Disabled)
		}
		if len(d.WouldQualify) > 0 {
			fmt.Fprintf(w, "%d issue(s) would otherwise be retried:\n", len(d.WouldQualify))
			for _, is := range d.WouldQualify {
				fmt.Fprintf(w, "  - %s: %s\n", is.ID, is.Summary())
			}
		}
		return evs, nil
	}
	if len(d.Exhausted) > 0 {
		ex := templates.Exhausted{Dir: o.Dir}
		for _, is := range d.Exhausted {
			ex.Issues = append(ex.Issues, o.tmplIssue(is))
		}
		if err := o.Templates.Render(w, "exhausted", ex); err != nil {
			return nil, err
		}
		for _, is := range d.Exhausted {
			if err := o.Templates.Render(w, "escalation", templates.Escalation{Issue: o.tmplIssue(is), Reason: "exhausted",
				Threshold: o.Config.AutoRetry.HaltAfterRepeats, Command: o.invocation()}); err != nil {
				return nil, err
			}
			evs = append(evs, Event{Time: now, Event: EvEscalated, IssueID: is.ID, RunID: st.RunID, Reason: string(CodeMaxRetries),
				Code: CodeMaxRetries, TotalAttempts: is.RetryCount})
		}
	}
	for _, iv := range d.Issues {
		if iv.Retry || iv.Code == CodeMaxRetries {
			continue
		}
		var is *issuequeue.Issue
		for _, h := range d.Halted {
			if h.ID == iv.ID {
				is = h
			}
		}
		if is == nil {
			continue
		}
		ti := o.tmplIssue(is)
		ti.Status = issuequeue.StatusEscalated
		if err := o.Templates.Render(w, "escalation", templates.Escalation{Issue: ti, Reason: "halted", Detail: iv.Because,
			Threshold: o.Config.AutoRetry.HaltAfterRepeats, Command: o.invocation()}); err != nil {
			return nil, err
		}
		evs = append(evs, Event{Time: now, Event: EvEscalated, IssueID: is.ID, RunID: st.RunID, Reason: string(iv.Code),
			Code: iv.Code, Signature: is.FailureSignature, Error: iv.Because, Fingerprint: o.fingerprint(is)})
	}
	if d.Stop != nil && len(d.WouldQualify) > 0 {
		if d.CapReached {
			evs = append(evs, Event{Time: now, Event: EvCapReached, RunID: st.RunID, Reason: string(CodeRunCap), Code: CodeRunCap})
			return evs, o.Templates.Render(w, "cap", templates.Cap{GlobalCap: o.Config.AutoRetry.GlobalCap, TotalAutoRetries: st.TotalAutoRetries})
		}
		fmt.Fprintf(w, "No auto-retry loop: %s.\n", d.Stop.Reason)
		return evs, nil
	}
	if len(d.Triggered) == 0 {
		if len(d.Exhausted)+len(d.Halted) == 0 {
			fmt.Fprintln(w, "No issue needs an auto-retry loop.")
		}
		return evs, nil
	}
	evs = append(evs, Event{Time: now, Event: EvAutoRetryLoop, RunID: st.RunID, Kind: KindAutoRetry})
	tr := templates.Triggered{}
	for _, is := range d.Triggered {
		ti := o.tmplIssue(is)
		ti.RetryCount++ // the attempt about to run
		ti.Status = issuequeue.StatusInProgress
		tr.Issues = append(tr.Issues, ti)
		evs = append(evs, Event{Time: now, Event: EvTriggered, IssueID: is.ID, RunID: st.RunID, Attempt: is.RetryCount + 1})
	}
	return evs, o.Templates.Render(w, "triggered", tr)
}

// releaseChanged releases, before the check decides, the halted issues
// whose fingerprint changed since their halt, and records a person's
// release made by editing the file (releaseHalts). It is a change of its
// own, so that the check reads the released issues, and their new
// allowance, as it reads every other.
func (o *Orchestrator) releaseChanged(ctx context.Context) error {
	return o.store().Update(ctx, func(q *issuequeue.Queue, st *issuequeue.State) (issuequeue.Change, error) {
		l, err := ReadIssueLedger(o.Dir)
		if err != nil {
			return issuequeue.Change{}, fmt.Errorf("reading the event log: %w", err)
		}
		edits, evs := releaseHalts(q, l, o.Config, o.now(), st.RunID)
		if len(evs) == 0 {
			return issuequeue.Change{}, nil
		}
		lines, err := o.log().Lines(evs...)
		if err != nil {
			return issuequeue.Change{}, err
		}
		return issuequeue.Change{Queue: edits, Log: lines, After: func() error {
			for _, ev := range evs {
				fmt.Fprintf(o.Stdout, "%s released (%s): halted on %s\n", ev.IssueID, ev.Cause, ev.Code)
			}
			return nil
		}}, nil
	})
}
