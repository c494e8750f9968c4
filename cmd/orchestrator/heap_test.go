package main

import (
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/autoretry/orchestrator/issuequeue"
)

// A read-and-exit command prepares memory for its state files in
// proportion to their size, and none for small ones.
func TestHeapForFollowsTheStateFiles(t *testing.T) {
	dir := t.TempDir()
	if got := heapFor(dir); got != 0 {
		t.Errorf("no state files: heapFor = %d, want 0", got)
	}
	write := func(name string, size int64) {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := f.Truncate(size); err != nil {
			t.Fatal(err)
		}
	}
	write(issuequeue.QueueFile, 100<<10)
	if got := heapFor(dir); got != 0 {
		t.Errorf("a 100 KiB queue: heapFor = %d, want 0", got)
	}
	write(issuequeue.QueueFile, 7<<20)
	write(issuequeue.StateFile, 1<<20)
	if got, want := heapFor(dir), 6*(8<<20); got != want {
		t.Errorf("7 MiB queue and 1 MiB state: heapFor = %d, want %d", got, want)
	}
}

// Preparing the heap leaves it usable and collects what it took.
func TestPrepareHeap(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	prepareHeap(8 << 20)
	runtime.ReadMemStats(&after)
	if after.HeapAlloc >= before.HeapAlloc+8<<20 {
		t.Errorf("prepareHeap left %d bytes allocated, %d before", after.HeapAlloc, before.HeapAlloc)
	}
	b := make([]byte, 4<<20)
	for i := range b {
		if b[i] != 0 {
			t.Fatalf("byte %d of new memory is %d", i, b[i])
		}
	}
}
