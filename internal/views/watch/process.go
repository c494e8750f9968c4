package watch

import (
	"context"
	"io"
	"os/exec"
	"syscall"
	"time"
)

// DefaultGrace is how long a Process has to exit after SIGTERM before it is
// killed: orchestrator run gives its loop 10 s after SIGTERM, then writes
// its state.
const DefaultGrace = 30 * time.Second

// Process runs a command, such as orchestrator run, as an OnPending
// function: Options{OnPending: p.Run}.
type Process struct {
	Path string   // the executable
	Args []string // the whole argument list, Args[0] (the name it sees) included
	// Stderr receives the command's standard error. If Stderr is nil, it
	// goes to the same writer as its standard output.
	Stderr io.Writer
	// Grace is how long the command has to exit after SIGTERM once ctx is
	// done, before it is killed. If Grace is 0, DefaultGrace applies.
	Grace time.Duration
}

// Run runs the command with its standard output going to out, in the
// current directory and environment, and waits for it. When ctx is done it
// sends SIGTERM, never SIGKILL first, so that a run can stop its loop and
// write its state; it kills the command only if it is still there Grace
// later. The error is the command's (an *exec.ExitError says "exit status
// 3").
func (p *Process) Run(ctx context.Context, out io.Writer) error {
	cmd := exec.CommandContext(ctx, p.Path)
	cmd.Args = p.Args
	cmd.Stdout = out
	cmd.Stderr = p.Stderr
	if cmd.Stderr == nil {
		cmd.Stderr = out
	}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = p.Grace
	if cmd.WaitDelay <= 0 {
		cmd.WaitDelay = DefaultGrace
	}
	return cmd.Run()
}
