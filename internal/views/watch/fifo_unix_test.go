//go:build unix

package watch

import (
	"path/filepath"
	"testing"

	"github.com/autoretry/orchestrator/internal/testkit/fifotest"
)

// TestReadOptionalRefusesAFIFO proves: a state file that is a FIFO is an
// error at once for watch's lint, not a watcher that waits on it for ever.
func TestReadOptionalRefusesAFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "issue_queue.md")
	err := fifotest.Run(t, path, func() error { _, err := readOptional(path); return err })
	if err == nil {
		t.Error("readOptional of a FIFO: no error")
	}
}
