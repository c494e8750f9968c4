package orchestrator

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/autoretry/orchestrator/issuequeue"
)

// What the loops run for each issue spent over the issue's life, read from
// the whole event log: issues live longer than the daily budgets' 24 hours.
// The per-issue caps and the spend since progress (governor_spend.go) are
// rules over these figures.

// Spend is what loops spent: the cost the agent reported, its tokens
// (input plus output as it reported them; cache reads are not counted) and
// the loop command's wall time.
type Spend struct {
	Cost      float64       `json:"cost"`
	Tokens    int64         `json:"tokens"`
	AgentTime time.Duration `json:"agent_time_ns"`
}

func (s *Spend) add(t Spend) {
	s.Cost += t.Cost
	s.Tokens += t.Tokens
	s.AgentTime += t.AgentTime
}

// IssueSpend is what the loops run for one issue spent since its allowance
// started: its creation, a person's retry or fix of it, or the release of
// its halt. A loop run for several issues counts in full for each.
type IssueSpend struct {
	// Since is when the allowance started; zero when that is older than
	// the event log, which forgets what is older than [logs]
	// jsonl_retention.
	Since time.Time `json:"since,omitzero"`
	Total Spend     `json:"total"`
	Loops int       `json:"loops"`
	// SinceProgress is what its loops spent since the last loop judged to
	// have progressed on it (or since Since), and Progressed when that
	// loop ended (zero: none did since Since).
	SinceProgress Spend     `json:"since_progress"`
	Progressed    time.Time `json:"progressed,omitzero"`
	recent        []loopSpend
}

// loopSpend is what one loop spent, its re-runs after transient failures
// included.
type loopSpend struct {
	key loopKey
	Spend
}

type loopKey struct {
	run  string
	loop int
}

// typicalLoops is how many of the last loops a typical loop is the median
// of.
const typicalLoops = 10

// IssueLedger is what the whole event log says of each issue: what the
// loops run for it spent, and its last halt. It holds a few figures per
// issue, whatever the size of the log.
type IssueLedger struct {
	Issues map[string]*IssueSpend
	halts  map[string]*HaltRecord // each issue's last halt
	recent []loopSpend            // the last loops, whichever issues they were for

	open       loopKey // the last loop an execution was recorded for
	openIssues []string
}

// Of returns what issue id's loops spent; the zero IssueSpend when none
// did, or l is nil.
func (l *IssueLedger) Of(id string) IssueSpend {
	if l == nil || l.Issues[id] == nil {
		return IssueSpend{}
	}
	return *l.Issues[id]
}

// Halt returns issue id's last recorded halt, nil when the log holds none.
func (l *IssueLedger) Halt(id string) *HaltRecord {
	if l == nil {
		return nil
	}
	return l.halts[id]
}

// Typical returns what a typical loop of issue id spends: the median of
// its last loops, or, when it ran fewer than 3, of the last loops of any
// issue. ok is false when no loop was recorded.
func (l *IssueLedger) Typical(id string) (s Spend, ok bool) {
	if l == nil {
		return Spend{}, false
	}
	loops := l.recent
	if is := l.Issues[id]; is != nil && len(is.recent) >= 3 {
		loops = is.recent
	}
	if len(loops) == 0 {
		return Spend{}, false
	}
	return Spend{
		Cost:      median(loops, func(x loopSpend) float64 { return x.Cost }),
		Tokens:    median(loops, func(x loopSpend) int64 { return x.Tokens }),
		AgentTime: median(loops, func(x loopSpend) time.Duration { return x.AgentTime }),
	}, true
}

// median returns the median of f over xs (the lower of the two middle
// values of an even count: what a loop needed at least as often as not).
func median[E any, N int64 | float64 | time.Duration](xs []E, f func(E) N) N {
	vs := make([]N, len(xs))
	for i, x := range xs {
		vs[i] = f(x)
	}
	slices.Sort(vs)
	return vs[(len(vs)-1)/2]
}

// spendEvents are the events ReadIssueLedger reads; the others are not
// decoded.
var spendEvents = map[string]bool{EvExec: true, EvLoop: true, EvUserResponse: true, EvAdded: true, EvHaltReleased: true, EvEscalated: true}

// ReadIssueLedger reads the whole event log of a state directory, one line
// at a time: its memory follows the number of issues, not the size of the
// log. What an earlier call read is kept (issueLedgerMemo), and a later
// call reads only what was appended since, unless the log was rewritten
// (pruned) meanwhile: the check reads it before every loop.
func ReadIssueLedger(dir string) (*IssueLedger, error) {
	path := PathsIn(dir).Ledger()
	f, size, err := openLog(path)
	if f == nil {
		return newIssueLedger(), err
	}
	defer f.Close()
	whole, err := wholeLines(f, size)
	if err != nil {
		return nil, err
	}
	m := &issueLedgerMemo
	m.mu.Lock()
	defer m.mu.Unlock()
	l, from := newIssueLedger(), int64(0)
	if m.path == path && m.off > 0 && m.off <= whole && atLine(f, whole, m.off, m.last) {
		l, from = m.l.clone(), m.off
	}
	var last []byte
	read := func(line ledgerLine) error {
		if line.Blank() {
			return nil
		}
		last = append(last[:0], line.Text...)
		if name, ok := eventName(line.Text); ok && (!spendEvents[string(name)] ||
			string(name) == EvLoop && !bytes.Contains(line.Text, progressedMark)) {
			return nil
		}
		var ev spendEvent
		if err := json.Unmarshal(line.Text, &ev); err == nil && spendEvents[ev.Event] {
			l.add(ev.event())
		}
		return nil
	}
	if whole > from {
		if err := scanEvents(io.NewSectionReader(f, from, whole-from), read); err != nil {
			return nil, err
		}
		m.path, m.off, m.last, m.l = path, whole, string(last), l.clone()
	}
	// A last line without its newline (being written, or torn) is read,
	// not kept.
	if size > whole {
		if err := scanEvents(io.NewSectionReader(f, whole, size-whole), read); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// progressedMark is in the loop events the ledger reads: only a loop that
// progressed changes it.
var progressedMark = []byte(`"progress":"` + ProgressProgressed + `"`)

// spendEvent is the part of an event the ledger reads: decoding no more
// keeps a read of the whole log short.
type spendEvent struct {
	Time        time.Time    `json:"timestamp"`
	Event       string       `json:"event"`
	IssueID     string       `json:"issue_id"`
	RunID       string       `json:"run_id"`
	Loop        int          `json:"loop"`
	Response    string       `json:"response"`
	DurationMS  int64        `json:"duration_ms"`
	Cost        float64      `json:"cost"`
	Code        Code         `json:"code"`
	Tokens      *EventTokens `json:"tokens"`
	Progress    string       `json:"progress"`
	Issues      []string     `json:"issues"`
	Fingerprint *Fingerprint `json:"fingerprint"`
}

func (e spendEvent) event() Event {
	return Event{Time: e.Time, Event: e.Event, IssueID: e.IssueID, RunID: e.RunID, Loop: e.Loop, Response: e.Response,
		DurationMS: e.DurationMS, Cost: e.Cost, Code: e.Code, Tokens: e.Tokens, Progress: e.Progress, Issues: e.Issues, Fingerprint: e.Fingerprint}
}

// issueLedgerMemo is what ReadIssueLedger read last: the ledger of one log
// up to offset off, after line last.
var issueLedgerMemo struct {
	mu   sync.Mutex
	path string
	off  int64
	last string
	l    *IssueLedger
}

// clone returns a copy of l that shares nothing with it.
func (l *IssueLedger) clone() *IssueLedger {
	c := &IssueLedger{Issues: make(map[string]*IssueSpend, len(l.Issues)), halts: make(map[string]*HaltRecord, len(l.halts)),
		recent: slices.Clone(l.recent), open: l.open, openIssues: slices.Clone(l.openIssues)}
	for id, s := range l.Issues {
		cs := *s
		cs.recent = slices.Clone(s.recent)
		c.Issues[id] = &cs
	}
	for id, h := range l.halts {
		ch := *h
		c.halts[id] = &ch
	}
	return c
}

// add counts one event.
func (l *IssueLedger) add(ev Event) {
	switch ev.Event {
	case EvExec:
		s := Spend{Cost: ev.Cost, AgentTime: time.Duration(ev.DurationMS) * time.Millisecond}
		if ev.Tokens != nil {
			s.Tokens = ev.Tokens.Input + ev.Tokens.Output
		}
		key := loopKey{ev.RunID, ev.Loop}
		l.open, l.openIssues = key, ev.Issues
		l.recent, _ = addLoop(l.recent, key, s)
		for _, id := range ev.Issues {
			is := l.issue(id)
			is.Total.add(s)
			is.SinceProgress.add(s)
			var first bool
			if is.recent, first = addLoop(is.recent, key, s); first {
				is.Loops++
			}
		}
	case EvLoop:
		if ev.Progress == ProgressProgressed && (loopKey{ev.RunID, ev.Loop}) == l.open {
			for _, id := range l.openIssues {
				is := l.issue(id)
				is.SinceProgress, is.Progressed = Spend{}, ev.Time
			}
		}
	case EvUserResponse:
		if ev.Response == "retry" || ev.Response == "fix" {
			l.restart(ev.IssueID, ev.Time)
		}
		if h := l.halts[ev.IssueID]; h != nil {
			h.Released = true
		}
	case EvAdded:
		l.restart(ev.IssueID, ev.Time)
	case EvHaltReleased:
		l.restart(ev.IssueID, ev.Time)
		if h := l.halts[ev.IssueID]; h != nil {
			h.Released = true
		}
	case EvEscalated:
		if ev.Fingerprint != nil && ev.IssueID != "" {
			l.halts[ev.IssueID] = &HaltRecord{At: ev.Time, Code: ev.Code, Fingerprint: *ev.Fingerprint}
		}
	}
}

func newIssueLedger() *IssueLedger {
	return &IssueLedger{Issues: map[string]*IssueSpend{}, halts: map[string]*HaltRecord{}}
}

// restart starts a new allowance for issue id at t.
func (l *IssueLedger) restart(id string, t time.Time) {
	if id != "" {
		l.Issues[id] = &IssueSpend{Since: t}
	}
}

func (l *IssueLedger) issue(id string) *IssueSpend {
	is := l.Issues[id]
	if is == nil {
		is = &IssueSpend{}
		l.Issues[id] = is
	}
	return is
}

// addLoop adds what one execution spent to the loop it belongs to, the last
// of loops when it is the same loop (an execution recorded without its
// run counts as a loop of its own); it keeps the last typicalLoops loops.
func addLoop(loops []loopSpend, key loopKey, s Spend) ([]loopSpend, bool) {
	if n := len(loops); n > 0 && key.run != "" && loops[n-1].key == key {
		loops[n-1].add(s)
		return loops, false
	}
	if len(loops) == typicalLoops {
		loops = append(loops[:0], loops[1:]...)
	}
	return append(loops, loopSpend{key: key, Spend: s}), true
}

// loopIssues are the issues a loop is run for, whose spend it counts
// against: an auto-retry loop's claimed issues, the regular loop's issues
// in progress as it found them.
func loopIssues(kind string, retried []string, q *issuequeue.Queue) []string {
	if kind == KindAutoRetry {
		return retried
	}
	var ids []string
	for _, is := range q.Issues {
		if is.Status == issuequeue.StatusInProgress {
			ids = append(ids, is.ID)
		}
	}
	return ids
}
