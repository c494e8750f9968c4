package orchestrator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/autoretry/orchestrator/internal/adapters/handoff"
	"github.com/autoretry/orchestrator/internal/foundations/statefile"
	"github.com/autoretry/orchestrator/issuequeue"
)

// A person's word during a loop. The loop guard undoes what a loop
// changes; a person who answers from their own terminal while a loop runs
// must not be undone with it. So a person's command that changes state
// tells the running run, through the socket of package handoff, exactly
// what it sets, before and after it sets it; the run takes the message
// only from a process that does not descend from it, which no loop can
// be. The guard then counts what was taken as part of the state before
// the loop.

// EvPersonChange is a change a person's command made during a loop,
// taken by the run over its socket and recorded by the run.
const EvPersonChange = "person_change"

// PersonChange is what a person's command sets.
type PersonChange struct {
	Command string `json:"command"` // retry, skip, fix, breaker_reset, pause, resume
	Issue   string `json:"issue,omitempty"`
	// Fields are the issue's fields it sets.
	Fields []PersonField `json:"fields,omitempty"`
	// State are the session_state.md fields it sets.
	State []PersonField `json:"state,omitempty"`
	// Pause is the pause file's new content; Resume says it is removed.
	Pause  *string `json:"pause,omitempty"`
	Resume bool    `json:"resume,omitempty"`
}

// PersonField is one field and its new value.
type PersonField struct {
	Section string `json:"section,omitempty"` // of session_state.md
	Field   string `json:"field"`
	Value   string `json:"value"`
}

// freshStart is what a person's retry and fix set: Retry-Count 0, and the
// fields of a release.
func freshStart() []PersonField {
	return append([]PersonField{{Field: issuequeue.FieldRetryCount, Value: "0"}}, releasedFields()...)
}

// RetryChange is what 'orchestrator retry' sets.
func RetryChange(id string) PersonChange {
	return PersonChange{Command: "retry", Issue: id, Fields: freshStart()}
}

// FixChange is what 'orchestrator fix' sets in the issue's fields (the
// instruction aside, which no limit reads).
func FixChange(id string) PersonChange {
	return PersonChange{Command: "fix", Issue: id, Fields: freshStart()}
}

// SkipChange is what 'orchestrator skip' sets.
func SkipChange(id string) PersonChange {
	return PersonChange{Command: "skip", Issue: id, Fields: []PersonField{{Field: issuequeue.FieldStatus, Value: issuequeue.StatusSkipped}}}
}

// BreakerResetChange is what 'orchestrator breaker reset' sets.
func BreakerResetChange() PersonChange {
	const sec = issuequeue.SectionBreaker
	return PersonChange{Command: "breaker_reset", State: []PersonField{
		{Section: sec, Field: issuequeue.StateBreaker, Value: issuequeue.BreakerClosed},
		{Section: sec, Field: issuequeue.StateConsecutiveFailures, Value: "0"},
		{Section: sec, Field: issuequeue.StateOpenedAt, Value: issuequeue.Null},
	}}
}

// PauseChange is what 'orchestrator pause' writes in the pause file.
func PauseChange(until time.Time) PersonChange {
	s := pauseContent(until)
	return PersonChange{Command: "pause", Pause: &s}
}

// ResumeChange is 'orchestrator resume': the pause file removed.
func ResumeChange() PersonChange { return PersonChange{Command: "resume", Resume: true} }

func pauseContent(until time.Time) string {
	if until.IsZero() {
		return ""
	}
	return until.UTC().Format(time.RFC3339) + "\n"
}

// issueEdits are the edits that make c's change to its issue.
func (c PersonChange) issueEdits() []issuequeue.Edit {
	var edits []issuequeue.Edit
	for _, f := range c.Fields {
		edits = append(edits, issuequeue.SetField(c.Issue, f.Field, f.Value))
	}
	return edits
}

// valid says whether c is exactly what one of the commands sends.
func (c PersonChange) valid() error {
	var want PersonChange
	switch c.Command {
	case "retry":
		want = RetryChange(c.Issue)
	case "fix":
		want = FixChange(c.Issue)
	case "skip":
		want = SkipChange(c.Issue)
	case "breaker_reset":
		want = BreakerResetChange()
	case "resume":
		want = ResumeChange()
	case "pause":
		if c.Pause == nil {
			return errors.New("pause without the pause file's content")
		}
		var until time.Time
		if *c.Pause != "" {
			t, err := time.Parse(time.RFC3339, strings.TrimSuffix(*c.Pause, "\n"))
			if err != nil {
				return fmt.Errorf("pause until %q: %v", *c.Pause, err)
			}
			until = t
		}
		want = PauseChange(until)
	default:
		return fmt.Errorf("unknown command %q", c.Command)
	}
	if len(c.Issue) > 200 || strings.ContainsAny(c.Issue, "\n\r") || len(want.Fields) > 0 && strings.TrimSpace(c.Issue) == "" {
		return fmt.Errorf("bad issue ID %q", c.Issue)
	}
	if !reflect.DeepEqual(want, c) {
		return fmt.Errorf("%s does not set that", c.Command)
	}
	return nil
}

// what describes c for the log and the guard's lines.
func (c PersonChange) what() string {
	var parts []string
	for _, f := range c.Fields {
		parts = append(parts, f.Field+" "+f.Value)
	}
	for _, f := range c.State {
		parts = append(parts, f.Field+" "+f.Value)
	}
	switch {
	case c.Pause != nil && *c.Pause == "":
		parts = append(parts, "paused until resumed")
	case c.Pause != nil:
		parts = append(parts, "paused until "+strings.TrimSpace(*c.Pause))
	case c.Resume:
		parts = append(parts, "pause lifted")
	}
	s := c.Command
	if c.Issue != "" {
		s += " " + c.Issue
	}
	return s + ": " + strings.Join(parts, ", ")
}

// TellRun makes a person's change with do and tells a run in progress
// about it, so that its loop guard keeps the change. If no run listens,
// do runs alone. If the run does not take the message (it refuses it or
// does not answer in time) the change is made all the same, with a warning:
// if a loop is running, its guard will undo it.
func (o *Orchestrator) TellRun(c PersonChange, do func() error) error {
	payload, err := json.Marshal(c)
	if err != nil {
		return err
	}
	k, err := handoff.Begin(o.socketPath(), payload)
	if err != nil && !errors.Is(err, handoff.ErrNoRun) {
		o.warnTell(err)
	}
	derr := do()
	if k == nil {
		return derr
	}
	if derr != nil {
		k.Abort()
		return derr
	}
	if err := k.Commit(); err != nil {
		o.warnTell(err)
	}
	return nil
}

func (o *Orchestrator) warnTell(err error) {
	if o.Stderr != nil {
		fmt.Fprintf(o.Stderr, "orchestrator: warning: the running '%s run' did not take this change (%v); if its loop is running, the loop guard will undo the change when the loop ends\n", o.invocation(), err)
	}
}

// socketPath is the run's socket. A unix socket's path is limited to about
// a hundred bytes; a longer one is given relative to the working directory
// if that is shorter (the run and the command each find the same file).
func (o *Orchestrator) socketPath() string {
	p := filepath.Join(o.Dir, handoff.SocketFile)
	if len(p) < 100 {
		return p
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	wd, err := os.Getwd()
	if err != nil {
		return p
	}
	if rel, err := filepath.Rel(wd, abs); err == nil && len(rel) < len(p) {
		return rel
	}
	return p
}

// personWindow is what a run learns of a person's changes while it runs:
// the changes taken over its socket, and the stop files that appeared.
type personWindow struct {
	srv *handoff.Server

	mu   sync.Mutex
	seen map[string]*[]byte // stop file → content when it appeared
}

// listen starts the run's socket and its watch on the stop files. A run
// that cannot listen runs without: a person's changes during a loop are
// then treated as the loop's, and the command that made them says so.
func (r *Runner) listen() func() {
	w := &personWindow{seen: map[string]*[]byte{}}
	r.person = w
	srv, err := handoff.Listen(r.O.socketPath(), os.Getpid(), func(b []byte) error {
		var c PersonChange
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return err
		}
		return c.valid()
	})
	if err != nil {
		r.progress("warning: cannot listen for a person's changes during loops (%v): the loop guard will treat them as the loop's", err)
	} else {
		w.srv = srv
	}
	stopWatch := w.watch(r.O)
	return func() {
		stopWatch()
		if w.srv != nil {
			w.srv.Close()
		}
	}
}

// watch notes the stop files as they appear: a pause or sentinel created
// during a loop is kept even if the loop deletes it before it ends.
func (w *personWindow) watch(o *Orchestrator) func() {
	p := o.paths()
	return watchDir(o.Dir, func(ev fsnotify.Event) {
		if (ev.Name != p.Pause() && ev.Name != p.Sentinel()) || !ev.Has(fsnotify.Create) && !ev.Has(fsnotify.Write) {
			return
		}
		b := readMaybe(ev.Name)
		w.mu.Lock()
		if b != nil || w.seen[ev.Name] == nil {
			if b == nil {
				b = new([]byte) // gone already: a pause until resumed
			}
			w.seen[ev.Name] = b
		}
		w.mu.Unlock()
	})
}

// settleWait bounds how long the guard waits for a person's change it was
// told of to be made.
const settleWait = handoff.AckTimeout

// takenChange is a person's change the run took, and who sent it.
type takenChange struct {
	PersonChange
	pid int
}

// take returns the person's changes taken since the last take, and
// forgets the stop files seen.
func (w *personWindow) take(wait time.Duration) ([]takenChange, map[string]*[]byte) {
	if w == nil {
		return nil, nil
	}
	w.mu.Lock()
	seen := w.seen
	w.seen = map[string]*[]byte{}
	w.mu.Unlock()
	if w.srv == nil {
		return nil, seen
	}
	var out []takenChange
	for _, a := range w.srv.Take(wait) {
		var c PersonChange
		if json.Unmarshal(a.Payload, &c) != nil {
			continue
		}
		out = append(out, takenChange{c, a.PID})
	}
	return out, seen
}

// recordPeople logs the person's changes the run took.
func (o *Orchestrator) recordPeople(runID string, loop int, people []takenChange) error {
	for _, c := range people {
		if err := o.log().Record(Event{Time: o.now(), Event: EvPersonChange, IssueID: c.Issue, RunID: runID, Loop: loop, Response: c.Command,
			Reason: fmt.Sprintf("%s (pid %d)", c.what(), c.pid)}); err != nil {
			return err
		}
	}
	return nil
}

// beginGuard starts a loop's window, before its snapshot: what a person
// changed before is in the snapshot already.
func (r *Runner) beginGuard(runID string, loop int) {
	people, _ := r.person.take(0)
	if err := r.O.recordPeople(runID, loop, people); err != nil {
		r.progress("warning: %v", err)
	}
}

// applyPerson counts a person's change as part of the state before the
// loop.
func (s *guardSnapshot) applyPerson(o *Orchestrator, c takenChange) {
	if c.Issue != "" && len(c.Fields) > 0 && s.queue.Issue(c.Issue) != nil {
		if b, err := s.queue.Apply(c.issueEdits()...); err == nil {
			if q := issuequeue.ParseQueue(o.paths().Queue(), b); q.Err() == nil {
				s.queue = q
			}
		}
	}
	if len(c.State) > 0 {
		var edits []issuequeue.Edit
		for _, f := range c.State {
			edits = append(edits, issuequeue.SetField(f.Section, f.Field, f.Value))
		}
		if b, err := s.state.Apply(edits...); err == nil {
			if st := issuequeue.ParseState(o.paths().State(), b); st.Err() == nil {
				s.state = st
			}
		}
	}
	switch {
	case c.Pause != nil:
		b := []byte(*c.Pause)
		s.files[o.paths().Pause()] = &b
	case c.Resume:
		s.files[o.paths().Pause()] = nil
	}
}

// personOnly are the events only a person's command, or the run itself,
// appends: a loop that appends one forges a person's word.
var personOnly = map[string]bool{EvUserResponse: true, EvPersonChange: true}

// removeForged removes from the ledger the person-only records appended
// after offset from that no change a person's command told the run of
// accounts for, keeping every other line byte for byte, and returns what
// it removed.
func (o *Orchestrator) removeForged(from int64, people []takenChange) ([]string, error) {
	path := o.paths().Ledger()
	f, fi, err := statefile.OpenThrough(path)
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	// What the loop appended is read first; the whole ledger only if
	// something must go.
	if fi.Size() <= from {
		return nil, nil
	}
	tail, err := io.ReadAll(io.NewSectionReader(f, from, fi.Size()-from))
	if err != nil {
		return nil, err
	}
	owed := map[[2]string]int{}
	for _, c := range people {
		owed[[2]string{c.Command, c.Issue}]++
	}
	var keep []byte
	var forged []string
	rest := tail
	for len(rest) > 0 {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line = rest[:i+1]
		}
		rest = rest[len(line):]
		var ev Event
		if json.Unmarshal(bytes.TrimSpace(line), &ev) == nil && personOnly[ev.Event] {
			k := [2]string{ev.Response, ev.IssueID}
			if ev.Event == EvUserResponse && owed[k] > 0 {
				owed[k]--
			} else {
				forged = append(forged, strings.TrimSpace(ev.Event+" "+ev.Response+" "+ev.IssueID))
				continue
			}
		}
		keep = append(keep, line...)
	}
	if len(forged) == 0 {
		return nil, nil
	}
	head := make([]byte, from, from+int64(len(keep)))
	if _, err := f.ReadAt(head, 0); err != nil {
		return nil, err
	}
	return forged, writeFileAtomic(path, append(head, keep...))
}

// WithWriteLock runs fn holding the state directory's write lock, which
// the loop guard holds while it compares: a change fn makes is then
// wholly before or wholly after the comparison. If the lock cannot be
// had, fn runs without it, as it would without a run: a person's stop
// must not wait on a lock.
func (o *Orchestrator) WithWriteLock(ctx context.Context, fn func() error) error {
	wait := o.LockWait
	if wait == 0 {
		wait = issuequeue.DefaultLockWait
	}
	lk, err := statefile.LockWrite(ctx, o.Dir, wait, statefile.Owner{Command: o.Command})
	if err != nil {
		return fn()
	}
	defer lk.Unlock()
	return fn()
}
