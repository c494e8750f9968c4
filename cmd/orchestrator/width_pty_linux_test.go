//go:build linux

package main

import (
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/autoretry/orchestrator/internal/testkit/ptytest"
)

// TestProcessStatusAndExplainFitAnEightyColumnTerminal proves: in a real
// 80 × 24 terminal with no $COLUMNS set, no line that status or explain
// prints is wider than the terminal, however long the summaries, reasons
// and hints are; the width comes from the terminal itself, before any
// $COLUMNS. A terminal that cannot say its size is taken as 80 wide.
func TestProcessStatusAndExplainFitAnEightyColumnTerminal(t *testing.T) {
	ctx := testContext(t, 60*time.Second)
	c := newCLI(t)
	c.env = slices.DeleteFunc(c.env, func(kv string) bool {
		return strings.HasPrefix(kv, "COLUMNS=") || strings.HasPrefix(kv, "LINES=")
	})
	long := strings.Repeat("the widget factory build fails when the cache directory is missing, ", 4)
	var q strings.Builder
	q.WriteString("# Issue Queue\n")
	for i := 1; i <= 6; i++ {
		halted := "false"
		if i == 2 {
			halted = "true"
		}
		fmt.Fprintf(&q, "\n## ISSUE-20261122-%03d\n\n| Field | Value |\n|---|---|\n| Priority | high |\n| Auto-Retry | true |\n| Halted | %s |\n| Retry-Count | 2 |\n| Seen | 12 |\n| Last-Seen | 2026-11-22T10:00:00Z |\n\n### Summary\n%s\n",
			i, halted, long)
	}
	// A quarantined issue: explain gives its reasons, which are long.
	fmt.Fprintf(&q, "\n## ISSUE-20261122-007\n\n| Field | Value |\n|---|---|\n| Status | pendng-%s |\n\n### Summary\n%s\n", strings.Repeat("x", 90), long)
	c.setup(ctx, "[loop]\ncommand = \"true\"\n", q.String())

	noColumns := c.env
	for i, args := range [][]string{{"status"}, {"status", "--all"}, {"explain"}, {"explain", "ISSUE-20261122-002", "ISSUE-20261122-007"}, {"status"}, {"explain"}} {
		c.env = noColumns
		if i >= 4 {
			// A $COLUMNS the shell set before the window shrank: the
			// terminal's own width wins.
			c.env = append(slices.Clone(noColumns), "COLUMNS=200")
		}
		out := runOnTerminal(t, c, 80, 24, args...)
		if !strings.Contains(out, "ISSUE-20261122-00") {
			t.Errorf("%v printed no issue:\n%s", args, out)
		}
		for _, l := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(l); n > 80 {
				t.Errorf("%v: a line of %d columns in an 80-column terminal:\n%q", args, n, l)
			}
		}
	}
	c.env = noColumns
	out := runOnTerminal(t, c, 0, 0, "status")
	if !strings.Contains(out, "…") {
		t.Errorf("status cut no summary on a terminal of unknown size:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(l); n > 80 {
			t.Errorf("a line of %d columns on a terminal of unknown size:\n%q", n, l)
		}
	}
}

// runOnTerminal runs the orchestrator with its standard output on a new
// pseudo-terminal of cols × rows and returns what it printed, with the
// terminal's carriage returns taken out.
func runOnTerminal(t *testing.T, c *cli, cols, rows int, args ...string) string {
	t.Helper()
	ptm, pts := ptytest.Open(t)
	if err := unix.IoctlSetWinsize(int(ptm.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Col: uint16(cols), Row: uint16(rows)}); err != nil {
		t.Skipf("sizing the pseudo-terminal: %v", err)
	}
	cmd := exec.Command(c.bin, args...)
	cmd.Dir, cmd.Env = c.work, c.env
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = pts, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pts.Close()
	var out bytes.Buffer
	done := make(chan struct{})
	go func() {
		io.Copy(&out, ptm) // ends with EIO once the command's side is closed
		close(done)
	}()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("orchestrator %v: %v\n%s", args, err, stderr.String())
	}
	<-done
	return strings.ReplaceAll(out.String(), "\r", "")
}
