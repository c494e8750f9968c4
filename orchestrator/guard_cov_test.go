package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoretry/orchestrator/internal/foundations/procgroup"
	"github.com/autoretry/orchestrator/internal/foundations/statefile"
	"github.com/autoretry/orchestrator/issuequeue"
)

const (
	guardHalted = "ISSUE-20261122-001" // halted and escalated: no candidate
	guardOff    = "ISSUE-20261122-002" // Auto-Retry false: no candidate
)

// guardRunner is a fake runner whose one loop makes edit in the state
// directory before it succeeds. Its queue holds two issues no check
// retries, its config.toml sets [loop] max_loops = 2, and its ledger holds
// one line: a run without edits completes after one loop.
func guardRunner(t *testing.T, edit func(dir string) error) (*fakeRunner, *signalWriter) {
	t.Helper()
	f := newFakeRunner(t, succeeded)
	writeQueue(t, f.O,
		issueMD(guardHalted, "Type=test", "Status=escalated", "Auto-Retry=true", "Retry-Count=2", "Max-Retries=3", "Halted=true",
			"Failure-Signature=abcdef0123456789", "Signature-Repeat-Count=3", "Created=2026-11-22T10:00:00Z"),
		issueMD(guardOff, "Type=test", "Status=pending", "Auto-Retry=false", "Retry-Count=0", "Created=2026-11-22T10:01:00Z"))
	if err := os.WriteFile(filepath.Join(f.O.Dir, "config.toml"), []byte("[loop]\nmax_loops = 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stderr := newSignalWriter("\x00") // never seen: a thread-safe buffer
	f.Stderr = stderr
	run := f.Exec
	f.Exec = func(ctx context.Context, s procgroup.Spec) (procgroup.Result, error) {
		if err := edit(f.O.Dir); err != nil {
			return procgroup.Result{}, fmt.Errorf("the loop's edit: %w", err)
		}
		return run(ctx, s)
	}
	return f, stderr
}

// runStoppedByGuard runs f and fails t unless the guard stopped the run
// after its one loop, saying want on stderr.
func runStoppedByGuard(t *testing.T, f *fakeRunner, stderr *signalWriter, want string) {
	t.Helper()
	rep, err := f.Run(context.Background())
	var se *StopError
	if !errors.As(err, &se) || se.Code != CodeGuard {
		t.Fatalf("run: %v (report %+v), want a stop with code %s; stderr:\n%s", err, rep, CodeGuard, stderr)
	}
	if f.execs != 1 {
		t.Errorf("%d executions, want the one loop", f.execs)
	}
	if !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr:\n%s\nwant the guard's line %q", stderr, want)
	}
}

// replaceIn replaces the first old after the heading of issue id (or, for
// id "", in the whole file) by new in the file name of dir; it fails when
// old is not there.
func replaceIn(dir, name, id, old, new string) error {
	p := filepath.Join(dir, name)
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	s, from := string(b), 0
	if id != "" {
		if from = strings.Index(s, "## "+id+"\n"); from < 0 {
			return fmt.Errorf("no issue %s", id)
		}
	}
	i := strings.Index(s[from:], old)
	if i < 0 {
		return fmt.Errorf("%q not in %s", old, name)
	}
	s = s[:from+i] + new + s[from+i+len(old):]
	return os.WriteFile(p, []byte(s), 0o644)
}

func editIssue(id, old, new string) func(string) error {
	return func(dir string) error { return replaceIn(dir, "issue_queue.md", id, old, new) }
}

// The loop guard restores each loosening edit a loop makes to what the
// limits and a person's stops depend on, records it as a guard event,
// tells it on stderr and stops the run with code guard.
func TestGuardRestoresLooseningEdits(t *testing.T) {
	field := func(id, name string) func(*testing.T, *fakeRunner) string {
		return func(t *testing.T, f *fakeRunner) string {
			is := loadQueue(t, f.O).Issue(id)
			if is == nil {
				return "<no issue>"
			}
			v, _ := is.Field(name)
			return strings.TrimSpace(v)
		}
	}
	file := func(rel string) func(*testing.T, *fakeRunner) string {
		return func(t *testing.T, f *fakeRunner) string {
			b, err := os.ReadFile(filepath.Join(f.O.Dir, rel))
			if errors.Is(err, os.ErrNotExist) {
				return "<none>"
			}
			return string(b)
		}
	}
	stateField := func(section, name string) func(*testing.T, *fakeRunner) string {
		return func(t *testing.T, f *fakeRunner) string {
			v, _ := f.state(t).Field(section, name)
			return strings.TrimSpace(v)
		}
	}
	tests := []struct {
		name string
		edit func(dir string) error
		what string // the guard's line, or its start
		got  func(*testing.T, *fakeRunner) string
		want string // what got reads after the run
	}{
		{"Retry-Count lowered", editIssue(guardHalted, "| Retry-Count | 2 |", "| Retry-Count | 0 |"),
			guardHalted + ": Retry-Count 2 → 0: restored", field(guardHalted, issuequeue.FieldRetryCount), "2"},
		{"Max-Retries raised", editIssue(guardHalted, "| Max-Retries | 3 |", "| Max-Retries | 9 |"),
			guardHalted + ": Max-Retries 3 → 9: restored", field(guardHalted, issuequeue.FieldMaxRetries), "3"},
		{"un-halted", editIssue(guardHalted, "| Halted | true |", "| Halted | false |"),
			guardHalted + ": Halted true → false: restored", field(guardHalted, issuequeue.FieldHalted), "true"},
		{"Auto-Retry turned on", editIssue(guardOff, "| Auto-Retry | false |", "| Auto-Retry | true |"),
			guardOff + ": Auto-Retry false → true: restored", field(guardOff, issuequeue.FieldAutoRetry), "false"},
		{"moved out of escalated", editIssue(guardHalted, "| Status | escalated |", "| Status | resolved |"),
			guardHalted + ": Status escalated → resolved: restored", field(guardHalted, issuequeue.FieldStatus), "escalated"},
		{"Failure-Signature changed", editIssue(guardHalted, "| Failure-Signature | abcdef0123456789 |", "| Failure-Signature | 0123456789abcdef |"),
			guardHalted + ": Failure-Signature changed: restored", field(guardHalted, issuequeue.FieldFailureSignature), "abcdef0123456789"},
		{"Signature-Repeat-Count cleared", editIssue(guardHalted, "| Signature-Repeat-Count | 3 |", "| Signature-Repeat-Count | 0 |"),
			guardHalted + ": Signature-Repeat-Count 3 → 0: restored", field(guardHalted, issuequeue.FieldSignatureRepeatCount), "3"},
		{"an issue deleted", func(dir string) error {
			return replaceIn(dir, "issue_queue.md", guardOff, "## "+guardOff+"\n", "## gone\n")
		}, guardOff + " was deleted: restored", field(guardOff, issuequeue.FieldAutoRetry), "false"},
		{"total_auto_retries changed", func(dir string) error {
			return replaceIn(dir, "session_state.md", "", "| total_auto_retries | 0 |", "| total_auto_retries | 7 |")
		}, `session_state.md: total_auto_retries "0" → "7": restored`,
			stateField(issuequeue.SectionAutoRetry, issuequeue.StateTotalAutoRetries), "0"},
		{"config.toml loosened", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "config.toml"), []byte("[loop]\nmax_loops = 50\n"), 0o644)
		}, "config.toml was changed: restored; the loop's version is in config.toml.rejected (it loosens loop.max_loops",
			file("config.toml"), "[loop]\nmax_loops = 2\n"},
		{"a template override added", func(dir string) error {
			if err := os.MkdirAll(filepath.Join(dir, "templates"), 0o755); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, "templates", "cap.tmpl"), []byte("carry on\n"), 0o644)
		}, filepath.Join("templates", "cap.tmpl") + " was created: restored", file(filepath.Join("templates", "cap.tmpl")), "<none>"},
		{"the ledger truncated", func(dir string) error {
			return os.Truncate(PathsIn(dir).Ledger(), 0)
		}, "logs/retry.jsonl was truncated or rewritten", func(t *testing.T, f *fakeRunner) string {
			if evs := eventsOf(t, f.O, EvAdded, "ISSUE-20261122-099"); len(evs) != 1 {
				return fmt.Sprintf("%d added events", len(evs))
			}
			return "the line before the loop"
		}, "the line before the loop"},
		{"the lock removed", func(dir string) error {
			return os.Remove(filepath.Join(dir, statefile.LockFile))
		}, statefile.LockFile + " was removed or replaced", func(t *testing.T, f *fakeRunner) string {
			if _, err := os.Lstat(filepath.Join(f.O.Dir, statefile.LockFile)); err != nil {
				return err.Error()
			}
			return "there"
		}, "there"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, stderr := guardRunner(t, tt.edit)
			if err := f.O.log().Record(Event{Time: f.now.Add(-1), Event: EvAdded, IssueID: "ISSUE-20261122-099"}); err != nil {
				t.Fatal(err)
			}
			runStoppedByGuard(t, f, stderr, "orchestrator: guard: "+tt.what)
			if got := tt.got(t, f); got != tt.want {
				t.Errorf("after the run: %q, want %q restored", got, tt.want)
			}
			evs, errs := ReadEvents(f.O.Dir)
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			recorded := false
			for _, ev := range evs {
				recorded = recorded || ev.Event == EvGuard && ev.Code == CodeGuard && strings.HasPrefix(ev.Reason, tt.what)
			}
			if !recorded {
				t.Errorf("no guard event records %q", tt.what)
			}
		})
	}
}

// What only tightens stands, whoever made it: it is not undone, no guard
// event is recorded and the run goes on to its end.
func TestGuardLetsTighteningStand(t *testing.T) {
	tests := []struct {
		name string
		edit func(dir string) error
		told string // a kept change the guard tells, or ""
		want func(*testing.T, *fakeRunner) bool
	}{
		{"Retry-Count raised, Max-Retries lowered", func(dir string) error {
			if err := replaceIn(dir, "issue_queue.md", guardHalted, "| Retry-Count | 2 |", "| Retry-Count | 3 |"); err != nil {
				return err
			}
			return replaceIn(dir, "issue_queue.md", guardHalted, "| Max-Retries | 3 |", "| Max-Retries | 1 |")
		}, "", func(t *testing.T, f *fakeRunner) bool {
			is := loadQueue(t, f.O).Issue(guardHalted)
			return is.RetryCount == 3 && is.MaxRetries == 1
		}},
		{"skipped", editIssue(guardOff, "| Status | pending |", "| Status | skipped |"), "", func(t *testing.T, f *fakeRunner) bool {
			return loadQueue(t, f.O).Issue(guardOff).Status == issuequeue.StatusSkipped
		}},
		{"config.toml tightened", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "config.toml"), []byte("[loop]\nmax_loops = 1\n"), 0o644)
		}, "config.toml was tightened: kept", func(t *testing.T, f *fakeRunner) bool {
			b, _ := os.ReadFile(filepath.Join(f.O.Dir, "config.toml"))
			return string(b) == "[loop]\nmax_loops = 1\n"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, stderr := guardRunner(t, tt.edit)
			rep, err := f.Run(context.Background())
			if err != nil || rep.Outcome != "completed" {
				t.Fatalf("run: %v, outcome %s; want it completed; stderr:\n%s", err, rep.Outcome, stderr)
			}
			if !tt.want(t, f) {
				t.Error("the tightening edit was undone")
			}
			told := strings.Count(stderr.String(), "orchestrator: guard: ")
			if tt.told == "" && told != 0 || tt.told != "" && (told != 1 || !strings.Contains(stderr.String(), "guard: "+tt.told)) {
				t.Errorf("stderr:\n%s\nwant the guard to tell %q only", stderr, tt.told)
			}
			evs, _ := ReadEvents(f.O.Dir)
			for _, ev := range evs {
				if ev.Event == EvGuard {
					t.Errorf("a guard event was recorded: %+v", ev)
				}
			}
			if _, err := os.Stat(filepath.Join(f.O.Dir, "config.toml.rejected")); err == nil {
				t.Error("config.toml.rejected was written for a tightening")
			}
		})
	}
}
