//go:build linux

package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/issuequeue"
	"github.com/autoretry/orchestrator/orchestrator"
)

// inLoopQueue holds one pending auto-retry issue whose check always
// fails: after the regular loop the check claims it for an auto-retry loop.
const inLoopQueue = "# Issue Queue\n\n## ISSUE-20261122-001\n\n| Field | Value |\n|-------|-------|\n| Priority | critical |\n" +
	"| Auto-Retry | true |\n| Max-Retries | 10 |\n| Verify | test |\n\n### Summary\nServer crashes\n"

// streamingAgent is a loop script whose auto-retry loops stream event,
// with $i the event's number, 20 times 0.3 s apart, after writing their
// pid to agent.pid; the regular loop prints nothing and exits 0. It
// writes "finished" only if nothing stopped it.
func streamingAgent(event string) string {
	return `[ "$ORCHESTRATOR_LOOP_KIND" = auto_retry ] || exit 0
echo $$ > agent.pid
i=1
while [ $i -le 20 ]; do
  echo '` + event + `'
  i=$((i+1))
  sleep 0.3
done
echo finished > agent.finished
`
}

// execEvents reads the loop_exec events of the state directory's event log.
func execEvents(t *testing.T, c *cli) []orchestrator.Event {
	t.Helper()
	f, err := os.Open(filepath.Join(c.dir(), "logs", "retry.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []orchestrator.Event
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev orchestrator.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("retry.jsonl: %v: %s", err, sc.Bytes())
		}
		if ev.Event == orchestrator.EvExec {
			out = append(out, ev)
		}
	}
	return out
}

// historyRows reads history.csv: its header, then its rows.
func historyRows(t *testing.T, c *cli) [][]string {
	t.Helper()
	rows, err := csv.NewReader(bytes.NewReader(c.read(".orchestrator/history.csv"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// gone fails the test while the process whose pid the file holds exists.
func gone(t *testing.T, c *cli, pidFile string) {
	t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(string(c.read(pidFile))))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the loop's process %d is still there after the run (kill 0: %v)", pid, err)
	}
}

// notCharged checks that the stopped auto-retry loop cost its issue
// nothing: claimed by the check, then Retry-Count as before the claim,
// pending, and no failure or signature recorded.
func notCharged(t *testing.T, c *cli, halted bool) {
	t.Helper()
	is := c.queue().Issue("ISSUE-20261122-001")
	if is == nil {
		t.Fatal("the issue is gone")
	}
	want := issuequeue.StatusPending
	if halted {
		want = issuequeue.StatusEscalated
	}
	if is.RetryCount != 0 || is.Status != want || is.Halted != halted {
		t.Errorf("the issue after the stopped loop: Retry-Count %d, Status %s, halted %v; want 0, %s, halted %v",
			is.RetryCount, is.Status, is.Halted, want, halted)
	}
	log := string(c.read(".orchestrator/logs/retry.jsonl"))
	if n := strings.Count(log, `"event":"attempt"`); n != 0 {
		t.Errorf("%d failures recorded, want none: the loop was not verified", n)
	}
	if !strings.Contains(log, `"event":"triggered"`) {
		t.Error("the check never claimed the issue: the stopped loop was not its attempt")
	}
}

// stoppedLoop checks what a run whose auto-retry loop a rule stopped left:
// exit 3 with the code, the loop's exec record and history row naming it,
// its processes gone, the issue not charged (and, for a rule of the
// issue's own spend, halted). It returns the exec record.
func stoppedLoop(t *testing.T, c *cli, r result, code orchestrator.Code) orchestrator.Event {
	t.Helper()
	if r.code != exitSafeguard || !strings.Contains(r.stderr, "stopped ("+string(code)+"): ") {
		t.Fatalf("exit %d, want 3 with stopped (%s)\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
	evs := execEvents(t, c)
	if len(evs) != 2 {
		t.Fatalf("%d loop executions recorded, want 2: %+v", len(evs), evs)
	}
	ev := evs[1]
	if ev.StoppedBy != code || ev.Kind != orchestrator.KindAutoRetry {
		t.Errorf("the auto-retry loop's exec record: stopped_by %q kind %q, want %q", ev.StoppedBy, ev.Kind, code)
	}
	if evs[0].StoppedBy != "" {
		t.Errorf("the regular loop's record has stopped_by %q", evs[0].StoppedBy)
	}
	rows := historyRows(t, c)
	if h := rows[0]; h[len(h)-1] != "stopped_by" {
		t.Errorf("history.csv header %v: stopped_by is not its last column", h)
	}
	if len(rows) != 3 {
		t.Fatalf("history.csv has %d rows, want a header and 2 loops", len(rows))
	}
	if got := rows[2][len(rows[0])-1]; got != string(code) {
		t.Errorf("history.csv: loop 2's stopped_by %q, want %q", got, code)
	}
	if got := rows[1][len(rows[0])-1]; got != "" {
		t.Errorf("history.csv: loop 1's stopped_by %q, want empty", got)
	}
	if _, err := os.Stat(c.path("agent.finished")); err == nil {
		t.Error("the loop ran to its end")
	}
	gone(t, c, "agent.pid")
	notCharged(t, c, code == orchestrator.CodeIssueTokens || code == orchestrator.CodeIssueCost ||
		code == orchestrator.CodeIssueAgentTime || code == orchestrator.CodeNoProgressSpend)
	return ev
}

// A loop that streams 30k tokens every 0.3 s against tokens_per_day =
// 100000 is stopped at the first report that reaches the budget, in the
// output of each agent: Claude Code's stream-json (cache reads not
// counted), Codex's exec --json (its cached input not counted). The run
// exits 3 with daily_tokens; the loop is not charged to its issue.
func TestProcessTokensHoldDuringLoop(t *testing.T) {
	agents := []struct{ name, event string }{
		{"claude", `{"type":"assistant","message":{"id":"msg_'"$i"'","model":"claude-sonnet-4-5","type":"message","role":"assistant",` +
			`"content":[{"type":"text","text":"working"}],"usage":{"input_tokens":10000,"cache_read_input_tokens":50000,"cache_creation_input_tokens":0,"output_tokens":20000}}}`},
		{"codex", `{"type":"turn.completed","usage":{"input_tokens":60000,"cached_input_tokens":40000,"output_tokens":10000}}`},
	}
	for _, a := range agents {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			ctx := testContext(t, time.Minute)
			c := newCLI(t)
			c.setup(ctx, "[loop]\ncommand = \"sh agent.sh\"\n[verify.test]\ncommand = \"echo '--- FAIL: TestServer'; exit 1\"\n"+
				"[budget]\ntokens_per_day = 100000\n", inLoopQueue)
			c.write("agent.sh", streamingAgent(a.event))
			r := c.run(ctx, nil, "run")
			ev := stoppedLoop(t, c, r, orchestrator.CodeDailyTokens)
			if ev.Tokens == nil {
				t.Fatal("the stopped loop's record has no tokens")
			}
			if n := ev.Tokens.Counted(); n < 100000 || n > 100000+30000 {
				t.Errorf("the stopped loop counted %d tokens; want the budget reached, and within one report of 30k past it", n)
			}
			t.Logf("%s: stopped after %d ms with %d tokens counted", a.name, ev.DurationMS, ev.Tokens.Counted())
		})
	}
}

// The issue's own cap holds during a loop too: a loop streaming 30k tokens
// every 0.3 s for an issue whose loops may spend 100000 in all is stopped
// at the report that reaches it, with issue_tokens, not charged, and the
// issue is halted on that cap at once: the next check retries nothing.
func TestProcessIssueTokensHoldDuringLoop(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, time.Minute)
	c := newCLI(t)
	c.setup(ctx, "[loop]\ncommand = \"sh agent.sh\"\n[verify.test]\ncommand = \"echo '--- FAIL: TestServer'; exit 1\"\n"+
		"[budget]\nissue_tokens = 100000\nreserve = false\n", inLoopQueue)
	c.write("agent.sh", streamingAgent(`{"type":"assistant","message":{"id":"msg_'"$i"'","model":"claude-sonnet-4-5","type":"message","role":"assistant",`+
		`"content":[{"type":"text","text":"working"}],"usage":{"input_tokens":10000,"cache_read_input_tokens":50000,"cache_creation_input_tokens":0,"output_tokens":20000}}}`))
	r := c.run(ctx, nil, "run")
	ev := stoppedLoop(t, c, r, orchestrator.CodeIssueTokens)
	if ev.Tokens == nil {
		t.Fatal("the stopped loop's record has no tokens")
	}
	if n := ev.Tokens.Counted(); n < 100000 || n > 100000+30000 {
		t.Errorf("the stopped loop counted %d tokens; want the issue's cap reached, and within one report of 30k past it", n)
	}
	// The next check retries nothing: the issue is halted.
	r = c.run(ctx, nil, "check")
	if r.code == 0 {
		t.Errorf("check after the stopped loop: exit 0, want no loop for the halted issue\n%s%s", r.stdout, r.stderr)
	}
	t.Logf("stopped after %d ms with %d tokens counted", ev.DurationMS, ev.Tokens.Counted())
}

// A loop whose agent states its cost per step (opencode's step_finish),
// 0.30 a step every 0.3 s against cost_per_day = 1, is stopped at the
// step that reaches it, with daily_cost, and not charged.
func TestProcessCostHoldsDuringLoop(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, time.Minute)
	c := newCLI(t)
	c.setup(ctx, "[loop]\ncommand = \"sh agent.sh\"\n[verify.test]\ncommand = \"echo '--- FAIL: TestServer'; exit 1\"\n"+
		"[budget]\ncost_per_day = 1.0\n", inLoopQueue)
	c.write("agent.sh", streamingAgent(`{"type":"step_finish","timestamp":1758919898483,"sessionID":"ses_1","part":{"type":"step-finish",`+
		`"tokens":{"input":1000,"output":100,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0.3}}`))
	r := c.run(ctx, nil, "run")
	ev := stoppedLoop(t, c, r, orchestrator.CodeDailyCost)
	if ev.Cost < 1 || ev.Cost > 1.3+1e-9 {
		t.Errorf("the stopped loop's cost %.2f; want the budget reached, and within one step of 0.30 past it", ev.Cost)
	}
	t.Logf("stopped after %d ms at cost %.2f", ev.DurationMS, ev.Cost)
}

// A loop that prints nothing is stopped as hung once [loop] idle_timeout
// passes, within idle_timeout and kill_grace; the run exits 3 with hung,
// the issue is not charged, and the circuit breaker counts the loop as
// failed.
func TestProcessHungLoop(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, time.Minute)
	c := newCLI(t)
	c.setup(ctx, "[loop]\ncommand = \"sh agent.sh\"\nidle_timeout = \"1s\"\nkill_grace = \"1s\"\n"+
		"[verify.test]\ncommand = \"echo '--- FAIL: TestServer'; exit 1\"\n", inLoopQueue)
	c.write("agent.sh", `[ "$ORCHESTRATOR_LOOP_KIND" = auto_retry ] || exit 0
echo $$ > agent.pid
sleep 60
echo finished > agent.finished
`)
	r := c.run(ctx, nil, "run")
	ev := stoppedLoop(t, c, r, orchestrator.CodeHung)
	if limit := 2*time.Second + 2*time.Second; time.Duration(ev.DurationMS)*time.Millisecond > limit {
		t.Errorf("the hung loop ran %d ms; want it stopped within idle_timeout + kill_grace (+ 2s slack)", ev.DurationMS)
	}
	if st := c.state(); st.ConsecutiveFailures != 1 {
		t.Errorf("consecutive_failures = %d after the hung loop, want 1", st.ConsecutiveFailures)
	}
	t.Logf("hung loop stopped after %d ms; run %v", ev.DurationMS, r.wall)
}

// explain shows the rules that hold while a loop runs (the budgets and
// idle_timeout) and each budget's reserve.
func TestProcessExplainShowsInLoopRules(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 30*time.Second)
	c := newCLI(t)
	c.setup(ctx, "[loop]\ncommand = \"true\"\nidle_timeout = \"10m\"\n[budget]\ntokens_per_day = 100000\ncost_per_day = 2\n", emptyQueue)
	r := c.run(ctx, nil, "explain")
	if r.code != 0 {
		t.Fatalf("explain: exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{
		"While a loop runs:",
		"tokens_per_day 100000: the loop is stopped once the last 24h with its spend reach it",
		"cost_per_day 2.00: the loop is stopped",
		"agent_time_per_day 8h0m0s: the loop is stopped",
		"no output for 10m0s stops the loop (idle_timeout)",
		"reserve: fewer than 3 loops recorded",
		"a typical loop's spend left of tokens_per_day",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("explain does not say %q\n%s", want, r.stdout)
		}
	}
	var ex orchestrator.Explanation
	r = c.run(ctx, nil, "explain", "--json")
	if err := json.Unmarshal([]byte(r.stdout), &ex); err != nil {
		t.Fatalf("explain --json: %v\n%s", err, r.stdout)
	}
	if n := len(ex.Run.During); n == 0 || ex.Run.During[n-1].Rule != orchestrator.CodeHung {
		t.Errorf("explain --json: during_loop %+v, want the budgets and hung", ex.Run.During)
	}
}
