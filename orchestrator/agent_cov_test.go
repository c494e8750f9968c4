package orchestrator

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/autoretry/orchestrator/internal/adapters/agentout"
)

// One source of an execution's cost counts, never two: the cost the agent
// stated first (zero included), else what the loop wrote to
// $ORCHESTRATOR_COST_FILE, else what it printed; a negative stated cost is
// no cost stated.
func TestExecCostOneSource(t *testing.T) {
	r := &Runner{O: newTestOrchestrator(t)}
	costPath := filepath.Join(t.TempDir(), "loop.cost")
	if err := os.WriteFile(costPath, []byte("0.75\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stated := func(c float64) agentout.Report { return agentout.Report{CostUSD: &c} }
	tests := []struct {
		name string
		rep  agentout.Report
		want float64
	}{
		{"the agent's cost", stated(1.25), 1.25},
		{"the agent's zero cost", stated(0), 0},
		{"a negative cost stated: the cost file", stated(-1), 0.75},
		{"no cost stated: the cost file", agentout.Report{}, 0.75},
	}
	for _, tt := range tests {
		if got := r.execCost(tt.rep, nil, costPath); got != tt.want {
			t.Errorf("%s: cost %v, want %v", tt.name, got, tt.want)
		}
	}
}

// A machine failure leaves the provider overloaded when it was transient,
// rate-limited otherwise, as the stop says.
func TestAgentFailureState(t *testing.T) {
	for _, tt := range []struct {
		rep  agentout.Report
		want string
	}{
		{agentout.Report{Error: true, ErrorKind: agentout.ErrOverloaded}, "overloaded"},
		{agentout.Report{Error: true, ErrorKind: agentout.ErrRateLimit}, "rate-limited"},
		{agentout.Report{Error: true, ErrorKind: agentout.ErrUsageLimit}, "rate-limited"},
	} {
		if got := agentFailureOf(tt.rep, 1).state(); got != tt.want {
			t.Errorf("%s: state %q, want %q", tt.rep.ErrorKind, got, tt.want)
		}
	}
}
