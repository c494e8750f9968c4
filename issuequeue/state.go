package issuequeue

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Session state sections and fields.
const (
	SectionAutoRetry = "Auto-Retry State"
	SectionRun       = "Run"
	SectionBreaker   = "Circuit Breaker"
	// SectionRateLimit holds a rate-limit window: until its end no loop
	// starts. It persists across runs, as the breaker does.
	SectionRateLimit = "Rate Limit"

	StateTotalAutoRetries    = "total_auto_retries"
	StateLastRetryReason     = "last_retry_reason"
	StateAutoRetryEnabled    = "auto_retry_enabled"
	StateRunID               = "run_id"
	StateStartedAt           = "started_at"
	StateFinishedAt          = "finished_at"
	StateLoops               = "loops"
	StateOutcome             = "outcome"
	StateBreaker             = "state"
	StateConsecutiveFailures = "consecutive_failures"
	StateOpenedAt            = "opened_at"
	StateLimitedUntil        = "limited_until"
	StateLimitReason         = "reason"
)

// stateSections are the sections of the session state the tool reads and
// writes; others (a person's notes, another tool's tables) are left alone.
var stateSections = []string{SectionAutoRetry, SectionRun, SectionBreaker, SectionRateLimit}

// Circuit breaker states.
const (
	BreakerClosed   = "closed"
	BreakerOpen     = "open"
	BreakerHalfOpen = "half-open"
)

// Null is how the session state writes "no value".
const Null = "null"

// State is a parsed session_state.md with its fields read. Missing fields
// read as their defaults; "null" reads as the zero value.
type State struct {
	d *doc

	TotalAutoRetries int
	LastRetryReason  string
	AutoRetryEnabled bool // true unless a person set it false

	RunID      string
	StartedAt  time.Time
	FinishedAt time.Time
	Loops      int
	Outcome    string

	Breaker             string
	ConsecutiveFailures int
	OpenedAt            time.Time

	LimitedUntil time.Time // end of the rate-limit window; zero: none
	LimitReason  string
}

// ParseState parses a session state file. Like ParseQueue it never fails;
// problems are findings.
func ParseState(name string, src []byte) *State {
	d := newDoc(name, src)
	st := &State{d: d}
	for hi, h := range d.s.headings {
		if h.level != 2 {
			continue
		}
		owned := slices.Contains(stateSections, h.title)
		if _, dup := d.byKey[h.title]; dup {
			if owned {
				d.findings = append(d.findings, d.finding(h.line, 1, false, "section %q appears twice", h.title))
			}
			continue
		}
		r := &record{}
		d.fillRecord(r, h.title, hi, nil, nil)
		r.foreign = !owned
		d.addRecord(r)
	}
	d.parseTables(func(int, *tableBuf) {})
	st.load()
	sortFindings(d.findings)
	return st
}

func (st *State) load() {
	d := st.d
	get := func(sec, f string) (string, *record) {
		r := d.byKey[sec]
		if r == nil {
			return "", nil
		}
		v, _ := d.field(r, f)
		v = strings.TrimSpace(v)
		if strings.EqualFold(v, Null) {
			v = ""
		}
		return v, r
	}
	bad := func(r *record, f, format string, args ...any) {
		line, col := d.fieldPos(r, f)
		d.findings = append(d.findings, d.finding(line, col, false, "%s: %s", f, fmt.Sprintf(format, args...)))
	}
	num := func(sec, f string) int {
		v, r := get(sec, f)
		if v == "" {
			return 0
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			bad(r, f, "%q is not a whole number", v)
			return 0
		}
		return n
	}
	tm := func(sec, f string) time.Time {
		v, r := get(sec, f)
		if v == "" {
			return time.Time{}
		}
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			bad(r, f, "%q is not an RFC 3339 time or null", v)
		}
		return t
	}
	st.TotalAutoRetries = num(SectionAutoRetry, StateTotalAutoRetries)
	st.LastRetryReason, _ = get(SectionAutoRetry, StateLastRetryReason)
	st.AutoRetryEnabled = true
	if v, r := get(SectionAutoRetry, StateAutoRetryEnabled); v != "" {
		// Only true enables auto-retry: a value that is neither
		// true nor false, which is also an error, disables it.
		b, err := ParseBool(v)
		if err != nil {
			bad(r, StateAutoRetryEnabled, "%v", err)
		}
		st.AutoRetryEnabled = b
	}
	st.RunID, _ = get(SectionRun, StateRunID)
	st.StartedAt = tm(SectionRun, StateStartedAt)
	st.FinishedAt = tm(SectionRun, StateFinishedAt)
	st.Loops = num(SectionRun, StateLoops)
	st.Outcome, _ = get(SectionRun, StateOutcome)
	st.Breaker = BreakerClosed
	if v, r := get(SectionBreaker, StateBreaker); v != "" {
		st.Breaker = enumField(v, BreakerClosed, []string{BreakerClosed, BreakerOpen, BreakerHalfOpen}, func(v, hint string) {
			bad(r, StateBreaker, "%q is not a breaker state (closed, open, half-open)%s", v, hint)
		})
	}
	st.ConsecutiveFailures = num(SectionBreaker, StateConsecutiveFailures)
	st.OpenedAt = tm(SectionBreaker, StateOpenedAt)
	st.LimitedUntil = tm(SectionRateLimit, StateLimitedUntil)
	st.LimitReason, _ = get(SectionRateLimit, StateLimitReason)
}

// Findings returns every problem found, in file order.
func (st *State) Findings() []Finding { return st.d.findings }

// Err returns a *ValidationError if the state has error-level findings.
func (st *State) Err() error { return validationError(st.d.name, st.d.errs()) }

// Source returns the bytes the state was parsed from.
func (st *State) Source() []byte { return st.d.src }

// Field returns the raw value of any field of any section.
func (st *State) Field(section, field string) (string, bool) {
	r := st.d.byKey[section]
	if r == nil {
		return "", false
	}
	return st.d.field(r, field)
}

// Apply returns the state's source with the edits applied; a field of a
// missing section adds the section at the end of the file.
func (st *State) Apply(edits ...Edit) ([]byte, error) { return st.d.apply(edits, true) }

// Rebase is Queue.Rebase for the session state.
func (st *State) Rebase(current []byte, edits ...Edit) ([]byte, error) {
	cur := ParseState(st.d.name, current)
	if err := cur.Err(); err != nil {
		return nil, err
	}
	if err := rebaseCheck(st.d, cur.d, edits); err != nil {
		return nil, err
	}
	return cur.Apply(edits...)
}

// FormatTime writes a time field: RFC 3339 in UTC, or null for the zero time.
func FormatTime(t time.Time) string {
	if t.IsZero() {
		return Null
	}
	return t.UTC().Format(time.RFC3339)
}
