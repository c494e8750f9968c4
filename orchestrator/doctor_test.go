package orchestrator

import (
	"os"
	"strings"
	"testing"
)

// doctor names each problem by its check: a setup with every brake off,
// and an [agent] kind the loops' output contradicts; the default setup has
// none of them.
func TestDoctorBrakesAndAgent(t *testing.T) {
	checks := func(fs []DoctorFinding) string {
		var s []string
		for _, f := range fs {
			if f.Hint == "" {
				t.Errorf("finding %+v without a hint", f)
			}
			s = append(s, f.Check+"/"+f.Severity)
		}
		return strings.Join(s, ",")
	}
	o := newTestOrchestrator(t)
	o.Config.Loop.Command = "true"
	if got := checks(o.Doctor(os.Getenv)); got != "" {
		t.Fatalf("default setup: findings %s, want none", got)
	}

	b := &o.Config.Budget
	b.LoopsPerDay, b.AutoRetryLoopsPerDay, b.AgentTimePerDay, b.CostPerDay, b.TokensPerDay = 0, 0, 0, 0, 0
	if got, want := checks(o.Doctor(os.Getenv)), "brakes/warning"; got != want {
		t.Errorf("daily budgets off: %s, want %s", got, want)
	}
	o.Config.CircuitBreaker.Threshold = 0
	fs := o.Doctor(os.Getenv)
	if got, want := checks(fs), "brakes/error"; got != want {
		t.Fatalf("every brake off: %s, want %s", got, want)
	}
	if !strings.Contains(fs[0].Message, "circuit_breaker.threshold is 0") {
		t.Errorf("message %q does not say which brake", fs[0].Message)
	}

	o = newTestOrchestrator(t)
	o.Config.Loop.Command, o.Config.Agent.Kind = "true", "codex"
	if err := o.log().Record(Event{Time: testNow, Event: EvExec, Kind: KindRegular, Agent: "claude", Cost: 0.5}); err != nil {
		t.Fatal(err)
	}
	fs = o.Doctor(os.Getenv)
	if got, want := checks(fs), "agent/warning"; got != want {
		t.Fatalf("agent contradicted: %s, want %s", got, want)
	}
	if !strings.Contains(fs[0].Hint, `kind = "claude"`) {
		t.Errorf("hint %q does not name the agent seen", fs[0].Hint)
	}
}
