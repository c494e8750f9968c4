package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// status on a 50-issue queue fits a 24 × 80 terminal by default: the first
// open issues in retry order, summaries cut to the width, and a line saying
// how many more there are; --all lists them all.
func TestStatusFitsTheTerminal(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".orchestrator")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var q strings.Builder
	q.WriteString("# Issue Queue\n")
	for i := 1; i <= 50; i++ {
		fmt.Fprintf(&q, "\n## ISSUE-20261122-%03d\n\n| Field | Value |\n|---|---|\n| Priority | high |\n| Auto-Retry | true |\n| Retry-Count | 2 |\n\n### Summary\n%s\n",
			i, strings.Repeat("a very long summary of what broke, ", 6))
	}
	if err := os.WriteFile(filepath.Join(dir, "issue_queue.md"), []byte(q.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		var out, errb bytes.Buffer
		getenv := func(k string) string {
			if k == "ORCHESTRATOR_NOW" {
				return "2026-11-22T10:15:00Z"
			}
			return ""
		}
		if code := Main(append([]string{"--dir", dir, "status"}, args...), nil, &out, &errb, getenv); code != 0 {
			t.Fatalf("status %v: exit %d\n%s", args, code, errb.String())
		}
		return out.String()
	}
	out := run()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) > 24 {
		t.Errorf("status printed %d lines, more than 24:\n%s", len(lines), out)
	}
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n > 80 {
			t.Errorf("a line of %d columns, more than 80: %q", n, l)
		}
	}
	if !strings.Contains(out, " more (use --all, or --limit N)") {
		t.Errorf("no line says how many issues are not listed:\n%s", out)
	}
	if got := strings.Count(run("--all"), "ISSUE-20261122-"); got != 50 {
		t.Errorf("--all lists %d issues, want 50", got)
	}
	if got := strings.Count(run("--limit", "5"), "ISSUE-20261122-"); got != 5 {
		t.Errorf("--limit 5 lists %d issues", got)
	}
}
