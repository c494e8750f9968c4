//go:build unix

package orchestrator

import (
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
