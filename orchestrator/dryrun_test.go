package orchestrator

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/config"
	"github.com/autoretry/orchestrator/internal/foundations/statefile"
)

// snapshotDir is every file under dir with its contents.
func snapshotDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		files[path] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func breakerMD(state string, failures int, openedAt string) string {
	return fmt.Sprintf("\n## Circuit Breaker\n\n| Field | Value |\n|---|---|\n| state | %s |\n| consecutive_failures | %d |\n| opened_at | %s |\n",
		state, failures, openedAt)
}

// A dry run says what a run would do now — the gate's stop and the exit
// status it would give, or the loop it would run and what the check after
// it would decide — and runs and writes nothing.
func TestDryRun(t *testing.T) {
	const a, b = "ISSUE-20261122-001", "ISSUE-20261122-002"
	sig := strings.Repeat("e", 64)
	retryable := issueMD(a, "Auto-Retry=true", "Status=pending", "Retry-Count=2", "Max-Retries=10")
	write := func(name, content string) func(*testing.T, *Orchestrator) {
		return func(t *testing.T, o *Orchestrator) {
			if err := os.WriteFile(filepath.Join(o.Dir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	record := func(evs ...Event) func(*testing.T, *Orchestrator) {
		return func(t *testing.T, o *Orchestrator) {
			for _, ev := range evs {
				if err := o.log().Record(ev); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	execs := func(n int) []Event {
		var evs []Event
		for i := range n {
			evs = append(evs, Event{Time: testNow.Add(-time.Duration(n-i) * time.Minute), Event: EvExec, Kind: KindRegular, DurationMS: 1000})
		}
		return evs
	}
	autoLoops := func(n int) []Event {
		var evs []Event
		for i := range n {
			evs = append(evs, Event{Time: testNow.Add(-time.Duration(n-i) * time.Minute), Event: EvAutoRetryLoop})
		}
		return evs
	}
	openedAt := func(ago time.Duration) string { return testNow.Add(-ago).Format(time.RFC3339) }
	tests := []struct {
		name  string
		queue string
		state string
		setup func(*testing.T, *Orchestrator)
		want  []string
		not   []string
	}{
		{"an issue to retry", retryable, stateMD(0, true), nil,
			[]string{`Would run the regular loop: sh -c "agent" (timeout 1m0s, at most 4 loops).`,
				"the check after the loop would retry, in this order:\n  " + a + "  attempt 3 of 10  summary of " + a + "\n"},
			[]string{"Would escalate", "No loop would start", "Circuit breaker"}},
		{"the run's counter starts fresh", retryable, stateMD(15, true), nil,
			[]string{"attempt 3 of 10"}, []string{"run_cap"}},
		{"nothing waits", issueMD(a, "Auto-Retry=false"), stateMD(0, true), nil,
			[]string{"No issue is waiting for an auto-retry now; the loop's QA step may file some."}, []string{"would retry"}},
		{"auto-retry disabled", retryable, stateMD(0, false), nil,
			[]string{"Would run the regular loop", "No auto-retry loop would follow: "}, []string{"would retry"}},
		{"retries used up", issueMD(a, "Auto-Retry=true", "Retry-Count=10", "Max-Retries=10") +
			issueMD(b, "Auto-Retry=true", "Status=pending", "Retry-Count=0", "Max-Retries=3"), stateMD(0, true), nil,
			[]string{"Would escalate " + a + " (retries used up): summary of " + a, "  " + b + "  attempt 1 of 3  "}, nil},
		{"halted under another issue", issueMD(b, "Auto-Retry=true", "Failure-Signature="+sig), stateMD(0, true),
			record(Event{Time: testNow.Add(-time.Hour), Event: EvEscalated, IssueID: a, Signature: sig, Code: CodeRepeatedFailure}),
			[]string{"Would escalate " + b + " (repeated_failure_across_issues): "}, nil},
		{"the check would stop", retryable, stateMD(0, true), record(autoLoops(30)...),
			[]string{"Would run the regular loop", "The check after the loop would stop (daily_auto_retries): ",
				"would retry, in this order:\n  " + a + "  attempt 3 of 10"}, nil},
		{"paused", retryable, stateMD(0, true), write("paused", ""),
			[]string{"No loop would start: stopped (paused): ", ". run would exit 0.\nhint: "}, []string{"Would run"}},
		{"daily loops spent", retryable, stateMD(0, true), record(execs(200)...),
			[]string{"No loop would start: stopped (daily_loops): ", ". run would exit 3.\nhint: "}, []string{"Would run"}},
		{"breaker open, cooling down", retryable, stateMD(0, true) + breakerMD("open", 3, openedAt(time.Minute)), nil,
			[]string{"No loop would start: stopped (breaker_open): ", "run would exit 3."}, []string{"Would run"}},
		{"breaker open, cooldown over", retryable, stateMD(0, true) + breakerMD("open", 3, openedAt(24*time.Hour)), nil,
			[]string{"Circuit breaker open, cooldown over: the first loop would be a half-open trial.\nWould run the regular loop"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newTestOrchestrator(t)
			o.Now = func() time.Time { return testNow }
			o.Config.Loop = config.Loop{Command: "agent", Timeout: time.Minute, MaxLoops: 4, KillGrace: time.Second}
			write("issue_queue.md", "# Issue Queue\n\n"+tt.queue)(t, o)
			write("session_state.md", tt.state)(t, o)
			if tt.setup != nil {
				tt.setup(t, o)
			}
			before := snapshotDir(t, o.Dir)
			r := &Runner{O: o, Terminal: io.Discard, Stderr: io.Discard, Environ: []string{}}
			var out bytes.Buffer
			if err := r.DryRun(&out); err != nil {
				t.Fatal(err)
			}
			got := out.String()
			for _, w := range append(tt.want, "Dry run: nothing was run and nothing was written.\n") {
				if !strings.Contains(got, w) {
					t.Errorf("output lacks %q:\n%s", w, got)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(got, n) {
					t.Errorf("output has %q:\n%s", n, got)
				}
			}
			if after := snapshotDir(t, o.Dir); len(after) != len(before) {
				t.Errorf("the dry run wrote files: %d before, %d after", len(before), len(after))
			} else {
				for p, c := range before {
					if after[p] != c {
						t.Errorf("the dry run changed %s", p)
					}
				}
			}
		})
	}
}

// While a run holds the run lock, the dry run says the run would exit 4
// (busy), naming the holder.
func TestDryRunBusy(t *testing.T) {
	o := newTestOrchestrator(t)
	since := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	lk, err := statefile.TryRunLock(o.Dir, statefile.Owner{PID: 4242, Since: since, Command: "run"})
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Unlock()
	var out bytes.Buffer
	if err := (&Runner{O: o}).DryRun(&out); err != nil {
		t.Fatal(err)
	}
	if want := "A run is in progress (pid 4242, started 2026-11-22T10:00:00Z): run would exit 4.\n"; out.String() != want {
		t.Errorf("output %q, want %q", out.String(), want)
	}
}

// A queue or a state file that cannot be read is an error, not a guess.
func TestDryRunBadFiles(t *testing.T) {
	for _, name := range []string{"issue_queue.md", "session_state.md"} {
		o := newTestOrchestrator(t)
		bad := "# Issue Queue\n\n```\n" + issueMD("ISSUE-20261122-001", "Status=pending")
		if name == "session_state.md" {
			bad = "# Session State\n\n## Auto-Retry State\n\n| Field | Value |\n|---|---|\n| total_auto_retries | lots |\n"
		}
		if err := os.WriteFile(filepath.Join(o.Dir, name), []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		err := (&Runner{O: o}).DryRun(&out)
		if err == nil || out.Len() != 0 {
			t.Errorf("%s not valid: DryRun = %v, printed %q; want an error and nothing printed", name, err, out.String())
		}
	}
	o := newTestOrchestrator(t)
	o.Dir = filepath.Join(o.Dir, "missing")
	if err := (&Runner{O: o}).DryRun(io.Discard); err == nil {
		t.Error("DryRun of a missing directory succeeded")
	}
}
