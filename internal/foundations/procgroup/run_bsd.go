//go:build unix && !linux

package procgroup

import (
	"context"
	"fmt"
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
	if reason := s.Stop.Reason(); reason != "" {
		return Result{ExitCode: -1, StoppedBy: reason}, nil
	}
	st, err := startCommand(s)
	if err != nil {
		return Result{ExitCode: -1}, err
	}
	defer releaseToken(st.token)
	cmd := st.cmd
	pgid := cmd.Process.Pid

	var werr error
	exited := make(chan struct{})
	go func() {
		werr = cmd.Wait()
		close(exited)
	}()

	res := st.waitExit(ctx, exited)
	var errs []error
	// What is left of the group gets SIGTERM (and SIGCONT, so that stopped
	// processes act on it), then SIGKILL after the grace period.
	if groupAlive(pgid) {
		unix.Kill(-pgid, unix.SIGTERM)
		unix.Kill(-pgid, unix.SIGCONT)
		deadline := time.Now().Add(st.grace)
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
	return st.finish(res, errs, werr)
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
