package orchestrator

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/autoretry/orchestrator/issuequeue"
)

// The heartbeat command runs once, in the directory that holds the state
// directory, with the run's outcome as one JSON object on stdin and in the
// ORCHESTRATOR_* variables, over exactly the environment it is given.
func TestHeartbeatOutcome(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "it's a project", ".orchestrator")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "beat")
	command := `cat > ` + shellQuote(out+".json") + `
printf '%s\n' "$(pwd -P)" "$ORCHESTRATOR_DIR" "$ORCHESTRATOR_EXIT_STATUS" "$ORCHESTRATOR_OUTCOME" "$ORCHESTRATOR_STOP_CODE" "$ORCHESTRATOR_RUN_ID" "$ORCHESTRATOR_LOOPS" "$ORCHESTRATOR_NEEDS_PERSON" "${FROM_CALLER-unset}" "${HOME-unset}" > ` + shellQuote(out)
	b := Beat{ExitStatus: 3, Outcome: "stopped", Code: CodeNoProgress, Reason: "three loops without progress",
		RunID: "20261122T101500Z-4242", Loops: 4, NeedsPerson: []string{"ISSUE-20261122-001", "ISSUE-20261122-002"}}
	if err := Heartbeat(context.Background(), dir, command, b, []string{"FROM_CALLER=yes", "PATH=" + os.Getenv("PATH")}); err != nil {
		t.Fatal(err)
	}
	env, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	parent, _ := filepath.EvalSymlinks(filepath.Dir(dir))
	want := []string{parent, dir, "3", "stopped", "no_progress", "20261122T101500Z-4242", "4", "ISSUE-20261122-001,ISSUE-20261122-002", "yes", "unset"}
	if got := strings.Split(strings.TrimSuffix(string(env), "\n"), "\n"); !reflect.DeepEqual(got, want) {
		t.Errorf("working directory and environment:\n%q\nwant\n%q", got, want)
	}
	js, err := os.ReadFile(out + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var got Beat
	if err := json.Unmarshal(js, &got); err != nil {
		t.Fatalf("stdin %q: %v", js, err)
	}
	if !reflect.DeepEqual(got, b) {
		t.Errorf("stdin beat %+v, want %+v", got, b)
	}
}

// No issue waiting is an empty list, not null; a nil environment is this
// process's; an empty command runs nothing.
func TestHeartbeatDefaults(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(t.TempDir(), "beat")
	t.Setenv("ORCHESTRATOR_TEST_INHERITED", "inherited")
	command := `cat > ` + shellQuote(out) + `; printf '%s|%s' "$ORCHESTRATOR_TEST_INHERITED" "$ORCHESTRATOR_NEEDS_PERSON" >> ` + shellQuote(out)
	if err := Heartbeat(context.Background(), dir, command, Beat{Outcome: "completed"}, nil); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	js, tail, _ := strings.Cut(string(b), "\n")
	if !strings.Contains(js, `"needs_person":[]`) || !strings.Contains(js, `"exit_status":0`) || strings.Contains(js, `"code"`) {
		t.Errorf("stdin %s: want needs_person [] and no code", js)
	}
	if tail != "inherited|" {
		t.Errorf("environment %q, want this process's and no issue", tail)
	}
	if err := Heartbeat(context.Background(), dir, "", Beat{}, nil); err != nil {
		t.Errorf("an empty command: %v", err)
	}
}

// A command that fails is an error that gives its status and the end of
// what it printed.
func TestHeartbeatFailure(t *testing.T) {
	err := Heartbeat(context.Background(), t.TempDir(), "echo monitor unreachable >&2; exit 6", Beat{}, []string{})
	if err == nil || !strings.Contains(err.Error(), "status 6") || !strings.Contains(err.Error(), "monitor unreachable") {
		t.Fatalf("Heartbeat = %v, want exit status 6 and the output", err)
	}
}

// shellQuote makes any string one word for sh, quotes included.
func TestShellQuote(t *testing.T) {
	for _, s := range []string{"", "plain", "it's", "'", "''", `a "b" $c`, "semi; rm -rf x", "new\nline", `back\slash`} {
		out, err := exec.Command("/bin/sh", "-c", "printf %s "+shellQuote(s)).Output()
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if string(out) != s {
			t.Errorf("sh read %q back as %q", s, out)
		}
	}
}

// The issues waiting for a person: quarantined ones first, then escalated
// and halted ones in queue order; a halted issue that is resolved or
// skipped waits for no one. A state directory whose queue cannot be read
// gives none.
func TestNeedingPerson(t *testing.T) {
	queue := "# Issue Queue\n\n" +
		issueMD("ISSUE-20261122-001", "Status=pending") +
		issueMD("ISSUE-20261122-002", "Status=escalated") +
		issueMD("ISSUE-20261122-003", "Status=pending", "Halted=true") +
		issueMD("ISSUE-20261122-004", "Status=resolved", "Halted=true") +
		issueMD("ISSUE-20261122-005", "Status=pendng") +
		issueMD("ISSUE-20261122-006", "Status=skipped", "Halted=true") +
		issueMD("ISSUE-20261122-007", "Status=in_progress", "Halted=true")
	q := issuequeue.ParseQueue("issue_queue.md", []byte(queue))
	want := []string{"ISSUE-20261122-005", "ISSUE-20261122-002", "ISSUE-20261122-003", "ISSUE-20261122-007"}
	if got := NeedingPerson(q); !reflect.DeepEqual(got, want) {
		t.Errorf("NeedingPerson = %q, want %q", got, want)
	}
	o := newTestOrchestrator(t)
	if err := os.WriteFile(filepath.Join(o.Dir, "issue_queue.md"), []byte(queue), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := IssuesNeedingPerson(o.Dir); !reflect.DeepEqual(got, want) {
		t.Errorf("IssuesNeedingPerson = %q, want %q", got, want)
	}
	if got := IssuesNeedingPerson(filepath.Join(o.Dir, "missing")); got == nil || len(got) != 0 {
		t.Errorf("IssuesNeedingPerson of no directory = %#v, want an empty list", got)
	}
}
