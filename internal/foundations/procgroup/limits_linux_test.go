package procgroup_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/procgroup"
	"golang.org/x/sys/unix"
)

// assertGroupGone checks that process group pgid has no process left.
func assertGroupGone(t *testing.T, pgid int) {
	t.Helper()
	if err := unix.Kill(-pgid, 0); !errors.Is(err, unix.ESRCH) {
		t.Errorf("process group %d: kill 0 = %v, want ESRCH", pgid, err)
	}
}

// onLine records output and calls fn with each complete line, in the
// goroutine that writes, as the engine's output watcher does.
type onLine struct {
	bytes.Buffer
	fn   func(line string)
	seen int
}

func (w *onLine) Write(p []byte) (int, error) {
	n, err := w.Buffer.Write(p)
	for {
		i := bytes.IndexByte(w.Bytes()[w.seen:], '\n')
		if i < 0 {
			return n, err
		}
		w.fn(string(w.Bytes()[w.seen : w.seen+i]))
		w.seen += i + 1
	}
}

// A command silent for IdleTimeout is stopped as a timeout stops it; since
// it obeys SIGTERM, within IdleTimeout + Grace.
func TestRunIdleTimeoutStopsASilentCommand(t *testing.T) {
	const idle, grace = 200 * time.Millisecond, 300 * time.Millisecond
	env, tag := taggedEnv(t)
	var out bytes.Buffer
	res := runBounded(t, context.Background(), procgroup.Spec{
		Command:     "echo $$; exec sleep 30",
		Env:         env,
		Output:      &out,
		IdleTimeout: idle,
		Grace:       grace,
	})
	t.Logf("stopped after %v", res.Duration)
	if !res.Idle || res.TimedOut || res.Canceled || res.StoppedBy != "" {
		t.Errorf("Idle, TimedOut, Canceled, StoppedBy = %v, %v, %v, %q; want true, false, false, none",
			res.Idle, res.TimedOut, res.Canceled, res.StoppedBy)
	}
	if got, want := res.Signal, "SIGTERM"; got != want {
		t.Errorf("Signal = %q, want %q", got, want)
	}
	if got, want := res.ExitCode, 143; got != want {
		t.Errorf("ExitCode = %d, want %d", got, want)
	}
	if res.Duration < idle || res.Duration >= idle+grace {
		t.Errorf("Duration = %v, want from IdleTimeout %v to IdleTimeout + Grace %v", res.Duration, idle, idle+grace)
	}
	pid := firstLinePid(t, out.Bytes())
	assertGone(t, pid)
	assertGroupGone(t, pid)
	assertNothingLeft(t, tag)
}

// Output resets the idle clock: gaps shorter than IdleTimeout never stop a
// command, however long it runs, and the first longer silence does.
func TestRunIdleTimeoutIsResetByOutput(t *testing.T) {
	// The idle limit is far above the gaps, so that a loaded machine's
	// scheduling never stretches a gap past it; the output lasts twice as
	// long as the limit.
	const idle = time.Second
	// 40 lines, one every 50 ms: about 2 s of output.
	const printer = `i=1; while [ $i -le 40 ]; do echo $i; sleep 0.05; i=$((i+1)); done`
	tests := []struct {
		name    string
		command string
		idle    bool
	}{
		{"output every 50 ms for 2 s", printer, false},
		{"then silence", printer + "; exec sleep 30", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, tag := taggedEnv(t)
			var out bytes.Buffer
			res := runBounded(t, context.Background(), procgroup.Spec{
				Command:     tt.command,
				Env:         env,
				Output:      &out,
				IdleTimeout: idle,
				Grace:       300 * time.Millisecond,
			})
			t.Logf("returned after %v", res.Duration)
			if got, want := res.Idle, tt.idle; got != want {
				t.Errorf("Idle = %v, want %v", got, want)
			}
			if got, want := out.String(), string(seqOutput(40)); got != want {
				t.Errorf("output = %q, want %q", got, want)
			}
			if !tt.idle && res.ExitCode != 0 {
				t.Errorf("ExitCode = %d, want 0", res.ExitCode)
			}
			// The last line comes after 39 sleeps of 50 ms; silence is
			// counted from there.
			if min := 39*50*time.Millisecond + idle; tt.idle && res.Duration < min {
				t.Errorf("Duration = %v, want at least %v: the idle clock was not reset by output", res.Duration, min)
			}
			assertNothingLeft(t, tag)
		})
	}
}

// Timeout and IdleTimeout each report themselves: a command that keeps
// writing is stopped by Timeout, not as idle.
func TestRunTimeoutWithIdleTimeout(t *testing.T) {
	env, tag := taggedEnv(t)
	res := runBounded(t, context.Background(), procgroup.Spec{
		Command:     "while :; do echo tick; sleep 0.05; done",
		Env:         env,
		Timeout:     300 * time.Millisecond,
		IdleTimeout: 10 * time.Second,
		Grace:       300 * time.Millisecond,
	})
	if !res.TimedOut || res.Idle {
		t.Errorf("TimedOut, Idle = %v, %v; want true, false", res.TimedOut, res.Idle)
	}
	assertNothingLeft(t, tag)
}

// With IdleTimeout zero, silence stops nothing.
func TestRunWithoutIdleTimeoutSilenceIsAllowed(t *testing.T) {
	var out bytes.Buffer
	res := runBounded(t, context.Background(), procgroup.Spec{Command: "sleep 0.3; echo done", Output: &out})
	if res.Idle || res.ExitCode != 0 || out.String() != "done\n" {
		t.Errorf("Idle = %v, ExitCode = %d, output %q; want false, 0, %q", res.Idle, res.ExitCode, out.String(), "done\n")
	}
}

// Whatever stops the command, a process that ignores SIGTERM is killed with
// SIGKILL once the grace period has passed.
func TestRunLimitsKillWhatIgnoresTERM(t *testing.T) {
	const grace = 300 * time.Millisecond
	tests := []struct {
		name        string
		idleTimeout time.Duration
		stopReason  string // if set, Stop is called with it on the first line
		minDuration time.Duration
	}{
		{"IdleTimeout", 200 * time.Millisecond, "", 200*time.Millisecond + grace},
		{"Stop", 0, "cost over budget", grace},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, tag := taggedEnv(t)
			var stop procgroup.Stopper
			out := &onLine{fn: func(string) {
				if tt.stopReason != "" {
					stop.Stop(tt.stopReason)
				}
			}}
			res := runBounded(t, context.Background(), procgroup.Spec{
				// The ignored disposition is inherited by sleep.
				Command:     "trap '' TERM; echo $$; sleep 30; sleep 30",
				Env:         env,
				Output:      out,
				Grace:       grace,
				IdleTimeout: tt.idleTimeout,
				Stop:        &stop,
			})
			t.Logf("returned after %v", res.Duration)
			if got, want := res.Idle, tt.idleTimeout > 0; got != want {
				t.Errorf("Idle = %v, want %v", got, want)
			}
			if got, want := res.StoppedBy, tt.stopReason; got != want {
				t.Errorf("StoppedBy = %q, want %q", got, want)
			}
			if res.TimedOut || res.Canceled {
				t.Errorf("TimedOut, Canceled = %v, %v; want false, false", res.TimedOut, res.Canceled)
			}
			if got, want := res.Signal, "SIGKILL"; got != want {
				t.Errorf("Signal = %q, want %q", got, want)
			}
			if res.Duration < tt.minDuration {
				t.Errorf("Duration = %v, want at least %v", res.Duration, tt.minDuration)
			}
			pid := firstLinePid(t, out.Bytes())
			assertGone(t, pid)
			assertGroupGone(t, pid)
			assertNothingLeft(t, tag)
		})
	}
}

// A descendant that left the process group with setsid and was orphaned by
// a double fork is killed too, whatever stopped the command.
func TestRunLimitsKillEscapedDescendants(t *testing.T) {
	tests := []struct {
		name        string
		idleTimeout time.Duration
		stopReason  string // if set, Stop is called with it on the first line
	}{
		{"IdleTimeout", 200 * time.Millisecond, ""},
		{"Stop", 0, "5 loops without progress"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, tag := taggedEnv(t)
			env = append(env, "T="+t.TempDir())
			var stop procgroup.Stopper
			out := &onLine{fn: func(string) {
				if tt.stopReason != "" {
					stop.Stop(tt.stopReason)
				}
			}}
			res := runBounded(t, context.Background(), procgroup.Spec{
				Command:     escapeScript + "exec sleep 30",
				Env:         env,
				Output:      out,
				Grace:       300 * time.Millisecond,
				IdleTimeout: tt.idleTimeout,
				Stop:        &stop,
			})
			if got, want := res.Idle, tt.idleTimeout > 0; got != want {
				t.Errorf("Idle = %v, want %v", got, want)
			}
			if got, want := res.StoppedBy, tt.stopReason; got != want {
				t.Errorf("StoppedBy = %q, want %q", got, want)
			}
			if got, want := res.Signal, "SIGTERM"; got != want {
				t.Errorf("Signal = %q, want %q", got, want)
			}
			assertGone(t, firstLinePid(t, out.Bytes()))
			assertNothingLeft(t, tag)
		})
	}
}

// The engine's output watcher calls Stop from inside Output's Write, in the
// goroutine that reads the output, when a report crosses a budget: Run
// stops the command and reports the first reason given.
func TestRunStopFromOutputWrite(t *testing.T) {
	const first = "cost $2.10 is over the $2.00 budget"
	env, tag := taggedEnv(t)
	var stop procgroup.Stopper
	var lines []string
	out := &onLine{fn: func(line string) {
		lines = append(lines, line)
		if line == `{"cost_usd": 2.10}` {
			stop.Stop(first)
			stop.Stop("a later report")
		}
	}}
	res := runBounded(t, context.Background(), procgroup.Spec{
		Command: `echo '{"cost_usd": 0.40}'; echo '{"cost_usd": 2.10}'; exec sleep 30`,
		Env:     env,
		Output:  out,
		Grace:   300 * time.Millisecond,
		Stop:    &stop,
	})
	t.Logf("returned after %v", res.Duration)
	if got, want := res.StoppedBy, first; got != want {
		t.Errorf("StoppedBy = %q, want %q", got, want)
	}
	if res.TimedOut || res.Idle || res.Canceled {
		t.Errorf("TimedOut, Idle, Canceled = %v, %v, %v; want false", res.TimedOut, res.Idle, res.Canceled)
	}
	if got, want := res.Signal, "SIGTERM"; got != want {
		t.Errorf("Signal = %q, want %q", got, want)
	}
	if got, want := len(lines), 2; got != want {
		t.Errorf("output %q: want %d lines", lines, want)
	}
	stop.Stop("after Run returned")
	assertNothingLeft(t, tag)
}

// Stop after the command has ended changes nothing and does not block.
func TestRunStopAfterExit(t *testing.T) {
	var stop procgroup.Stopper
	res := runBounded(t, context.Background(), procgroup.Spec{Command: "echo done", Stop: &stop})
	if res.ExitCode != 0 || res.StoppedBy != "" {
		t.Errorf("ExitCode, StoppedBy = %d, %q; want 0, none", res.ExitCode, res.StoppedBy)
	}
	returned := make(chan struct{})
	go func() {
		stop.Stop("too late")
		stop.Stop("later still")
		close(returned)
	}()
	watchdog := time.NewTimer(5 * time.Second)
	defer watchdog.Stop()
	select {
	case <-returned:
	case <-watchdog.C:
		t.Fatal("Stop after Run returned did not return within 5 s")
	}
}

// A Stopper stopped before Run starts nothing, as a cancelled context does.
func TestRunStoppedBeforeStart(t *testing.T) {
	dir := t.TempDir()
	var stop procgroup.Stopper
	stop.Stop("budget spent")
	res, err := procgroup.Run(context.Background(), procgroup.Spec{Command: "touch started", Dir: dir, Stop: &stop})
	if err != nil {
		t.Errorf("Run: %v", err)
	}
	if res.ExitCode != -1 || res.StoppedBy != "budget spent" {
		t.Errorf("ExitCode, StoppedBy = %d, %q; want -1, %q", res.ExitCode, res.StoppedBy, "budget spent")
	}
	if _, err := os.Stat(filepath.Join(dir, "started")); err == nil {
		t.Error("the command ran")
	}
}
