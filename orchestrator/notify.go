package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/statefile"
)

// Notifications: [notify] command runs once for each event of the event log
// that needs a person. The event log is the source, so every command that
// records such an event notifies, and a small cursor file says what was
// notified already, so nothing is notified twice.

// notifyState is logs/notify.json.
type notifyState struct {
	// Through is the time of the last event considered, and Seen how many
	// events at exactly that time were (a fixed clock gives many).
	Through time.Time `json:"through"`
	Seen    int       `json:"seen"`
	// Last holds, by reason code, when a stop with that code was last
	// notified: the same stop repeated by later runs (an open breaker, a
	// spent budget) is notified again only a day later, or after a run
	// completed.
	Last map[Code]time.Time `json:"last"`
}

// NotifyTimeout bounds one run of the notify command.
const NotifyTimeout = 30 * time.Second

// needsPerson reports whether ev needs a person, and the key that says
// which earlier notification it repeats ("" for none).
func needsPerson(ev Event) (bool, Code) {
	switch ev.Event {
	case EvEscalated, EvGuard:
		return true, ""
	case EvRunFinished, EvStopped:
		if !NeedsPerson(ev.Code) {
			return false, ""
		}
		return true, ev.Code
	}
	return false, ""
}

// Notify runs command once for each event in the event log that needs a
// person and was not notified yet. Its failures are returned but change
// nothing else: a notification is a courtesy, the exit status is the rule.
func (o *Orchestrator) Notify(ctx context.Context, command string) error {
	if command == "" {
		return nil
	}
	paths := o.paths()
	statePath := filepath.Join(paths.Logs(), "notify.json")
	var due []Event
	// Choose the events under the write lock, so that two commands ending at
	// once do not both notify them; run the command after releasing it.
	lk, err := statefile.LockWrite(ctx, o.Dir, o.LockWait, statefile.Owner{Command: "notify"})
	if err != nil {
		return err
	}
	func() {
		defer lk.Unlock()
		var st notifyState
		b, rerr := statefile.ReadThrough(statePath)
		first := errors.Is(rerr, fs.ErrNotExist)
		if rerr == nil && json.Unmarshal(b, &st) != nil {
			first = true
		}
		if first {
			// A new notify command starts with the last hour, not with the
			// whole history of the log.
			st.Through, st.Seen = o.now().Add(-time.Hour), 0
		}
		if st.Last == nil {
			st.Last = map[Code]time.Time{}
		}
		evs, lerr := readLedgerSince(paths.Ledger(), st.Through, nil, nil)
		if lerr != nil {
			err = lerr
			return
		}
		skip := st.Seen
		for _, ev := range evs {
			if ev.Time.Equal(st.Through) && skip > 0 {
				skip--
				continue
			}
			if ev.Time.Equal(st.Through) {
				st.Seen++
			} else {
				st.Through, st.Seen = ev.Time, 1
			}
			if ev.Event == EvRunFinished && ev.Code == "" {
				st.Last = map[Code]time.Time{} // a completed run: stops may be news again
			}
			need, key := needsPerson(ev)
			if !need {
				continue
			}
			if key != "" {
				if last, ok := st.Last[key]; ok && ev.Time.Sub(last) < 24*time.Hour {
					continue
				}
				st.Last[key] = ev.Time
			}
			due = append(due, ev)
		}
		if b, merr := json.Marshal(st); merr == nil {
			err = writeFileAtomic(statePath, b)
		}
	}()
	if err != nil {
		return err
	}
	var errs []error
	for _, ev := range due {
		errs = append(errs, o.runNotify(ctx, command, ev))
	}
	return errors.Join(errs...)
}

func (o *Orchestrator) runNotify(ctx context.Context, command string, ev Event) error {
	b, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(o.Dir)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, NotifyTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
	cmd.Dir = filepath.Dir(abs)
	cmd.Stdin = strings.NewReader(string(b) + "\n")
	reason := ev.Reason
	if ev.Error != "" {
		reason += ": " + ev.Error // the code, then the reason in words
	}
	cmd.Env = append(os.Environ(),
		"ORCHESTRATOR_DIR="+abs,
		"ORCHESTRATOR_EVENT="+ev.Event,
		"ORCHESTRATOR_EVENT_CODE="+string(ev.Code),
		"ORCHESTRATOR_EVENT_ISSUE="+ev.IssueID,
		"ORCHESTRATOR_EVENT_REASON="+reason,
	)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("notify command for %s %s: %v: %s", ev.Event, ev.IssueID, err, strings.TrimSpace(string(out)))
	}
	return nil
}
