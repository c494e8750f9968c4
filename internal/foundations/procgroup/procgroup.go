package procgroup

import (
	"io"
	"time"
)

// Defaults for the zero values of Spec fields.
const (
	DefaultGrace    = 10 * time.Second
	DefaultDrain    = 2 * time.Second
	DefaultLogLimit = 1 << 20
)

// MarkerEnv is the environment variable by which Run recognises the
// processes a command started, even after they left its process group. Its
// value is a colon-separated list of tokens: the one inherited from an
// enclosing Run, if any, then the token of this Run.
const MarkerEnv = "ORCHESTRATOR_PROCGROUP"

// Spec describes one command to run.
type Spec struct {
	// Command is run as /bin/sh -c Command, with stdin from /dev/null.
	Command string
	// Dir is the working directory; empty means the current one.
	Dir string
	// Env is the command's whole environment; nil means the environment of
	// the calling process. Run adds MarkerEnv to it.
	Env []string
	// Timeout bounds the command's run time; zero means no limit.
	Timeout time.Duration
	// IdleTimeout, if not zero, stops the command, as Timeout does, once it
	// has written no output (on stdout or stderr, by any of its processes)
	// for that long; every byte of output restarts the period, which
	// begins when the command starts. Zero means no limit.
	IdleTimeout time.Duration
	// Stop, if not nil, lets the caller stop the command while it runs, as
	// Timeout does, with a reason reported in Result.StoppedBy. If Stop was
	// called before Run, Run starts nothing and returns a Result with
	// ExitCode -1 and StoppedBy set.
	Stop *Stopper
	// Grace is how long the processes get between SIGTERM and SIGKILL;
	// zero means DefaultGrace.
	Grace time.Duration
	// Drain bounds how long Run keeps reading output once the command has
	// exited and every process it could find was killed; a process Run
	// cannot identify may still hold the pipe open (see the package
	// documentation). Zero means DefaultDrain.
	Drain time.Duration
	// Output, if not nil, receives the command's stdout and stderr, merged
	// in the order written, as it arrives. Run waits for its writes, so it
	// must not block indefinitely. After its first error it gets nothing
	// more; the output still goes to Tail and LogPath.
	Output io.Writer
	// Tail is how many bytes of the end of the output Result.Tail keeps.
	Tail int
	// LogPath, if not empty, is a file created (or truncated) to hold the
	// last LogLimit bytes of the output. While the command runs the file
	// holds between LogLimit and 2×LogLimit bytes; when Run returns it holds
	// the last LogLimit bytes, preceded, if anything was cut, by the line
	// "[N bytes of earlier output cut; the last M bytes follow]".
	LogPath string
	// LogLimit is the number of bytes LogPath keeps; zero means
	// DefaultLogLimit.
	LogLimit int64
}

// Result describes how a command ended. At most one of TimedOut, Idle,
// Canceled and StoppedBy is set: the one that stopped the command first. A
// command that exited on its own at the moment one of them came counts as
// having exited on its own.
type Result struct {
	// ExitCode is the shell's exit status: 126 when the command could not
	// be executed, 127 when it was not found, 128+N when the shell was
	// killed by signal N; -1 when the command could not be started.
	ExitCode int
	// Signal is the name of the signal that killed the shell, such as
	// "SIGKILL", or empty when it exited.
	Signal string
	// TimedOut is true when Spec.Timeout stopped the command.
	TimedOut bool
	// Idle is true when Spec.IdleTimeout stopped the command.
	Idle bool
	// Canceled is true when the context stopped the command.
	Canceled bool
	// StoppedBy is the reason given to Spec.Stop when it stopped the
	// command, and empty otherwise.
	StoppedBy string
	// Duration is the time from start until Run returned, including the
	// grace period and cleanup.
	Duration time.Duration
	// Tail holds the last Spec.Tail bytes of the output.
	Tail []byte
	// OutputBytes counts all output read.
	OutputBytes int64
	// DrainTimedOut is true when Run stopped reading output because the
	// pipe was still open Spec.Drain after the command and every process
	// it could identify were gone; later output was lost.
	DrainTimedOut bool
}
