// Command orchestrator is the end-of-loop controller for automated improvement
// loops. It decides, in Go code, whether another loop should run to fix
// critical issues filed in .orchestrator/issue_queue.md, and stops runaway
// loops: the same failure three times, too many retries for one issue, too
// many loops in one run, a crashing agent, a rate-limited API, or a person's
// no_auto_retry sentinel file.
//
// Usage:
//
//	orchestrator [--dir DIR] [--config FILE] COMMAND [ARGS]
//
// Run "orchestrator help" for the list of commands and "orchestrator help
// COMMAND" for one of them. Exit codes: 0 success (for check: run another
// loop), 1 nothing to do or lint findings, 2 bad usage, config or state file
// (nothing changed), 3 stopped by a safeguard or a human is needed, 4 busy.
package main

import (
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"syscall"

	"github.com/autoretry/orchestrator/issuequeue"
)

func main() {
	// A closed stdout (orchestrator run | head) must not kill a run before it
	// has stopped its loop's process group and written its state: writes
	// fail with EPIPE instead.
	signal.Ignore(syscall.SIGPIPE)
	e := newEnv(os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	e.beforeCommand = func(c *command) { tuneGC(c, e.dir) }
	os.Exit(e.main(os.Args[1:]))
}

// tuneGC lets the commands that read the state, maybe write it, and exit
// (check, lint, status, report, …) skip garbage collection while they are
// small: nearly all they allocate stays live until they exit, so
// collecting only costs time. The first collection, which the runtime
// starts when the heap reaches gcFreeHeap more than what was prepared for
// the state files (see heapFor), means the command needs more; from then
// on the collector paces by the live heap as usual, so memory follows what
// the command holds, not what it has read. Long-running commands, and
// those that read a command's output as it comes, keep the default; GOGC
// or GOMEMLIMIT in the environment win (bench/tuning.sh compares with
// GOGC=100 to show what this buys).
func tuneGC(c *command, dir string) {
	if c.longRunning || c.streams || os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	n := heapFor(dir)
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(gcFreeHeap + int64(n))
	if n > 0 {
		prepareHeap(n)
	}
	first := new([64]byte) // not a tiny allocation: its finalizer runs
	runtime.SetFinalizer(first, func(*[64]byte) {
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(math.MaxInt64)
	})
}

// gcFreeHeap is how much a read-and-exit command may allocate before it
// collects garbage for the first time, beyond what heapFor prepared.
const gcFreeHeap = 32 << 20

// heapFor returns how much memory to prepare (see prepareHeap) for a
// command that reads the state files in dir: reading the queue takes about
// four times its size, changing it one more, and the heap rounds up what
// it is asked for. Memory prepared and not used costs nothing; a small
// file is not worth preparing for.
func heapFor(dir string) int {
	size := int64(0)
	for _, name := range []string{issuequeue.QueueFile, issuequeue.StateFile} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil {
			size += fi.Size()
		}
	}
	const perByte, minPrepared, maxPrepared = 6, 4 << 20, 1 << 30
	if n := perByte * size; n >= minPrepared {
		return int(min(n, maxPrepared))
	}
	return 0
}
