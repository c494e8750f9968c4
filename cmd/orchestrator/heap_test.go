package main

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
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

// Preparing the heap collects what it took, and its pages stay with the
// heap, free for what the command allocates next.
func TestPrepareHeap(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("only Linux prepares the heap (huge pages)")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	prepareHeap(8 << 20)
	runtime.ReadMemStats(&after)
	if after.HeapAlloc >= before.HeapAlloc+8<<20 {
		t.Errorf("prepareHeap left %d bytes allocated, %d before", after.HeapAlloc, before.HeapAlloc)
	}
	kept := func(m *runtime.MemStats) uint64 { return m.HeapIdle - m.HeapReleased }
	if kept(&after) < kept(&before)+8<<20 {
		t.Errorf("the heap keeps %d free bytes, %d before: the prepared memory was not kept", kept(&after), kept(&before))
	}
}

// The memory a command prepares is for the state directory its flags
// name, wherever --dir stands: before the command's name or after it, as
// the documentation writes it ("orchestrator status --dir DIR").
func TestBeforeCommandSeesTheDirFlag(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	if code := Main([]string{"init", "--dir", dir}, strings.NewReader(""), io.Discard, io.Discard, func(string) string { return "" }); code != 0 {
		t.Fatalf("init exited %d", code)
	}
	for _, args := range [][]string{{"--dir", dir, "status"}, {"status", "--dir", dir}} {
		e := newEnv(strings.NewReader(""), io.Discard, io.Discard, func(string) string { return "" })
		var seen []string
		e.beforeCommand = func(c *command) { seen = append(seen, c.name+" "+e.dir) }
		if code := e.main(args); code != 0 {
			t.Fatalf("%q exited %d", args, code)
		}
		if want := []string{"status " + dir}; !slices.Equal(seen, want) {
			t.Errorf("%q: the hook saw %q, want %q", args, seen, want)
		}
	}
}
