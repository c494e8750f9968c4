package orchestrator

import (
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/config"
)

// Replay decides the recorded loops again under another configuration:
// each loop event in retry.jsonl carries the facts its progress verdict
// rests on, so the progress rules can be applied to them with other limits
// and compared with what was decided.

// ReplayDifference is a run where the replayed decision differs from the
// recorded one: the loop and code of the first progress stop or halt in
// each ("" and 0: none).
type ReplayDifference struct {
	RunID          string `json:"run_id"`
	RecordedLoop   int    `json:"recorded_loop,omitempty"`
	RecordedCode   Code   `json:"recorded_code,omitempty"`
	ReplayedLoop   int    `json:"replayed_loop,omitempty"`
	ReplayedCode   Code   `json:"replayed_code,omitempty"`
	LoopsRecorded  int    `json:"loops_recorded"` // the run's loops with facts
	LoopsSaved     int    `json:"loops_saved,omitempty"`
	LoopsAdded     int    `json:"loops_added,omitempty"`
	AddedEstimated bool   `json:"loops_added_estimated,omitempty"`
}

// ReplayReport is the result of a replay.
type ReplayReport struct {
	Differences   []ReplayDifference `json:"differences"`
	LoopsRecorded int                `json:"loops_recorded"`
	LoopsSaved    int                `json:"loops_saved"`
	LoopsAdded    int                `json:"loops_added"`
}

// progressCodes are the codes the progress rules decide; stall is the
// older name of no_progress in logs written before it.
var progressCodes = map[Code]Code{CodeNoProgress: CodeNoProgress, CodeStall: CodeNoProgress, CodeNoChange: CodeNoChange, CodeCycle: CodeCycle}

type replayRun struct {
	id       string
	loops    []LoopProgress
	stopLoop int
	stopCode Code
	lastLoop int
}

// Replay re-decides the loops recorded in dir since since under cfg.
// Loops after the recorded end of a run are not known: when cfg would have
// let a run go on, the loops added are estimated by repeating its last
// loop's facts until a rule or [loop] max_loops stops it.
func Replay(dir string, since time.Time, cfg *config.Config) (ReplayReport, []error) {
	rep := ReplayReport{Differences: []ReplayDifference{}}
	var runs []*replayRun
	byID := map[string]*replayRun{}
	errs := EachEvent(dir, since, func(ev Event) {
		if ev.RunID == "" {
			return
		}
		run := byID[ev.RunID]
		if run == nil && ev.Event == EvLoop && ev.Facts != nil {
			run = &replayRun{id: ev.RunID}
			byID[ev.RunID] = run
			runs = append(runs, run)
		}
		if run == nil {
			return
		}
		switch ev.Event {
		case EvLoop:
			if ev.Facts != nil {
				p := *ev.Facts
				p.Loop, p.Verdict = ev.Loop, ev.Progress
				run.loops = append(run.loops, p)
				run.lastLoop = ev.Loop
			}
		case EvHalted:
			if c, ok := progressCodes[ev.Code]; ok && run.stopCode == "" {
				run.stopLoop, run.stopCode = ev.Loop, c
			}
		case EvRunFinished:
			if c, ok := progressCodes[ev.Code]; ok && run.stopCode == "" {
				run.stopLoop, run.stopCode = run.lastLoop, c
			}
		}
	})
	for _, run := range runs {
		rep.LoopsRecorded += len(run.loops)
		d := replayRunDecision(run, cfg)
		if d.ReplayedLoop == run.stopLoop && d.ReplayedCode == run.stopCode {
			continue
		}
		rep.LoopsSaved += d.LoopsSaved
		rep.LoopsAdded += d.LoopsAdded
		rep.Differences = append(rep.Differences, d)
	}
	return rep, errs
}

// replayRunDecision applies the progress rules to a run's loops in order,
// as the runner does, and compares the first stop with the recorded one.
func replayRunDecision(run *replayRun, cfg *config.Config) ReplayDifference {
	d := ReplayDifference{RunID: run.id, RecordedLoop: run.stopLoop, RecordedCode: run.stopCode, LoopsRecorded: len(run.loops)}
	t := newProgressTracker()
	decide := func(p LoopProgress) (Code, bool) {
		if !cfg.Progress.Enabled {
			p.Recorded, p.Idle, p.CycledTo = false, false, 0
		}
		p.Verdict = DecideProgress(p)
		t.count(p.Kind, p)
		if p.Kind != KindAutoRetry {
			return "", false
		}
		if v := ProgressHalt(p, t.idle, cfg, ""); v != nil {
			return v.Rule, true
		}
		if v := NoProgressVerdict(t.noProgress, nil, cfg, ""); v.Stop {
			return v.Rule, true
		}
		return "", false
	}
	for _, p := range run.loops {
		if c, stop := decide(p); stop {
			d.ReplayedLoop, d.ReplayedCode = p.Loop, c
			break
		}
	}
	end := run.lastLoop
	if d.ReplayedLoop > 0 && d.ReplayedLoop < end {
		d.LoopsSaved = end - d.ReplayedLoop
		return d
	}
	if d.ReplayedLoop == 0 && run.stopCode != "" && len(run.loops) > 0 {
		// The recorded run stopped on a progress rule the replay does not
		// apply there: estimate how long it would have gone on.
		last := run.loops[len(run.loops)-1]
		d.AddedEstimated = true
		for loop := end + 1; loop <= cfg.Loop.MaxLoops; loop++ {
			last.Loop = loop
			d.LoopsAdded++
			if c, stop := decide(last); stop {
				d.ReplayedLoop, d.ReplayedCode = loop, c
				break
			}
		}
	}
	return d
}
