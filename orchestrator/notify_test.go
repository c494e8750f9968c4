package orchestrator

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// notifySetup is an orchestrator at a settable clock and a notify command
// that appends one line per run to a file: the event, its code, issue and
// reason from the environment, and the working directory.
type notifySetup struct {
	o       *Orchestrator
	now     time.Time
	out     string
	command string
}

func newNotifySetup(t *testing.T) *notifySetup {
	t.Helper()
	s := &notifySetup{o: newTestOrchestrator(t), now: testNow}
	s.o.Now = func() time.Time { return s.now }
	s.out = filepath.Join(t.TempDir(), "told")
	s.command = `printf '%s|%s|%s|%s|%s\n' "$ORCHESTRATOR_EVENT" "$ORCHESTRATOR_EVENT_CODE" "$ORCHESTRATOR_EVENT_ISSUE" "$ORCHESTRATOR_EVENT_REASON" "$(pwd -P)" >> ` + shellQuote(s.out)
	return s
}

func (s *notifySetup) record(t *testing.T, evs ...Event) {
	t.Helper()
	for _, ev := range evs {
		if err := s.o.log().Record(ev); err != nil {
			t.Fatal(err)
		}
	}
}

// told returns the lines the command wrote since the last call, without
// the working directory.
func (s *notifySetup) told(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(s.out)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(s.out)
	var got []string
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		got = append(got, l[:strings.LastIndexByte(l, '|')])
	}
	return got
}

func (s *notifySetup) notify(t *testing.T) []string {
	t.Helper()
	if err := s.o.Notify(context.Background(), s.command); err != nil {
		t.Fatalf("Notify: %v", err)
	}
	return s.told(t)
}

func sameLines(got, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != want[i] {
			return false
		}
	}
	return true
}

// Which events need a person: an escalation and the guard always; a stop
// or a run's end only with a code that needs a person (exit 3), keyed by
// that code so that a repeat can be recognised.
func TestNeedsPerson(t *testing.T) {
	tests := []struct {
		ev   Event
		need bool
		key  Code
	}{
		{Event{Event: EvEscalated, Code: CodeMaxRetries}, true, ""},
		{Event{Event: EvGuard}, true, ""},
		{Event{Event: EvStopped, Code: CodeDailyLoops}, true, CodeDailyLoops},
		{Event{Event: EvStopped, Code: CodeBreakerOpen}, true, CodeBreakerOpen},
		{Event{Event: EvRunFinished, Code: CodeMaxLoops}, true, CodeMaxLoops},
		{Event{Event: EvStopped, Code: CodePaused}, false, ""},
		{Event{Event: EvStopped, Code: CodeRateLimited}, false, ""},
		{Event{Event: EvStopped, Code: CodeAborted}, false, ""},
		{Event{Event: EvStopped, Code: CodeOutsideActiveHours}, false, ""},
		{Event{Event: EvRunFinished}, false, ""},
		{Event{Event: EvAttempt, Code: CodeRepeatedFailure}, false, ""},
		{Event{Event: EvHalted, Code: CodeRepeatedFailure}, false, ""},
		{Event{Event: EvRunStarted}, false, ""},
	}
	for _, tt := range tests {
		need, key := needsPerson(tt.ev)
		if need != tt.need || key != tt.key {
			t.Errorf("needsPerson(%s %s) = %v, %q; want %v, %q", tt.ev.Event, tt.ev.Code, need, key, tt.need, tt.key)
		}
	}
}

// The command runs once per event that needs a person, in the order of the
// log, in the directory that holds the state directory, with the event in
// the environment (the reason followed by the error in words) and as one
// JSON object on stdin. A new cursor starts an hour back; nothing is told
// twice, and only the events that need a person are told.
func TestNotifyTellsEachEventOnce(t *testing.T) {
	s := newNotifySetup(t)
	const a, b = "ISSUE-20261122-001", "ISSUE-20261122-002"
	s.record(t,
		Event{Time: s.now.Add(-61 * time.Minute), Event: EvEscalated, IssueID: "ISSUE-20261122-009", Reason: "too old"},
		Event{Time: s.now.Add(-59 * time.Minute), Event: EvEscalated, IssueID: a, Code: CodeMaxRetries, Reason: "retries used up"},
		Event{Time: s.now.Add(-30 * time.Minute), Event: EvAttempt, IssueID: a},
		Event{Time: s.now.Add(-20 * time.Minute), Event: EvStopped, Code: CodePaused, Reason: "paused"},
		Event{Time: s.now.Add(-10 * time.Minute), Event: EvStopped, Code: CodeDailyLoops, Reason: string(CodeDailyLoops), Error: "200 loops today"},
		Event{Time: s.now.Add(-5 * time.Minute), Event: EvGuard, IssueID: b, Reason: "restored"},
	)
	b0, err := os.ReadFile(s.out)
	if err == nil || len(b0) > 0 {
		t.Fatal("the command ran before Notify")
	}
	if err := s.o.Notify(context.Background(), s.command); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(s.out)
	if err != nil {
		t.Fatal(err)
	}
	parent, _ := filepath.EvalSymlinks(filepath.Dir(s.o.Dir))
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		if wd := l[strings.LastIndexByte(l, '|')+1:]; wd != parent {
			t.Errorf("ran in %s, want %s", wd, parent)
		}
	}
	got := s.told(t)
	want := []string{
		"escalated|max_retries|" + a + "|retries used up",
		"stopped|daily_loops||daily_loops: 200 loops today",
		"guard||" + b + "|restored",
	}
	if !sameLines(got, want) {
		t.Fatalf("told:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := s.notify(t); len(got) != 0 {
		t.Fatalf("a second Notify told again: %q", got)
	}
	s.now = s.now.Add(time.Minute)
	s.record(t, Event{Time: s.now, Event: EvEscalated, IssueID: b, Reason: "again"})
	if got := s.notify(t); !sameLines(got, []string{"escalated||" + b + "|again"}) {
		t.Fatalf("after a new event, told %q", got)
	}
	if _, err := os.Stat(filepath.Join(s.o.Dir, "logs", "notify.json")); err != nil {
		t.Fatalf("logs/notify.json: %v", err)
	}
}

// The event comes on stdin as the JSON object the log holds.
func TestNotifyEventOnStdin(t *testing.T) {
	s := newNotifySetup(t)
	ev := Event{Time: s.now.Add(-time.Minute), Event: EvEscalated, IssueID: "ISSUE-20261122-001", Code: CodeOscillation, Reason: "A B A B"}
	s.record(t, ev)
	in := filepath.Join(t.TempDir(), "stdin")
	if err := s.o.Notify(context.Background(), "cat > "+shellQuote(in)); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(b), "}\n") || strings.Count(string(b), "\n") != 1 {
		t.Errorf("stdin %q: want one JSON line", b)
	}
	var got Event
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if !got.Time.Equal(ev.Time) || got.Event != ev.Event || got.IssueID != ev.IssueID || got.Code != ev.Code || got.Reason != ev.Reason {
		t.Errorf("stdin event %+v, want %+v", got, ev)
	}
}

// The same stop repeated by later runs is told again only 24 hours after
// it was last told, or after a run that completed; another code is news
// at once.
func TestNotifyRepeatedStop(t *testing.T) {
	stop := func(at time.Time, c Code) Event {
		return Event{Time: at, Event: EvStopped, Code: c, Reason: string(c)}
	}
	t0 := testNow
	tests := []struct {
		name   string
		second []Event
		told   int // of the second batch
	}{
		{"an hour later", []Event{stop(t0.Add(time.Hour), CodeBreakerOpen)}, 0},
		{"just under a day later", []Event{stop(t0.Add(24*time.Hour-time.Second), CodeBreakerOpen)}, 0},
		{"a day later", []Event{stop(t0.Add(24*time.Hour), CodeBreakerOpen)}, 1},
		{"another code", []Event{stop(t0.Add(time.Hour), CodeDailyCost)}, 1},
		{"after a completed run", []Event{{Time: t0.Add(time.Hour), Event: EvRunFinished}, stop(t0.Add(2*time.Hour), CodeBreakerOpen)}, 1},
		{"a run that ended with a stop does not count", []Event{{Time: t0.Add(time.Hour), Event: EvRunFinished, Code: CodeBreakerOpen}, stop(t0.Add(2*time.Hour), CodeBreakerOpen)}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newNotifySetup(t)
			s.record(t, stop(t0, CodeBreakerOpen))
			if got := s.notify(t); len(got) != 1 {
				t.Fatalf("first stop: told %q, want it once", got)
			}
			s.now = tt.second[len(tt.second)-1].Time
			s.record(t, tt.second...)
			if got := s.notify(t); len(got) != tt.told {
				t.Fatalf("told %q, want %d notification(s)", got, tt.told)
			}
		})
	}
}

// Under a clock that does not move, many events share one time: those
// already told are skipped by count, and a later one at that same time is
// still told.
func TestNotifySameTimestamp(t *testing.T) {
	s := newNotifySetup(t)
	esc := func(id string) Event {
		return Event{Time: s.now, Event: EvEscalated, IssueID: id}
	}
	s.record(t, esc("ISSUE-20261122-001"), Event{Time: s.now, Event: EvAttempt}, esc("ISSUE-20261122-002"))
	if got := s.notify(t); len(got) != 2 {
		t.Fatalf("told %q, want two escalations", got)
	}
	s.record(t, esc("ISSUE-20261122-003"))
	if got := s.notify(t); !sameLines(got, []string{"escalated||ISSUE-20261122-003|"}) {
		t.Fatalf("told %q, want only the new escalation", got)
	}
	if got := s.notify(t); len(got) != 0 {
		t.Fatalf("told %q again", got)
	}
}

// A failing command is returned with what it printed, and the event is not
// told again by the next command (a notification is a courtesy); an empty
// command does nothing and writes no cursor; a cursor that cannot be read
// starts again an hour back.
func TestNotifyFailureAndEdges(t *testing.T) {
	s := newNotifySetup(t)
	if err := s.o.Notify(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	cursor := filepath.Join(s.o.Dir, "logs", "notify.json")
	if _, err := os.Stat(cursor); !os.IsNotExist(err) {
		t.Fatalf("an empty command wrote the cursor: %v", err)
	}
	s.record(t, Event{Time: s.now.Add(-time.Minute), Event: EvGuard, IssueID: "ISSUE-20261122-001"})
	err := s.o.Notify(context.Background(), "echo no webhook here; exit 7")
	if err == nil || !strings.Contains(err.Error(), "no webhook here") || !strings.Contains(err.Error(), "guard ISSUE-20261122-001") {
		t.Fatalf("Notify = %v, want the command's failure with its output and the event", err)
	}
	if got := s.notify(t); len(got) != 0 {
		t.Fatalf("a failed notification was told again: %q", got)
	}

	if err := os.WriteFile(cursor, []byte("not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.now = s.now.Add(2 * time.Hour)
	s.record(t, Event{Time: s.now.Add(-30 * time.Minute), Event: EvGuard, IssueID: "ISSUE-20261122-002"})
	if got := s.notify(t); !sameLines(got, []string{"guard||ISSUE-20261122-002|"}) {
		t.Fatalf("with a broken cursor, told %q; want the last hour's event only", got)
	}
}
