//go:build linux

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/internal/adapters/handoff"
	"github.com/autoretry/orchestrator/orchestrator"
)

// These tests prove that a person's word holds during a loop: the person
// is this test process running the real binary, outside the run's process
// tree, while the run's loop waits on a named pipe.

// init lets a loop use the test binary as a raw client of the run's
// socket, as a loop that bypasses the commands would:
// ORCHESTRATOR_TEST_HANDOFF names the socket.
func init() {
	path := os.Getenv("ORCHESTRATOR_TEST_HANDOFF")
	if path == "" {
		return
	}
	b, _ := json.Marshal(orchestrator.RetryChange("ISSUE-20261122-001"))
	k, err := handoff.Begin(path, b)
	if err == nil {
		err = k.Commit()
	}
	if err != nil {
		fmt.Println(err)
		os.Exit(3)
	}
	fmt.Println("taken")
	os.Exit(0)
}

func personIssue(n int, status string, retries, max int, halted, auto bool) string {
	return fmt.Sprintf(`
## ISSUE-20261122-%03d

| Field | Value |
|-------|-------|
| Priority | medium |
| Status | %s |
| Auto-Retry | %t |
| Retry-Count | %d |
| Max-Retries | %d |
| Halted | %t |

### Summary
Issue %d
`, n, status, auto, retries, max, halted, n)
}

func personQueue() string {
	return "# Issue Queue\n" +
		personIssue(1, "escalated", 10, 10, false, true) +
		personIssue(2, "escalated", 10, 10, false, true) +
		personIssue(3, "escalated", 4, 10, true, true) +
		personIssue(4, "pending", 0, 10, false, false) +
		personIssue(5, "escalated", 3, 10, false, true) +
		personIssue(6, "escalated", 3, 10, false, true)
}

const personConfig = `[loop]
command = "sh loop.sh"
timeout = "1m"
max_loops = 3
[budget]
loops_per_day = 50
`

// personSetup starts a run whose loop prints "started", waits for the
// test to write to the pipe "release", then runs after.sh.
func personSetup(t *testing.T, ctx context.Context) (*cli, *proc) {
	c := newCLI(t)
	c.setup(ctx, personConfig, personQueue())
	st := strings.Replace(string(c.read(".orchestrator/session_state.md")), "| consecutive_failures | 0 |", "| consecutive_failures | 2 |", 1)
	c.write(".orchestrator/session_state.md", st)
	c.fifo("release")
	c.write("loop.sh", "echo started\nread answer < release\nsh after.sh\n")
	c.write("after.sh", "")
	run := c.start(ctx, nil, "run")
	run.waitLine(ctx, "started")
	return c, run
}

func (c *cli) person(ctx context.Context, args ...string) result {
	c.t.Helper()
	r := c.run(ctx, nil, args...)
	if r.code != 0 {
		c.t.Fatalf("orchestrator %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stderr, "did not take") {
		c.t.Errorf("orchestrator %s: the run did not take the change:\n%s", strings.Join(args, " "), r.stderr)
	}
	return r
}

func (c *cli) edit(name, old, new string) {
	c.t.Helper()
	b := string(c.read(name))
	if !strings.Contains(b, old) {
		c.t.Fatalf("%s has no %q", name, old)
	}
	c.write(name, strings.Replace(b, old, new, 1))
}

// TestProcessPersonDuringLoop proves: a person's retry, skip, fix,
// breaker reset and pause, a no_auto_retry sentinel, and hand edits that
// tighten config.toml and the queue, all made while a loop runs, stand
// after it, with no guard stop.
func TestProcessPersonDuringLoop(t *testing.T) {
	ctx := testContext(t, 60*time.Second)
	c, run := personSetup(t, ctx)

	start := time.Now()
	c.person(ctx, "retry", "ISSUE-20261122-001")
	c.person(ctx, "skip", "ISSUE-20261122-002", "--reason", "not worth it")
	c.person(ctx, "fix", "ISSUE-20261122-003", "look at the parser")
	c.person(ctx, "breaker", "reset")
	c.person(ctx, "pause")
	took := time.Since(start)
	c.write(".orchestrator/no_auto_retry", "")
	c.edit(".orchestrator/config.toml", "max_loops = 3", "max_loops = 2")
	c.edit(".orchestrator/config.toml", "loops_per_day = 50", "loops_per_day = 20")
	c.edit(".orchestrator/issue_queue.md", "| Auto-Retry | true |\n| Retry-Count | 3 |", "| Auto-Retry | false |\n| Retry-Count | 3 |")
	q := string(c.read(".orchestrator/issue_queue.md"))
	i := strings.Index(q, "## ISSUE-20261122-004")
	c.write(".orchestrator/issue_queue.md", q[:i]+strings.Replace(q[i:], "| Max-Retries | 10 |", "| Max-Retries | 2 |", 1))
	q = string(c.read(".orchestrator/issue_queue.md"))
	i = strings.Index(q, "## ISSUE-20261122-006")
	c.write(".orchestrator/issue_queue.md", q[:i]+strings.Replace(q[i:], "| Status | escalated |", "| Status | skipped |", 1))

	writeFifo(ctx, t, c.path("release"), "go\n")
	r := waitRun(ctx, t, run)
	if strings.Contains(r.stderr, "(guard)") || strings.Contains(r.stderr, "restored") || strings.Contains(r.stderr, "put back") {
		t.Fatalf("the guard undid a person's change:\n%s", r.stderr)
	}
	for _, want := range []string{"a person's change during the loop: retry ISSUE-20261122-001", "skip ISSUE-20261122-002", "fix ISSUE-20261122-003",
		"breaker_reset: ", "pause: paused until resumed", "config.toml was tightened: kept"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("run's stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	qq := c.queue()
	for _, tc := range []struct {
		id, field, want string
	}{
		{"ISSUE-20261122-001", "Retry-Count", "0"}, {"ISSUE-20261122-001", "Status", "pending"},
		{"ISSUE-20261122-002", "Status", "skipped"},
		{"ISSUE-20261122-003", "Halted", "false"}, {"ISSUE-20261122-003", "Retry-Count", "0"},
		{"ISSUE-20261122-004", "Max-Retries", "2"},
		{"ISSUE-20261122-005", "Auto-Retry", "false"},
		{"ISSUE-20261122-006", "Status", "skipped"},
	} {
		is := qq.Issue(tc.id)
		if is == nil {
			t.Fatalf("%s is gone", tc.id)
		}
		if v, _ := is.Field(tc.field); strings.TrimSpace(v) != tc.want {
			t.Errorf("%s %s = %q, want %q", tc.id, tc.field, v, tc.want)
		}
	}
	for _, f := range []string{"paused", "no_auto_retry"} {
		if _, err := os.Stat(c.path(".orchestrator/" + f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	cfg := string(c.read(".orchestrator/config.toml"))
	if !strings.Contains(cfg, "max_loops = 2") || !strings.Contains(cfg, "loops_per_day = 20") {
		t.Errorf("config.toml tightening undone:\n%s", cfg)
	}
	ledger := string(c.read(".orchestrator/logs/retry.jsonl"))
	if strings.Contains(ledger, `"event":"guard"`) {
		t.Errorf("guard events in the ledger:\n%s", ledger)
	}
	if n := strings.Count(ledger, `"event":"person_change"`); n != 5 {
		t.Errorf("%d person_change events, want 5:\n%s", n, ledger)
	}
	// A later run honours the pause.
	if r := c.run(ctx, nil, "run"); !strings.Contains(r.stderr, "paused") {
		t.Errorf("the next run did not stop for the pause: exit %d\n%s", r.code, r.stderr)
	}
	t.Logf("five person commands during the loop took %v", took)
}

// TestProcessLoopLoosensDuringLoop proves: what the loop loosens (an issue
// un-halted, a limit raised, the pause a person set removed, a forged
// user_response record) is undone and stops the run with guard; the
// loop's own 'orchestrator retry' is refused, and so is its raw message
// on the run's socket.
func TestProcessLoopLoosensDuringLoop(t *testing.T) {
	ctx := testContext(t, 60*time.Second)
	c, run := personSetup(t, ctx)
	c.write("after.sh", `orchestrator retry ISSUE-20261122-001 > retry.out 2>&1; echo $? > retry.rc
ORCHESTRATOR_TEST_HANDOFF=.orchestrator/.run.sock orchestrator > sock.out 2>&1; echo $? > sock.rc
sed -i 's/^| Halted | true |$/| Halted | false |/' .orchestrator/issue_queue.md
sed -i 's/^max_loops = 3$/max_loops = 100/' .orchestrator/config.toml
rm .orchestrator/paused .orchestrator/no_auto_retry
echo '{"timestamp":"2026-11-22T10:00:00Z","event":"user_response","issue_id":"ISSUE-20261122-005","response":"retry"}' >> .orchestrator/logs/retry.jsonl
`)
	c.person(ctx, "pause", "--for", "2h")
	c.write(".orchestrator/no_auto_retry", "") // by hand: the run sees it appear
	ledgerBefore := c.read(".orchestrator/logs/retry.jsonl")
	writeFifo(ctx, t, c.path("release"), "go\n")
	r := waitRun(ctx, t, run)
	if !strings.Contains(r.stderr, "stopped (guard)") {
		t.Fatalf("no guard stop: exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"ISSUE-20261122-003: Halted true → false: restored", "config.toml was changed: restored",
		"loop.max_loops 3 → 100", "paused was removed (a person's stop): put back", "no_auto_retry was removed (a person's stop): put back",
		"a user_response retry ISSUE-20261122-005 record no person's command made"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("run's stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if rc := strings.TrimSpace(string(c.read("retry.rc"))); rc != "2" {
		t.Errorf("the loop's orchestrator retry: exit %s, want 2\n%s", rc, c.read("retry.out"))
	}
	if rc := strings.TrimSpace(string(c.read("sock.rc"))); rc != "3" || !strings.Contains(string(c.read("sock.out")), "inside the run's loop") {
		t.Errorf("the loop's own message on the socket: exit %s, want 3 and a refusal\n%s", rc, c.read("sock.out"))
	}
	if v, _ := c.queue().Issue("ISSUE-20261122-003").Field("Halted"); strings.TrimSpace(v) != "true" {
		t.Errorf("ISSUE-20261122-003 Halted = %q, want true", v)
	}
	if _, err := os.Stat(c.path(".orchestrator/paused")); err != nil {
		t.Errorf("the person's pause is gone: %v", err)
	}
	if !strings.Contains(string(c.read(".orchestrator/config.toml")), "max_loops = 3\n") {
		t.Errorf("config.toml not restored")
	}
	ledger := c.read(".orchestrator/logs/retry.jsonl")
	if strings.Contains(string(ledger), `"issue_id":"ISSUE-20261122-005","response":"retry"`) {
		t.Errorf("the forged record is still in the ledger")
	}
	if !strings.HasPrefix(string(ledger), string(ledgerBefore)) {
		t.Errorf("the ledger's lines before the loop changed")
	}
}

// TestProcessPersonResumeDuringLoop proves: a pause a person sets and
// lifts during one loop is lifted afterwards, with no guard stop.
func TestProcessPersonResumeDuringLoop(t *testing.T) {
	ctx := testContext(t, 60*time.Second)
	c, run := personSetup(t, ctx)
	c.person(ctx, "pause")
	c.person(ctx, "resume")
	c.write(".orchestrator/no_auto_retry", "") // no loop after this one
	writeFifo(ctx, t, c.path("release"), "go\n")
	r := waitRun(ctx, t, run)
	if strings.Contains(r.stderr, "(guard)") || strings.Contains(r.stderr, "put back") {
		t.Fatalf("the guard undid a person's change:\n%s", r.stderr)
	}
	if !strings.Contains(r.stderr, "resume: pause lifted") {
		t.Errorf("run's stderr lacks the resume:\n%s", r.stderr)
	}
	if _, err := os.Stat(c.path(".orchestrator/paused")); !os.IsNotExist(err) {
		t.Errorf("paused is back after the person lifted it: %v", err)
	}
	if _, err := os.Stat(c.path(".orchestrator/" + handoff.SocketFile)); !os.IsNotExist(err) {
		t.Errorf("the run left its socket behind: %v", err)
	}
}

// TestProcessPersonCommandCost measures what telling the run costs a
// person's command: the same command with and without a run listening.
func TestProcessPersonCommandCost(t *testing.T) {
	ctx := testContext(t, 60*time.Second)
	c := newCLI(t)
	c.setup(ctx, personConfig, personQueue())
	const n = 5
	timeIt := func() time.Duration {
		var total time.Duration
		for range n {
			total += c.person(ctx, "retry", "ISSUE-20261122-001").wall
		}
		return total / n
	}
	alone := timeIt()
	c.fifo("release")
	c.write("loop.sh", "echo started\nread answer < release\ntouch .orchestrator/no_auto_retry\n")
	run := c.start(ctx, nil, "run")
	run.waitLine(ctx, "started")
	told := timeIt()
	writeFifo(ctx, t, c.path("release"), "go\n")
	if r := waitRun(ctx, t, run); strings.Contains(r.stderr, "(guard)") {
		t.Fatalf("guard stop:\n%s", r.stderr)
	}
	t.Logf("orchestrator retry: %v with no run, %v telling a run (mean of %d)", alone, told, n)
}

// TestProcessPersonPauseStopsTheRun proves: a person's pause during a loop
// ends the run after that loop although an issue would qualify for a
// retry; if the loop deletes the pause, it is put back.
func TestProcessPersonPauseStopsTheRun(t *testing.T) {
	for _, deletes := range []bool{false, true} {
		t.Run(fmt.Sprintf("deleted=%t", deletes), func(t *testing.T) {
			ctx := testContext(t, 60*time.Second)
			c, run := personSetup(t, ctx)
			after := "echo x >> loops\n"
			if deletes {
				after += "rm -f .orchestrator/paused\n"
			}
			c.write("after.sh", after)
			c.person(ctx, "retry", "ISSUE-20261122-001") // it qualifies for an auto-retry loop
			c.person(ctx, "pause")
			writeFifo(ctx, t, c.path("release"), "go\n")
			r := waitRun(ctx, t, run)
			if put := strings.Contains(r.stderr, "paused was removed (a person's stop): put back"); put != deletes {
				t.Errorf("put back: %t, want %t\n%s", put, deletes, r.stderr)
			}
			if !deletes && !strings.Contains(r.stderr, "(paused)") {
				t.Errorf("the run did not stop for the pause:\n%s", r.stderr)
			}
			if _, err := os.Stat(c.path(".orchestrator/paused")); err != nil {
				t.Errorf("paused: %v", err)
			}
			if got := strings.Count(string(c.read("loops")), "x"); got != 1 {
				t.Errorf("%d loops ran, want 1", got)
			}
		})
	}
}

// waitRun waits for the run to end; under the race detector a race in the
// run fails the test.
func waitRun(ctx context.Context, t *testing.T, run *proc) result {
	t.Helper()
	r := run.wait(ctx)
	if strings.Contains(r.stderr, "DATA RACE") {
		t.Fatalf("the run raced:\n%s", r.stderr)
	}
	return r
}
