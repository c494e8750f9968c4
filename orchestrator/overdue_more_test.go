package orchestrator

import (
	"testing"
	"time"
)

// The schedule is read from the event log: a run counts once whether it
// started, was stopped before it opened, or both (by its run ID); events
// without a run ID, of another kind, after now, or older than the 30 days
// read do not count.
func TestReadSchedule(t *testing.T) {
	o := newTestOrchestrator(t)
	if s, err := ReadSchedule(o.Dir, testNow); err != nil || s.Recorded != 0 || !s.Last.IsZero() || s.String() != "never run" {
		t.Fatalf("no log: %+v, %v", s, err)
	}
	var evs []Event
	start := testNow.Add(-2*time.Hour - 50*time.Minute)
	for i := range 6 { // every 10 min, the last 2 h before now
		at := start.Add(time.Duration(i) * 10 * time.Minute)
		id := NewRunID(at, 4242)
		evs = append(evs,
			Event{Time: at, Event: EvRunStarted, RunID: id},
			Event{Time: at.Add(2 * time.Minute), Event: EvExec, RunID: id},
			Event{Time: at.Add(3 * time.Minute), Event: EvStopped, RunID: id, Code: CodeDailyLoops})
	}
	stoppedBefore := start.Add(60 * time.Minute) // stopped before it opened: a run all the same
	evs = append(evs,
		Event{Time: stoppedBefore, Event: EvStopped, RunID: NewRunID(stoppedBefore, 4243), Code: CodePaused},
		Event{Time: testNow.Add(-31 * 24 * time.Hour), Event: EvRunStarted, RunID: "old"},
		Event{Time: start.Add(5 * time.Minute), Event: EvRunStarted},
		Event{Time: testNow.Add(time.Minute), Event: EvRunStarted, RunID: "future"},
	)
	for _, ev := range evs {
		if err := o.log().Record(ev); err != nil {
			t.Fatal(err)
		}
	}
	s, err := ReadSchedule(o.Dir, testNow)
	if err != nil {
		t.Fatal(err)
	}
	if s.Recorded != 7 || !s.Last.Equal(stoppedBefore) || s.Usual != 10*time.Minute || s.Since != testNow.Sub(stoppedBefore) || !s.Overdue {
		t.Errorf("schedule %+v; want 7 runs, the last at %v, usually every 10 min, overdue", s, stoppedBefore)
	}
	if s, _ := ReadSchedule(o.Dir, stoppedBefore.Add(15*time.Minute)); s.Overdue || s.Recorded != 7 {
		t.Errorf("15 min after the last run: %+v, want not overdue", s)
	}
}

// Durations as people say them, on both sides of each unit's edge.
func TestAgo(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0 s"},
		{45 * time.Second, "45 s"},
		{89 * time.Second, "89 s"},
		{90 * time.Second, "2 min"},
		{10 * time.Minute, "10 min"},
		{89 * time.Minute, "89 min"},
		{90 * time.Minute, "2 h"},
		{47 * time.Hour, "47 h"},
		{48 * time.Hour, "2 d"},
		{3*24*time.Hour + 11*time.Hour, "3 d"},
		{3*24*time.Hour + 12*time.Hour, "4 d"},
	}
	for _, tt := range tests {
		if got := Ago(tt.d); got != tt.want {
			t.Errorf("Ago(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}
