package schedule

import (
	"strings"
	"testing"
	"time"
)

// fuzzZones change their offsets in the awkward ways: at midnight (Havana,
// Santiago), by half an hour (Lord Howe), by two hours (Troll), across the
// date line (Apia skipped 30 December 2011).
var fuzzZones = []string{
	"UTC", "America/New_York", "Europe/London", "Australia/Lord_Howe", "Pacific/Apia",
	"America/Santiago", "America/Havana", "Antarctica/Troll", "Asia/Kolkata", "Pacific/Chatham",
}

// FuzzSchedule checks that Parse never panics, that what String prints
// parses to the same schedule, and that Next(t) is active with no active
// minute between t and it.
func FuzzSchedule(f *testing.F) {
	seeds := []string{
		"Mon-Fri 09:00-18:00\nSat 10:00-14:00\nSun 22:00-02:00",
		"Sun 02:15-02:45",
		"Sun 01:00-01:30",
		"Fri-Mon 23:30-00:30",
		"00:00-24:00",
		"Sat 23:59-00:01",
		"monday,WED , fri-sun 7:05 - 7:06",
		"Mon-Fry 09:00-18:00",
		"Mon 24:00-02:00",
		"",
	}
	for i, s := range seeds {
		// 2026-03-08 and 2026-11-01, around the New York changes, and
		// 2011-12-29 in Apia, the day before it skipped.
		for _, unix := range []int64{1772938800, 1793509200, 1325152800} {
			f.Add(s, uint8(i), unix)
		}
	}
	f.Fuzz(func(t *testing.T, text string, zone uint8, unix int64) {
		var ranges []string
		if text != "" {
			ranges = strings.Split(text, "\n")
		}
		s, err := Parse(ranges, fuzzZones[int(zone)%len(fuzzZones)])
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("Parse: %T %v, want *Error", err, err)
			}
			return
		}
		normal := make([]string, len(s.spans))
		for i, sp := range s.spans {
			normal[i] = sp.String()
		}
		again, err := Parse(normal, s.loc.String())
		if err != nil {
			t.Fatalf("Parse(%q) of String: %v", normal, err)
		}
		if again.String() != s.String() {
			t.Fatalf("String %q parses to %q", s, again)
		}

		const from, to = 0, 4102444800 // 1970 to 2100
		now := time.Unix(from+(unix%(to-from)+(to-from))%(to-from), 0)
		next := s.Next(now)
		switch {
		case next.IsZero():
			t.Fatalf("%s: Next(%s) never", s, now)
		case next.Before(now):
			t.Fatalf("%s: Next(%s) = %s, before it", s, now, next)
		case !s.Active(next):
			t.Fatalf("%s: Next(%s) = %s, not active", s, now, next)
		case s.Active(now) != next.Equal(now):
			t.Fatalf("%s: Active(%s) = %v but Next = %s", s, now, s.Active(now), next)
		}
		for m := now.Add(time.Minute); m.Before(next); m = m.Add(time.Minute) {
			if s.Active(m) {
				t.Fatalf("%s: Next(%s) = %s, but active at %s", s, now, next, m)
			}
		}
		if before := next.Add(-time.Second); !before.Before(now) && s.Active(before) {
			t.Fatalf("%s: Next(%s) = %s, but active at %s", s, now, next, before)
		}
	})
}
