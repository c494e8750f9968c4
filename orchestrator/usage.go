package orchestrator

import (
	"slices"
	"sort"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/config"
	"github.com/autoretry/orchestrator/issuequeue"
)

// Usage is what the event log says about the last 24 hours: the facts the
// daily budgets and the cross-issue rules read. It comes from the tool's own
// append-only log, not from counters in the markdown files, which agents
// can edit.
type Usage struct {
	Since          time.Time
	Execs          []Exec      // executions of the loop command, re-runs included
	AutoRetryLoops []time.Time // auto-retry loops the check started
	Attempts       []Attempt   // failures recorded, oldest first
	Halts          []Attempt   // issues halted on a signature, oldest first
	// Answered holds, by issue, when a person last answered it (retry,
	// fix, …): its own earlier failures no longer count against it.
	Answered map[string]time.Time
	// Claimed holds, by issue, the highest Retry-Count the check wrote
	// since a person last answered the issue.
	Claimed map[string]int
	// Filed holds when each issue filed from inside a loop was added.
	Filed []time.Time
	// Unreadable is why the window could not be read, if it could not:
	// then the figures above are not what was spent.
	Unreadable *UnreadableLogError
	// Spend is what the loops run for each issue spent over the whole
	// event log, not only the window (ReadIssueLedger); nil when the caller did
	// not read it, and then no spend rule applies.
	Spend *IssueLedger
}

// Exec is one execution of the loop command.
type Exec struct {
	At       time.Time // when it ended
	Kind     string
	Duration time.Duration
	Cost     float64
	// Tokens the agent reported (input plus output); WindowUsed and
	// WindowReset its report of its provider's usage window, if any.
	Tokens      int64
	WindowUsed  float64
	WindowReset time.Time
	// Windows are its reports of each usage window it named.
	Windows []WindowReport
}

// WindowReport is the agent's report of one usage window: its name, the
// share used (0..1) and when it resets.
type WindowReport struct {
	Name  string    `json:"name"`
	Used  float64   `json:"used"`
	Reset time.Time `json:"reset,omitzero"`
}

// Attempt is one recorded failure of an issue, or a halt.
type Attempt struct {
	At        time.Time
	IssueID   string
	Signature string
	// Silent marks a failure whose command printed nothing, and a halt on
	// one: it never counts across issues.
	Silent bool
}

func (u Usage) execTimes() []time.Time {
	ts := make([]time.Time, len(u.Execs))
	for i, e := range u.Execs {
		ts[i] = e.At
	}
	return ts
}

// AgentTime is the wall time of the loop command in the window.
func (u Usage) AgentTime() time.Duration {
	return sumOf(u.Execs, func(e Exec) time.Duration { return e.Duration })
}

// Cost is the cost the loops reported in the window.
func (u Usage) Cost() float64 {
	return sumOf(u.Execs, func(e Exec) float64 { return e.Cost })
}

// nextCount returns when fewer than limit of times will be inside the window.
func (u Usage) nextCount(times []time.Time, limit int) time.Time {
	if limit <= 0 || len(times) < limit {
		return time.Time{}
	}
	ts := append([]time.Time(nil), times...)
	sort.Slice(ts, func(i, j int) bool { return ts[i].Before(ts[j]) })
	return ts[len(ts)-limit].Add(config.BudgetWindow)
}

// nextSum returns when the sum of f over the executions inside the window
// will be below limit.
func (u Usage) nextSum(f func(Exec) float64, limit float64) time.Time {
	es := append([]Exec(nil), u.Execs...)
	sort.Slice(es, func(i, j int) bool { return es[i].At.Before(es[j].At) })
	total := 0.0
	for _, e := range es {
		total += f(e)
	}
	for _, e := range es {
		total -= f(e)
		if total < limit {
			return e.At.Add(config.BudgetWindow)
		}
	}
	return time.Time{}
}

// failuresElsewhere counts the failures the same as f of issues other than
// id in the window.
func (u Usage) failuresElsewhere(f Failure, id string) int {
	n := 0
	for _, a := range u.Attempts {
		if a.IssueID != id && !a.Silent && sameFailure(a.Signature, f) {
			n++
		}
	}
	return n
}

// haltedElsewhere reports an issue other than id halted on the same
// failure as f in the window.
func (u Usage) haltedElsewhere(f Failure, id string) (string, bool) {
	for _, h := range u.Halts {
		if h.IssueID != id && !h.Silent && sameFailure(h.Signature, f) {
			return h.IssueID, true
		}
	}
	return "", false
}

// lastFailure is issue is's last recorded failure, as far as the window
// tells: its Failure-Signature, silent when its latest failure with that
// signature in the window printed nothing.
func (u Usage) lastFailure(is *issuequeue.Issue) Failure {
	f := Failure{Signature: is.FailureSignature}
	for _, a := range u.Attempts {
		if a.IssueID == is.ID && isRecorded(is.FailureSignature, a.Signature) {
			f.Silent = a.Silent
		}
	}
	return f
}

// issueSignatures returns the signatures of the failures recorded for id in
// the window since a person last answered it, oldest first.
func (u Usage) issueSignatures(id string) []string {
	var s []string
	for _, a := range u.Attempts {
		if a.IssueID == id && a.At.After(u.Answered[id]) {
			s = append(s, a.Signature)
		}
	}
	return s
}

// sameSignature compares two signatures; a short one (a prefix, as some
// hand-written queues record) matches the full signature it starts.
func sameSignature(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	return len(a) >= 16 && b[:len(a)] == a
}

// usageEvents are the events ReadUsage counts; the others are not decoded.
var usageEvents = map[string]bool{EvExec: true, EvAutoRetryLoop: true, EvAttempt: true, EvUserResponse: true, EvTriggered: true, EvEscalated: true, EvAdded: true}

// usageMemo keeps the window ReadUsage read, for the next call.
var usageMemo ledgerMemo

// ReadUsage reads the last 24 hours (before now) of the event log of a state
// directory. It finds where the window starts reading the log from its end
// (readLedgerSince), so its cost follows the window, not the age of the
// log, and it decodes only the events it counts.
func ReadUsage(dir string, now time.Time) (Usage, error) {
	since := now.Add(-config.BudgetWindow)
	u := Usage{Since: since}
	evs, err := readLedgerStrict(PathsIn(dir).Ledger(), since, usageEvents, &usageMemo)
	if err != nil {
		u.Unreadable = asUnreadable(PathsIn(dir).Ledger(), err)
		return u, u.Unreadable
	}
	for _, ev := range evs {
		if ev.Time.After(now) {
			continue
		}
		switch ev.Event {
		case EvExec:
			x := Exec{At: ev.Time, Kind: ev.Kind, Duration: time.Duration(ev.DurationMS) * time.Millisecond, Cost: ev.Cost,
				WindowUsed: ev.WindowUsed, WindowReset: ev.WindowReset, Windows: ev.Windows}
			if ev.Tokens != nil {
				x.Tokens = ev.Tokens.Counted()
			}
			u.Execs = append(u.Execs, x)
		case EvAutoRetryLoop:
			u.AutoRetryLoops = append(u.AutoRetryLoops, ev.Time)
		case EvAttempt:
			if ev.Signature != "" {
				u.Attempts = append(u.Attempts, Attempt{At: ev.Time, IssueID: ev.IssueID, Signature: ev.Signature, Silent: ev.Silent})
			}
		case EvUserResponse:
			if ev.IssueID != "" {
				if u.Answered == nil {
					u.Answered = map[string]time.Time{}
				}
				u.Answered[ev.IssueID] = ev.Time
				delete(u.Claimed, ev.IssueID)
			}
		case EvTriggered:
			if u.Claimed == nil {
				u.Claimed = map[string]int{}
			}
			u.Claimed[ev.IssueID] = max(u.Claimed[ev.IssueID], ev.Attempt)
		case EvEscalated:
			if ev.Signature != "" && !isSpendCode(ev.Code) { // a halt on a repeated failure
				u.Halts = append(u.Halts, Attempt{At: ev.Time, IssueID: ev.IssueID, Signature: ev.Signature, Silent: ev.Silent})
			}
		case EvAdded:
			if ev.FromLoop {
				u.Filed = append(u.Filed, ev.Time)
			}
		}
	}
	return u, nil
}

// Tokens are the tokens the agents reported in the window (input plus
// output).
func (u Usage) Tokens() int64 {
	return sumOf(u.Execs, func(e Exec) int64 { return e.Tokens })
}

// sumOf adds up f over es, in order.
func sumOf[E any, N int64 | float64 | time.Duration](es []E, f func(E) N) N {
	var n N
	for _, e := range es {
		n += f(e)
	}
	return n
}

// LastWindow returns the latest execution whose agent reported its usage
// window, if any.
func (u Usage) LastWindow() (Exec, bool) {
	var last Exec
	found := false
	for _, e := range u.Execs {
		if e.WindowUsed > 0 && (!found || !e.At.Before(last.At)) {
			last, found = e, true
		}
	}
	return last, found
}

// Windows returns the agent's latest report of each named usage window
// that has not reset by now, in the order they were first reported.
func (u Usage) Windows(now time.Time) []WindowReport {
	var out []WindowReport
	at := map[string]time.Time{}
	for _, e := range u.Execs {
		for _, w := range e.Windows {
			if w.Name == "" || w.Reset.IsZero() || !now.Before(w.Reset) {
				continue
			}
			i := slices.IndexFunc(out, func(o WindowReport) bool { return o.Name == w.Name })
			switch {
			case i < 0:
				out = append(out, w)
			case !e.At.Before(at[w.Name]):
				out[i] = w
			default:
				continue
			}
			at[w.Name] = e.At
		}
	}
	return out
}
