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
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// A closed stdout (orchestrator run | head) must not kill a run before it
	// has stopped its loop's process group and written its state: writes
	// fail with EPIPE instead.
	signal.Ignore(syscall.SIGPIPE)
	os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}
