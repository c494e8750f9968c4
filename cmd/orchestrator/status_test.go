package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/autoretry/orchestrator/internal/foundations/columns"
)

// status on a 50-issue queue fits a 24 × 80 terminal ($COLUMNS says 80):
// the first open issues in retry order, summaries cut to the width, and a
// line saying how many more there are; --all lists them all.
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
			switch k {
			case "ORCHESTRATOR_NOW":
				return "2026-11-22T10:15:00Z"
			case "COLUMNS":
				return "80"
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

// Written to a pipe, status, explain and fleet status cut and wrap nothing
// unless $COLUMNS is set: a summary in Japanese with emoji reaches the
// reader whole. With $COLUMNS=40 every line fits 40 terminal columns, in
// which a wide rune takes two.
func TestPipedOutputIsCutOnlyToColumns(t *testing.T) {
	const summary = "キャッシュディレクトリが無いとビルドが失敗する🔥 再現手順とログを添付した、修正は設定の読み込み順を直すこと🙏"
	repo := filepath.Join(t.TempDir(), "長い名前のリポジトリ-a-repository-whose-name-is-long")
	dir := filepath.Join(repo, ".orchestrator")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	q := "# Issue Queue\n\n## ISSUE-20261122-001\n\n| Field | Value |\n|---|---|\n| Priority | high |\n| Auto-Retry | true |\n| Halted | true |\n| Retry-Count | 2 |\n\n### Summary\n" + summary + "\n" +
		"\n## ISSUE-20261122-002\n\n| Field | Value |\n|---|---|\n| Status | pendng-" + strings.Repeat("x", 90) + " |\n\n### Summary\n" + summary + "\n"
	if err := os.WriteFile(filepath.Join(dir, "issue_queue.md"), []byte(q), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte("[loop]\ncommand = \"true\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// run gives the command a pipe for standard output, as a shell's | does.
	run := func(columnsEnv string, args ...string) string {
		t.Helper()
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		got := make(chan string)
		go func() {
			var b bytes.Buffer
			b.ReadFrom(r)
			got <- b.String()
		}()
		getenv := func(k string) string {
			switch k {
			case "ORCHESTRATOR_NOW":
				return "2026-11-22T10:15:00Z"
			case "COLUMNS":
				return columnsEnv
			}
			return ""
		}
		var errb bytes.Buffer
		code := Main(args, nil, w, &errb, getenv)
		w.Close()
		out := <-got
		if code != 0 && code != exitSafeguard {
			t.Fatalf("%v: exit %d\n%s", args, code, errb.String())
		}
		return out
	}
	cmds := [][]string{
		{"--dir", dir, "status"},
		{"--dir", dir, "explain", "ISSUE-20261122-001", "ISSUE-20261122-002"},
		{"fleet", "status", repo},
	}
	for _, args := range cmds {
		out := run("", args...)
		if strings.Contains(out, "…") {
			t.Errorf("%v, piped, cut a line:\n%s", args, out)
		}
		want := summary
		switch args[2] {
		case "explain":
			want = "pendng-" + strings.Repeat("x", 90)
		case repo:
			want = repo
		}
		if !strings.Contains(out, want) {
			t.Errorf("%v, piped, lacks %q whole:\n%s", args, want, out)
		}
	}
	for _, width := range []int{40, 100} {
		for _, args := range cmds {
			out := run(strconv.Itoa(width), args...)
			if !strings.Contains(out, "ISSUE-20261122") && args[0] != "fleet" {
				t.Errorf("%v, COLUMNS=%d, names no issue:\n%s", args, width, out)
			}
			for _, l := range strings.Split(out, "\n") {
				if n := columns.Width(l); n > width {
					t.Errorf("%v, COLUMNS=%d: a line of %d columns: %q", args, width, n, l)
				}
			}
			if args[2] == "status" && width == 100 && !strings.Contains(out, "キャッシュディレクトリ") {
				t.Errorf("%v, COLUMNS=%d: the summary is not cut to its room:\n%s", args, width, out)
			}
		}
	}
}
