// Package metrics derives the retry metrics (Prometheus names task_retry_*) from the history
// (history.csv and its rotated months) and the retry log, and writes them in
// the Prometheus text format for node_exporter's textfile collector.
//
// The counters are running totals kept in logs/metrics-state.json with how
// far into each file they have counted (see Update), so that writing the
// textfile after a loop reads that loop's rows and events, not the whole
// history. They are as durable as their source: when the totals are lost or
// no longer match the files, they are counted again from what the files
// still hold, and a counter that goes down then is read by Prometheus as a
// counter reset.
package metrics

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/statefile"
	"github.com/autoretry/orchestrator/issuequeue"
	"github.com/autoretry/orchestrator/orchestrator"
)

// Prefix starts every metric name.
const Prefix = "orchestrator_"

// Retry kinds, the "kind" label of the task_retry counters. An auto_retry
// retry is an issue given another improvement loop; a transient
// retry is a loop run again after a transient failure.
const (
	KindAutoRetry = "auto_retry"
	KindTransient = "transient"
)

// Bucket bounds, in seconds. Transient delays follow the backoff (1 s
// doubling to 30 s) but a "retry after" hint may ask for an hour; a retry
// sequence spans loops of up to [loop] timeout each.
var (
	DelayBuckets    = []float64{0.5, 1, 2, 4, 8, 16, 32, 64, 128, 300, 900, 3600}
	DurationBuckets = []float64{60, 300, 900, 1800, 3600, 7200, 14400, 43200, 86400, 259200, 604800}
)

// failedResults are the loop results counted by failed_loops_total; a
// result history.csv does not define is counted as "unknown", so a
// hand-edited row cannot add label values without bound.
var failedResults = []string{orchestrator.ResultFailed, orchestrator.ResultTimeout, orchestrator.ResultPermanent,
	orchestrator.ResultAborted, "unknown"}

// Snapshot is the set of metrics at one moment.
type Snapshot struct {
	// RetryAttempts, RetrySuccess and RetryFailure are keyed by kind
	// (KindAutoRetry, KindTransient); both keys are always present.
	//
	// auto_retry: attempts are issues given an auto-retry loop (triggered
	// events); successes are issues resolved after at least one retry;
	// failures are issues escalated after retrying (retries exhausted, or
	// the same failure repeated).
	// transient: attempts are loop re-executions (history.csv
	// transient_retries); successes are loops that ended ok after them;
	// failures are loops that still failed (aborted loops count as
	// neither).
	RetryAttempts map[string]int
	RetrySuccess  map[string]int
	RetryFailure  map[string]int

	// ImmediateFailures counts loops stopped by a permanent error without
	// any retry.
	ImmediateFailures int

	// RetryDelay holds the delay before each transient retry.
	RetryDelay Histogram
	// RetryDuration holds, for each issue's retry sequence that ended, the
	// time from its first auto-retry trigger to its resolution, skip or
	// escalation.
	RetryDuration Histogram

	Runs           int            // runs in the history (rows of one run follow each other)
	Loops          int            // rows in the history
	AutoRetryLoops int            // rows of kind auto_retry
	FailedLoops    map[string]int // by result, for every result but ok

	// Last is false when history.csv has no row; the fields below it then
	// describe nothing and are not written.
	Last             bool
	LastLoopFinished time.Time
	RunAutoRetries   int  // total_auto_retries after the last loop
	BreakerOpen      bool // the breaker was open after the last loop

	// IssuesByStatus, QuarantinedIssues and HaltedIssues describe the
	// queue; they are written only after SetQueue.
	IssuesByStatus    map[string]int `json:"-"`
	QuarantinedIssues int            `json:"-"`
	HaltedIssues      int            `json:"-"`

	// Budgets are the daily budgets as spent in the last 24 hours; written
	// only after SetBudgets.
	Budgets []orchestrator.Budget `json:"-"`
}

// SetBudgets adds the daily budgets' gauges.
func (s *Snapshot) SetBudgets(b []orchestrator.Budget) { s.Budgets = b }

// Histogram is a Prometheus histogram: Counts[i] is the number of
// observations ≤ Bounds[i] and > Bounds[i-1]; Counts[len(Bounds)] counts
// those above the last bound.
type Histogram struct {
	Bounds []float64
	Counts []uint64
	Sum    float64
	Count  uint64
}

func newHistogram(bounds []float64) Histogram {
	return Histogram{Bounds: bounds, Counts: make([]uint64, len(bounds)+1)}
}

// Observe adds one observation.
func (h *Histogram) Observe(v float64) {
	i := sort.SearchFloat64s(h.Bounds, v) // first bound ≥ v
	h.Counts[i]++
	h.Sum += v
	h.Count++
}

func newSnapshot() Snapshot {
	s := Snapshot{
		RetryAttempts: map[string]int{KindAutoRetry: 0, KindTransient: 0},
		RetrySuccess:  map[string]int{KindAutoRetry: 0, KindTransient: 0},
		RetryFailure:  map[string]int{KindAutoRetry: 0, KindTransient: 0},
		FailedLoops:   map[string]int{},
		RetryDelay:    newHistogram(DelayBuckets),
		RetryDuration: newHistogram(DurationBuckets),
	}
	for _, r := range failedResults {
		s.FailedLoops[r] = 0
	}
	return s
}

// Compute derives a snapshot from history.csv rows and retry-log events,
// as Update does when it reads them all at once.
func Compute(history []orchestrator.LoopRecord, events []orchestrator.Event) Snapshot {
	t := newTotals()
	for _, r := range history {
		t.addLoop(r)
	}
	for len(events) > 0 {
		n := min(len(events), eventBatch)
		t.addEvents(events[:n])
		events = events[n:]
	}
	return t.Snapshot
}

// addLoop counts one history.csv row. Runs are counted as they start: the
// rows of a run are written together, under the run's lock.
func (t *totals) addLoop(r orchestrator.LoopRecord) {
	s := &t.Snapshot
	if r.RunID != t.LastRun || s.Runs == 0 {
		s.Runs++
		t.LastRun = r.RunID
	}
	s.Loops++
	if r.Kind == "auto_retry" {
		s.AutoRetryLoops++
	}
	switch r.Result {
	case orchestrator.ResultOK:
	case orchestrator.ResultFailed, orchestrator.ResultTimeout, orchestrator.ResultPermanent, orchestrator.ResultAborted:
		s.FailedLoops[r.Result]++
	default:
		s.FailedLoops["unknown"]++
	}
	s.RetryAttempts[KindTransient] += r.TransientRetries
	switch {
	case r.TransientRetries == 0:
		if r.Result == orchestrator.ResultPermanent {
			s.ImmediateFailures++
		}
	case r.Result == orchestrator.ResultOK:
		s.RetrySuccess[KindTransient]++
	case r.Result != orchestrator.ResultAborted:
		s.RetryFailure[KindTransient]++
	}
	s.Last = true
	s.LastLoopFinished = r.Finished
	s.RunAutoRetries = r.TotalAutoRetries
	s.BreakerOpen = r.Breaker == issuequeue.BreakerOpen
}

// eventBatch is how many events are put in time order before they are
// counted: the log is appended in time order, but a line may be logged a
// little late.
const eventBatch = 4096

// addEvents counts retry-log events, taking them in time order.
func (t *totals) addEvents(batch []orchestrator.Event) {
	s := &t.Snapshot
	evs := append([]orchestrator.Event(nil), batch...)
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].Time.Before(evs[j].Time) })
	endSequence := func(ev orchestrator.Event) {
		if at, ok := t.Open[ev.IssueID]; ok {
			s.RetryDuration.Observe(math.Max(0, ev.Time.Sub(at).Seconds()))
			delete(t.Open, ev.IssueID)
		}
	}
	for _, ev := range evs {
		switch ev.Event {
		case orchestrator.EvTriggered:
			s.RetryAttempts[KindAutoRetry]++
			if _, ok := t.Open[ev.IssueID]; !ok {
				t.Open[ev.IssueID] = ev.Time
			}
		case orchestrator.EvResolved:
			if ev.Resolution == issuequeue.StatusResolved && ev.TotalAttempts > 1 {
				s.RetrySuccess[KindAutoRetry]++
			}
			endSequence(ev)
		case orchestrator.EvEscalated:
			if gaveUp(ev) {
				s.RetryFailure[KindAutoRetry]++
			}
			endSequence(ev)
		case orchestrator.EvTransient:
			s.RetryDelay.Observe(float64(ev.DurationMS) / 1000)
		}
	}
}

// SetQueue adds the queue's gauges: issues by status and halted issues.
func (s *Snapshot) SetQueue(q *issuequeue.Queue) {
	s.IssuesByStatus = map[string]int{}
	for _, st := range issuequeue.Statuses {
		s.IssuesByStatus[st] = 0
	}
	s.HaltedIssues = 0
	s.QuarantinedIssues = len(q.Quarantined)
	for _, is := range q.Issues {
		s.IssuesByStatus[is.Status]++
		if is.Halted {
			s.HaltedIssues++
		}
	}
}

// WriteTo writes the snapshot in the Prometheus text exposition format
// (version 0.0.4).
func (s Snapshot) WriteTo(w io.Writer) (int64, error) {
	e := &expo{w: bufio.NewWriter(w)}
	kinds := []string{KindAutoRetry, KindTransient}
	byKind := func(name, help string, m map[string]int) {
		e.family(name, "counter", help)
		for _, k := range kinds {
			e.sample(name, float64(m[k]), "kind", k)
		}
	}
	byKind("task_retry_attempts_total", "Retry attempts: issues given an auto-retry loop (kind=auto_retry), loops run again after a transient failure (kind=transient).", s.RetryAttempts)
	byKind("task_retry_success_total", "Retries that worked: issues resolved after at least one auto-retry loop, loops that ended ok after transient retries.", s.RetrySuccess)
	byKind("task_retry_failure_total", "Retries that did not work: issues escalated after retrying (retries exhausted or the same failure repeated), loops still failing after transient retries.", s.RetryFailure)
	e.single("task_retry_immediate_failure_total", "counter", "Loops stopped by a permanent (non-retryable) error without any retry.", float64(s.ImmediateFailures))
	e.histogram("task_retry_delay_seconds", "Delay before each transient retry of a loop.", s.RetryDelay)
	e.histogram("task_retry_duration_seconds", "Time from an issue's first auto-retry trigger to its resolution, skip or escalation.", s.RetryDuration)

	e.single("runs_total", "counter", "Runs recorded in history.csv.", float64(s.Runs))
	e.single("loops_total", "counter", "Loops recorded in history.csv.", float64(s.Loops))
	e.single("auto_retry_loops_total", "counter", "Auto-retry loops recorded in history.csv.", float64(s.AutoRetryLoops))
	e.family("failed_loops_total", "counter", "Loops that did not end ok, by result.")
	for _, r := range failedResults {
		e.sample("failed_loops_total", float64(s.FailedLoops[r]), "result", r)
	}
	if s.Last {
		e.single("last_loop_finished_timestamp_seconds", "gauge", "When the last recorded loop finished, in seconds since the Unix epoch.", float64(s.LastLoopFinished.Unix()))
		e.single("run_auto_retries", "gauge", "Auto-retry loops used by the latest run (total_auto_retries, compared with the global cap).", float64(s.RunAutoRetries))
	}
	e.single("circuit_breaker_open", "gauge", "1 if the circuit breaker was open after the last loop, else 0.", b2f(s.BreakerOpen))
	if s.IssuesByStatus != nil {
		e.family("issues", "gauge", "Issues in issue_queue.md by status.")
		for _, st := range issuequeue.Statuses {
			e.sample("issues", float64(s.IssuesByStatus[st]), "status", st)
		}
		e.single("halted_issues", "gauge", "Issues in issue_queue.md halted after repeating the same failure.", float64(s.HaltedIssues))
		e.single("quarantined_issues", "gauge", "Issues in issue_queue.md with errors of their own, left alone until a person fixes them.", float64(s.QuarantinedIssues))
	}
	if s.Budgets != nil {
		e.family("budget_used", "gauge", "What each daily budget has used in the last 24 hours (executions, loops, seconds or cost), by its [budget] key.")
		for _, b := range s.Budgets {
			e.sample("budget_used", b.Used, "budget", b.Key)
		}
		e.family("budget_limit", "gauge", "Each daily budget's limit per 24 hours; 0 means off.")
		for _, b := range s.Budgets {
			e.sample("budget_limit", b.Limit, "budget", b.Key)
		}
		e.family("budget_spent", "gauge", "1 if a daily budget is spent and stops loops, else 0.")
		for _, b := range s.Budgets {
			e.sample("budget_spent", b2f(b.Spent), "budget", b.Key)
		}
	}
	if e.err == nil {
		e.err = e.w.Flush()
	}
	return e.n, e.err
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// expo writes exposition lines, keeping the first error.
type expo struct {
	w   *bufio.Writer
	n   int64
	err error
}

func (e *expo) line(s string) {
	if e.err != nil {
		return
	}
	k, err := e.w.WriteString(s + "\n")
	e.n += int64(k)
	e.err = err
}

func (e *expo) family(name, typ, help string) {
	e.line("# HELP " + Prefix + name + " " + escapeHelp(help))
	e.line("# TYPE " + Prefix + name + " " + typ)
}

// single writes a family of one sample without labels.
func (e *expo) single(name, typ, help string, v float64) {
	e.family(name, typ, help)
	e.sample(name, v)
}

// sample writes one sample; labels are name, value pairs.
func (e *expo) sample(name string, v float64, labels ...string) {
	var b strings.Builder
	b.WriteString(Prefix + name)
	if len(labels) > 0 {
		b.WriteByte('{')
		for i := 0; i+1 < len(labels); i += 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(labels[i] + `="` + escapeLabel(labels[i+1]) + `"`)
		}
		b.WriteByte('}')
	}
	b.WriteString(" " + formatValue(v))
	e.line(b.String())
}

func (e *expo) histogram(name, help string, h Histogram) {
	e.family(name, "histogram", help)
	var cum uint64
	for i, le := range h.Bounds {
		cum += h.Counts[i]
		e.sample(name+"_bucket", float64(cum), "le", formatValue(le))
	}
	e.sample(name+"_bucket", float64(h.Count), "le", "+Inf")
	e.sample(name+"_sum", h.Sum)
	e.sample(name+"_count", float64(h.Count))
}

func formatValue(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', -1, 64) // timestamps stay readable
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func escapeHelp(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(s)
}

func escapeLabel(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`).Replace(s)
}

// WriteFile replaces the file at path with the snapshot: it writes a
// temporary file in the same directory, syncs it and renames it over path,
// so that node_exporter never reads half a file. The temporary name does
// not end in .prom, so the textfile collector never picks it up.
func WriteFile(path string, s Snapshot) error {
	err := statefile.WriteAtomic(path, func(w io.Writer) error {
		_, err := s.WriteTo(w)
		return err
	})
	if err != nil {
		return fmt.Errorf("writing metrics: %w", err)
	}
	return nil
}

// gaveUp reports whether an escalation gave up on retrying its issue: out
// of retries, or halted on its failures. Logs written before reasons were
// reason codes name these max_retries_exceeded and same_failure_repeated.
func gaveUp(ev orchestrator.Event) bool {
	switch ev.Code {
	case orchestrator.CodeMaxRetries, orchestrator.CodeRepeatedFailure, orchestrator.CodeRepeatedAcross, orchestrator.CodeOscillation:
		return true
	}
	return ev.Reason == "max_retries_exceeded" || ev.Reason == "same_failure_repeated"
}
