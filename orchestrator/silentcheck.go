package orchestrator

import (
	"bytes"
	"fmt"
	"sort"
	"time"

	"github.com/autoretry/orchestrator/issuequeue"
)

// isSilent reports whether a failing command's output holds nothing to go
// on: nothing at all, or only blank space.
func isSilent(out Output) bool {
	return out.CutBytes == 0 && len(bytes.TrimSpace(out.Tail)) == 0
}

// silentMark is what the signature of a silent check's failure is computed
// over besides its exit status: the check's name, so that two different
// checks that print nothing are two different failures.
func silentMark(check string) string {
	return fmt.Sprintf("[verify: check %s printed nothing]\n", check)
}

// SilentCheck is a Verify check that printed nothing when it failed.
type SilentCheck struct {
	Check  string    `json:"check"`
	Issue  string    `json:"issue_id"` // the issue of its last silent failure
	Time   time.Time `json:"time"`
	Status string    `json:"error,omitempty"` // its exit status, as recorded
}

// Warning says what is wrong and what to do, in one line.
func (s SilentCheck) Warning() string {
	return fmt.Sprintf("check %s printed nothing when it failed (%s, %s): the loop is told nothing about why; make it print what failed",
		s.Check, s.Issue, s.Time.UTC().Format(time.RFC3339))
}

// SilentChecks returns, from the event log, the Verify checks whose last
// recorded failure printed nothing, by name.
func SilentChecks(dir string) ([]SilentCheck, []error) {
	last := map[string]SilentCheck{}
	errs := EachEvent(dir, time.Time{}, func(ev Event) {
		if ev.Event != EvAttempt || ev.Check == "" {
			return
		}
		if !ev.Silent {
			delete(last, ev.Check) // it says something now
			return
		}
		last[ev.Check] = SilentCheck{Check: ev.Check, Issue: ev.IssueID, Time: ev.Time, Status: ev.Error}
	})
	out := make([]SilentCheck, 0, len(last))
	for _, s := range last {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Check < out[j].Check })
	return out, errs
}

// silentNote says, for explain, that the issue's Verify check printed
// nothing when it last failed.
func silentNote(silent []SilentCheck, is *issuequeue.Issue) string {
	for _, s := range silent {
		if s.Check == is.Verify {
			return "its Verify check " + s.Check + " printed nothing when it failed: the loop learns nothing from it, and its failures never count against other issues"
		}
	}
	return ""
}
