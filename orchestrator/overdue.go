package orchestrator

import (
	"fmt"
	"slices"
	"time"
)

// Schedule is when a state directory's runs come, as its event log
// recorded them: the last run and the usual interval between runs (the
// median of the recent gaps), so that a cron job that stopped running is
// noticed.
type Schedule struct {
	Last     time.Time     `json:"last_run,omitzero"`
	Usual    time.Duration `json:"usual_interval_ns,omitempty"` // 0: too few runs to tell
	Since    time.Duration `json:"since_last_ns,omitempty"`
	Overdue  bool          `json:"overdue"`
	Recorded int           `json:"runs"` // runs read
}

// scheduleRuns is how many recent runs the usual interval is taken from,
// and scheduleWindow how far back the event log is read for them.
const (
	scheduleRuns   = 21
	scheduleWindow = 30 * 24 * time.Hour
)

// OverdueFactor is how many usual intervals without a run make the next
// one overdue.
const OverdueFactor = 2

// scheduleEvents are the events that mark a run: one opened, and one that
// a rule stopped before it opened.
var scheduleEvents = map[string]bool{EvRunStarted: true, EvStopped: true}

// ReadSchedule reads the run times of the state directory dir from its event
// log and says, at now, whether the next run is overdue: more than
// OverdueFactor usual intervals since the last. Two intervals at least are
// needed to tell the usual one.
func ReadSchedule(dir string, now time.Time) (Schedule, error) {
	evs, err := readLedgerSince(PathsIn(dir).Ledger(), now.Add(-scheduleWindow), scheduleEvents, nil)
	if err != nil {
		return Schedule{}, err
	}
	seen := map[string]bool{}
	var times []time.Time
	for _, ev := range evs {
		if ev.Time.After(now) || ev.RunID == "" || seen[ev.RunID] {
			continue
		}
		seen[ev.RunID] = true
		times = append(times, ev.Time)
	}
	return scheduleOf(times, now), nil
}

// scheduleOf is the schedule of runs started at times, at now.
func scheduleOf(times []time.Time, now time.Time) Schedule {
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	times = slices.CompactFunc(times, func(a, b time.Time) bool { return a.Equal(b) })
	var s Schedule
	s.Recorded = len(times)
	if len(times) == 0 {
		return s
	}
	s.Last = times[len(times)-1]
	s.Since = now.Sub(s.Last)
	if len(times) > scheduleRuns {
		times = times[len(times)-scheduleRuns:]
	}
	if len(times) < 3 {
		return s
	}
	gaps := make([]time.Duration, 0, len(times)-1)
	for i := 1; i < len(times); i++ {
		gaps = append(gaps, times[i].Sub(times[i-1]))
	}
	slices.Sort(gaps)
	s.Usual = gaps[len(gaps)/2]
	if len(gaps)%2 == 0 {
		s.Usual = (gaps[len(gaps)/2-1] + gaps[len(gaps)/2]) / 2
	}
	s.Overdue = s.Usual > 0 && s.Since > OverdueFactor*s.Usual
	return s
}

// String says when the last run was, how often runs usually come, and
// whether the next is overdue: "last run 2 h ago, usually every 10 min —
// overdue".
func (s Schedule) String() string {
	if s.Last.IsZero() {
		return "never run"
	}
	out := "last run " + Ago(s.Since) + " ago"
	if s.Usual > 0 {
		out += ", usually every " + Ago(s.Usual)
	}
	if s.Overdue {
		out += " — overdue"
	}
	return out
}

// Ago writes a duration as people say it: "45 s", "10 min", "2 h", "3 d".
func Ago(d time.Duration) string {
	switch {
	case d < 90*time.Second:
		return fmt.Sprintf("%d s", int(d.Round(time.Second)/time.Second))
	case d < 90*time.Minute:
		return fmt.Sprintf("%d min", int(d.Round(time.Minute)/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h", int(d.Round(time.Hour)/time.Hour))
	}
	return fmt.Sprintf("%d d", int(d.Round(24*time.Hour)/(24*time.Hour)))
}
