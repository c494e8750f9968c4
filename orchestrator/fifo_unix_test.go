//go:build unix

package orchestrator

import (
	"path/filepath"
	"testing"

	"github.com/autoretry/orchestrator/internal/testkit/fifotest"
)

// TestUsageOfAFIFOLog proves: an event log that is a FIFO, which a plain
// open waits on until something writes to it, is unreadable at once (the
// budgets then stop loops and say so) instead of hanging status and every
// loop start.
func TestUsageOfAFIFOLog(t *testing.T) {
	dir := t.TempDir()
	u := fifotest.Run(t, PathsIn(dir).Ledger(), func() Usage { u, _ := ReadUsage(dir, testNow); return u })
	if u.Unreadable == nil {
		t.Errorf("ReadUsage of a FIFO log: readable; want it unreadable")
	}
}

// TestCostFileFIFO proves: a loop that makes $ORCHESTRATOR_COST_FILE a FIFO
// does not hang the run that reads it (a plain read waits for a writer for
// ever): the file is refused and the cost comes from the loop's output.
func TestCostFileFIFO(t *testing.T) {
	r := &Runner{O: newTestOrchestrator(t)}
	path := filepath.Join(t.TempDir(), "loop.cost")
	got := fifotest.Run(t, path, func() float64 { return r.loopCost([]byte(`{"total_cost_usd": 1.5}`), path) })
	if got != 1.5 {
		t.Errorf("cost %v, want 1.5 from the output", got)
	}
}

// TestPauseFileFIFO proves: a FIFO put where the pause file goes is an
// error at once, not a run that waits for ever before its first loop.
func TestPauseFileFIFO(t *testing.T) {
	dir := t.TempDir()
	err := fifotest.Run(t, PathsIn(dir).Pause(), func() error { _, err := ReadPause(dir); return err })
	if err == nil {
		t.Error("ReadPause of a FIFO: no error")
	}
}
