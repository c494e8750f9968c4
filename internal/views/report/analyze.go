package report

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/autoretry/orchestrator/issuequeue"
	"github.com/autoretry/orchestrator/orchestrator"
)

// Result classes, used as CSS classes and chart colours.
const (
	classOK   = "ok"
	classBad  = "bad"
	classWarn = "warn"
	classOpen = "open"
	classGrey = "muted"
)

// run is one run of history.csv: its loops in order.
type run struct {
	ID       string
	Start    time.Time
	End      time.Time
	Loops    []orchestrator.LoopRecord
	Regular  int
	Auto     int
	Outcome  string // from the run_finished event, if logged
	Resolved int
}

// failure is one recorded failure of an issue.
type failure struct {
	Time      time.Time
	Type      string
	Signature string
	Error     string
}

// issue is what the report knows of one issue, from the queue, the archive
// and the retry log.
type issue struct {
	ID, Summary, Status, Priority string
	Known                         bool // in the queue or the archive
	Archived                      bool
	Created                       time.Time
	Retries                       int
	MaxRetries                    int
	Halted                        bool
	Failures                      []failure
	Escalations                   []orchestrator.Event
	Resolved                      time.Time // last "resolved" event with resolution resolved
	FirstSeen                     time.Time // earliest logged event
	LastEvent                     string    // terminal event of an issue no longer in the files
}

// streak is a run of identical failure signatures in a row.
type streak struct {
	Issue      *issue
	Signature  string
	Len        int
	From, To   time.Time
	Halted     bool // the streak that halted the issue
	FirstError string
	last       int // index in Issue.Failures of its last failure
}

// longestStreak returns the longest run of one signature in a row.
func (is *issue) longestStreak() int {
	best := 0
	for _, s := range streaksOf(is) {
		best = max(best, s.Len)
	}
	if best == 0 && len(is.Failures) > 0 {
		best = 1
	}
	return best
}

func streaksOf(is *issue) []streak {
	var out []streak
	fs := is.Failures
	for i := 0; i < len(fs); {
		j := i + 1
		for j < len(fs) && fs[j].Signature != "" && fs[j].Signature == fs[i].Signature {
			j++
		}
		if j-i >= 2 {
			out = append(out, streak{Issue: is, Signature: fs[i].Signature, Len: j - i, From: fs[i].Time, To: fs[j-1].Time,
				Halted: is.Halted && j == len(fs), FirstError: fs[i].Error, last: j - 1})
		}
		i = j
	}
	return out
}

// resolutionTime is how long a resolved issue took: from Created (or its
// first logged event) to its resolution; ok is false when either is unknown.
func (is *issue) resolutionTime() (time.Duration, bool) {
	if is.Resolved.IsZero() {
		return 0, false
	}
	start := is.Created
	if start.IsZero() || start.After(is.Resolved) {
		start = is.FirstSeen
	}
	if start.IsZero() || start.After(is.Resolved) {
		return 0, false
	}
	return is.Resolved.Sub(start), true
}

// result says how the issue ended, in words, and its class.
func (is *issue) result() (string, string) {
	switch is.Status {
	case issuequeue.StatusResolved:
		if is.Retries == 0 {
			return "success (first attempt)", classOK
		}
		return "success (retry worked)", classOK
	case issuequeue.StatusSkipped:
		if len(is.Escalations) > 0 {
			return "skipped (escalated)", classGrey
		}
		return "skipped", classGrey
	case issuequeue.StatusEscalated:
		switch {
		case is.Halted:
			return fmt.Sprintf("escalated: same failure %d× in a row", is.longestStreak()), classBad
		case len(is.Escalations) > 0:
			return "escalated: " + reasonText(is.Escalations[len(is.Escalations)-1]), classBad
		}
		return "escalated", classBad
	case issuequeue.StatusInProgress:
		return "in progress", classOpen
	case issuequeue.StatusPending:
		return "open (pending)", classOpen
	}
	switch is.LastEvent {
	case "resolved":
		return "success (archived elsewhere)", classOK
	case "skipped":
		return "skipped (no longer in the queue)", classGrey
	case "escalated":
		return "escalated (no longer in the queue)", classBad
	}
	return "no longer in the queue", classGrey
}

// reasonText turns an escalation event's reason into words.
func reasonText(ev orchestrator.Event) string {
	switch ev.Reason {
	case "max_retries_exceeded", string(orchestrator.CodeMaxRetries):
		if ev.TotalAttempts > 0 {
			return fmt.Sprintf("retries exhausted (%d)", ev.TotalAttempts)
		}
		return "retries exhausted"
	case string(orchestrator.CodeRepeatedAcross), string(orchestrator.CodeOscillation):
		if ev.Error != "" {
			return "halted: " + ev.Error
		}
	case "same_failure_repeated", string(orchestrator.CodeRepeatedFailure):
		if ev.RepeatCount > 0 {
			return fmt.Sprintf("same failure %d× in a row", ev.RepeatCount)
		}
		return "same failure repeated"
	case string(orchestrator.CodePermanentError):
		if ev.Error != "" {
			return "permanent error (" + ev.Error + ")"
		}
		return "permanent error"
	case "":
		return "escalated"
	}
	return strings.ReplaceAll(ev.Reason, "_", " ")
}

// latest records at as k's time in m unless m holds a later one, and
// reports whether it did: of events taken in file order, the last of the
// latest time wins, as when they are sorted by time.
func latest[K comparable](m map[K]time.Time, k K, at time.Time) bool {
	if old, ok := m[k]; ok && at.Before(old) {
		return false
	}
	m[k] = at
	return true
}

// analysis is everything the page shows, computed once.
type analysis struct {
	Runs    []*run // the latest runs, oldest first
	Totals  *Runs  // every run the report covers
	Wall    time.Duration
	Issues  []*issue // queue order, then archive, then issues only the log knows
	Escal   []orchestrator.Event
	CapHits []orchestrator.Event
	// Responses holds, by issue, what people answered, in time order.
	Responses  map[string][]orchestrator.Event
	EventCount int // events read
	Breaker    string
	HasLoops   bool
}

func analyze(in Input) *analysis {
	a := &analysis{Responses: map[string][]orchestrator.Event{}}
	runs := in.Runs
	if runs == nil {
		runs = &Runs{}
		for _, r := range in.History {
			runs.Add(r)
		}
	}
	a.Totals = runs
	a.Runs, a.Wall = runs.latest()
	byRun := map[string]*run{}
	for _, rn := range a.Runs {
		byRun[rn.ID] = rn
	}
	a.HasLoops = runs.Loops > 0
	a.Breaker = runs.Breaker
	if in.State != nil && in.State.Breaker != "" {
		a.Breaker = in.State.Breaker
	}

	byID := map[string]*issue{}
	var queued, archived, logOnly []*issue
	add := func(q *issuequeue.Queue, into *[]*issue) {
		if q == nil {
			return
		}
		for _, qi := range q.Issues {
			if byID[qi.ID] != nil || q.Issue(qi.ID) != qi {
				// The queue's copy is the current one; of the archive's
				// copies of an issue, the newest.
				continue
			}
			is := &issue{ID: qi.ID, Summary: qi.Summary(), Status: qi.Status, Priority: qi.Priority, Known: true,
				Archived: into == &archived, Created: qi.Created, Retries: qi.RetryCount, Halted: qi.Halted}
			if in.MaxRetries != nil {
				is.MaxRetries = in.MaxRetries(qi)
			} else if qi.HasMaxRetries {
				is.MaxRetries = qi.MaxRetries
			} else {
				is.MaxRetries = 10
			}
			is.Failures = historyFailures(qi)
			byID[qi.ID] = is
			*into = append(*into, is)
		}
	}
	add(in.Queue, &queued)
	add(in.Archive, &archived)

	// The events are taken one at a time, in file order; what depends on
	// their order in time is put in it afterwards, so the result is what
	// the events sorted by time (ties in file order) give.
	type mark struct {
		at  time.Time
		seq int
	}
	first := map[*issue]mark{}         // an issue's earliest event
	terminal := map[*issue]time.Time{} // its latest escalation or resolution
	finished := map[*run]time.Time{}   // a run's latest run_finished
	named := map[*issue]bool{}
	logged := map[*issue][]failure{}
	triggers := map[*issue]int{}
	seq := 0
	in.eachEvent(func(ev orchestrator.Event) {
		seq++
		a.EventCount++
		if ev.Event == orchestrator.EvCapReached {
			a.CapHits = append(a.CapHits, ev)
		}
		if rn := byRun[ev.RunID]; rn != nil && ev.Event == orchestrator.EvRunFinished && latest(finished, rn, ev.Time) {
			rn.Outcome = ev.Status
		}
		if ev.IssueID == "" {
			return
		}
		is := byID[ev.IssueID]
		if is == nil {
			is = &issue{ID: ev.IssueID}
			byID[ev.IssueID] = is
			logOnly = append(logOnly, is)
		}
		named[is] = true
		if old, ok := first[is]; !ok || ev.Time.Before(old.at) {
			first[is] = mark{ev.Time, seq}
			is.FirstSeen = ev.Time
		}
		switch ev.Event {
		case orchestrator.EvAttempt:
			if ev.Status == "" || ev.Status == "failed" {
				logged[is] = append(logged[is], failure{Time: ev.Time, Type: ev.FailureType, Signature: ev.Signature, Error: ev.Error})
			}
		case orchestrator.EvTriggered:
			triggers[is]++
		case orchestrator.EvEscalated:
			is.Escalations = append(is.Escalations, ev)
			a.Escal = append(a.Escal, ev)
			if latest(terminal, is, ev.Time) {
				is.LastEvent = "escalated"
			}
		case orchestrator.EvResolved:
			if ev.Resolution == issuequeue.StatusResolved && !ev.Time.Before(is.Resolved) {
				is.Resolved = ev.Time
			}
			if latest(terminal, is, ev.Time) {
				is.LastEvent = ev.Resolution
				if ev.Resolution == issuequeue.StatusResolved {
					is.LastEvent = "resolved"
				}
			}
		case orchestrator.EvUserResponse:
			a.Responses[is.ID] = append(a.Responses[is.ID], ev)
		}
	})

	byTime := func(evs []orchestrator.Event) {
		sort.SliceStable(evs, func(i, j int) bool { return evs[i].Time.Before(evs[j].Time) })
	}
	byTime(a.CapHits)
	byTime(a.Escal)
	for _, evs := range a.Responses {
		byTime(evs)
	}
	for is, fs := range logged {
		sort.SliceStable(fs, func(i, j int) bool { return fs[i].Time.Before(fs[j].Time) })
		// The log holds the full signatures; the Attempt History table
		// only their first 12 digits, and loses nothing the log has.
		if len(fs) >= len(is.Failures) {
			is.Failures = fs
		}
	}
	for _, is := range byID {
		byTime(is.Escalations)
	}
	for is, n := range triggers {
		// A person's "retry" resets Retry-Count; the log still counts
		// every auto-retry loop the issue was given.
		is.Retries = max(is.Retries, n)
	}
	// Issues only the log knows, in the order of their first event.
	sort.SliceStable(logOnly, func(i, j int) bool {
		a, b := first[logOnly[i]], first[logOnly[j]]
		return a.at.Before(b.at) || a.at.Equal(b.at) && a.seq < b.seq
	})
	a.Issues = queued
	for _, is := range archived {
		// Within a window, the archive gives the issues filed in it or
		// named by its log.
		if in.Since.IsZero() || !is.Created.Before(in.Since) || named[is] {
			a.Issues = append(a.Issues, is)
		}
	}
	a.Issues = append(a.Issues, logOnly...)
	return a
}

// historyFailures reads an issue's Attempt History table.
func historyFailures(qi *issuequeue.Issue) []failure {
	header, rows, ok := qi.Table(issuequeue.SectionAttemptHistory)
	if !ok {
		return nil
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.ToLower(strings.TrimSpace(h))] = i
	}
	cell := func(r []string, name string) string {
		if i, ok := col[name]; ok && i < len(r) {
			return strings.TrimSpace(r[i])
		}
		return ""
	}
	var out []failure
	for _, r := range rows {
		f := failure{Type: cell(r, "type"), Signature: cell(r, "signature"), Error: cell(r, "error")}
		f.Time, _ = time.Parse(time.RFC3339, cell(r, "time"))
		out = append(out, f)
	}
	return out
}

// summary is retry summary over every issue.
type summary struct {
	Total, FirstAttempt, Retried, RetrySuccess int
	Escalated, Halted, Skipped, Open           int
	Loops, AutoLoops, Transient                int
	Wall                                       time.Duration
}

func (a *analysis) summary() summary {
	var s summary
	for _, is := range a.Issues {
		s.Total++
		if is.Retries > 0 {
			s.Retried++
		}
		switch is.Status {
		case issuequeue.StatusResolved:
			if is.Retries == 0 {
				s.FirstAttempt++
			} else {
				s.RetrySuccess++
			}
		case issuequeue.StatusSkipped:
			s.Skipped++
		case issuequeue.StatusPending, issuequeue.StatusInProgress:
			s.Open++
		}
		if is.Status == issuequeue.StatusEscalated || len(is.Escalations) > 0 {
			s.Escalated++
		}
		if is.Halted {
			s.Halted++
		}
	}
	s.Loops, s.AutoLoops, s.Transient, s.Wall = a.Totals.Loops, a.Totals.Auto, a.Totals.Transient, a.Wall
	return s
}

// pct formats part of whole as a whole percentage.
func pct(part, whole int) string {
	if whole == 0 {
		return "–"
	}
	return strconv.Itoa((part*100+whole/2)/whole) + "%"
}

// duration formats d for people: two units at most.
func duration(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int64(d.Round(time.Second) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		if s%60 == 0 {
			return fmt.Sprintf("%dm", s/60)
		}
		return fmt.Sprintf("%dm %ds", s/60, s%60)
	case s < 2*86400:
		if s%3600/60 == 0 {
			return fmt.Sprintf("%dh", s/3600)
		}
		return fmt.Sprintf("%dh %dm", s/3600, s%3600/60)
	}
	if s%86400/3600 == 0 {
		return fmt.Sprintf("%dd", s/86400)
	}
	return fmt.Sprintf("%dd %dh", s/86400, s%86400/3600)
}

// stamp formats a time in UTC, to the minute.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	return t.UTC().Format("2006-01-02 15:04") + " UTC"
}

func shortSig(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}
