//go:build unix

package fifotest

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// bound is how long Run lets read run before it calls it blocked: a read
// that refuses a FIFO answers at once, so the bound only ends a hang.
const bound = 30 * time.Second

// Run makes a FIFO at path (and its directory), calls read, and returns
// what read returns. If read is still waiting after the bound, a writer
// opens the FIFO to let it through and the test fails.
func Run[T any](t testing.TB, path string, read func() T) T {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("cannot make a FIFO: %v", err)
	}
	done := make(chan T, 1)
	go func() { done <- read() }()
	select {
	case v := <-done:
		return v
	case <-time.After(bound):
		if w, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil {
			w.Close() // lets the blocked read through
		}
		v := <-done
		t.Errorf("reading %s waited on the FIFO for %s", path, bound)
		return v
	}
}
