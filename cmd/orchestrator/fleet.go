package main

import (
	"fmt"
	"time"

	"github.com/autoretry/orchestrator/orchestrator"
)

// printOverdue prints a line when the next run of the state directory is
// overdue (more than twice the usual interval since the last run), and
// nothing when runs come on time.
func printOverdue(e *env, now time.Time) {
	if s, err := orchestrator.ReadSchedule(e.dir, now); err == nil && s.Overdue {
		fmt.Fprintf(e.stdout, "Schedule: %s; is the cron job still running?\n", s)
	}
}
