package schedule

import (
	"testing"
	"time"
)

// loadZone loads a zone from the toolchain's zone database, which every Go
// installation carries ($GOROOT/lib/time/zoneinfo.zip), so the test needs no
// copy of its own.
func loadZone(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

const layout = "2006-01-02 15:04:05 -0700 Mon"

// at parses an instant written as the wall clock of loc reads it, with the
// offset in force, and fails if the clock of loc never reads that: it keeps
// the tables honest about which side of a zone change each instant is on.
func at(t testing.TB, loc *time.Location, s string) time.Time {
	t.Helper()
	tm, err := time.Parse(layout, s)
	if err != nil {
		t.Fatal(err)
	}
	if got := tm.In(loc).Format(layout); got != s {
		t.Fatalf("%s reads %s in %s", s, got, loc)
	}
	return tm
}

// In America/New_York clocks go from 02:00 EST to 03:00 EDT on Sunday
// 8 March 2026 and from 02:00 EDT back to 01:00 EST on Sunday 1 November
// 2026.
func TestActive(t *testing.T) {
	ny := loadZone(t, "America/New_York")
	tests := []struct {
		ranges []string
		at     string
		want   bool
	}{
		{[]string{"Mon-Fri 09:00-18:00"}, "2026-03-09 09:30:00 -0400 Mon", true},
		{[]string{"Mon-Fri 09:00-18:00"}, "2026-03-06 08:30:00 -0500 Fri", false},
		{[]string{"Mon-Fri 09:00-18:00"}, "2026-03-06 08:59:59 -0500 Fri", false},
		{[]string{"Mon-Fri 09:00-18:00"}, "2026-03-06 09:00:00 -0500 Fri", true},
		{[]string{"Mon-Fri 09:00-18:00"}, "2026-03-06 17:59:59 -0500 Fri", true},
		{[]string{"Mon-Fri 09:00-18:00"}, "2026-03-06 18:00:00 -0500 Fri", false},
		{[]string{"Mon-Fri 09:00-18:00"}, "2026-03-07 12:00:00 -0500 Sat", false},
		{[]string{"Mon-Fri 09:00-18:00"}, "2026-03-08 12:00:00 -0400 Sun", false},
		{[]string{"Mon-Fri 09:00-18:00"}, "2026-03-09 08:59:59 -0400 Mon", false},
		{[]string{"Mon-Fri 09:00-18:00"}, "2026-03-09 09:00:00 -0400 Mon", true},
		{[]string{"Mon-Fri 09:00-18:00"}, "2026-03-09 18:00:00 -0400 Mon", false},

		// Crossing midnight: the range belongs to Sunday and ends on Monday.
		{[]string{"Sun 22:00-02:00"}, "2026-03-01 21:59:59 -0500 Sun", false},
		{[]string{"Sun 22:00-02:00"}, "2026-03-01 22:00:00 -0500 Sun", true},
		{[]string{"Sun 22:00-02:00"}, "2026-03-02 00:00:00 -0500 Mon", true},
		{[]string{"Sun 22:00-02:00"}, "2026-03-02 01:59:00 -0500 Mon", true},
		{[]string{"Sun 22:00-02:00"}, "2026-03-02 02:00:00 -0500 Mon", false},
		{[]string{"Sun 22:00-02:00"}, "2026-03-01 01:00:00 -0500 Sun", false},
		{[]string{"Sun 22:00-02:00"}, "2026-03-07 23:00:00 -0500 Sat", false},

		// Spring forward: the skipped hour 02:00-03:00 never reads on the
		// wall, so a range starting in it starts at 03:00 EDT, one ending in
		// it ends there, and one inside it is not active that day.
		{[]string{"Sat 22:00-04:00"}, "2026-03-08 01:59:59 -0500 Sun", true},
		{[]string{"Sat 22:00-04:00"}, "2026-03-08 03:00:00 -0400 Sun", true},
		{[]string{"Sat 22:00-04:00"}, "2026-03-08 03:59:59 -0400 Sun", true},
		{[]string{"Sat 22:00-04:00"}, "2026-03-08 04:00:00 -0400 Sun", false},
		{[]string{"Sun 02:30-05:00"}, "2026-03-08 01:59:59 -0500 Sun", false},
		{[]string{"Sun 02:30-05:00"}, "2026-03-08 03:00:00 -0400 Sun", true},
		{[]string{"Sun 01:00-02:30"}, "2026-03-08 00:59:59 -0500 Sun", false},
		{[]string{"Sun 01:00-02:30"}, "2026-03-08 01:59:59 -0500 Sun", true},
		{[]string{"Sun 01:00-02:30"}, "2026-03-08 03:00:00 -0400 Sun", false},
		{[]string{"Sun 02:15-02:45"}, "2026-03-08 01:59:59 -0500 Sun", false},
		{[]string{"Sun 02:15-02:45"}, "2026-03-08 03:00:00 -0400 Sun", false},
		{[]string{"Sun 02:15-02:45"}, "2026-03-15 02:15:00 -0400 Sun", true},

		// Fall back: 01:00-02:00 reads twice, first in EDT, then in EST;
		// a wall time in range is active both times.
		{[]string{"Sun 01:00-01:30"}, "2026-11-01 00:59:59 -0400 Sun", false},
		{[]string{"Sun 01:00-01:30"}, "2026-11-01 01:00:00 -0400 Sun", true},
		{[]string{"Sun 01:00-01:30"}, "2026-11-01 01:29:59 -0400 Sun", true},
		{[]string{"Sun 01:00-01:30"}, "2026-11-01 01:30:00 -0400 Sun", false},
		{[]string{"Sun 01:00-01:30"}, "2026-11-01 01:00:00 -0500 Sun", true},
		{[]string{"Sun 01:00-01:30"}, "2026-11-01 01:29:59 -0500 Sun", true},
		{[]string{"Sun 01:00-01:30"}, "2026-11-01 01:30:00 -0500 Sun", false},
		{[]string{"Sat 22:00-02:00"}, "2026-11-01 01:59:59 -0400 Sun", true},
		{[]string{"Sat 22:00-02:00"}, "2026-11-01 01:59:59 -0500 Sun", true},
		{[]string{"Sat 22:00-02:00"}, "2026-11-01 02:00:00 -0500 Sun", false},
		{[]string{"Mon-Fri 09:00-18:00"}, "2026-11-02 08:59:59 -0500 Mon", false},
		{[]string{"Mon-Fri 09:00-18:00"}, "2026-11-02 09:00:00 -0500 Mon", true},

		// Every day, days through Sunday, and 24:00.
		{[]string{"09:00-18:00"}, "2026-03-07 09:00:00 -0500 Sat", true},
		{[]string{"09:00-18:00"}, "2026-03-07 08:59:59 -0500 Sat", false},
		{[]string{"Fri-Mon 10:00-11:00"}, "2026-03-03 10:30:00 -0500 Tue", false},
		{[]string{"Fri-Mon 10:00-11:00"}, "2026-03-06 10:30:00 -0500 Fri", true},
		{[]string{"Fri-Mon 10:00-11:00"}, "2026-03-08 10:30:00 -0400 Sun", true},
		{[]string{"Fri-Mon 10:00-11:00"}, "2026-03-09 10:30:00 -0400 Mon", true},
		{[]string{"Mon 20:00-24:00"}, "2026-03-09 23:59:59 -0400 Mon", true},
		{[]string{"Mon 20:00-24:00"}, "2026-03-10 00:00:00 -0400 Tue", false},
		{[]string{"Mon,Wed 20:00-00:00"}, "2026-03-11 23:59:59 -0400 Wed", true},
		{[]string{"Mon,Wed 20:00-00:00"}, "2026-03-12 00:00:00 -0400 Thu", false},

		// Several ranges: active in any of them.
		{[]string{"Mon-Fri 09:00-18:00", "Sat 10:00-14:00"}, "2026-03-07 13:59:59 -0500 Sat", true},
		{[]string{"Mon-Fri 09:00-18:00", "Sat 10:00-14:00"}, "2026-03-07 14:00:00 -0500 Sat", false},

		{nil, "2026-03-07 14:00:00 -0500 Sat", true},
	}
	for _, tt := range tests {
		s, err := Parse(tt.ranges, "America/New_York")
		if err != nil {
			t.Fatal(err)
		}
		tm := at(t, ny, tt.at)
		if got := s.Active(tm); got != tt.want {
			t.Errorf("%q: Active(%s) = %v, want %v", tt.ranges, tt.at, got, tt.want)
		}
		if got := s.Active(tm.UTC()); got != tt.want {
			t.Errorf("%q: Active(%s) = %v, want %v", tt.ranges, tm.UTC(), got, tt.want)
		}
	}
}

func TestNext(t *testing.T) {
	ny := loadZone(t, "America/New_York")
	tests := []struct {
		name   string
		ranges []string
		from   string
		want   string
	}{
		{"inside", []string{"Mon-Fri 09:00-18:00"}, "2026-03-09 10:00:00 -0400 Mon", "2026-03-09 10:00:00 -0400 Mon"},
		{"at the start", []string{"Mon-Fri 09:00-18:00"}, "2026-03-09 09:00:00 -0400 Mon", "2026-03-09 09:00:00 -0400 Mon"},
		{"before", []string{"Mon-Fri 09:00-18:00"}, "2026-03-09 08:59:59 -0400 Mon", "2026-03-09 09:00:00 -0400 Mon"},
		{"at the end", []string{"Mon-Fri 09:00-18:00"}, "2026-03-10 18:00:00 -0400 Tue", "2026-03-11 09:00:00 -0400 Wed"},
		{"after the week's last range", []string{"Mon-Fri 09:00-18:00"}, "2026-03-13 18:00:00 -0400 Fri", "2026-03-16 09:00:00 -0400 Mon"},
		{"across spring forward", []string{"Mon-Fri 09:00-18:00"}, "2026-03-06 18:00:00 -0500 Fri", "2026-03-09 09:00:00 -0400 Mon"},
		{"across fall back", []string{"Mon-Fri 09:00-18:00"}, "2026-10-30 18:00:00 -0400 Fri", "2026-11-02 09:00:00 -0500 Mon"},
		{"one range a week, just after", []string{"Mon 09:00-10:00"}, "2026-03-02 10:00:00 -0500 Mon", "2026-03-09 09:00:00 -0400 Mon"},
		{"one range a week, just before", []string{"Mon 09:00-10:00"}, "2026-03-09 08:59:00 -0400 Mon", "2026-03-09 09:00:00 -0400 Mon"},
		{"crossing midnight, after", []string{"Sun 22:00-02:00"}, "2026-03-02 02:00:00 -0500 Mon", "2026-03-08 22:00:00 -0400 Sun"},
		{"crossing midnight, inside", []string{"Sun 22:00-02:00"}, "2026-03-02 01:59:00 -0500 Mon", "2026-03-02 01:59:00 -0500 Mon"},
		{"the later of two ranges", []string{"Mon-Fri 09:00-18:00", "Sat 10:00-14:00"}, "2026-03-06 18:00:00 -0500 Fri", "2026-03-07 10:00:00 -0500 Sat"},
		{"wraps to next week", []string{"Mon-Fri 09:00-18:00", "Sat 10:00-14:00"}, "2026-03-07 14:00:00 -0500 Sat", "2026-03-09 09:00:00 -0400 Mon"},

		// A range that starts in the skipped hour starts when the clock
		// jumps; one wholly inside it waits a week.
		{"start in the gap", []string{"Sun 02:30-05:00"}, "2026-03-08 00:00:00 -0500 Sun", "2026-03-08 03:00:00 -0400 Sun"},
		{"range in the gap", []string{"Sun 02:15-02:45"}, "2026-03-08 00:00:00 -0500 Sun", "2026-03-15 02:15:00 -0400 Sun"},
		{"range in the gap, a week before", []string{"Sun 02:15-02:45"}, "2026-03-01 02:45:00 -0500 Sun", "2026-03-15 02:15:00 -0400 Sun"},

		// The repeated hour: the range comes round again in EST.
		{"repeated start", []string{"Sun 01:15-01:30"}, "2026-11-01 01:30:00 -0400 Sun", "2026-11-01 01:15:00 -0500 Sun"},
		{"clock turned back into the range", []string{"Sun 01:00-01:30"}, "2026-11-01 01:30:00 -0400 Sun", "2026-11-01 01:00:00 -0500 Sun"},
		{"before the repeated start", []string{"Sun 01:15-01:30"}, "2026-11-01 01:00:00 -0500 Sun", "2026-11-01 01:15:00 -0500 Sun"},
		{"after the repeated range", []string{"Sun 01:15-01:30"}, "2026-11-01 01:30:00 -0500 Sun", "2026-11-08 01:15:00 -0500 Sun"},

		{"always", nil, "2026-03-08 03:00:00 -0400 Sun", "2026-03-08 03:00:00 -0400 Sun"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse(tt.ranges, "America/New_York")
			if err != nil {
				t.Fatal(err)
			}
			from, want := at(t, ny, tt.from), at(t, ny, tt.want)
			got := s.Next(from)
			if !got.Equal(want) {
				t.Fatalf("%q: Next(%s) = %s, want %s", tt.ranges, tt.from, got.In(ny).Format(layout), tt.want)
			}
			if !s.Active(got) {
				t.Errorf("not active at Next(%s) = %s", tt.from, got)
			}
			if got.After(from) && s.Active(got.Add(-time.Second)) {
				t.Errorf("active a second before Next(%s) = %s", tt.from, got)
			}
		})
	}
}

func TestNilSchedule(t *testing.T) {
	var s *Schedule
	now := time.Date(2026, 3, 8, 7, 30, 0, 0, time.UTC)
	if !s.Active(now) || !s.Next(now).Equal(now) || s.String() != "always" {
		t.Errorf("nil schedule: Active %v, Next %v, String %q; want always active", s.Active(now), s.Next(now), s.String())
	}
}
