package orchestrator

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/autoretry/orchestrator/internal/adapters/workspace"
)

// LoopChange is one loop's record of what it did to the workspace.
type LoopChange struct {
	RunID     string
	Loop      int
	Progress  string
	Workspace WorkspaceChange
}

// FindLoopChange finds the loop event of a loop that recorded the
// workspace: loop of run runID; "" is the last run that recorded one, and
// loop 0 its last such loop. ok is false when there is none.
func FindLoopChange(dir, runID string, loop int) (lc LoopChange, ok bool, err error) {
	f, size, err := openLog(PathsIn(dir).Ledger())
	if f == nil {
		return lc, false, err
	}
	defer f.Close()
	err = scanBack(f, size, func(line []byte, _ int64) bool {
		name, named := eventName(line)
		if !named || !bytes.Equal(name, []byte(EvLoop)) {
			return true
		}
		var ev Event
		if json.Unmarshal(line, &ev) != nil || ev.Workspace == nil || ev.Workspace.Before == "" {
			return true
		}
		if runID == "" {
			runID = ev.RunID
		}
		if ev.RunID != runID || (loop != 0 && ev.Loop != loop) {
			return true
		}
		lc, ok = LoopChange{RunID: ev.RunID, Loop: ev.Loop, Progress: ev.Progress, Workspace: *ev.Workspace}, true
		return false
	})
	return lc, ok, err
}

// DiffText returns the unified diff of what the loop changed in the
// workspace of the state directory dir, from the states recorded before
// and after it. Nothing is written to the repository: the states' objects
// live in the state directory.
func (lc LoopChange) DiffText(ctx context.Context, dir string) ([]byte, error) {
	w, err := Workspace(dir)
	if err != nil {
		return nil, err
	}
	kind := lc.Workspace.Kind
	if kind == "" {
		kind = workspace.KindGit
	}
	out, err := w.DiffText(ctx, workspace.State{Kind: kind, Hex: lc.Workspace.Before}, workspace.State{Kind: kind, Hex: lc.Workspace.State})
	if err != nil {
		return nil, fmt.Errorf("loop %d of run %s: %w", lc.Loop, lc.RunID, err)
	}
	return out, nil
}
