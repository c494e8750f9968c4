//go:build linux

package main

import (
	"bytes"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/issuequeue"
)

// TestProcessBreakerAcrossRuns proves: the circuit breaker
// counts failed loops across runs, opens at the third, keeps the next run
// from running the loop at all while it cools down, and after the cooldown
// lets one trial loop close it. Each run whose loop failed says so with
// exit 3 (loop_failed) before the breaker opens, so that cron mails it.
func TestProcessBreakerAcrossRuns(t *testing.T) {
	skipShort(t)
	ctx := testContext(t, 30*time.Second)
	c := newCLI(t)
	c.setup(ctx, "[loop]\ncommand = \"sh loop.sh\"\n", emptyQueue)
	c.write("loop.sh", `echo x >> loops
[ -e fixed ]
`)
	loops := func() int {
		b, err := os.ReadFile(c.path("loops"))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		return bytes.Count(b, []byte("x"))
	}
	now := []string{"ORCHESTRATOR_NOW=2026-11-22T10:15:00Z"}
	for i := 1; i <= 3; i++ {
		r := c.run(ctx, now, "run")
		st := c.state()
		if got, want := st.ConsecutiveFailures, i; got != want {
			t.Fatalf("run %d: consecutive_failures = %d, want %d", i, got, want)
		}
		if got, want := loops(), i; got != want {
			t.Fatalf("run %d: the loop ran %d times in all, want %d", i, got, want)
		}
		if i < 3 {
			if r.code != 3 || !strings.Contains(r.stderr, "stopped (loop_failed): the loop command failed in loop 1 (exited with status 1)") {
				t.Fatalf("run %d: exit %d before the breaker opened, want 3 with loop_failed\n%s", i, r.code, r.stderr)
			}
			if st.Breaker != issuequeue.BreakerClosed {
				t.Fatalf("run %d: breaker %q, want closed", i, st.Breaker)
			}
			continue
		}
		if r.code != 3 || !strings.Contains(r.stderr, "circuit breaker opened") {
			t.Fatalf("run 3: exit %d, want 3 with \"circuit breaker opened\"\n%s", r.code, r.stderr)
		}
		if st.Breaker != issuequeue.BreakerOpen || st.OpenedAt.IsZero() {
			t.Fatalf("run 3: breaker %q opened_at %v, want open with a time", st.Breaker, st.OpenedAt)
		}
	}
	openedAt := c.state().OpenedAt

	at := func(d time.Duration) []string {
		return []string{"ORCHESTRATOR_NOW=" + openedAt.Add(d).Format(time.RFC3339)}
	}
	r := c.run(ctx, at(29*time.Minute), "run")
	if r.code != 3 || !regexp.MustCompile(`circuit breaker (is )?open\b`).MatchString(r.stderr) {
		t.Fatalf("run inside the cooldown: exit %d, want 3 naming the open breaker\n%s", r.code, r.stderr)
	}
	if r.wall >= time.Second {
		t.Errorf("run inside the cooldown took %v; it must exit at once", r.wall)
	}
	if got, want := loops(), 3; got != want {
		t.Fatalf("run inside the cooldown ran the loop (%d runs of it in all, want %d)", got, want)
	}

	c.write("fixed", "")
	r = c.run(ctx, at(31*time.Minute), "run")
	if r.code != 0 {
		t.Fatalf("run after the cooldown: exit %d, want 0\n%s", r.code, r.stderr)
	}
	if got, want := loops(), 4; got != want {
		t.Errorf("run after the cooldown ran the loop %d times, want 1 trial", got-3)
	}
	st := c.state()
	if st.Breaker != issuequeue.BreakerClosed || st.ConsecutiveFailures != 0 || !st.OpenedAt.IsZero() {
		t.Errorf("after the trial loop: breaker %q, consecutive_failures %d, opened_at %v; want closed, 0, null",
			st.Breaker, st.ConsecutiveFailures, st.OpenedAt)
	}
	c.lint(ctx)
}
