//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/statefile"
	"github.com/autoretry/orchestrator/issuequeue"
)

// TestProcessStopRun proves: SIGTERM to a run,
// or orchestrator abort from another process, during an auto-retry loop
// ends the loop's whole process group, puts the issue being retried back to
// pending, records the outcome "aborted" and exits 3.
func TestProcessStopRun(t *testing.T) {
	for _, how := range []string{"sigterm", "abort"} {
		t.Run(how, func(t *testing.T) {
			ctx := testContext(t, 30*time.Second)
			c := shLoopCLI(t, ctx, "5m", `if [ "$ORCHESTRATOR_LOOP_KIND" = regular ]; then
	orchestrator add --summary "server fails to start" --priority critical --auto-retry
	exit 0
fi
sleep 1000 &
echo "ready $$ $! $ORCHESTRATOR_LOOP_KIND $ORCHESTRATOR_ISSUES"
wait
`)
			run := c.start(ctx, nil, "run")
			f := strings.Fields(run.waitLine(ctx, "ready "))
			if len(f) != 5 || f[3] != "auto_retry" {
				t.Fatalf("want the auto-retry loop's ready line, got %q", f)
			}
			shPid, _ := strconv.Atoi(f[1])
			sleepPid, _ := strconv.Atoi(f[2])
			id := f[4]
			sh, sleep := watch(t, shPid), watch(t, sleepPid)
			pgrp := sh.stat.pgrp
			if !slices.Contains(groupMembers(pgrp), sleepPid) {
				t.Fatalf("the loop's background child %d is not in its process group %d", sleepPid, pgrp)
			}
			if is := c.queue().Issue(id); is == nil || is.Status != issuequeue.StatusInProgress {
				t.Fatalf("%s is not in_progress during its retry loop", id)
			}

			stopAt := time.Now()
			if how == "sigterm" {
				if err := run.cmd.Process.Signal(syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
			} else {
				a := c.run(ctx, nil, "abort")
				if a.code != 0 || !regexp.MustCompile(fmt.Sprintf(`\bpid %d\b`, run.pid())).MatchString(a.stdout) {
					t.Fatalf("orchestrator abort: exit %d, want 0 naming pid %d\nstdout:\n%s\nstderr:\n%s", a.code, run.pid(), a.stdout, a.stderr)
				}
			}
			r := run.wait(ctx)
			stopped := time.Since(stopAt)
			if r.code != 3 {
				t.Errorf("run: exit %d (%s), want 3\nstderr:\n%s", r.code, r.signal, r.stderr)
			}
			if !strings.Contains(r.stderr, "aborted") {
				t.Errorf("run's stderr does not say it was aborted:\n%s", r.stderr)
			}
			for _, w := range []*watched{sh, sleep} {
				if w.running() {
					t.Errorf("process %d of the loop survived the run", w.pid)
				}
			}
			if pids := groupMembers(pgrp); len(pids) > 0 {
				t.Errorf("processes %v of the loop's process group survived the run", pids)
			}
			c.checkAborted(ctx, id, "the interrupted attempt counts")
			t.Logf("run exited %v after the stop was asked for", stopped)
		})
	}
}

// TestProcessStopBetweenLoops proves abort for a SIGTERM that
// arrives after an auto-retry loop has ended and before the next one
// starts, while the run records the loop: the run starts no further loop
// and uses no further retry, the issue is pending, the outcome "aborted"
// and the exit status 3. The test holds the write lock while the loop
// ends, so that the run is certainly between loops, waiting to record it,
// when the signal comes.
func TestProcessStopBetweenLoops(t *testing.T) {
	ctx := testContext(t, 40*time.Second)
	c := shLoopCLI(t, ctx, "5m", `echo x >> loops
if [ "$ORCHESTRATOR_LOOP_KIND" = regular ]; then
	orchestrator add --summary "server fails to start" --priority critical --auto-retry
	exit 0
fi
echo "ready $$ $ORCHESTRATOR_ISSUES"
read answer < release
`)
	c.fifo("release")
	run := c.start(ctx, nil, "run")
	f := strings.Fields(run.waitLine(ctx, "ready "))
	shPid, _ := strconv.Atoi(f[1])
	id := f[2]
	sh := watch(t, shPid)

	lk, err := statefile.LockWrite(ctx, c.dir(), 10*time.Second, statefile.Owner{Command: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Unlock()
	writeFifo(ctx, t, c.path("release"), "go\n")
	select {
	case <-sh.exited:
	case <-ctx.Done():
		t.Fatal("the loop did not end")
	}
	waitLockWaiter(ctx, t, filepath.Join(c.dir(), statefile.LockFile))
	if err := run.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := lk.Unlock(); err != nil {
		t.Fatal(err)
	}

	r := run.wait(ctx)
	if r.code != 3 || !strings.Contains(r.stderr, "abort") {
		t.Errorf("run: exit %d (%s), want 3 saying it was aborted\nstderr:\n%s", r.code, r.signal, r.stderr)
	}
	if got, want := strings.Count(string(c.read("loops")), "x"), 2; got != want {
		t.Errorf("the loop ran %d times, want %d", got, want)
	}
	c.checkAborted(ctx, id, "one retry loop ran")
}

// waitLockWaiter waits until a process is blocked waiting for a lock on the
// lock file at path, as /proc/locks shows it ("->" lines).
func waitLockWaiter(ctx context.Context, t *testing.T, path string) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	ino := strconv.FormatUint(fi.Sys().(*syscall.Stat_t).Ino, 10)
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		b, err := os.ReadFile("/proc/locks")
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) > 6 && f[1] == "->" && strings.HasSuffix(f[6], ":"+ino) {
				return
			}
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("no process waited for a lock on %s by the deadline:\n%s", path, b)
		}
	}
}

// TestProcessNoGrandchildSurvives proves:
// not one that left the loop's process group with setsid, whether the loop
// ends on its own or by its timeout, and not one that also ignores SIGTERM:
// that one gets SIGKILL after the 10 s grace. Each grandchild's death is
// timed from the death of the loop's shell, which the same SIGTERM ends, on
// the kernel's clock, so that a loaded machine does not make the times lie.
func TestProcessNoGrandchildSurvives(t *testing.T) {
	t.Parallel()
	const escape = `setsid sh -c '%secho $$ > grandchild; exec sleep 1000' &
read pid < grandchild
echo "grandchild $pid $$"
`
	for _, tc := range []struct {
		name    string
		loop    string
		timeout string
		release bool // the loop waits for the test, then exits
		// From the loop shell's death to the grandchild's, as the test sees
		// them: either may be seen a little late on a loaded machine.
		min, max time.Duration
	}{
		{name: "loop_exits", loop: fmt.Sprintf(escape, "") + "read x < release\n", timeout: "1m", release: true,
			min: -5 * time.Second, max: 5 * time.Second},
		{name: "timeout", loop: fmt.Sprintf(escape, "") + "sleep 1000\n", timeout: "1s",
			min: -5 * time.Second, max: 5 * time.Second},
		{name: "timeout_ignores_sigterm", loop: fmt.Sprintf(escape, `trap "" TERM; `) + "sleep 1000\n", timeout: "1s",
			min: 9 * time.Second, max: 20 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := testContext(t, 60*time.Second)
			c := shLoopCLI(t, ctx, tc.timeout, tc.loop)
			c.fifo("grandchild")
			c.fifo("release")
			run := c.start(ctx, nil, "run")
			f := strings.Fields(run.waitLine(ctx, "grandchild "))
			pid, _ := strconv.Atoi(f[1])
			shPid, _ := strconv.Atoi(f[2])
			g, sh := watch(t, pid), watch(t, shPid)
			if g.stat.sid != pid || g.stat.pgrp != pid || sh.stat.pgrp == pid {
				t.Fatalf("the grandchild did not leave the loop's process group (pgrp %d, sid %d)", g.stat.pgrp, g.stat.sid)
			}
			if tc.release {
				writeFifo(ctx, t, c.path("release"), "go\n")
			}
			r := run.wait(ctx)
			if tc.release {
				if r.code != 0 {
					t.Errorf("run: exit %d (%s), want 0\nstderr:\n%s", r.code, r.signal, r.stderr)
				}
			} else {
				if !strings.Contains(r.stderr, "timed out") {
					t.Errorf("run's stderr does not report the timeout:\n%s", r.stderr)
				}
				if r.code != 0 && r.code != 3 {
					t.Errorf("run: exit %d (%s)\nstderr:\n%s", r.code, r.signal, r.stderr)
				}
			}
			for _, w := range []*watched{g, sh} {
				select {
				case <-w.exited:
				default:
					t.Fatalf("process %d survived the run", w.pid)
				}
			}
			if d := g.died - sh.died; d < tc.min || d > tc.max {
				t.Errorf("the grandchild died %v after the loop's shell, want between %v and %v", d, tc.min, tc.max)
			} else {
				t.Logf("the grandchild died %v after the loop's shell; the run took %v", d, r.wall)
			}
		})
	}
}
