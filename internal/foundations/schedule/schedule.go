// Package schedule reads the weekly active hours in which loops may start and
// tells whether, and from when, a moment falls inside them.
package schedule

import (
	"slices"
	"strings"
	"time"
)

// Schedule is a week of active hours in one time zone. A Schedule with no
// ranges, and a nil *Schedule, is always active.
//
// Ranges are wall-clock times: an instant is active when the clock on the
// wall of the schedule's zone reads a time inside a range. So on the day
// clocks spring forward, a range that starts in the skipped hour starts at
// the instant after the gap, and one that ends in it ends there; on the day
// they fall back, a wall time that happens twice is active both times if it
// is in range.
type Schedule struct {
	spans []span
	loc   *time.Location
}

// span is one entry of the active hours: from start on each day in days to
// end on the same day, or, when end < start, on the next day. Times are
// seconds since midnight on the wall clock; end may be 24h.
type span struct {
	days  uint8 // bit d set: time.Weekday(d) is in
	start int
	end   int
}

const (
	day     = 24 * 60 * 60
	allDays = 1<<7 - 1
)

func (sp span) has(d time.Weekday) bool { return sp.days&(1<<d) != 0 }

// contains reports whether the wall time sec on a day d is in sp.
func (sp span) contains(d time.Weekday, sec int) bool {
	if sp.start < sp.end {
		return sp.has(d) && sp.start <= sec && sec < sp.end
	}
	return sp.has(d) && sec >= sp.start || sp.has((d+6)%7) && sec < sp.end
}

// Active reports whether t is inside the active hours.
func (s *Schedule) Active(t time.Time) bool {
	if s == nil || len(s.spans) == 0 {
		return true
	}
	w := t.In(s.location())
	h, m, sec := w.Clock()
	secs := h*3600 + m*60 + sec
	for _, sp := range s.spans {
		if sp.contains(w.Weekday(), secs) {
			return true
		}
	}
	return false
}

// horizonDays bounds the search of Next. A week holds every range once; the
// second week covers a range that a zone change swallows (a range inside
// the skipped hour, or a day a zone skipped altogether).
const horizonDays = 15

// Next returns the first instant at or after t at which s is active: t
// itself if s is active at t. It returns the zero time if s is not active
// within 16 days of t; every schedule Parse returns is.
func (s *Schedule) Next(t time.Time) time.Time {
	if s.Active(t) {
		return t
	}
	loc := s.location()
	limit := t.AddDate(0, 0, horizonDays+1)
	transitions, offsets := zoneChanges(loc, t.Add(-48*time.Hour), limit.Add(48*time.Hour))

	// An active stretch begins where the wall clock reaches the start of a
	// range or where it jumps into one at a zone change; the earliest such
	// instant after t that is active is the answer.
	var best time.Time
	consider := func(c time.Time) {
		if c.After(t) && !c.After(limit) && (best.IsZero() || c.Before(best)) && s.Active(c) {
			best = c
		}
	}
	for _, c := range transitions {
		consider(c)
	}
	y, m, d := t.In(loc).Date()
	for i := -1; i <= horizonDays; i++ {
		date := time.Date(y, m, d+i, 0, 0, 0, 0, time.UTC)
		for _, sp := range s.spans {
			if !sp.has(date.Weekday()) {
				continue
			}
			wall := date.Add(time.Duration(sp.start) * time.Second)
			for _, off := range offsets {
				// The instant at which the wall clock reads wall, if it does
				// while off is in force.
				c := wall.Add(-time.Duration(off) * time.Second)
				if sameWall(c.In(loc), wall) {
					consider(c)
				}
			}
		}
	}
	if best.IsZero() {
		return best
	}
	return best.In(loc)
}

// maxZoneChanges bounds the walk over a zone's changes in a few weeks; real
// zones change at most a few times a year.
const maxZoneChanges = 64

// zoneChanges returns the instants in (from, to] at which loc changes its
// offset or name, and every offset from UTC, in seconds, in force in
// [from, to].
func zoneChanges(loc *time.Location, from, to time.Time) (changes []time.Time, offsets []int) {
	u := from.In(loc)
	for range maxZoneChanges {
		_, off := u.Zone()
		if !slices.Contains(offsets, off) {
			offsets = append(offsets, off)
		}
		_, end := u.ZoneBounds()
		if end.IsZero() || end.After(to) || !end.After(u) {
			break
		}
		changes = append(changes, end)
		u = end
	}
	return changes, offsets
}

// sameWall reports whether the clock of t reads the date and time of wall,
// a time in UTC.
func sameWall(t, wall time.Time) bool {
	y, m, d := t.Date()
	h, mi, s := t.Clock()
	return time.Date(y, m, d, h, mi, s, 0, time.UTC).Equal(wall)
}

func (s *Schedule) location() *time.Location {
	if s.loc == nil {
		return time.UTC
	}
	return s.loc
}

// String returns the ranges, normalized, and the zone, as in
// "Mon-Fri 09:00-18:00, Sun 22:00-02:00 (America/New_York)", or "always".
func (s *Schedule) String() string {
	if s == nil || len(s.spans) == 0 {
		return "always"
	}
	parts := make([]string, len(s.spans))
	for i, sp := range s.spans {
		parts[i] = sp.String()
	}
	return strings.Join(parts, ", ") + " (" + s.location().String() + ")"
}

// String returns sp as Parse reads it, with the days in the shortest form
// ("Mon-Fri", "Fri-Mon", "Mon,Wed") and left out when sp is every day.
func (sp span) String() string {
	times := clock(sp.start) + "-" + clock(sp.end)
	if sp.days == allDays {
		return times
	}
	return formatDays(sp.days) + " " + times
}

func clock(sec int) string {
	return twoDigits(sec/3600) + ":" + twoDigits(sec/60%60)
}

func twoDigits(n int) string {
	return string([]byte{byte('0' + n/10), byte('0' + n%10)})
}

// week is the days in the order people write them.
var week = [7]time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday, time.Saturday, time.Sunday}

var shortNames = [7]string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}

// formatDays writes the days of mask as runs, "Mon-Fri" or "Sat", joined by
// commas, from Monday on; a run through Sunday into Monday stays one run
// ("Fri-Mon") and goes where it starts. mask is not every day.
func formatDays(mask uint8) string {
	first := 0 // where the walk starts: Monday, or after the first missing day
	if mask&(1<<time.Sunday) != 0 && mask&(1<<time.Monday) != 0 {
		for i, d := range week {
			if mask&(1<<d) == 0 {
				first = i + 1
				break
			}
		}
	}
	var runs []string
	for i := 0; i < 7; {
		d := week[(first+i)%7]
		if mask&(1<<d) == 0 {
			i++
			continue
		}
		j := i
		for j+1 < 7 && mask&(1<<week[(first+j+1)%7]) != 0 {
			j++
		}
		run := shortNames[d]
		if j > i {
			run += "-" + shortNames[week[(first+j)%7]]
		}
		runs = append(runs, run)
		i = j + 1
	}
	return strings.Join(runs, ",")
}
