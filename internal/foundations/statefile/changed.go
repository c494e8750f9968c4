package statefile

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Changed waits up to wait for the file at path to hold something other
// than seen (nil: missing), and reports whether it does. It is woken by the
// directory's change notifications, not by polling: an editor in the middle
// of a save (the old file renamed away, or read without a lease halfway
// through) finishes within milliseconds, and a file nobody is changing
// costs the whole wait. Where notifications cannot be had it looks once.
func Changed(ctx context.Context, path string, seen []byte, wait time.Duration) bool {
	differs := func() bool {
		b, err := os.ReadFile(path)
		if err != nil {
			b = nil
		}
		return (b == nil) != (seen == nil) || !bytes.Equal(b, seen)
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return differs()
	}
	defer w.Close()
	if err := w.Add(filepath.Dir(path)); err != nil {
		return differs()
	}
	if differs() {
		return true
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	name := filepath.Clean(path)
	for {
		select {
		case ev := <-w.Events:
			if filepath.Clean(ev.Name) == name && differs() {
				return true
			}
		case <-w.Errors: // an overflow: look
			if differs() {
				return true
			}
		case <-t.C:
			return differs()
		case <-ctx.Done():
			return false
		}
	}
}
