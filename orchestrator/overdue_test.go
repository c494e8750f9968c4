package orchestrator

import (
	"testing"
	"time"
)

// A cron job every 10 minutes that stopped: 2 h later the next run is
// overdue, 5 minutes later it is not; irregular or too few runs say no
// usual interval rather than guess.
func TestScheduleOverdue(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	every := func(n int, d time.Duration) []time.Time {
		var ts []time.Time
		for i := range n {
			ts = append(ts, t0.Add(time.Duration(i)*d))
		}
		return ts
	}
	last := t0.Add(11 * 10 * time.Minute)
	tests := []struct {
		name    string
		times   []time.Time
		now     time.Time
		usual   time.Duration
		overdue bool
		text    string
	}{
		{"stopped two hours ago", every(12, 10*time.Minute), last.Add(2 * time.Hour), 10 * time.Minute, true,
			"last run 2 h ago, usually every 10 min — overdue"},
		{"on time", every(12, 10*time.Minute), last.Add(5 * time.Minute), 10 * time.Minute, false,
			"last run 5 min ago, usually every 10 min"},
		{"just under twice", every(12, 10*time.Minute), last.Add(20 * time.Minute), 10 * time.Minute, false,
			"last run 20 min ago, usually every 10 min"},
		{"two runs only", every(2, 10*time.Minute), t0.Add(5 * time.Hour), 0, false, "last run 5 h ago"},
		{"never", nil, t0, 0, false, "never run"},
		{"one late run does not move the median", append(every(10, 10*time.Minute), t0.Add(4*time.Hour)), t0.Add(4*time.Hour + 15*time.Minute),
			10 * time.Minute, false, "last run 15 min ago, usually every 10 min"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := scheduleOf(tt.times, tt.now)
			if got, want := s.Usual, tt.usual; got != want {
				t.Errorf("usual = %s, want %s", got, want)
			}
			if got, want := s.Overdue, tt.overdue; got != want {
				t.Errorf("overdue = %v, want %v", got, want)
			}
			if got, want := s.String(), tt.text; got != want {
				t.Errorf("String() = %q, want %q", got, want)
			}
		})
	}
}
