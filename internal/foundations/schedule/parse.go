package schedule

import (
	"fmt"
	"strings"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/suggest"
)

// Error is a range of schedule.active_hours that cannot be read.
type Error struct {
	Index int    // 0-based position in active_hours
	Entry string // the range as written
	Msg   string // what is wrong, quoting the part at fault
}

func (e *Error) Error() string {
	return fmt.Sprintf("schedule.active_hours[%d] %q: %s", e.Index, e.Entry, e.Msg)
}

// ZoneError is a schedule.timezone that names no known time zone.
type ZoneError struct {
	Zone string
	Err  error // from time.LoadLocation
}

func (e *ZoneError) Error() string {
	return fmt.Sprintf("schedule.timezone %q: not a known time zone (want an IANA name such as America/New_York, or UTC or Local)", e.Zone)
}

func (e *ZoneError) Unwrap() error { return e.Err }

// Parse reads the active hours ranges, each "DAYS HH:MM-HH:MM" or
// "HH:MM-HH:MM" (every day), in the time zone zone: an IANA name, "UTC", or
// "Local" or "" for the machine's zone.
//
// DAYS is a day ("Mon" or "Monday", in any case), a range of days that may
// run through Sunday ("Mon-Fri", "Fri-Mon"), or a comma list of either
// ("Mon,Wed,Fri-Sat"). A time range whose end is before its start crosses
// midnight and belongs to the day it starts on: "Sun 22:00-02:00" ends on
// Monday. 24:00 (or 00:00) as an end is midnight at the end of the day.
// No ranges means always active.
//
// A range that cannot be read is an *Error, an unknown zone a *ZoneError.
func Parse(ranges []string, zone string) (*Schedule, error) {
	loc := time.Local
	if zone != "" {
		var err error
		if loc, err = time.LoadLocation(zone); err != nil {
			return nil, &ZoneError{Zone: zone, Err: err}
		}
	}
	s := &Schedule{loc: loc}
	for i, r := range ranges {
		sp, msg := parseSpan(r)
		if msg != "" {
			return nil, &Error{Index: i, Entry: r, Msg: msg}
		}
		s.spans = append(s.spans, sp)
	}
	return s, nil
}

const want = "want DAYS HH:MM-HH:MM, such as Mon-Fri 09:00-18:00, or HH:MM-HH:MM for every day"

// parseSpan reads one range; it returns the problem when there is one.
func parseSpan(entry string) (span, string) {
	fields := strings.Fields(entry)
	if len(fields) == 0 {
		return span{}, "empty range (" + want + ")"
	}
	// The times begin at the first field that begins with a digit; spaces
	// around the commas and dashes are let through ("Mon - Fri").
	t := len(fields)
	for i, f := range fields {
		if f[0] >= '0' && f[0] <= '9' {
			t = i
			break
		}
	}
	if t == len(fields) {
		return span{}, "missing the time range (" + want + ")"
	}
	sp := span{days: allDays}
	if t > 0 {
		days := tighten(strings.Join(fields[:t], " "))
		if strings.Contains(days, " ") {
			return span{}, fmt.Sprintf("%q: separate days with commas, as in Mon,Wed", days)
		}
		var msg string
		if sp.days, msg = parseDays(days); msg != "" {
			return span{}, msg
		}
	}
	times := tighten(strings.Join(fields[t:], " "))
	if before, after, ok := strings.Cut(times, " "); ok {
		return span{}, fmt.Sprintf("unexpected %q after the time range %q", after, before)
	}
	var msg string
	if sp.start, sp.end, msg = parseTimes(times); msg != "" {
		return span{}, msg
	}
	return sp, ""
}

// tighten removes the spaces around commas and dashes.
func tighten(s string) string {
	for _, sep := range []string{",", "-"} {
		s = strings.ReplaceAll(s, " "+sep, sep)
		s = strings.ReplaceAll(s, sep+" ", sep)
	}
	return s
}

func parseDays(s string) (uint8, string) {
	var mask uint8
	for _, item := range strings.Split(s, ",") {
		from, to, isRange := strings.Cut(item, "-")
		if item == "" || isRange && (from == "" || to == "") {
			return 0, fmt.Sprintf("%q: a day is missing around a comma or dash", s)
		}
		first, msg := parseDay(from)
		if msg != "" {
			return 0, msg
		}
		last := first
		if isRange {
			if last, msg = parseDay(to); msg != "" {
				return 0, msg
			}
		}
		for d := first; ; d = (d + 1) % 7 {
			mask |= 1 << d
			if d == last {
				break
			}
		}
	}
	return mask, ""
}

var longNames = [7]string{"sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"}

func parseDay(name string) (time.Weekday, string) {
	lower := strings.ToLower(name)
	for d, long := range longNames {
		if lower == long || lower == long[:3] {
			return time.Weekday(d), ""
		}
	}
	if d, ok := guessDay(lower); ok {
		return 0, fmt.Sprintf("%q is not a day (did you mean %s?)", name, shortNames[d])
	}
	return 0, fmt.Sprintf("%q is not a day (want Mon, Tue, Wed, Thu, Fri, Sat, Sun or a full name)", name)
}

// guessDay returns the day that name, in lower case, most likely misspells:
// the day whose name starts with it ("tues", "thurs"), or else the one day
// within one edit of its abbreviation or two of its full name.
func guessDay(name string) (time.Weekday, bool) {
	if len(name) >= 2 {
		for d, long := range longNames {
			if strings.HasPrefix(long, name) {
				return time.Weekday(d), true
			}
		}
	}
	found, n := time.Weekday(0), 0
	for d, long := range longNames {
		if suggest.Distance(name, long[:3]) <= 1 || len(name) > 3 && suggest.Distance(name, long) <= 2 {
			found, n = time.Weekday(d), n+1
		}
	}
	return found, n == 1
}

// parseTimes reads "HH:MM-HH:MM" into seconds since midnight.
func parseTimes(s string) (start, end int, msg string) {
	from, to, ok := strings.Cut(s, "-")
	if !ok {
		return 0, 0, fmt.Sprintf("%q is not a time range (want HH:MM-HH:MM)", s)
	}
	if start, msg = parseClock(from); msg != "" {
		return 0, 0, msg
	}
	if start == day {
		return 0, 0, fmt.Sprintf("%q can only end a range", from)
	}
	if end, msg = parseClock(to); msg != "" {
		return 0, 0, msg
	}
	if start == end {
		return 0, 0, fmt.Sprintf("%q starts and ends at the same time (for the whole day write 00:00-24:00)", s)
	}
	if end == 0 {
		end = day
	}
	return start, end, ""
}

// parseClock reads "HH:MM" (or "H:MM"), 00:00 to 24:00.
func parseClock(s string) (int, string) {
	hh, mm, ok := strings.Cut(s, ":")
	if !ok || len(hh) < 1 || len(hh) > 2 || len(mm) != 2 || !digits(hh) || !digits(mm) {
		return 0, fmt.Sprintf("%q is not a time (want HH:MM)", s)
	}
	h := atoi(hh)
	m := atoi(mm)
	switch {
	case m > 59:
		return 0, fmt.Sprintf("%q is not a time (minutes run 00-59)", s)
	case h == 24 && m == 0:
		return day, ""
	case h > 23:
		return 0, fmt.Sprintf("%q is not a time (hours run 00-23; 24:00 may end a range)", s)
	}
	return h*3600 + m*60, ""
}

func digits(s string) bool {
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func atoi(s string) int {
	n := 0
	for _, c := range []byte(s) {
		n = n*10 + int(c-'0')
	}
	return n
}
