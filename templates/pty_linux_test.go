package templates

import (
	"os"
	"testing"

	"github.com/autoretry/orchestrator/internal/testkit/ptytest"
)

// openTerminal returns the terminal side of a new pseudo-terminal.
func openTerminal(t *testing.T) *os.File {
	t.Helper()
	_, pts := ptytest.Open(t)
	return pts
}
