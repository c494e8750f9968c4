package issuequeue

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/internal/statefile"
)

// A file being saved in place whose modification time carries the tool's
// mark by chance (one in a thousand do) is still seen as being saved where
// a lease can tell: the lease, not the mark, is the answer.
func TestLeaseOutranksAChanceMark(t *testing.T) {
	path := filepath.Join(t.TempDir(), QueueFile)
	half := []byte("# Issue Queue\n\n## ISSUE-20261126-001: half a sa")
	if err := os.WriteFile(path, half, 0o644); err != nil {
		t.Fatal(err)
	}
	// The editor still has the file open for writing.
	editor, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer editor.Close()
	now := time.Now()
	marked := now.Truncate(time.Microsecond).Add(time.Duration(int64(len(half)) % 1000))
	if err := os.Chtimes(path, marked, marked); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !statefile.WrittenWhole(fi) {
		t.Skip("this file system does not keep the mark (times coarser than a nanosecond)")
	}
	if l, err := lease(path); l == nil && err == nil {
		t.Skip("no leases here (another user's file or a network file system)")
	} else if l != nil {
		l.close()
		t.Fatal("a lease was granted on a file open for writing")
	}
	s := newSettler()
	if !s.busy(path, half) {
		t.Error("busy: a file open for writing, changed a moment ago, counts as settled because of a chance mark")
	}
	// wait must not take the half save as final either: it waits until the
	// budget is spent, or the save ends. Here the save ends.
	done := make(chan bool)
	go func() { done <- s.wait(t.Context(), path, half) }()
	if _, err := editor.WriteAt([]byte("ve\n"), int64(len(half))); err != nil {
		t.Fatal(err)
	}
	editor.Close()
	if !<-done {
		t.Error("wait took the half save as final")
	}
}
