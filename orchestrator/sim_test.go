package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/config"
	"github.com/autoretry/orchestrator/internal/foundations/procgroup"
	"github.com/autoretry/orchestrator/issuequeue"
)

// sim drives "orchestrator run" as cron would, every 10 minutes of a
// simulated clock, with a scripted agent as the loop command and scripted
// verification results. It records every execution of the loop command and
// every auto-retry loop, to check the daily budgets against what really ran.
type sim struct {
	t      *testing.T
	o      *Orchestrator
	now    time.Time
	n      int         // a counter the agents use to vary their output
	execs  []time.Time // every execution of the loop command
	autos  []time.Time // every auto-retry loop (its first execution)
	loops  map[string]bool
	agent  func(s *sim, kind string, try int) procgroup.Result
	verify func(s *sim, id, check string) procgroup.Result
}

const simFailing = "ISSUE-20261122-001"

func newSim(t *testing.T) *sim {
	o := newTestOrchestrator(t)
	o.Config = config.Default()
	o.Config.Loop.Command = "agent"
	o.Config.Verification.Checks = map[string]config.Check{
		"test":  {Name: "test", Command: "verify-test", Timeout: time.Minute},
		"decoy": {Name: "decoy", Command: "verify-decoy", Timeout: time.Minute},
	}
	s := &sim{t: t, o: o, now: time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC), loops: map[string]bool{}}
	o.Now = func() time.Time { return s.now }
	if err := os.WriteFile(filepath.Join(o.Dir, "issue_queue.md"), []byte("# Issue Queue\n\n"+issueMD(simFailing,
		"Priority=critical", "Auto-Retry=true", "Blocking=true", "Verify=test")), 0o644); err != nil {
		t.Fatal(err)
	}
	return s
}

func env(spec procgroup.Spec, name string) string {
	for _, kv := range spec.Env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

func (s *sim) runner() *Runner {
	tries := map[string]int{}
	return &Runner{
		O: s.o, Terminal: io.Discard, Stderr: io.Discard, Environ: []string{}, Pid: 4242,
		Exec: func(ctx context.Context, spec procgroup.Spec) (procgroup.Result, error) {
			if spec.Command != s.o.Config.Loop.Command {
				s.now = s.now.Add(20 * time.Second)
				return s.verify(s, env(spec, "ORCHESTRATOR_ISSUES"), spec.Command), nil
			}
			kind := env(spec, "ORCHESTRATOR_LOOP_KIND")
			key := env(spec, "ORCHESTRATOR_RUN_ID") + "/" + env(spec, "ORCHESTRATOR_LOOP")
			tries[key]++
			res := s.agent(s, kind, tries[key])
			if res.TimedOut {
				s.now = s.now.Add(spec.Timeout)
			} else {
				s.now = s.now.Add(2 * time.Minute)
			}
			s.execs = append(s.execs, s.now)
			if kind == KindAutoRetry && !s.loops[key] {
				s.loops[key] = true
				s.autos = append(s.autos, s.now)
			}
			return res, nil
		},
		Sleep: func(ctx context.Context, d time.Duration) error {
			s.now = s.now.Add(d)
			return nil
		},
		Rand: func() float64 { return 0.5 },
	}
}

// day runs cron every 10 minutes for the given number of runs; a run still
// going at its successor's time makes that start a busy exit, as the lock
// would.
func (s *sim) day(runs int) (exit3 int) {
	start := s.now
	for i := 0; i < runs; i++ {
		at := start.Add(time.Duration(i) * 10 * time.Minute)
		if s.now.After(at) {
			continue
		}
		s.now = at
		_, err := s.runner().Run(context.Background())
		var se *StopError
		switch {
		case err == nil:
		case errors.As(err, &se):
			if se.Code == "" || se.Reason == "" || se.Hint == "" {
				s.t.Fatalf("run %d stopped without a code, reason or hint: %+v", i, se)
			}
			if !se.Wait {
				exit3++
			}
		default:
			s.t.Fatalf("run %d: %v", i, err)
		}
	}
	return exit3
}

// maxIn24h returns the most of the times that fall in any 24-hour window.
func maxIn24h(times []time.Time) int {
	most := 0
	for i, end := range times {
		n := 0
		for _, t := range times[:i+1] {
			if end.Sub(t) < 24*time.Hour {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}

func failed2(out string) procgroup.Result {
	return procgroup.Result{ExitCode: 1, Tail: []byte(out + "\n")}
}

// refile deletes every issue a person is needed for and files the same
// failure again under a new ID, as an agent with write access can.
func (s *sim) refile() {
	var gone []string
	err := s.o.store().Update(context.Background(), func(q *issuequeue.Queue, st *issuequeue.State) (issuequeue.Change, error) {
		var edits []issuequeue.Edit
		for _, is := range q.Issues {
			if is.Verify == "test" && (is.Halted || is.Status == issuequeue.StatusEscalated) {
				edits = append(edits, issuequeue.RemoveIssue(is.ID))
				gone = append(gone, is.ID)
			}
		}
		return issuequeue.Change{Queue: edits}, nil
	})
	if err != nil {
		s.t.Fatal(err)
	}
	for range gone {
		s.add("the same crash, filed again", "test")
	}
}

func (s *sim) add(summary, verify string) {
	if _, err := s.o.Add(context.Background(), NewIssue{Summary: summary, Priority: "critical", AutoRetry: true, Blocking: true,
		MaxRetries: -1, Verify: verify}); err != nil {
		s.t.Fatal(err)
	}
}

// With the default configuration, no agent gets more than 200 executions of
// the loop command or 30 auto-retry loops in any 24 hours of cron every 10
// minutes, whatever it does: fail the same way, reword its failure,
// oscillate, re-file its issue under new IDs, keep a passing decoy issue to
// defeat the stall rule, hit rate limits, crash, hang, or file new critical
// issues every loop. Every stop that needs a person names its code and a
// hint (checked in day).
func TestCronDayIsBounded(t *testing.T) {
	ok := procgroup.Result{}
	same := func(s *sim, id, check string) procgroup.Result {
		return failed2("--- FAIL: TestServer\n    server_test.go:12: nil map")
	}
	reword := func(s *sim, id, check string) procgroup.Result {
		s.n++
		return failed2(fmt.Sprintf("--- FAIL: TestServer\n    failure variant %d", s.n%9000))
	}
	decoyPasses := func(s *sim, id, check string) procgroup.Result {
		if check == "verify-decoy" {
			return ok
		}
		return reword(s, id, check)
	}
	agents := []struct {
		name   string
		agent  func(s *sim, kind string, try int) procgroup.Result
		verify func(s *sim, id, check string) procgroup.Result
	}{
		{"always failing", func(*sim, string, int) procgroup.Result { return ok }, same},
		{"rewording", func(*sim, string, int) procgroup.Result { return ok }, reword},
		{"oscillating", func(*sim, string, int) procgroup.Result { return ok }, func(s *sim, id, check string) procgroup.Result {
			s.n++
			return failed2([]string{"--- FAIL: A", "--- FAIL: B"}[s.n%2])
		}},
		{"re-filing under new IDs", func(s *sim, kind string, try int) procgroup.Result { s.refile(); return ok }, same},
		{"re-filing and rewording", func(s *sim, kind string, try int) procgroup.Result { s.refile(); return ok }, reword},
		{"decoy passing issue", func(s *sim, kind string, try int) procgroup.Result {
			s.refile()
			s.add("an easy one", "decoy")
			return ok
		}, decoyPasses},
		{"decoy with rate limits on first tries", func(s *sim, kind string, try int) procgroup.Result {
			if try == 1 {
				return failed2("Error: 429 rate limit exceeded; retry after 20s")
			}
			s.refile()
			s.add("an easy one", "decoy")
			return ok
		}, decoyPasses},
		{"rate-limited forever", func(*sim, string, int) procgroup.Result { return failed2("Error: 429 Too Many Requests") }, same},
		{"rate-limited with reset hints", func(s *sim, kind string, try int) procgroup.Result {
			return failed2("You've hit your limit · resets " + s.now.Add(3*time.Hour).Format("3pm") + " (UTC)")
		}, same},
		{"crashing", func(*sim, string, int) procgroup.Result { return failed2("panic: boom") }, same},
		{"hanging", func(*sim, string, int) procgroup.Result { return procgroup.Result{TimedOut: true, ExitCode: -1} }, same},
		{"new critical issues every loop", func(s *sim, kind string, try int) procgroup.Result {
			s.add("something else broke", "test")
			return ok
		}, reword},
	}
	for i, a := range agents {
		t.Run(a.name, func(t *testing.T) {
			if testing.Short() && i%4 != 0 {
				t.Skip("-short (the race detector's run): one agent in four")
			}
			t.Parallel()
			s := newSim(t)
			s.agent, s.verify = a.agent, a.verify
			s.day(168) // 28 hours: the window rolls
			execs, autos := maxIn24h(s.execs), maxIn24h(s.autos)
			t.Logf("%d loop executions and %d auto-retry loops in all; at most %d and %d in 24 h", len(s.execs), len(s.autos), execs, autos)
			if execs > 200 {
				t.Errorf("%d loop executions in 24 h, budget 200", execs)
			}
			if autos > 30 {
				t.Errorf("%d auto-retry loops in 24 h, budget 30", autos)
			}
		})
	}
}

// resetCounters is what an agent with write access does to escape its
// limits: it sets its issue's counters back to zero and clears its failure
// signatures, un-halts it, and deletes the no_auto_retry file.
func (s *sim) resetCounters() {
	path := filepath.Join(s.o.Dir, "issue_queue.md")
	b, err := os.ReadFile(path)
	if err != nil {
		s.t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(l, "| Retry-Count |"):
			l = "| Retry-Count | 0 |"
		case strings.HasPrefix(l, "| Signature-Repeat-Count |"):
			l = "| Signature-Repeat-Count | 0 |"
		case strings.HasPrefix(l, "| Failure-Signature |"):
			l = "| Failure-Signature | |"
		case strings.HasPrefix(l, "| Halted |"):
			l = "| Halted | false |"
		case strings.HasPrefix(l, "| Status |"):
			l = "| Status | pending |"
		}
		out = append(out, l)
	}
	if err := os.WriteFile(path, []byte(strings.Join(out, "\n")), 0o644); err != nil {
		s.t.Fatal(err)
	}
	os.Remove(filepath.Join(s.o.Dir, "no_auto_retry"))
}

// Over a simulated day, an agent that resets its counters during its loops
// gets no more loops than an honest agent that always fails: the loop guard
// restores what it changed and stops the run.
func TestCounterResettingAgentGetsNoMoreLoops(t *testing.T) {
	ok := procgroup.Result{}
	same := func(s *sim, id, check string) procgroup.Result {
		return failed2("--- FAIL: TestServer\n    server_test.go:12: nil map")
	}
	honest, cheat := newSim(t), newSim(t)
	honest.agent, honest.verify = func(*sim, string, int) procgroup.Result { return ok }, same
	cheat.agent, cheat.verify = func(s *sim, kind string, try int) procgroup.Result { s.resetCounters(); return ok }, same
	honest.day(144)
	exit3 := cheat.day(144)
	t.Logf("honest: %d executions, %d auto-retry loops; resetting: %d executions, %d auto-retry loops, %d runs stopped",
		len(honest.execs), len(honest.autos), len(cheat.execs), len(cheat.autos), exit3)
	if len(cheat.autos) > len(honest.autos) || len(cheat.execs) > len(honest.execs) {
		t.Errorf("the agent that resets its counters got %d auto-retry loops and %d executions; an honest one %d and %d",
			len(cheat.autos), len(cheat.execs), len(honest.autos), len(honest.execs))
	}
}
