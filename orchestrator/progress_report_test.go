package orchestrator

import (
	"reflect"
	"testing"
	"time"
)

// The progress report is of the last run that recorded a verdict: its
// loops in order, the last one's verdict and workspace, and the progress
// rules over the counts at the end of that run, in which only auto-retry
// loops count.
func TestLastProgress(t *testing.T) {
	o := newTestOrchestrator(t)
	if rep, err := LastProgress(o.Dir, o.Config); rep != nil || err != nil {
		t.Fatalf("no event log: %+v, %v; want nil, nil", rep, err)
	}
	at := testNow.Add(-time.Hour)
	loop := func(run string, n int, kind, verdict string, cycledTo int) Event {
		at = at.Add(time.Minute)
		ev := Event{Time: at, Event: EvLoop, RunID: run, Loop: n, Progress: verdict,
			Workspace: &WorkspaceChange{State: run + "-after-" + string(rune('0'+n)), FilesChanged: n}}
		if kind != "" {
			ev.Facts = &LoopProgress{Kind: kind, CycledTo: cycledTo}
		}
		return ev
	}
	record := func(evs ...Event) {
		for _, ev := range evs {
			if err := o.log().Record(ev); err != nil {
				t.Fatal(err)
			}
		}
	}
	// An older run, which must not be mixed in.
	record(loop("A", 1, KindAutoRetry, ProgressIdle, 0), loop("A", 2, KindAutoRetry, ProgressIdle, 0))
	// The last run: a regular loop, then auto-retry loops; other events and
	// a loop without a verdict between them are not loops of the report.
	record(loop("B", 1, KindRegular, ProgressIdle, 0),
		Event{Time: at, Event: EvAttempt, RunID: "B", Loop: 1, Progress: ProgressChanged},
		loop("B", 2, KindAutoRetry, ProgressIdle, 0),
		loop("B", 3, KindAutoRetry, ProgressProgressed, 0),
		loop("B", 4, KindAutoRetry, ProgressIdle, 0),
		loop("B", 5, KindAutoRetry, ProgressIdle, 0),
		Event{Time: at, Event: EvLoop, RunID: "C", Loop: 1}, // a later run that recorded no verdict
	)
	rep, err := LastProgress(o.Dir, o.Config)
	if err != nil || rep == nil {
		t.Fatalf("LastProgress = %+v, %v", rep, err)
	}
	if rep.RunID != "B" || rep.Loop != 5 || rep.Verdict != ProgressIdle || rep.Workspace == nil || rep.Workspace.State != "B-after-5" {
		t.Errorf("report of run %s loop %d %s, workspace %+v; want run B's loop 5, idle", rep.RunID, rep.Loop, rep.Verdict, rep.Workspace)
	}
	want := []LoopVerdict{{1, KindRegular, ProgressIdle}, {2, KindAutoRetry, ProgressIdle}, {3, KindAutoRetry, ProgressProgressed},
		{4, KindAutoRetry, ProgressIdle}, {5, KindAutoRetry, ProgressIdle}}
	if !reflect.DeepEqual(rep.Loops, want) {
		t.Errorf("loops %+v, want %+v", rep.Loops, want)
	}
	if len(rep.Rules) != 3 {
		t.Fatalf("rules %+v, want cycle, no change and no progress", rep.Rules)
	}
	cycle, idle, noProgress := rep.Rules[0], rep.Rules[1], rep.Rules[2]
	if cycle.Rule != CodeCycle || cycle.Stop {
		t.Errorf("cycle rule %+v, want not met", cycle)
	}
	// Two idle auto-retry loops in a row meet idle_loops = 2; the regular
	// loop's idle does not count.
	if idle.Rule != CodeNoChange || !idle.Stop || idle.Value != "2 auto-retry loop(s) in a row left the workspace as it was" {
		t.Errorf("no-change rule %+v, want 2 in a row, met", idle)
	}
	if noProgress.Rule != CodeNoProgress || noProgress.Value != "2 auto-retry loop(s) in a row without progress" {
		t.Errorf("no-progress rule %+v, want 2 in a row", noProgress)
	}
}

// A last loop that cycled is the cycle rule, naming the loop it went back
// to; a loop after a progressed one starts the counts again.
func TestLastProgressCycled(t *testing.T) {
	o := newTestOrchestrator(t)
	evs := []Event{
		{Time: testNow.Add(-3 * time.Minute), Event: EvLoop, RunID: "R", Loop: 1, Progress: ProgressChanged, Facts: &LoopProgress{Kind: KindAutoRetry}},
		{Time: testNow.Add(-2 * time.Minute), Event: EvLoop, RunID: "R", Loop: 2, Progress: ProgressIdle, Facts: &LoopProgress{Kind: KindAutoRetry}},
		{Time: testNow.Add(-time.Minute), Event: EvLoop, RunID: "R", Loop: 3, Progress: ProgressCycled, Facts: &LoopProgress{Kind: KindAutoRetry, CycledTo: 1}},
	}
	for _, ev := range evs {
		if err := o.log().Record(ev); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := LastProgress(o.Dir, o.Config)
	if err != nil || rep == nil {
		t.Fatalf("LastProgress = %+v, %v", rep, err)
	}
	if c := rep.Rules[0]; !c.Stop || c.Value != "loop 3 returned to the state before loop 1" {
		t.Errorf("cycle rule %+v, want met at loop 3 back to loop 1", c)
	}
	if i := rep.Rules[1]; i.Stop || i.Value != "0 auto-retry loop(s) in a row left the workspace as it was" {
		t.Errorf("no-change rule %+v: a cycle is not idle", i)
	}
	if n := rep.Rules[2]; n.Value != "3 auto-retry loop(s) in a row without progress" {
		t.Errorf("no-progress rule %+v, want 3", n)
	}
	if rep.Workspace != nil {
		t.Errorf("workspace %+v, want none recorded", rep.Workspace)
	}
}
