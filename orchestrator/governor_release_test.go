package orchestrator

import (
	"strings"
	"testing"

	"github.com/autoretry/orchestrator/internal/foundations/config"
	"github.com/autoretry/orchestrator/issuequeue"
)

// A halt is released by a person, or once when a part of its fingerprint
// changed, with that part as the cause; otherwise it stays, and a released
// halt is not released again.
func TestReleaseHalt(t *testing.T) {
	fp := Fingerprint{Issue: "i", Check: "c", Command: "l", Model: "m"}
	with := func(f func(*Fingerprint)) Fingerprint { g := fp; f(&g); return g }
	halt := &HaltRecord{Code: CodeRepeatedFailure, Fingerprint: fp}
	released := &HaltRecord{Code: CodeRepeatedFailure, Fingerprint: fp, Released: true}
	tests := []struct {
		name string
		f    ReleaseFacts
		want string
	}{
		{"unchanged", ReleaseFacts{Halted: true, Halt: halt, Now: fp}, ""},
		{"issue changed", ReleaseFacts{Halted: true, Halt: halt, Now: with(func(f *Fingerprint) { f.Issue = "j" })}, CauseIssueChanged},
		{"check changed", ReleaseFacts{Halted: true, Halt: halt, Now: with(func(f *Fingerprint) { f.Check = "d" })}, CauseCheckChanged},
		{"command changed", ReleaseFacts{Halted: true, Halt: halt, Now: with(func(f *Fingerprint) { f.Command = "k" })}, CauseCommandChanged},
		{"model changed", ReleaseFacts{Halted: true, Halt: halt, Now: with(func(f *Fingerprint) { f.Model = "n" })}, CauseModelChanged},
		{"a person answers", ReleaseFacts{Halted: true, Person: true, Halt: halt, Now: fp}, CausePerson},
		{"a person undid it in the file", ReleaseFacts{Halted: false, Halt: halt, Now: fp}, CausePerson},
		{"released already, changed", ReleaseFacts{Halted: true, Halt: released, Now: with(func(f *Fingerprint) { f.Issue = "j" })}, ""},
		{"released already, not halted", ReleaseFacts{Halted: false, Halt: released, Now: fp}, ""},
		{"no halt recorded", ReleaseFacts{Halted: true, Now: fp}, ""},
		{"no halt recorded, a person answers", ReleaseFacts{Halted: true, Person: true, Now: fp}, CausePerson},
		{"not halted, a person answers", ReleaseFacts{Halted: false, Person: true, Now: fp}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ReleaseHalt(tt.f); got != tt.want {
				t.Errorf("cause %q, want %q", got, tt.want)
			}
		})
	}
}

// An issue's fingerprint is its text as people wrote it, its check's
// command, the loop command and its tier's model: what the tool writes in
// it (Failure Details, Attempt History, its fields) leaves it as it was.
func TestFingerprintOf(t *testing.T) {
	const head = "# Issue Queue\n\n## ISSUE-20261122-001\n\n| Field | Value |\n|---|---|\n| Verify | test |\n| Retry-Count | %s |\n| Signature-Repeat-Count | %s |\n\n"
	base := strings.Replace(strings.Replace(head, "%s", "1", 1), "%s", "2", 1) + "### Summary\nTestParse fails\n\n### Suggested Fix\nlook at parse.go\n"
	cfg := config.Default()
	cfg.Verification.Checks = map[string]config.Check{"test": {Name: "test", Command: "go test ./..."}}
	of := func(md string, cfg *config.Config) Fingerprint {
		t.Helper()
		q := issuequeue.ParseQueue("issue_queue.md", []byte(md))
		if err := q.Err(); err != nil {
			t.Fatal(err)
		}
		return FingerprintOf(q.Issues[0], cfg)
	}
	was := of(base, cfg)
	toolWrote := strings.Replace(base, "| Signature-Repeat-Count | 2 |", "| Signature-Repeat-Count | 3 |", 1) +
		"\n### Failure Details\n```\nFAIL\n```\n\n### Attempt History\n| Attempt | Time | Type | Signature | Error |\n|---|---|---|---|---|\n| 1 | 2026-11-22T10:15:00Z | verification_failed | abc | FAIL |\n"
	if got := of(toolWrote, cfg); got != was {
		t.Errorf("what the tool writes changed the fingerprint: %+v, was %+v", got, was)
	}
	if got := of(strings.Replace(base, "TestParse fails", "TestParse fails on empty input", 1), cfg); got.Issue == was.Issue {
		t.Error("a new summary left the fingerprint's text as it was")
	}
	if got := of(strings.Replace(base, "look at parse.go", "look at lex.go", 1), cfg); got.Issue == was.Issue {
		t.Error("a section people write left the fingerprint's text as it was")
	}
	other := config.Default()
	other.Verification.Checks = map[string]config.Check{"test": {Name: "test", Command: "go test -race ./..."}}
	other.Loop.Command, other.Tiers.Model = "claude -p", "opus"
	got := of(base, other)
	if got.Check == was.Check || got.Command == was.Command || got.Model == was.Model || got.Issue != was.Issue {
		t.Errorf("check, command and model changed, text not: %+v, was %+v", got, was)
	}
}
