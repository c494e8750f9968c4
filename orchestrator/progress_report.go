package orchestrator

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/autoretry/orchestrator/internal/foundations/config"
)

// ProgressReport is how the last run's loops went, for explain and status:
// the last loop's verdict and what it did to the workspace, and the
// progress rules with the counts they read at the end of that run.
type ProgressReport struct {
	RunID     string           `json:"run_id"`
	Loop      int              `json:"loop"`
	Verdict   string           `json:"progress"`
	Workspace *WorkspaceChange `json:"workspace,omitempty"`
	Loops     []LoopVerdict    `json:"loops"` // the run's loops, in order
	Rules     []Verdict        `json:"rules"`
}

// LoopVerdict is one loop's verdict.
type LoopVerdict struct {
	Loop    int    `json:"loop"`
	Kind    string `json:"kind,omitempty"`
	Verdict string `json:"progress"`
}

// LastProgress reads the loop events of the last run that recorded a
// verdict from the end of the event log; nil when there is none.
func LastProgress(dir string, cfg *config.Config) (*ProgressReport, error) {
	f, size, err := openLog(PathsIn(dir).Ledger())
	if f == nil {
		return nil, err
	}
	defer f.Close()
	var evs []Event
	runID := ""
	err = scanBack(f, size, func(line []byte, _ int64) bool {
		name, ok := eventName(line)
		if !ok || !bytes.Equal(name, []byte(EvLoop)) {
			return true
		}
		var ev Event
		if json.Unmarshal(line, &ev) != nil || ev.Progress == "" {
			return true
		}
		if runID == "" {
			runID = ev.RunID
		}
		if ev.RunID != runID {
			return false
		}
		evs = append(evs, ev)
		return true
	})
	if err != nil || len(evs) == 0 {
		return nil, err
	}
	slices.Reverse(evs)
	last := evs[len(evs)-1]
	rep := &ProgressReport{RunID: runID, Loop: last.Loop, Verdict: last.Progress, Workspace: last.Workspace}
	t := newProgressTracker()
	for _, ev := range evs {
		kind := ""
		if ev.Facts != nil {
			kind = ev.Facts.Kind
		}
		rep.Loops = append(rep.Loops, LoopVerdict{Loop: ev.Loop, Kind: kind, Verdict: ev.Progress})
		t.count(kind, LoopProgress{Loop: ev.Loop, Verdict: ev.Progress})
	}
	cycled := 0
	if last.Facts != nil && last.Progress == ProgressCycled {
		cycled = last.Facts.CycledTo
	}
	rep.Rules = []Verdict{CycleVerdict(last.Loop, cycled, cfg, ""), NoChangeVerdict(t.idle, cfg, ""), NoProgressVerdict(t.noProgress, nil, cfg, "")}
	return rep, nil
}
