//go:build linux

package main

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestProcessConcurrentRuns proves: a second run while one
// holds the lock exits 4 at once, names the holder's pid and start time,
// runs nothing and writes nothing; the first run is not disturbed.
func TestProcessConcurrentRuns(t *testing.T) {
	skipShort(t)
	ctx := testContext(t, 30*time.Second)
	c := shLoopCLI(t, ctx, "1m", `echo x >> loops
echo started
read answer < release
echo "released $answer"
`)
	c.fifo("release")
	fifo := c.path("release")

	before := time.Now().UTC().Truncate(time.Second)
	first := c.start(ctx, nil, "run")
	first.waitLine(ctx, "started")
	state := c.read(".orchestrator/session_state.md")

	second := c.run(ctx, nil, "run")
	if got, want := second.code, 4; got != want {
		t.Fatalf("second run: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", got, want, second.stdout, second.stderr)
	}
	if second.wall >= time.Second {
		t.Errorf("second run took %v to give up; it must exit at once", second.wall)
	}
	if !regexp.MustCompile(fmt.Sprintf(`\bpid %d\b`, first.pid())).MatchString(second.stderr) {
		t.Errorf("second run's stderr does not name the holder's pid %d:\n%s", first.pid(), second.stderr)
	}
	m := regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d)`).FindString(second.stderr)
	since, err := time.Parse(time.RFC3339, m)
	if err != nil {
		t.Errorf("second run's stderr does not give the holder's start time:\n%s", second.stderr)
	} else if since.Before(before) || since.After(time.Now()) {
		t.Errorf("holder's start time %s is not when the first run started (after %s)", since, before)
	}
	if got := c.read(".orchestrator/session_state.md"); !bytes.Equal(got, state) {
		t.Errorf("the refused run changed session_state.md:\n%s", got)
	}

	writeFifo(ctx, t, fifo, "go\n")
	r := first.wait(ctx)
	if r.code != 0 {
		t.Fatalf("first run: exit %d, want 0\nstderr:\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "released go") {
		t.Errorf("first run's loop did not finish normally:\n%s", r.stdout)
	}
	if got, want := strings.Count(string(c.read("loops")), "x"), 1; got != want {
		t.Errorf("the loop ran %d times, want %d (the refused run must run nothing)", got, want)
	}
	t.Logf("refused run took %v", second.wall)
}

// TestProcessKilledRunLeavesNoLock proves that a run killed with SIGKILL
// leaves no stale lock (the kernel drops it with the process): the next run
// runs at once instead of exiting 4.
func TestProcessKilledRunLeavesNoLock(t *testing.T) {
	ctx := testContext(t, 30*time.Second)
	c := shLoopCLI(t, ctx, "1m", `echo x >> loops
if [ ! -e blocked-once ]; then
	: > blocked-once
	echo "started $$"
	read answer < release
fi
`)
	c.fifo("release")
	first := c.start(ctx, nil, "run")
	pid, _ := strconv.Atoi(strings.Fields(first.waitLine(ctx, "started "))[1])
	// Nothing can stop the loop of a run killed with SIGKILL; the test ends
	// it (watch kills it at the end).
	watch(t, pid)
	if err := first.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if r := first.wait(ctx); r.signal != "killed" {
		t.Fatalf("first run: exit %d (%s), want killed", r.code, r.signal)
	}
	r := c.run(ctx, nil, "run")
	if r.code != 0 {
		t.Fatalf("run after a killed run: exit %d, want 0\nstderr:\n%s", r.code, r.stderr)
	}
	if got, want := strings.Count(string(c.read("loops")), "x"), 2; got != want {
		t.Errorf("the loop ran %d times, want %d", got, want)
	}
	if got, want := c.state().Outcome, "completed"; got != want {
		t.Errorf("session_state.md outcome = %q, want %q", got, want)
	}
}
