//go:build linux

package main

import (
	"bufio"
	"os"
	"strings"
	"testing"
	"time"
)

// logs -f prints a running loop's output as it comes, each new line within
// 2 seconds, and ends by itself when the loop ends; logs then prints the
// loop's whole output, and --loop N a past loop's.
func TestProcessLogsFollow(t *testing.T) {
	ctx := testContext(t, 2*time.Minute)
	c := newCLI(t)
	c.setup(ctx, "[loop]\ncommand = \"echo first; cat step1 >/dev/null; echo second; cat step2 >/dev/null; echo done\"\n", emptyQueue)
	c.fifo("step1")
	c.fifo("step2")
	run := c.command(ctx, nil, "run")
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	// Opening a fifo for writing returns once the loop opens it to read:
	// the loop has printed what comes before.
	step1, err := os.OpenFile(c.path("step1"), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	logs := c.command(ctx, nil, "logs", "-f")
	out, err := logs.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := logs.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	expect := func(want string) {
		t.Helper()
		start := time.Now()
		select {
		case l, ok := <-lines:
			if !ok || l != want {
				t.Fatalf("logs -f printed %q (open %v), want %q", l, ok, want)
			}
		case <-time.After(2 * time.Second):
			t.Fatalf("logs -f did not print %q within 2s", want)
		}
		t.Logf("%q after %s", want, time.Since(start).Round(time.Millisecond))
	}
	expect("first")
	step1.Close()
	step2, err := os.OpenFile(c.path("step2"), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	expect("second")
	step2.Close()
	expect("done")
	select {
	case l, ok := <-lines:
		if ok {
			t.Fatalf("logs -f printed %q after the loop's last line", l)
		}
	case <-ctx.Done():
		t.Fatal("logs -f did not end with the loop")
	}
	if err := logs.Wait(); err != nil {
		t.Fatalf("logs -f: %v", err)
	}
	if err := run.Wait(); err != nil {
		t.Fatalf("run: %v", err)
	}
	r := c.run(ctx, nil, "logs")
	if got, want := r.stdout, "first\nsecond\ndone\n"; got != want {
		t.Errorf("logs printed %q, want %q", got, want)
	}
	r = c.run(ctx, nil, "logs", "--loop", "1")
	if !strings.HasPrefix(r.stdout, "first") {
		t.Errorf("logs --loop 1 printed %q", r.stdout)
	}
	if r := c.run(ctx, nil, "logs", "--loop", "7"); r.code != exitNothing || !strings.Contains(r.stderr, "no loop 7") {
		t.Errorf("logs --loop 7: exit %d, %s", r.code, r.stderr)
	}
}
