package orchestrator

import (
	"sort"
	"strconv"
	"strings"

	"github.com/autoretry/orchestrator/issuequeue"
)

// Policy holds the limits the end-of-loop check applies (SPEC §5, §8).
type Policy struct {
	GlobalCap        int            // auto-retry loops per run
	MaxRetries       int            // per-issue default when Max-Retries is missing
	MaxRetriesByType map[string]int // per-type defaults, by lower-case Type
	HaltAfterRepeats int            // identical signatures in a row that halt an issue
	SentinelPresent  bool           // no_auto_retry exists
}

// MaxRetriesFor returns the retry limit of an issue: its own Max-Retries,
// else the default for its Type, else the global default.
func (p Policy) MaxRetriesFor(is *issuequeue.Issue) int {
	if is.HasMaxRetries {
		return is.MaxRetries
	}
	if n, ok := p.MaxRetriesByType[strings.ToLower(is.Type)]; ok {
		return n
	}
	return p.MaxRetries
}

// CheckOutcome is what the end-of-loop check decided.
type CheckOutcome int

const (
	// CheckRetry: another loop should run for the triggered issues (exit 0).
	CheckRetry CheckOutcome = iota
	// CheckNothing: no issue needs a loop (exit 1).
	CheckNothing
	// CheckHuman: a safeguard stopped auto-retry or a person is needed (exit 3).
	CheckHuman
)

// Decision is the result of the end-of-loop check, before anything is written.
type Decision struct {
	Outcome CheckOutcome

	// Disabled says why auto-retry is off ("" when it is on). When it is
	// set, nothing is changed.
	Disabled string
	// WouldQualify lists the issues that would have qualified had
	// auto-retry been enabled.
	WouldQualify []*issuequeue.Issue

	// Exhausted lists candidates that reached their retry limit; they are
	// escalated.
	Exhausted []*issuequeue.Issue
	// CapReached is set when the run's global cap stopped the retry.
	CapReached bool
	// Triggered lists the issues another loop is for, in retry order.
	Triggered []*issuequeue.Issue

	Total      int // total_auto_retries after the check
	QueueEdits []issuequeue.Edit
	StateEdits []issuequeue.Edit
}

// Decide performs the end-of-loop check of SPEC §5 on parsed files. It
// changes nothing itself: the edits it returns are written by the caller.
func Decide(q *issuequeue.Queue, st *issuequeue.State, p Policy) Decision {
	var d Decision
	d.Total = st.TotalAutoRetries
	var candidates, qualifying []*issuequeue.Issue
	for _, is := range q.Issues {
		if is.AutoRetry && is.Status == issuequeue.StatusPending && !is.Halted {
			candidates = append(candidates, is)
		}
	}
	for _, is := range candidates {
		if is.RetryCount >= p.MaxRetriesFor(is) {
			d.Exhausted = append(d.Exhausted, is)
		} else {
			qualifying = append(qualifying, is)
		}
	}
	SortForRetry(qualifying)

	switch {
	case p.SentinelPresent:
		d.Disabled = "the sentinel file no_auto_retry exists"
	case !st.AutoRetryEnabled:
		d.Disabled = "auto_retry_enabled is false in session_state.md"
	}
	if d.Disabled != "" {
		d.WouldQualify = qualifying
		d.Exhausted = nil
		d.Outcome = CheckNothing
		if len(qualifying) > 0 {
			d.Outcome = CheckHuman
		}
		return d
	}

	for _, is := range d.Exhausted {
		d.QueueEdits = append(d.QueueEdits, issuequeue.SetField(is.ID, issuequeue.FieldStatus, issuequeue.StatusEscalated))
	}
	if len(qualifying) == 0 {
		d.Outcome = CheckNothing
		if len(d.Exhausted) > 0 {
			d.Outcome = CheckHuman
		}
		return d
	}
	if st.TotalAutoRetries >= p.GlobalCap {
		d.CapReached = true
		d.WouldQualify = qualifying
		d.Outcome = CheckHuman
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
