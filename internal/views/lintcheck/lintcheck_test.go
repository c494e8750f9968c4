package lintcheck

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/autoretry/orchestrator/internal/foundations/config"
	"github.com/autoretry/orchestrator/issuequeue"
)

func TestConfigProblems(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte("[loop]\ncommand = \"true\"\ntimout = \"5m\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := config.LoadOptional(path, nil)
	lines, err := ConfigProblems(err)
	if err != nil || len(lines) != 1 {
		t.Fatalf("ConfigProblems = %q, %v; want one line", lines, err)
	}
	if want := path + ":3:1: "; len(lines[0]) < len(want) || lines[0][:len(want)] != want {
		t.Errorf("line = %q, want it to start with %q", lines[0], want)
	}
	other := errors.New("reading config: permission denied")
	if lines, err := ConfigProblems(other); lines != nil || err != other {
		t.Errorf("ConfigProblems(%v) = %q, %v; want the error back", other, lines, err)
	}
}

func TestVerifyFindings(t *testing.T) {
	cfg := config.Default()
	cfg.Verification.Checks = map[string]config.Check{"build": {Command: "go build ./..."}}
	q := issuequeue.ParseQueue("issue_queue.md", []byte("# Issue Queue\n\n## ISSUE-20261122-001\n\n| Field | Value |\n|-------|-------|\n| Verify | biuld |\n\n## ISSUE-20261122-002\n\n| Field | Value |\n|-------|-------|\n| Verify | build |\n"))
	got := VerifyFindings(q, cfg)
	want := `issue_queue.md:7:3: Verify: "biuld" is not a [verify.NAME] check in config.toml (checks: build), so run never verifies ISSUE-20261122-001; did you mean "build"?`
	if len(got) != 1 || got[0].String() != want {
		t.Errorf("VerifyFindings = %v, want [%s]", got, want)
	}
}

func TestJoinNames(t *testing.T) {
	if got, want := joinNames([]string{"a", "b", "c", "d", "e", "f", "g"}), "a, b, c, d, e and 2 more"; got != want {
		t.Errorf("joinNames = %q, want %q", got, want)
	}
}
