package orchestrator

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// removeForged takes out the person-only records no person's change
// accounts for, and keeps every other line byte for byte.
func TestRemoveForged(t *testing.T) {
	dir := t.TempDir()
	o := &Orchestrator{Dir: dir}
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	before := `{"event":"user_response","issue_id":"ISSUE-1","response":"retry"}` + "\n" + `{"event":"attempt","issue_id":"ISSUE-1"}` + "\n"
	during := []string{
		`{"event":"attempt",  "issue_id":"ISSUE-2"}`,
		`{"event":"user_response","issue_id":"ISSUE-2","response":"retry"}`,
		`{"event":"user_response","issue_id":"ISSUE-3","response":"skip"}`,
		`{"event":"person_change","issue_id":"ISSUE-3","response":"skip"}`,
		`not json`,
		`{"event":"user_response","issue_id":"ISSUE-2","response":"retry"}`,
		`{"event":"resolved","issue_id":"ISSUE-3","resolution":"skipped"}`,
	}
	ledger := o.paths().Ledger()
	if err := os.WriteFile(ledger, []byte(before+strings.Join(during, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	forged, err := o.removeForged(int64(len(before)), []takenChange{{PersonChange: SkipChange("ISSUE-3")}, {PersonChange: RetryChange("ISSUE-2")}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(forged, "; "), "person_change skip ISSUE-3; user_response retry ISSUE-2"; got != want {
		t.Errorf("forged = %q, want %q", got, want)
	}
	want := before + strings.Join([]string{during[0], during[1], during[2], during[4], during[6]}, "\n") + "\n"
	if b, _ := os.ReadFile(ledger); string(b) != want {
		t.Errorf("ledger:\n%s\nwant:\n%s", b, want)
	}
}

// Only what a command sends is valid.
func TestPersonChangeValid(t *testing.T) {
	until := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for _, c := range []PersonChange{RetryChange("ISSUE-1"), FixChange("ISSUE-1"), SkipChange("ISSUE-1"), BreakerResetChange(),
		PauseChange(time.Time{}), PauseChange(until), ResumeChange()} {
		if err := c.valid(); err != nil {
			t.Errorf("%s: %v", c.what(), err)
		}
	}
	bad := RetryChange("ISSUE-1")
	bad.Fields[0].Value = "-5"
	forged := SkipChange("ISSUE-1")
	forged.State = BreakerResetChange().State
	text := "next week\n"
	for _, c := range []PersonChange{bad, forged, {Command: "retry"}, {Command: "pause", Pause: &text}, {Command: "init"}, RetryChange(" "),
		{Command: "resume", Resume: true, Issue: "ISSUE-1"}} {
		if err := c.valid(); err == nil {
			t.Errorf("%+v is valid", c)
		}
	}
}

// A state directory whose socket path is too long for a unix socket is
// listened on relative to the working directory.
func TestSocketPathLong(t *testing.T) {
	long := filepath.Join(t.TempDir(), strings.Repeat("d", 60), strings.Repeat("e", 60))
	dir := filepath.Join(long, ".orchestrator")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(long)
	o := &Orchestrator{Dir: dir}
	if got, want := o.socketPath(), filepath.Join(".orchestrator", ".run.sock"); got != want {
		t.Fatalf("socketPath = %q, want %q", got, want)
	}
	r := &Runner{O: o}
	stop := r.listen()
	defer stop()
	if r.person.srv == nil {
		t.Fatal("the run does not listen")
	}
}
