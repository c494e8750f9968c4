//go:build unix && !linux

package procgroup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Run runs s.Command and returns when the shell has exited and been reaped,
// its process group has no process left, and the output has been read to
// its end (or Spec.Drain ran out).
//
// On this system Run knows a command's processes by their process group
// only: there is no child subreaper or process table to find a descendant
// that left the group with setsid. Such a process is not killed, and Run
// stops reading a pipe it holds after Spec.Drain.
func Run(ctx context.Context, s Spec) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{ExitCode: -1}, err
	}
	grace := s.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	drain := s.Drain
	if drain <= 0 {
		drain = DefaultDrain
	}
	env := s.Env
	if env == nil {
		env = os.Environ()
	}
	token := newToken()
	defer releaseToken(token)

	var log *logFile
	if s.LogPath != "" {
		var err error
		if log, err = createLogFile(s.LogPath, s.LogLimit); err != nil {
			return Result{ExitCode: -1}, fmt.Errorf("creating log: %w", err)
		}
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		closeLog(log)
		return Result{ExitCode: -1}, fmt.Errorf("creating output pipe: %w", err)
	}
	stdin, err := os.Open(os.DevNull)
	if err != nil {
		pr.Close()
		pw.Close()
		closeLog(log)
		return Result{ExitCode: -1}, fmt.Errorf("opening stdin: %w", err)
	}
	cmd := &exec.Cmd{
		Path:        "/bin/sh",
		Args:        []string{"sh", "-c", s.Command},
		Dir:         s.Dir,
		Env:         withMarker(env, token),
		Stdin:       stdin,
		Stdout:      pw,
		Stderr:      pw,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	start := time.Now()
	err = cmd.Start()
	pw.Close()
	stdin.Close()
	if err != nil {
		pr.Close()
		closeLog(log)
		return Result{ExitCode: -1}, fmt.Errorf("starting command: %w", err)
	}
	pgid := cmd.Process.Pid

	c := &collector{out: s.Output, tail: newRing(s.Tail), log: log}
	readDone := make(chan struct{})
	go func() {
		c.copyFrom(pr)
		close(readDone)
	}()
	var werr error
	exited := make(chan struct{})
	go func() {
		werr = cmd.Wait()
		close(exited)
	}()

	var res Result
	var errs []error
	var timeout <-chan time.Time
	if s.Timeout > 0 {
		t := time.NewTimer(s.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-exited:
	case <-timeout:
		res.TimedOut = true
	case <-ctx.Done():
		res.Canceled = true
	}
	select {
	case <-exited:
		res.TimedOut, res.Canceled = false, false
	default:
	}
	// What is left of the group gets SIGTERM (and SIGCONT, so that stopped
	// processes act on it), then SIGKILL after the grace period.
	if groupAlive(pgid) {
		unix.Kill(-pgid, unix.SIGTERM)
		unix.Kill(-pgid, unix.SIGCONT)
		deadline := time.Now().Add(grace)
		for groupAlive(pgid) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		for range maxRounds {
			if !groupAlive(pgid) {
				break
			}
			unix.Kill(-pgid, unix.SIGKILL)
			time.Sleep(10 * time.Millisecond)
		}
		if groupAlive(pgid) {
			errs = append(errs, fmt.Errorf("processes of group %d still running after SIGKILL", pgid))
		}
	}
	<-exited
	var exitErr *exec.ExitError
	if werr != nil && !errors.As(werr, &exitErr) {
		errs = append(errs, fmt.Errorf("waiting for command: %w", werr))
	}
	res.ExitCode, res.Signal = exitStatus(cmd.ProcessState)

	t := time.NewTimer(drain)
	select {
	case <-readDone:
	case <-t.C:
		res.DrainTimedOut = true
		pr.SetReadDeadline(time.Now())
		<-readDone
	}
	t.Stop()
	pr.Close()

	res.Tail = c.tail.Bytes()
	res.OutputBytes = c.n
	if c.readErr != nil {
		errs = append(errs, fmt.Errorf("reading output: %w", c.readErr))
	}
	if c.outErr != nil {
		errs = append(errs, fmt.Errorf("writing output: %w", c.outErr))
	}
	if c.logErr != nil {
		errs = append(errs, fmt.Errorf("writing log: %w", c.logErr))
	}
	if log != nil {
		if err := log.Close(); err != nil && c.logErr == nil {
			errs = append(errs, fmt.Errorf("writing log: %w", err))
		}
	}
	res.Duration = time.Since(start)
	return res, errors.Join(errs...)
}

// groupAlive reports whether process group pgid still has a process.
func groupAlive(pgid int) bool {
	return unix.Kill(-pgid, 0) == nil
}

// maxRounds bounds the rounds of SIGKILL sent to a group, so that a fork
// loop cannot keep Run busy forever.
const maxRounds = 100

// Sweep is a no-op on this system: Run knows no process outside a command's
// process group, and kills the group before it returns.
func Sweep() error { return nil }
