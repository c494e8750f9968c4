package orchestrator

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/procgroup"
	"github.com/autoretry/orchestrator/signature"
)

// The cause of a failed loop, where people and the next loop can see it:
// how its command ended (its exit status, or the signal that killed it) and
// the last lines of its output. The run's progress lines carry it (so "run
// --quiet" prints it when a person is needed), the loop's event in the logs
// records it, and the next auto-retry loop's retry context shows it.

// FailureTailLines is how many of a failed loop's last output lines are
// shown.
const FailureTailLines = 5

// LoopFailure is how a failed loop ended.
type LoopFailure struct {
	Loop int
	Exit string // "exit status 139 (SIGSEGV)", "killed by SIGKILL", "timed out after 30m0s"
	Tail string // its last lines, colours stripped
}

// signalNames names the signals a crashed command commonly dies of, by
// number, as a shell reports them in exit status 128+N.
var signalNames = map[int]string{1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT",
	7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL", 11: "SIGSEGV", 13: "SIGPIPE", 14: "SIGALRM", 15: "SIGTERM"}

// ExitStatus says how a command ended, in words a person can search for.
func ExitStatus(res procgroup.Result, timeout time.Duration) string {
	switch {
	case res.TimedOut:
		return "timed out after " + timeout.String()
	case res.Signal != "":
		return "killed by " + res.Signal
	case res.ExitCode > 128 && signalNames[res.ExitCode-128] != "":
		return fmt.Sprintf("exit status %d (%s)", res.ExitCode, signalNames[res.ExitCode-128])
	}
	return fmt.Sprintf("exit status %d", res.ExitCode)
}

// LastLines returns the last n non-blank lines of out, terminal escapes
// stripped, joined by newlines.
func LastLines(out []byte, n int) string {
	var lines []string
	for rest := bytes.TrimRight(out, "\n\r\t "); len(rest) > 0 && len(lines) < n; {
		i := bytes.LastIndexByte(rest, '\n')
		l := strings.TrimRight(string(signature.StripANSI(nil, rest[i+1:])), "\r\t ")
		if strings.TrimSpace(l) != "" {
			lines = append(lines, truncate(l, errorSummaryMax))
		}
		if i < 0 {
			break
		}
		rest = rest[:i]
	}
	for i, j := 0, len(lines)-1; i < j; i, j = i+1, j-1 {
		lines[i], lines[j] = lines[j], lines[i]
	}
	return strings.Join(lines, "\n")
}

// noteLoop keeps how a loop that failed ended, and says so on the run's
// progress lines; a loop that did not fail clears it.
func (r *Runner) noteLoop(loop int, res loopResult, result string) {
	r.failed = nil
	if result != ResultFailed && result != ResultTimeout && result != ResultPermanent {
		return
	}
	f := &LoopFailure{Loop: loop, Exit: ExitStatus(res.Result, r.O.Config.Loop.Timeout), Tail: LastLines(res.Tail, FailureTailLines)}
	r.failed = f
	if f.Tail == "" {
		r.progress("loop %d failed: %s, printing nothing", loop, f.Exit)
		return
	}
	r.progress("loop %d failed: %s; its last lines:\n    %s", loop, f.Exit, strings.ReplaceAll(f.Tail, "\n", "\n    "))
}
