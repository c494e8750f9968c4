//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/orchestrator"
)

// ownExecs counts the loop command executions a state directory's own
// event log recorded.
func ownExecs(t *testing.T, c *cli) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(c.dir(), "logs", "retry.jsonl"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return bytes.Count(b, []byte(`"event":"loop_exec"`))
}

// sharedLines reads the shared ledger, failing on any line that is torn or
// not one JSON entry, and counts its entries by state directory.
func sharedLines(t *testing.T, dir string) map[string]int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, orchestrator.SharedLedgerFile))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	by := map[string]int{}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		t.Fatalf("the shared ledger ends with a torn line: %q", b[bytes.LastIndexByte(b, '\n')+1:])
	}
	for i, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if line == "" && len(b) == 0 {
			break
		}
		var e orchestrator.SharedEntry
		if err := json.Unmarshal([]byte(line), &e); err != nil || e.Dir == "" || e.RunID == "" {
			t.Fatalf("shared ledger line %d is not one entry (%v): %q", i+1, err, line)
		}
		by[e.Dir]++
	}
	return by
}

// Three projects on one shared budget of 100 loops a day, one of them
// also with 25 of its own, run by cron every 30 minutes for a simulated
// day: no more than 100 loops run in all, none beyond its own limit, and
// every run after the shared budget is spent exits 3 naming it and the
// directory, and runs no loop.
func TestProcessSharedBudgetDay(t *testing.T) {
	ctx := testContext(t, 4*time.Minute)
	shared := filepath.Join(t.TempDir(), "team-budget")
	base := fmt.Sprintf("[loop]\ncommand = \"echo working\"\n[shared_budget]\ndir = %q\nloops_per_day = 100\n", shared)
	var repos []*cli
	for i := range 3 {
		c := newCLI(t)
		cfg := base
		if i == 2 {
			cfg += "[budget]\nloops_per_day = 25\n"
		}
		c.setup(ctx, cfg, "# Issue Queue\n")
		repos = append(repos, c)
	}
	t0 := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	spentAt := -1
	for step := range 48 {
		now := "ORCHESTRATOR_NOW=" + t0.Add(time.Duration(step)*30*time.Minute).Format(time.RFC3339)
		for i, c := range repos {
			total := 0
			for _, rc := range repos {
				total += ownExecs(t, rc)
			}
			before := ownExecs(t, c)
			r := c.run(ctx, []string{now}, "run", "--quiet")
			after := ownExecs(t, c)
			if total >= 100 {
				if spentAt < 0 {
					spentAt = step
				}
				if r.code != exitSafeguard || !strings.Contains(r.stdout+r.stderr, "shared_daily_loops") || !strings.Contains(r.stdout+r.stderr, shared) {
					t.Fatalf("step %d repo %d: shared budget spent, yet exit %d\nstdout:\n%s\nstderr:\n%s", step, i, r.code, r.stdout, r.stderr)
				}
				if after != before {
					t.Fatalf("step %d repo %d: ran %d loop(s) after the shared budget was spent", step, i, after-before)
				}
				continue
			}
			if i == 2 && before >= 25 {
				if r.code != exitSafeguard || !strings.Contains(r.stdout+r.stderr, "daily_loops") || after != before {
					t.Fatalf("step %d: own budget spent, yet exit %d and %d loop(s)\n%s", step, r.code, after-before, r.stdout)
				}
				continue
			}
			if r.code != exitOK || after != before+1 {
				t.Fatalf("step %d repo %d: exit %d, %d loop(s)\nstdout:\n%s\nstderr:\n%s", step, i, r.code, after-before, r.stdout, r.stderr)
			}
		}
	}
	total := 0
	for _, c := range repos {
		total += ownExecs(t, c)
	}
	if total != 100 || spentAt < 0 {
		t.Fatalf("%d loops in all (want the shared 100), spent at step %d", total, spentAt)
	}
	if n := ownExecs(t, repos[2]); n != 25 {
		t.Errorf("the project with 25 loops of its own ran %d", n)
	}
	by := sharedLines(t, shared)
	for _, c := range repos {
		abs, _ := filepath.Abs(c.dir())
		if got, want := by[abs], ownExecs(t, c); got != want {
			t.Errorf("%s: the shared ledger counts %d loops, its own event log %d", abs, got, want)
		}
	}
}

// Eight projects on one shared budget, five rounds of runs started all at
// once (real processes, several loops each in the first round): the shared
// ledger counts exactly the loops their own event logs record, with no
// torn or interleaved line.
func TestProcessSharedBudgetConcurrent(t *testing.T) {
	ctx := testContext(t, 4*time.Minute)
	shared := filepath.Join(t.TempDir(), "team-budget")
	cfg := fmt.Sprintf(`[loop]
command = "echo working"
[verify.test]
command = "echo '--- FAIL: TestServer: nil map'; exit 1"
[shared_budget]
dir = %q
loops_per_day = 100000
`, shared)
	queue := "# Issue Queue\n\n## ISSUE-20261122-001\n\n| Field | Value |\n|-------|-------|\n| Priority | critical |\n" +
		"| Auto-Retry | true |\n| Max-Retries | 10 |\n| Verify | test |\n\n### Summary\nServer crashes\n"
	var repos []*cli
	for range 8 {
		c := newCLI(t)
		c.setup(ctx, cfg, queue)
		repos = append(repos, c)
	}
	for round := range 5 {
		var wg sync.WaitGroup
		errs := make([]error, len(repos))
		for i, c := range repos {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := c.try(ctx, nil, "run", "--quiet")
				if err == nil && r.code != exitOK && r.code != exitSafeguard {
					err = fmt.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
				}
				errs[i] = err
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d repo %d: %v", round, i, err)
			}
		}
	}
	by := sharedLines(t, shared)
	sum := 0
	for _, c := range repos {
		abs, _ := filepath.Abs(c.dir())
		own := ownExecs(t, c)
		sum += own
		if by[abs] != own {
			t.Errorf("%s: the shared ledger counts %d loops, its own event log %d", abs, by[abs], own)
		}
	}
	if sum < 8*5 {
		t.Errorf("only %d loops ran in all", sum)
	}
}
