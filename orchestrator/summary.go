package orchestrator

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/autoretry/orchestrator/issuequeue"
	"github.com/autoretry/orchestrator/templates"
)

// printSummary prints the retry summary of a run.
func (r *Runner) printSummary(rep RunReport, wall time.Duration) error {
	s := &r.stats
	sum := templates.RunSummary{RunID: rep.RunID, Loops: rep.Loops, Wall: wall, Outcome: rep.Outcome, Reason: rep.Reason}
	if rep.Code != "" {
		sum.Outcome += " (" + string(rep.Code) + ")"
	}
	sum.Issues = len(s.touched)
	final, _, _ := r.O.paths().Load()
	for _, id := range s.touched {
		res := "pending"
		if final != nil {
			if is := final.Issue(id); is != nil && is.Status == issuequeue.StatusSkipped {
				res = "skipped"
				sum.Skipped++
			}
		}
		switch {
		case res == "skipped":
		case s.resolved[id] && s.retried[id]:
			res = "success (retry worked)"
			sum.RetrySuccesses++
		case s.resolved[id]:
			res = "success"
		case s.halted[id]:
			res = "halted (escalated)"
		case s.escalated[id]:
			res = "escalated"
		}
		if s.firstOK[id] {
			sum.FirstAttempt++
		}
		if s.retried[id] {
			sum.Retried++
		}
		if s.escalated[id] {
			sum.Escalations++
		}
		if s.halted[id] {
			sum.Halted++
		}
		sum.Details = append(sum.Details, templates.SummaryRow{ID: id, Summary: s.summaries[id], Attempts: max(1, s.attempts[id]), Result: res})
	}
	for name, n := range s.failTypes {
		sum.Patterns = append(sum.Patterns, templates.Pattern{Name: name, Count: n})
	}
	slices.SortFunc(sum.Patterns, func(a, b templates.Pattern) int {
		if a.Count != b.Count {
			return b.Count - a.Count
		}
		return strings.Compare(a.Name, b.Name)
	})
	return r.O.render("summary", sum)
}

// pruneLoopLogs removes captured loop output older than cutoff.
func pruneLoopLogs(dir string, cutoff time.Time) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() && fi.ModTime().Before(cutoff) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
