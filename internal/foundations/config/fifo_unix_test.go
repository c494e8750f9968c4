//go:build unix

package config

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoretry/orchestrator/internal/testkit/fifotest"
)

// TestLoadRefusesAFIFO proves: a config.toml that is a FIFO, which a plain
// read waits on until something writes to it, fails every command at once
// with an error naming it instead of hanging it.
func TestLoadRefusesAFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	err := fifotest.Run(t, path, func() error { _, err := LoadOptional(path, nil); return err })
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("LoadOptional of a FIFO config: %v; want it refused, named", err)
	}
}
