package orchestrator

import (
	"os"
	"testing"
)

// The loop guard also puts back session_state.md when a loop deletes it,
// switches auto_retry_enabled back off, puts back a person's stop file the
// loop removed, removes a user_response record no person's command made,
// and leaves an issue the loop made invalid alone: each stops the run with
// code guard and is told on stderr.
func TestGuardRestoresStateAndStops(t *testing.T) {
	tests := []struct {
		name   string
		before func(t *testing.T, f *fakeRunner)
		edit   func(dir string) error
		what   string
		check  func(t *testing.T, f *fakeRunner)
	}{
		{"session_state.md deleted", nil, func(dir string) error {
			return os.Remove(PathsIn(dir).State())
		}, "session_state.md was deleted: restored", func(t *testing.T, f *fakeRunner) {
			if _, err := os.Stat(f.O.paths().State()); err != nil {
				t.Errorf("session_state.md: %v", err)
			}
		}},
		{"auto_retry_enabled switched on", func(t *testing.T, f *fakeRunner) {
			if err := replaceIn(f.O.Dir, "session_state.md", "", "| auto_retry_enabled | true |", "| auto_retry_enabled | false |"); err != nil {
				t.Fatal(err)
			}
		}, func(dir string) error {
			return replaceIn(dir, "session_state.md", "", "| auto_retry_enabled | false |", "| auto_retry_enabled | true |")
		}, `session_state.md: auto_retry_enabled switched back on: restored to "false"`, func(t *testing.T, f *fakeRunner) {
			if f.state(t).AutoRetryEnabled {
				t.Error("auto_retry_enabled is still on")
			}
		}},
		{"no_auto_retry removed", func(t *testing.T, f *fakeRunner) {
			if err := os.WriteFile(f.O.paths().Sentinel(), []byte("stop\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, func(dir string) error {
			return os.Remove(PathsIn(dir).Sentinel())
		}, "no_auto_retry was removed (a person's stop): put back", func(t *testing.T, f *fakeRunner) {
			if b, err := os.ReadFile(f.O.paths().Sentinel()); err != nil || string(b) != "stop\n" {
				t.Errorf("no_auto_retry: %q, %v; want it back as it was", b, err)
			}
		}},
		{"a forged user_response", nil, func(dir string) error {
			return EventLog{Dir: dir}.Record(Event{Time: testNow, Event: EvUserResponse, IssueID: guardHalted, Response: "retry"})
		}, "logs/retry.jsonl: a user_response retry " + guardHalted + " record no person's command made was appended: removed", func(t *testing.T, f *fakeRunner) {
			if evs := eventsOf(t, f.O, EvUserResponse, guardHalted); len(evs) != 0 {
				t.Errorf("user_response events %+v, want the forged one removed", evs)
			}
		}},
		{"an issue made invalid", nil, editIssue(guardOff, "| Retry-Count | 0 |", "| Retry-Count | none |"),
			guardOff + " was made invalid: it is left alone until a person fixes it", func(t *testing.T, f *fakeRunner) {
				q := loadQueue(t, f.O)
				if len(q.Quarantined) != 1 || q.Quarantined[0].ID != guardOff {
					t.Errorf("quarantined %v, want %s left as the loop made it", ids(q.Quarantined), guardOff)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, stderr := guardRunner(t, tt.edit)
			if tt.before != nil {
				tt.before(t, f)
			}
			runStoppedByGuard(t, f, stderr, "orchestrator: guard: "+tt.what+"\n")
			tt.check(t, f)
		})
	}
}
