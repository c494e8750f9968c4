package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
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
	if !hugePages {
		t.Skip("only Linux prepares the heap (huge pages), and not with -tags nohugepages")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	prepareHeap(8 << 20)
	runtime.ReadMemStats(&after)
	if after.HeapAlloc >= before.HeapAlloc+8<<20 {
		t.Errorf("prepareHeap left %d bytes allocated, %d before", after.HeapAlloc, before.HeapAlloc)
	}
	// Free and not given back to the system: at least what was prepared
	// (on a second call, the first call's memory is prepared again).
	if kept := after.HeapIdle - after.HeapReleased; kept < 8<<20 {
		t.Errorf("the heap keeps %d free bytes: the prepared memory was not kept", kept)
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

// The memory prepared for the state files is faulted in huge pages from
// its first byte: reading an 8 MiB queue into the first large object the
// command makes takes a handful of page faults, not the thousands of 4 KiB
// pages it spans, nor the hundreds an unaligned start would cost. A fresh
// process, as the command is, shows it: a child runs prepareHeap.
func TestPreparedHeapFaultsHugePages(t *testing.T) {
	if raceDetector {
		t.Skip("the race detector's shadow memory is faulted too: the count says nothing of the heap")
	}
	if os.Getenv("ORCHESTRATOR_TEST_HEAP_CHILD") != "" {
		debug.SetGCPercent(-1)
		prepareHeap(48 << 20)
		before := minorFaults(t)
		b := make([]byte, 8<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		fmt.Println(minorFaults(t) - before)
		return
	}
	if !hugePages {
		t.Skip("only Linux prepares the heap (huge pages), and not with -tags nohugepages")
	}
	if thp, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil || bytes.Contains(thp, []byte("[never]")) {
		t.Skip("the kernel gives no huge pages here")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestPreparedHeapFaultsHugePages$")
	cmd.Env = append(os.Environ(), "ORCHESTRATOR_TEST_HEAP_CHILD=1", "GOGC=", "GOMEMLIMIT=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	faults, err := strconv.Atoi(strings.Fields(string(out))[0])
	if err != nil {
		t.Fatalf("child said %q", out)
	}
	t.Logf("touching 8 MiB of prepared memory took %d page faults", faults)
	if faults > 64 {
		t.Errorf("touching 8 MiB of prepared memory took %d page faults, want a few (2 MiB each)", faults)
	}
}

// minorFaults returns the page faults this process has taken that needed
// no reading from disk (/proc/self/stat, field 10).
func minorFaults(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Fatal(err)
	}
	// The command name, field 2, is in parentheses and may hold spaces.
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	n, err := strconv.Atoi(fields[7])
	if err != nil {
		t.Fatal(err)
	}
	return n
}
