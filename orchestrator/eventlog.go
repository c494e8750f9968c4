package orchestrator

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/statefile"
	"github.com/autoretry/orchestrator/issuequeue"
)

// Event is one entry of the retry logs: logs/retry.log for
// people, logs/retry.jsonl for programs. Zero fields are left out.
type Event struct {
	Time          time.Time `json:"timestamp"`
	Event         string    `json:"event"`
	IssueID       string    `json:"issue_id,omitempty"`
	RunID         string    `json:"run_id,omitempty"`
	Loop          int       `json:"loop,omitempty"`
	Attempt       int       `json:"attempt,omitempty"`
	Status        string    `json:"status,omitempty"`
	FailureType   string    `json:"failure_type,omitempty"`
	Error         string    `json:"error,omitempty"`
	Signature     string    `json:"signature,omitempty"`
	RepeatCount   int       `json:"repeat_count,omitempty"`
	Reason        string    `json:"reason,omitempty"`
	Response      string    `json:"response,omitempty"`
	Resolution    string    `json:"resolution,omitempty"`
	TotalAttempts int       `json:"total_attempts,omitempty"`
	DurationMS    int64     `json:"duration_ms,omitempty"`
	FeedbackLines int       `json:"feedback_lines,omitempty"`
	Kind          string    `json:"kind,omitempty"` // of a loop: regular, auto_retry
	Cost          float64   `json:"cost,omitempty"` // a loop execution's reported cost
	Code          Code      `json:"code,omitempty"` // the reason code of a stop or halt
	Until         time.Time `json:"until,omitzero"`
	// What the agent reported of a loop execution, where [agent] kind
	// reads its output: its tokens, the error it ended with, and its
	// provider's usage window.
	Tokens      *EventTokens `json:"tokens,omitempty"`
	AgentError  string       `json:"agent_error,omitempty"`
	WindowUsed  float64      `json:"window_used,omitempty"` // share of the window used, 0..1
	WindowReset time.Time    `json:"window_reset,omitzero"` // when that window resets
	// Windows are its reports of each usage window it named (a 5-hour
	// and a weekly one); Agent the agent whose output it was.
	Windows []WindowReport `json:"windows,omitempty"`
	Agent   string         `json:"agent,omitempty"`

	// Of a loop: what it did to the workspace, its progress verdict, and
	// the facts the verdict rests on (for replay).
	Workspace *WorkspaceChange `json:"workspace,omitempty"`
	Progress  string           `json:"progress,omitempty"`
	Facts     *LoopProgress    `json:"progress_facts,omitempty"`

	// FromLoop marks an issue filed (added or filed again) from inside a
	// loop: issues_filed_per_day counts these.
	FromLoop bool `json:"from_loop,omitempty"`
	// Seen is how many times an issue filed again has been filed.
	Seen int `json:"seen,omitempty"`
	// OutputTail is the last lines of a failed loop's output (its exit
	// status is in Error).
	OutputTail string `json:"output_tail,omitempty"`
	// Silent marks a failure whose command printed nothing: its signature
	// says only which check failed how, so it never counts across issues.
	Silent bool `json:"silent,omitempty"`
	// Check is the Verify check whose failure an attempt records.
	Check string `json:"check,omitempty"`
	// FailingTests are the tests a failure's output named, where a test
	// runner's report was read (at most maxLoggedTests): the
	// progress rules compare them, and replay gives them back.
	FailingTests []string `json:"failing_tests,omitempty"`
	// StoppedBy is the reason code of the rule that stopped a loop
	// execution while it ran: a budget its spend reached, or hung.
	StoppedBy Code `json:"stopped_by,omitempty"`
	// Issues are the issues a loop execution was run for: what it spent
	// counts in full against each one's allowance.
	Issues []string `json:"issues,omitempty"`
	// Fingerprint is what a halted issue was halted on (the halt's
	// escalated event); Cause why a halt_released event released it.
	Fingerprint *Fingerprint `json:"fingerprint,omitempty"`
	Cause       string       `json:"cause,omitempty"`
}

// EventTokens are the tokens an agent reported for one loop execution, as it
// stated them.
type EventTokens struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cache_read"`
	CacheWrite int64 `json:"cache_write"`
	// CacheInInput is the part of Input that is cache reads, where the
	// agent counts them in its input (Codex, Gemini).
	CacheInInput int64 `json:"cache_read_in_input,omitempty"`
}

// Counted are the tokens the budgets count: input plus output, cache reads
// not counted.
func (t EventTokens) Counted() int64 { return t.Input - t.CacheInInput + t.Output }

// Log event names.
const (
	EvAttempt          = "attempt"
	EvFeedbackInjected = "feedback_injected"
	EvEscalated        = "escalated"
	EvUserResponse     = "user_response"
	EvResolved         = "resolved"
	EvTriggered        = "triggered"
	EvCapReached       = "cap_reached"
	EvHalted           = "halted"
	EvRunStarted       = "run_started"
	EvRunFinished      = "run_finished"
	EvLoop             = "loop"
	EvTransient        = "transient_retry"
	// EvExec is one execution of the loop command (re-runs after transient
	// failures included), with its wall time and cost: the daily budgets
	// count these.
	EvExec = "loop_exec"
	// EvAutoRetryLoop is recorded when the check starts an auto-retry loop.
	EvAutoRetryLoop = "auto_retry_loop"
	// EvStopped is a run or check stopped by a rule, with its code.
	EvStopped = "stopped"
	// EvResolveClaimed is a loop's resolve of an issue with a Verify check:
	// a claim its verification decides.
	EvResolveClaimed = "resolve_claimed"
	// EvGuard is a change a loop made to what the limits depend on, and
	// that the loop guard undid (Reason says what).
	EvGuard = "guard"
	// EvRateLimitWindow is a rate-limit window opened (until Until).
	EvRateLimitWindow = "rate_limit_window"
	// EvHaltReleased is a halted issue released, by a person or because
	// what it was halted on changed (Cause).
	EvHaltReleased = "halt_released"
)

// Events of "orchestrator add".
const (
	// EvAdded is a new issue filed.
	EvAdded = "added"
	// EvRefiled is an open issue filed again (the same summary or
	// failure): nothing new was created; Seen counts the filings.
	EvRefiled = "refiled"
)

// EventLog appends events to the logs of a state directory. Appends are
// single writes to files opened with O_APPEND, so concurrent writers do not
// interleave within a line.
type EventLog struct {
	Dir string // state directory
}

func (l EventLog) paths() Paths { return PathsIn(l.Dir) }

// Record appends ev to both logs.
func (l EventLog) Record(ev Event) error {
	lines, err := l.Lines(ev)
	if err != nil {
		return err
	}
	return issuequeue.AppendLog(lines...)
}

// Lines renders events as the lines Record would append, for a change
// that appends them with its writes (issuequeue.Change.Log).
func (l EventLog) Lines(evs ...Event) ([]issuequeue.LogLine, error) {
	var out []issuequeue.LogLine
	for _, ev := range evs {
		j, err := json.Marshal(ev)
		if err != nil {
			return nil, err
		}
		out = append(out, issuequeue.LogLine{Path: l.paths().Ledger(), Line: append(j, '\n')},
			issuequeue.LogLine{Path: l.paths().TextLog(), Line: []byte(textLine(ev))})
	}
	return out, nil
}

// textLine renders ev in retry.log format:
//
//	[2026-01-26T14:30:00Z] [RETRY] [ISSUE-…] attempt=1 status=failed type=verification_failed
//	[2026-01-26T14:30:00Z] [RETRY] [ISSUE-…] error="2 tests failed"
func textLine(ev Event) string {
	subject := ev.IssueID
	if subject == "" {
		subject = "run " + ev.RunID
	}
	head := fmt.Sprintf("[%s] [RETRY] [%s] ", ev.Time.UTC().Format(time.RFC3339), subject)
	var kv []string
	add := func(k string, v any) {
		switch x := v.(type) {
		case string:
			if x != "" {
				kv = append(kv, k+"="+quoteLog(x))
			}
		case int:
			if x != 0 {
				kv = append(kv, k+"="+strconv.Itoa(x))
			}
		case int64:
			if x != 0 {
				kv = append(kv, k+"="+strconv.FormatInt(x, 10))
			}
		}
	}
	var b strings.Builder
	switch ev.Event {
	case EvAttempt:
		add("attempt", ev.Attempt)
		add("status", ev.Status)
		add("type", ev.FailureType)
		add("signature", shortSig(ev.Signature))
		add("repeat", ev.RepeatCount)
		b.WriteString(head + strings.Join(kv, " ") + "\n")
		if ev.Error != "" {
			b.WriteString(head + "error=" + quoteLog(truncate(ev.Error, errorSummaryMax)) + "\n")
		}
		return b.String()
	case EvFeedbackInjected:
		return head + "injecting_feedback attempt=" + strconv.Itoa(ev.Attempt) + "\n"
	case EvEscalated:
		return head + "escalating reason=" + quoteLog(ev.Reason) + "\n"
	case EvUserResponse:
		kv = append(kv, "user_response="+quoteLog(ev.Response))
		add("reason", ev.Reason)
		return head + strings.Join(kv, " ") + "\n"
	case EvResolved:
		return head + "resolved status=" + ev.Resolution + "\n"
	}
	add("run", ev.RunID)
	add("loop", ev.Loop)
	add("attempt", ev.Attempt)
	add("status", ev.Status)
	add("reason", ev.Reason)
	add("error", ev.Error)
	add("duration_ms", ev.DurationMS)
	add("kind", ev.Kind)
	add("code", string(ev.Code))
	add("cause", ev.Cause)
	add("progress", ev.Progress)
	if ev.Cost != 0 {
		kv = append(kv, "cost="+strconv.FormatFloat(ev.Cost, 'f', -1, 64))
	}
	if !ev.Until.IsZero() {
		kv = append(kv, "until="+ev.Until.UTC().Format(time.RFC3339))
	}
	add("seen", ev.Seen)
	add("output_tail", ev.OutputTail)
	if ev.FromLoop {
		kv = append(kv, "from_loop=true")
	}
	return head + ev.Event + " " + strings.Join(kv, " ") + "\n"
}

func quoteLog(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\"=\n\\") {
		return s
	}
	return strconv.Quote(s)
}

func shortSig(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// Prune drops log entries older than the retention periods ([logs]
// text_retention and jsonl_retention). Lines without a readable time are
// kept.
func (l EventLog) Prune(now time.Time, text, jsonl time.Duration) error {
	if err := pruneFile(l.paths().TextLog(), now.Add(-text), textTime); err != nil {
		return err
	}
	return pruneFile(l.paths().Ledger(), now.Add(-jsonl), jsonTime)
}

func textTime(line []byte) (time.Time, bool) {
	if len(line) < 3 || line[0] != '[' {
		return time.Time{}, false
	}
	end := bytes.IndexByte(line, ']')
	if end < 0 {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, string(line[1:end]))
	return t, err == nil
}

// pruneFile rewrites path without the lines older than cutoff. Logs only
// grow at the end, so it keeps everything from the first line that is not
// older (or has no readable time) on: a run reads the few lines that aged
// out since the last one. The rest is copied, not held, so the first prune
// of a large log does not hold it in memory. Callers hold the write lock so
// that no event is appended meanwhile.
func pruneFile(path string, cutoff time.Time, when func([]byte) (time.Time, bool)) error {
	f, size, err := openLog(path)
	if f == nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	var off int64
	for {
		// A line longer than the buffer (an event with a long reason) is
		// dated by its start, which holds its time, and skipped whole.
		line, err := r.ReadSlice('\n')
		if len(line) == 0 {
			break // every line was old
		}
		if t, ok := when(line); !ok || !t.Before(cutoff) {
			break
		}
		n := int64(len(line))
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = r.ReadSlice('\n')
			n += int64(len(line))
		}
		off += n
		if err != nil {
			break
		}
	}
	if off == 0 {
		return nil
	}
	// Replaced, never written in place, and refused if it is a link; the
	// part kept is copied, not held.
	return statefile.WriteAtomic(path, func(w io.Writer) error {
		_, err := io.Copy(w, io.NewSectionReader(f, off, size-off))
		return err
	})
}

// ResolvedUnverified is the resolution of an issue without a Verify check
// that a loop resolved: nothing but the loop's word says it is fixed.
const ResolvedUnverified = "resolved_unverified"
