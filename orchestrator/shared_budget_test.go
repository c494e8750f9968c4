package orchestrator

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/config"
)

// The shared ledger is read back as written, a torn last line (a write in
// progress) and lines older than 24 hours are not counted, and each
// spent limit stops with its own code, naming the directory, until the
// oldest counted loop leaves the window.
func TestSharedBudget(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "shared")
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	var es []SharedEntry
	for i := range 4 {
		es = append(es, SharedEntry{Time: now.Add(-time.Duration(30-i) * time.Hour), Dir: "/old", RunID: "r", Loop: 1, Kind: KindRegular})
	}
	for i := range 3 {
		es = append(es, SharedEntry{Time: now.Add(-time.Duration(3-i) * time.Hour), Dir: "/a/.orchestrator", RunID: "r1", Loop: i + 1,
			Kind: KindAutoRetry, DurationMS: 60000, Cost: 1.5, Tokens: 1000})
	}
	es = append(es, SharedEntry{Time: now.Add(-time.Hour), Dir: "/b/.orchestrator", RunID: "r2", Loop: 1, Kind: KindRegular, DurationMS: 1000})
	if err := AppendShared(context.Background(), dir, es, now); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, SharedLedgerFile), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"timestamp":"2026-11-22T11:59:00Z","dir":"/c","run_id":"x","lo`)
	f.Close()

	u, err := ReadSharedUsage(dir, now)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := u.Loops(), 4; got != want {
		t.Fatalf("loops = %d, want %d", got, want)
	}
	if got, want := u.AutoRetryLoops(), 3; got != want {
		t.Errorf("auto-retry loops = %d, want %d", got, want)
	}
	if sp := u.Spenders(); len(sp) != 2 || sp[0].Dir != "/a/.orchestrator" || sp[0].Loops != 3 || sp[1].Loops != 1 {
		t.Errorf("spenders = %+v", sp)
	}
	tests := []struct {
		set   func(*config.SharedBudget)
		code  Code
		until time.Time
	}{
		{func(b *config.SharedBudget) { b.LoopsPerDay = 5 }, "", time.Time{}},
		{func(b *config.SharedBudget) { b.LoopsPerDay = 4 }, CodeSharedLoops, now.Add(-3 * time.Hour).Add(config.BudgetWindow)},
		{func(b *config.SharedBudget) { b.AutoRetryLoopsPerDay = 3 }, CodeSharedAutoRetries, now.Add(-3 * time.Hour).Add(config.BudgetWindow)},
		{func(b *config.SharedBudget) { b.AgentTimePerDay = 2 * time.Minute }, CodeSharedAgentTime, now.Add(-2 * time.Hour).Add(config.BudgetWindow)},
		{func(b *config.SharedBudget) { b.CostPerDay = 4.5 }, CodeSharedCost, now.Add(-3 * time.Hour).Add(config.BudgetWindow)},
		{func(b *config.SharedBudget) { b.TokensPerDay = 2500 }, CodeSharedTokens, now.Add(-3 * time.Hour).Add(config.BudgetWindow)},
	}
	for _, tt := range tests {
		cfg := config.Default()
		cfg.SharedBudget.Dir = dir
		tt.set(&cfg.SharedBudget)
		in := Inputs{Config: cfg, Now: now, Shared: &u}
		var stop *Verdict
		for _, v := range SharedVerdicts(in, KindAutoRetry) {
			if v.Stop && stop == nil {
				stop = &v
			}
		}
		if tt.code == "" {
			if stop != nil {
				t.Errorf("%+v: stopped (%s)", cfg.SharedBudget, stop.Rule)
			}
			continue
		}
		if stop == nil || stop.Rule != tt.code {
			t.Errorf("%+v: stop = %+v, want %s", cfg.SharedBudget, stop, tt.code)
			continue
		}
		if !stop.Until.Equal(tt.until) {
			t.Errorf("%s: until %s, want %s", tt.code, stop.Until, tt.until)
		}
		if !strings.Contains(stop.Reason, dir) || !strings.Contains(stop.Hint, dir) {
			t.Errorf("%s: the directory is not named: %q / %q", tt.code, stop.Reason, stop.Hint)
		}
		if !NeedsPerson(stop.Rule) {
			t.Errorf("%s does not need a person", stop.Rule)
		}
	}
}
