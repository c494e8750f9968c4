package orchestrator

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoretry/orchestrator/internal/foundations/procgroup"
	"github.com/autoretry/orchestrator/issuequeue"
)

// A loop that fails with a permanent error escalates the issues it left in
// progress, each logged with permanent_error and the pattern that said so,
// and leaves the others alone; the run stops with permanent_error.
func TestPermanentErrorEscalatesInProgress(t *testing.T) {
	const working, waiting = "ISSUE-20261122-001", "ISSUE-20261122-002"
	f := newFakeRunner(t)
	var stdout bytes.Buffer
	f.O.Stdout = &stdout
	writeQueue(t, f.O,
		issueMD(working, "Type=test", "Status=pending", "Auto-Retry=false"),
		issueMD(waiting, "Type=test", "Status=pending", "Auto-Retry=false"))
	f.Runner.Exec = func(ctx context.Context, s procgroup.Spec) (procgroup.Result, error) {
		f.execs++
		// The agent takes an issue, then its key is refused.
		writeQueue(t, f.O,
			issueMD(working, "Type=test", "Status=in_progress", "Auto-Retry=false"),
			issueMD(waiting, "Type=test", "Status=pending", "Auto-Retry=false"))
		return failed("Error: Invalid API key"), nil
	}
	rep, err := f.Run(context.Background())
	if f.execs != 1 {
		t.Fatalf("the loop ran %d times, want once: a permanent error is not retried", f.execs)
	}
	if rep.Code != CodePermanentError {
		t.Errorf("run code %q (%v), want %s", rep.Code, err, CodePermanentError)
	}
	if len(rep.Escal) != 1 || rep.Escal[0] != working {
		t.Errorf("escalated %v, want %s alone", rep.Escal, working)
	}
	q := loadQueue(t, f.O)
	if s := q.Issue(working).Status; s != issuequeue.StatusEscalated {
		t.Errorf("the issue in progress is %s, want escalated", s)
	}
	if s := q.Issue(waiting).Status; s != issuequeue.StatusPending {
		t.Errorf("the issue not in progress is %s, want it left pending", s)
	}
	evs := eventsOf(t, f.O, EvEscalated, working)
	if len(evs) != 1 || evs[0].Code != CodePermanentError || !strings.EqualFold(evs[0].Error, "invalid api key") || evs[0].RunID != rep.RunID {
		t.Errorf("escalated events %+v, want one, permanent_error, naming the pattern, of run %s", evs, rep.RunID)
	}
	if evs := eventsOf(t, f.O, EvEscalated, waiting); len(evs) != 0 {
		t.Errorf("the issue not in progress was logged escalated: %+v", evs)
	}
	h, errs := ReadHistory(f.O.Dir)
	if len(errs) > 0 || len(h) != 1 {
		t.Fatalf("history: %v, %d rows", errs, len(h))
	}
	if h[0].Result != ResultPermanent || len(h[0].Escalated) != 1 || h[0].Escalated[0] != working {
		t.Errorf("history row: result %q, escalated %v; want permanent, %s", h[0].Result, h[0].Escalated, working)
	}
	if !strings.Contains(stdout.String(), working) || !strings.Contains(stdout.String(), "permanent error") {
		t.Errorf("no escalation message for %s on stdout:\n%s", working, stdout.String())
	}
}

// A loop that fails in an ordinary way escalates nothing, in progress or not.
func TestOrdinaryFailureEscalatesNothing(t *testing.T) {
	const working = "ISSUE-20261122-001"
	f := newFakeRunner(t)
	writeQueue(t, f.O, issueMD(working, "Type=test", "Status=pending", "Auto-Retry=false"))
	f.Runner.Exec = func(ctx context.Context, s procgroup.Spec) (procgroup.Result, error) {
		f.execs++
		writeQueue(t, f.O, issueMD(working, "Type=test", "Status=in_progress", "Auto-Retry=false"))
		return failed("--- FAIL: TestX"), nil
	}
	rep, _ := f.Run(context.Background())
	if f.execs != 1 {
		t.Fatalf("the loop ran %d times, want once", f.execs)
	}
	if len(rep.Escal) != 0 || rep.Code == CodePermanentError {
		t.Errorf("an ordinary failure: escalated %v, code %q", rep.Escal, rep.Code)
	}
	if s := loadQueue(t, f.O).Issue(working).Status; s == issuequeue.StatusEscalated {
		t.Error("an ordinary failure escalated the issue in progress")
	}
	if evs := eventsOf(t, f.O, EvEscalated, working); len(evs) != 0 {
		t.Errorf("an ordinary failure logged %+v", evs)
	}
}

// When the agent says why it stopped (its turn limit, its spending cap,
// another error), that is shown as the loop's cause on stderr and recorded
// in its loop_exec event; the loop failed as usual. An agent that says
// nothing of the kind gets no cause.
func TestAgentCauseShown(t *testing.T) {
	for _, tt := range []struct {
		name, result string
		exit         int
		kind, cause  string
	}{
		{"turn limit", `{"type":"result","subtype":"error_max_turns","is_error":true,"result":"","session_id":"s"}`, 1,
			"max_turns", "loop 1: the agent stopped at its turn limit (max_turns)"},
		{"spending cap", `{"type":"result","subtype":"error_max_budget_usd","is_error":true,"result":"","session_id":"s"}`, 1,
			"budget", "loop 1: the agent stopped at its own spending cap (budget)"},
		{"another error", `{"type":"result","subtype":"error_during_execution","is_error":true,"result":"boom","session_id":"s"}`, 1,
			"execution", "loop 1: the agent reported an error (execution)"},
		{"success", `{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"s"}`, 0, "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeRunner(t)
			var stderr bytes.Buffer
			f.Runner.Stderr = &stderr
			f.Runner.Exec = func(ctx context.Context, s procgroup.Spec) (procgroup.Result, error) {
				f.execs++
				line := tt.result + "\n"
				if _, err := s.Output.Write([]byte(line)); err != nil {
					return procgroup.Result{}, err
				}
				return procgroup.Result{ExitCode: tt.exit, Tail: []byte(line)}, nil
			}
			f.Run(context.Background())
			if f.execs != 1 {
				t.Fatalf("the loop ran %d times, want once", f.execs)
			}
			var execs []Event
			evs, _ := ReadEvents(f.O.Dir)
			for _, ev := range evs {
				if ev.Event == EvExec {
					execs = append(execs, ev)
				}
			}
			if len(execs) != 1 || execs[0].AgentError != tt.kind {
				t.Errorf("loop_exec events %+v, want one with agent_error %q", execs, tt.kind)
			}
			got := strings.Contains(stderr.String(), "the agent stopped") || strings.Contains(stderr.String(), "the agent reported")
			if tt.cause == "" && got {
				t.Errorf("a cause was shown for an agent that gave none:\n%s", stderr.String())
			}
			if tt.cause != "" && !strings.Contains(stderr.String(), "orchestrator: "+tt.cause+"\n") {
				t.Errorf("stderr:\n%s\nwant %q", stderr.String(), tt.cause)
			}
			h, _ := ReadHistory(f.O.Dir)
			want := ResultFailed
			if tt.exit == 0 {
				want = ResultOK
			}
			if len(h) != 1 || h[0].Result != want {
				t.Errorf("history %+v, want one loop, %s", h, want)
			}
		})
	}
}

// CheckCommand looks the loop command's program up in the environment the
// loop gets (Environ, when set, not the tool's own), and a relative path
// from the workspace, the state directory's parent.
func TestCheckCommand(t *testing.T) {
	ws := t.TempDir()
	dir := filepath.Join(ws, ".orchestrator")
	bin := filepath.Join(ws, "bin")
	for _, d := range []string{dir, bin, filepath.Join(ws, "scripts")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{filepath.Join(bin, "agent"), filepath.Join(ws, "scripts", "loop.sh")} {
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	o := newTestOrchestrator(t)
	o.Dir = dir
	r := &Runner{O: o}
	check := func(command string, environ []string) error {
		o.Config.Loop.Command = command
		r.Environ = environ
		return r.CheckCommand()
	}
	t.Setenv("PATH", filepath.Join(ws, "nowhere"))
	if err := check("agent --go", []string{"HOME=/x", "PATH=" + bin}); err != nil {
		t.Errorf("agent in the loop's PATH: %v", err)
	}
	err := check("agent --go", []string{"PATHS=" + bin, "PATH=" + filepath.Join(ws, "scripts")})
	if le, ok := err.(*LoopCommandError); !ok || le.Program != "agent" || le.Why != "not found in PATH" {
		t.Errorf("agent not in the loop's PATH: %v, want not found in PATH", err)
	}
	// Without Environ, the loop gets the tool's environment.
	if err := check("agent", nil); err == nil {
		t.Error("agent not in the tool's PATH: no error")
	}
	t.Setenv("PATH", bin)
	if err := check("agent", nil); err != nil {
		t.Errorf("agent in the tool's PATH: %v", err)
	}
	// A relative path is from the workspace, wherever the tool runs.
	if err := check("scripts/loop.sh --once", []string{}); err != nil {
		t.Errorf("scripts/loop.sh in the workspace: %v", err)
	}
	if err := check("scripts/missing.sh", []string{}); err == nil || !strings.Contains(err.Error(), "not found (looked in "+ws+")") {
		t.Errorf("a missing script: %v, want not found in %s", err, ws)
	}
}
