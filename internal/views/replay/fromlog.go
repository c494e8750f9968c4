package replay

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/autoretry/orchestrator/issuequeue"
	"github.com/autoretry/orchestrator/orchestrator"
	"github.com/autoretry/orchestrator/signature"
)

// FromLog makes a history of the runs a state directory's event log
// records since since, with what the tool decided in them as Recorded and
// its config.toml as Config. The log keeps what the world did, not all of
// it as it was:
//   - failing output is kept as its signature and first error line (the
//     engine is given the signature; failing tests it could count are
//     not known);
//   - the queue when the log starts is today's queue with the issues the
//     loops filed taken out and each issue's counters as its first
//     recorded attempt found them;
//   - an agent's tokens and cost reach the engine as Claude Code's result
//     line when the log says the agent was Claude Code, else the cost as
//     $ORCHESTRATOR_COST_FILE; its usage windows are not kept.
func FromLog(dir string, since time.Time) (*History, error) {
	cfgText, err := os.ReadFile(filepath.Join(dir, "config.toml"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	queue, err := os.ReadFile(filepath.Join(dir, "issue_queue.md"))
	if err != nil {
		return nil, err
	}
	b := &logHistory{h: &History{Name: filepath.Base(dir), Label: Never, Kind: KindRecorded, Source: dir, Config: string(cfgText)},
		runs: map[string]int{}, first: map[string]orchestrator.Event{}, filed: map[string]bool{}}
	errs := orchestrator.EachEvent(dir, since, b.event)
	if len(errs) > 0 {
		return nil, fmt.Errorf("reading the event log: %w", errors.Join(errs...))
	}
	if len(b.h.Runs) > 0 {
		b.h.Start = b.h.Runs[0].At
	}
	q := issuequeue.ParseQueue("issue_queue.md", queue)
	if err := q.Err(); err != nil {
		return nil, err
	}
	if b.h.Queue, err = b.startQueue(q); err != nil {
		return nil, err
	}
	b.describeFiled(q)
	for _, o := range b.h.Recorded {
		sortHalts(o.Halts)
	}
	return b.h, nil
}

// logHistory builds a history as the events come.
type logHistory struct {
	h     *History
	runs  map[string]int                // run id -> index
	cur   *Run                          // the run events belong to
	loop  *Loop                         // the loop they belong to
	execs []Exec                        // of the loop being built
	first map[string]orchestrator.Event // an issue's first event, then its first attempt
	filed map[string]bool               // issues a loop filed
	// curLoop is the current run's loop in progress.
	curLoop int
	agent   string
	// person holds what a person did between loops, for the next loop.
	person []string
}

func (b *logHistory) event(ev orchestrator.Event) {
	switch ev.Event {
	case orchestrator.EvRunStarted, orchestrator.EvStopped:
		if _, ok := b.runs[ev.RunID]; ev.RunID != "" && !ok {
			b.runs[ev.RunID] = len(b.h.Runs)
			b.h.Runs = append(b.h.Runs, Run{At: ev.Time.UTC()})
			b.h.Recorded = append(b.h.Recorded, Outcome{Run: len(b.h.Runs)})
			b.cur, b.loop, b.execs = &b.h.Runs[len(b.h.Runs)-1], nil, nil
		}
	}
	if ev.IssueID != "" {
		if _, ok := b.first[ev.IssueID]; !ok {
			b.first[ev.IssueID] = ev
		}
		if ev.Event == orchestrator.EvAttempt && b.first[ev.IssueID].Event != orchestrator.EvAttempt {
			// Its counters as its first failure found them; Retry-Count
			// from its first claim, if that came before.
			f := ev
			if b.first[ev.IssueID].Event == orchestrator.EvTriggered {
				f.Attempt = b.first[ev.IssueID].Attempt
			}
			b.first[ev.IssueID] = f
		}
	}
	i, ok := b.runs[ev.RunID]
	if !ok || b.cur == nil || &b.h.Runs[i] != b.cur {
		b.between(ev)
		return
	}
	rec := &b.h.Recorded[i]
	rec.note(ev, &b.curLoop)
	if !worldEvents[ev.Event] || (ev.Event == orchestrator.EvAdded || ev.Event == orchestrator.EvRefiled) && !ev.FromLoop {
		return
	}
	l := b.open()
	switch ev.Event {
	case orchestrator.EvExec:
		b.agent = ev.Agent
		x := Exec{Minutes: float64(max(ev.DurationMS, 1)) / 60000, Cost: ev.Cost}
		if ev.Tokens != nil {
			x.Tokens = ev.Tokens.Counted()
		}
		if ev.StoppedBy == orchestrator.CodeHung {
			x.Silent = x.Minutes
		}
		if ev.Agent == "claude" && (ev.Tokens != nil || ev.Cost > 0) {
			x.Output = claudeResult(ev)
			x.Cost = 0 // stated by the agent: one source counts
		}
		b.execs = append(b.execs, x)
	case orchestrator.EvTransient:
		// What said it was transient, and the wait the engine chose.
		if n := len(b.execs); n > 0 {
			b.execs[n-1].Exit = max(b.execs[n-1].Exit, 1)
			b.execs[n-1].Output += fmt.Sprintf("%s\nRetry-After: %d\n", ev.Reason, (ev.DurationMS+999)/1000)
		}
	case orchestrator.EvRateLimitWindow:
		// The limit the last execution met, lifting then.
		x := &l.Exec
		if n := len(b.execs); n > 0 && b.loop != nil {
			x = &b.execs[n-1]
		}
		x.Exit = max(x.Exit, 1)
		x.Output += fmt.Sprintf("usage limit reached|%d\n", ev.Until.Unix())
	case orchestrator.EvLoop:
		x := Exec{}
		if n := len(b.execs); n > 0 {
			x, l.Tries = b.execs[n-1], b.execs[:n-1]
		}
		switch ev.Status {
		case orchestrator.ResultFailed, orchestrator.ResultPermanent:
			x.Exit = exitOf(ev.Error)
			if ev.OutputTail != "" {
				x.Output += ev.OutputTail
			}
		case orchestrator.ResultTimeout:
			x.Minutes = max(x.Minutes, float64(ev.DurationMS)/60000) + 1
		}
		l.Exec = x
		if ev.Workspace != nil {
			l.Workspace = ev.Workspace.State
		}
		b.loop, b.execs = nil, nil
	case orchestrator.EvAdded, orchestrator.EvRefiled:
		if ev.FromLoop {
			b.filed[ev.IssueID] = true
			l.Add = append(l.Add, NewIssue{ID: ev.IssueID})
		}
	case orchestrator.EvAttempt:
		out := testsOutput(ev.FailingTests, ev.Error)
		if ev.Silent {
			out = ""
		}
		if ev.Signature != "" && !ev.Silent {
			setMap(&l.Signatures, ev.IssueID, ev.Signature)
		}
		if ev.Check != "" {
			setMap(&l.Verify, ev.IssueID, Result{Exit: 1, Output: out})
		} else {
			setMap(&l.Fail, ev.IssueID, out)
		}
	case orchestrator.EvResolveClaimed:
		l.Resolve = append(l.Resolve, ev.IssueID)
	case orchestrator.EvResolved:
		if ev.Resolution == orchestrator.ResolvedUnverified {
			l.Resolve = append(l.Resolve, ev.IssueID)
		} else {
			setMap(&l.Verify, ev.IssueID, Result{})
		}
	case orchestrator.EvUserResponse:
		if a := personOf(ev); a != "" {
			l.Person = append(l.Person, a)
		}
	}
}

// worldEvents are the events that say what the world did in a loop: the
// others are the tool's decisions.
var worldEvents = map[string]bool{
	orchestrator.EvExec: true, orchestrator.EvTransient: true, orchestrator.EvRateLimitWindow: true, orchestrator.EvLoop: true,
	orchestrator.EvAdded: true, orchestrator.EvRefiled: true, orchestrator.EvAttempt: true, orchestrator.EvResolveClaimed: true,
	orchestrator.EvResolved: true, orchestrator.EvUserResponse: true,
}

// open returns the loop an event of the current run belongs to, starting
// one at its first execution.
func (b *logHistory) open() *Loop {
	if b.loop == nil {
		b.cur.Loops = append(b.cur.Loops, Loop{Person: b.person})
		b.loop, b.person = &b.cur.Loops[len(b.cur.Loops)-1], nil
	}
	return b.loop
}

// between takes what a person did outside a run.
func (b *logHistory) between(ev orchestrator.Event) {
	if ev.Event == orchestrator.EvUserResponse {
		if a := personOf(ev); a != "" {
			b.person = append(b.person, a)
		}
	}
}

// personOf is a person's response as a history's action.
func personOf(ev orchestrator.Event) string {
	switch ev.Response {
	case "retry", "skip":
		return ev.Response + " " + ev.IssueID
	}
	return ""
}

func setMap[V any](m *map[string]V, k string, v V) {
	if *m == nil {
		*m = map[string]V{}
	}
	(*m)[k] = v
}

// exitOf reads "exit status N" of a failed loop's event.
func exitOf(s string) int {
	if f := strings.Fields(s); len(f) > 0 {
		if n, err := strconv.Atoi(strings.TrimRight(f[len(f)-1], ")")); err == nil && n != 0 {
			return n
		}
	}
	return 1
}

// claudeResult is Claude Code's result line stating an execution's tokens
// and cost.
func claudeResult(ev orchestrator.Event) string {
	usage := map[string]int64{}
	if t := ev.Tokens; t != nil {
		usage = map[string]int64{"input_tokens": t.Input, "output_tokens": t.Output, "cache_read_input_tokens": t.CacheRead,
			"cache_creation_input_tokens": t.CacheWrite}
	}
	b, _ := json.Marshal(map[string]any{"type": "result", "subtype": "success", "is_error": false, "total_cost_usd": ev.Cost, "usage": usage})
	return string(b) + "\n"
}

// startQueue is the queue as the log starts: today's, without the issues
// the loops filed, each other issue with the counters its first recorded
// attempt found.
func (b *logHistory) startQueue(q *issuequeue.Queue) (string, error) {
	var edits []issuequeue.Edit
	for _, is := range q.Issues {
		if b.filed[is.ID] {
			edits = append(edits, issuequeue.RemoveIssue(is.ID))
			continue
		}
		ev, ok := b.first[is.ID]
		if !ok {
			continue
		}
		sig, repeats := "", 0
		if ev.Event == orchestrator.EvAttempt && ev.RepeatCount > 1 {
			sig, repeats = ev.Signature, ev.RepeatCount-1
		}
		edits = append(edits,
			issuequeue.SetField(is.ID, issuequeue.FieldStatus, issuequeue.StatusPending),
			issuequeue.SetField(is.ID, issuequeue.FieldHalted, "false"),
			issuequeue.SetField(is.ID, issuequeue.FieldRetryCount, strconv.Itoa(retriesBefore(ev))),
			issuequeue.SetField(is.ID, issuequeue.FieldFailureSignature, sig),
			issuequeue.SetField(is.ID, issuequeue.FieldSignatureRepeatCount, strconv.Itoa(repeats)),
			issuequeue.SetField(is.ID, issuequeue.FieldPreviousSignatures, "[]"))
	}
	out, err := q.Apply(edits...)
	if err != nil {
		return "", err
	}
	return string(out), nil
}

// describeFiled gives each issue a loop filed the summary, priority and
// check today's queue has for it.
func (b *logHistory) describeFiled(q *issuequeue.Queue) {
	for i := range b.h.Runs {
		for j := range b.h.Runs[i].Loops {
			for k := range b.h.Runs[i].Loops[j].Add {
				n := &b.h.Runs[i].Loops[j].Add[k]
				n.Summary = n.ID
				if is := q.Issue(n.ID); is != nil {
					n.Summary, n.Priority, n.Verify = is.Summary(), is.Priority, is.Verify
				}
			}
		}
	}
}

// testsOutput is a failure's output as the log keeps it: the failing
// tests it named, in a runner's words that name them again, else its
// first error line.
func testsOutput(names []string, line string) string {
	if len(names) > 0 {
		var b strings.Builder
		for _, n := range names {
			fmt.Fprintf(&b, "--- FAIL: %s (0.00s)\n", n)
		}
		b.WriteString("FAIL\n")
		if got, known := signature.FailingTests([]byte(b.String())); known && slices.Equal(got, names) {
			return b.String()
		}
	}
	return line + "\n"
}

// retriesBefore is an issue's Retry-Count before its first event: a
// claim or a failure names its attempt; after anything else, none.
func retriesBefore(ev orchestrator.Event) int {
	if ev.Event == orchestrator.EvAttempt || ev.Event == orchestrator.EvTriggered {
		return max(ev.Attempt-1, 0)
	}
	return 0
}
