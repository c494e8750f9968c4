package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/procgroup"
	"github.com/autoretry/orchestrator/issuequeue"
)

// The heartbeat: [notify] heartbeat runs once after every run, whatever its
// outcome, so that a monitor which expects a ping every so often (a
// dead-man's switch) hears of a run that stopped, failed, or never came.

// Beat is the outcome of one run, as the heartbeat command gets it on its
// standard input (one JSON object) and in ORCHESTRATOR_* variables.
type Beat struct {
	ExitStatus int    `json:"exit_status"` // the run's exit status: 0, 2, 3 or 4
	Outcome    string `json:"outcome"`     // completed, stopped, aborted, failed, busy, error
	Code       Code   `json:"code,omitempty"`
	Reason     string `json:"reason,omitempty"`
	RunID      string `json:"run_id,omitempty"`
	Loops      int    `json:"loops"`
	// NeedsPerson are the issues that wait for a person's answer: halted,
	// escalated or quarantined.
	NeedsPerson []string `json:"needs_person"`
}

// HeartbeatTimeout bounds one run of the heartbeat command.
const HeartbeatTimeout = 30 * time.Second

// IssuesNeedingPerson returns the IDs of the issues of the state directory
// dir that wait for a person (NeedingPerson). A queue that cannot be read
// gives none.
func IssuesNeedingPerson(dir string) []string {
	q, _, err := PathsIn(dir).Load()
	if err != nil || q == nil {
		return []string{}
	}
	return NeedingPerson(q)
}

// NeedingPerson returns the IDs of the issues of q that wait for a person:
// quarantined ones first, then the halted and escalated ones in queue
// order.
func NeedingPerson(q *issuequeue.Queue) []string {
	ids := []string{}
	for _, is := range q.Quarantined {
		ids = append(ids, is.ID)
	}
	for _, is := range q.Issues {
		if is.Status == issuequeue.StatusEscalated || (is.Halted && is.Status != issuequeue.StatusResolved && is.Status != issuequeue.StatusSkipped) {
			ids = append(ids, is.ID)
		}
	}
	return ids
}

// Heartbeat runs command (sh -c, in the directory that holds the state
// directory dir, in its own process group, for at most HeartbeatTimeout)
// with b as JSON on its standard input and in the environment: environ
// (nil: this process's) plus ORCHESTRATOR_DIR, ORCHESTRATOR_EXIT_STATUS,
// ORCHESTRATOR_OUTCOME, ORCHESTRATOR_STOP_CODE, ORCHESTRATOR_RUN_ID,
// ORCHESTRATOR_LOOPS and ORCHESTRATOR_NEEDS_PERSON (IDs, comma-separated).
// Its failure is returned and changes nothing else.
func Heartbeat(ctx context.Context, dir, command string, b Beat, environ []string) error {
	if command == "" {
		return nil
	}
	if b.NeedsPerson == nil {
		b.NeedsPerson = []string{}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	js, err := json.Marshal(b)
	if err != nil {
		return err
	}
	// The command's standard input is a file: the process group runner
	// gives commands /dev/null, so the shell reads the file instead.
	f, err := os.CreateTemp("", "orchestrator-heartbeat-*.json")
	if err != nil {
		return fmt.Errorf("heartbeat: %w", err)
	}
	defer os.Remove(f.Name())
	_, werr := f.Write(append(js, '\n'))
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("heartbeat: %w", werr)
	}
	env := append([]string(nil), environ...)
	if environ == nil {
		env = os.Environ()
	}
	env = append(env,
		"ORCHESTRATOR_DIR="+abs,
		"ORCHESTRATOR_EXIT_STATUS="+strconv.Itoa(b.ExitStatus),
		"ORCHESTRATOR_OUTCOME="+b.Outcome,
		"ORCHESTRATOR_STOP_CODE="+string(b.Code),
		"ORCHESTRATOR_RUN_ID="+b.RunID,
		"ORCHESTRATOR_LOOPS="+strconv.Itoa(b.Loops),
		"ORCHESTRATOR_NEEDS_PERSON="+strings.Join(b.NeedsPerson, ","),
	)
	res, err := procgroup.Run(ctx, procgroup.Spec{
		Command: "{\n" + command + "\n} < " + shellQuote(f.Name()),
		Dir:     filepath.Dir(abs), Env: env, Timeout: HeartbeatTimeout, Grace: 2 * time.Second,
		Output: io.Discard, Tail: 2 << 10,
	})
	switch {
	case err != nil:
		return fmt.Errorf("heartbeat command: %w", err)
	case res.TimedOut:
		return fmt.Errorf("heartbeat command timed out after %s", HeartbeatTimeout)
	case res.ExitCode != 0:
		return fmt.Errorf("heartbeat command exited with status %d: %s", res.ExitCode, strings.TrimSpace(string(res.Tail)))
	}
	return nil
}

// shellQuote quotes s as one word for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
