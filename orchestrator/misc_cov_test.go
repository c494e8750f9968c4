package orchestrator

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// doctor names every cost budget that is on while the agent reported no
// cost in its last loops (such a budget is never spent), and only then:
// not without loops, not once a loop reported a cost, not for a budget
// that is off.
func TestDoctorCostNamesUnspendableBudgets(t *testing.T) {
	o := newTestOrchestrator(t)
	o.Config.Budget.CostPerDay = 20
	o.Config.Budget.IssueCost = 5
	o.Config.SharedBudget.CostPerDay = 0
	o.Config.Progress.SpendCost = 0
	noCost := []Event{{Event: EvExec}, {Event: EvExec}, {Event: EvExec}}
	type finding struct{ check, sev, msg, hint string }
	run := func(execs []Event) []finding {
		var got []finding
		o.doctorCost(execs, func(check, sev, msg, hint string) { got = append(got, finding{check, sev, msg, hint}) })
		return got
	}

	got := run(noCost)
	if len(got) != 2 {
		t.Fatalf("findings %+v, want one for each of the two cost budgets on", got)
	}
	for i, key := range []string{"budget.cost_per_day", "budget.issue_cost"} {
		f := got[i]
		if f.check != "cost" || f.sev != SeverityWarning || !strings.HasPrefix(f.msg, key+" is set") ||
			!strings.Contains(f.msg, "no cost in its last 3 loop(s)") || !strings.Contains(f.hint, "$ORCHESTRATOR_COST_FILE") {
			t.Errorf("finding %d: %+v, want a cost warning naming %s and the 3 loops", i, f, key)
		}
	}

	withCost := append(append([]Event(nil), noCost...), Event{Event: EvExec, Cost: 0.02})
	if got := run(withCost); len(got) != 0 {
		t.Errorf("a loop that reported a cost: findings %+v, want none", got)
	}
	if got := run(nil); len(got) != 0 {
		t.Errorf("no loops yet: findings %+v, want none", got)
	}
	o.Config.Budget.CostPerDay, o.Config.Budget.IssueCost = 0, 0
	o.Config.SharedBudget.CostPerDay, o.Config.Progress.SpendCost = 3, 1
	got = run(noCost)
	if len(got) != 2 || !strings.HasPrefix(got[0].msg, "shared_budget.cost_per_day is set") || !strings.HasPrefix(got[1].msg, "progress.spend_cost is set") {
		t.Errorf("findings %+v, want the shared budget's and the progress spend's", got)
	}
	o.Config.SharedBudget.CostPerDay, o.Config.Progress.SpendCost = 0, 0
	if got := run(noCost); len(got) != 0 {
		t.Errorf("every cost budget off: findings %+v, want none", got)
	}
}

// Two signatures are the same when they are equal, or when the shorter,
// of at least 16 digits, starts the longer; an empty one matches nothing.
func TestSameSignature(t *testing.T) {
	full := strings.Repeat("0123456789abcdef", 4)
	tests := []struct {
		a, b string
		want bool
	}{
		{full, full, true},
		{full[:16], full, true},
		{full, full[:16], true},
		{full[:15], full, false},
		{"", "", false},
		{"", full, false},
		{full, "", false},
		{"fedcba9876543210", full, false},
		{full[:16], strings.Replace(full, "0", "1", 1), false},
	}
	for _, tt := range tests {
		if got := sameSignature(tt.a, tt.b); got != tt.want {
			t.Errorf("sameSignature(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

// Appending no entries to the shared budget writes nothing: not even the
// directory; a directory that cannot be made is an error that names the
// shared budget.
func TestAppendSharedNothingAndUnwritable(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "shared")
	if err := AppendShared(context.Background(), dir, nil, testNow); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("appending nothing: stat %v, want the directory not made", err)
	}
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := AppendShared(context.Background(), filepath.Join(file, "shared"), []SharedEntry{{Time: testNow, RunID: "r"}}, testNow)
	if err == nil || !strings.HasPrefix(err.Error(), "shared budget: ") {
		t.Errorf("a directory under a file: %v, want a shared budget error", err)
	}
}
