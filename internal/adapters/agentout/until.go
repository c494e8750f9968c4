package agentout

import (
	"strconv"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // limit messages name IANA zones; hosts without a zone database still resolve them
)

// The instant a limit lifts is read by a small grammar rather than one
// pattern per wording, so the agents' many phrasings of the same parts read
// alike:
//
//	statement := anchor when
//	anchor    := "reset" ["s"] | "try again" | "retry" ["ing"]
//	           | "limit reached" "|" epoch | "\"resets_at\":" epoch
//	when      := ("in" | "after") delay | ["at" | "on"] instant
//	instant   := ["tomorrow" | date [","] ["at"]] clock [zone]
//	date      := month day [st|nd|rd|th] [","] [year] | day "de" month "de" year
//	clock     := hour [":" minute] ["am" | "pm"]     (a minute or am/pm is needed)
//	zone      := "(" IANA name ")" | ("UTC" | "GMT") [±h[:mm]] | abbreviation
//	delay     := (number unit)+                       ("3h 2m", "5 days 22 hours", "25.5s")
//	epoch     := ten digits
//
// Blanks between the parts are optional: a terminal that wraps a line at a
// blank drops it once the lines are joined.

// until finds the instant a limit message says the limit lifts; zero if it
// states none. Of several statements, the last one read wins.
func (r *Reader) until(msg string) time.Time {
	s := collapse(msg)
	c := &scanner{s: s, ls: string(appendLower(nil, []byte(s)))}
	var found time.Time
	for i := 0; i < len(c.ls); i++ {
		var t time.Time
		ok := false
		switch c.ls[i] {
		case 'r':
			switch {
			case strings.HasPrefix(c.ls[i:], "reset"):
				c.i = i + len("reset")
				c.word("s")
				if i > 0 && c.ls[i-1] == '"' {
					t, ok = c.epochKey()
				} else {
					t, ok = r.when(c)
				}
			case strings.HasPrefix(c.ls[i:], "retry"):
				c.i = i + len("retry")
				c.word("ing")
				t, ok = r.when(c)
			}
		case 't':
			if c.i = i; c.phrase("try", "again") {
				t, ok = r.when(c)
			}
		case 'l':
			if c.i = i; c.phrase("limit", "reached") {
				c.spaces()
				if c.word("|") {
					c.spaces()
					t, ok = c.epoch()
				}
			}
		}
		if ok {
			found = t
		}
	}
	return found
}

// scanner reads a message part by part; ls is s with ASCII letters lowered,
// byte for byte, so an offset in one is the same offset in the other.
type scanner struct {
	s, ls string
	i     int
}

func (c *scanner) spaces() {
	for c.i < len(c.s) && (c.s[c.i] == ' ' || c.s[c.i] == '\t') {
		c.i++
	}
}

// word consumes w (lower case) if the text continues with it.
func (c *scanner) word(w string) bool {
	if strings.HasPrefix(c.ls[c.i:], w) {
		c.i += len(w)
		return true
	}
	return false
}

// phrase consumes words (lower case) with or without the blanks between them.
func (c *scanner) phrase(words ...string) bool {
	start := c.i
	for k, w := range words {
		if k > 0 {
			c.spaces()
		}
		if !c.word(w) {
			c.i = start
			return false
		}
	}
	return true
}

// number reads between 1 and max digits, not followed by another digit.
func (c *scanner) number(max int) (int, bool) {
	j := c.i
	for j < len(c.s) && isDigit(c.s[j]) {
		j++
	}
	if j == c.i || j-c.i > max {
		return 0, false
	}
	n, _ := strconv.Atoi(c.s[c.i:j])
	c.i = j
	return n, true
}

// letters reads a run of ASCII letters, lowered.
func (c *scanner) letters() string {
	j := c.i
	for j < len(c.ls) && c.ls[j] >= 'a' && c.ls[j] <= 'z' {
		j++
	}
	w := c.ls[c.i:j]
	c.i = j
	return w
}

func isDigit(b byte) bool { return '0' <= b && b <= '9' }

func isLetter(b byte) bool { return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' }

// epoch reads Unix seconds: ten digits, the instants of this and the next
// two centuries.
func (c *scanner) epoch() (time.Time, bool) {
	j := c.i
	for j < len(c.s) && isDigit(c.s[j]) {
		j++
	}
	if j-c.i != 10 {
		return time.Time{}, false
	}
	n, err := strconv.ParseInt(c.s[c.i:j], 10, 64)
	c.i = j
	return time.Unix(n, 0).UTC(), err == nil
}

// epochKey reads the value of a "resets_at" or "resetsAt" key of a JSON
// body; other keys that start with reset ("resets_in_seconds") are not
// instants.
func (c *scanner) epochKey() (time.Time, bool) {
	if !c.word(`_at"`) && !c.word(`at"`) {
		return time.Time{}, false
	}
	c.spaces()
	if !c.word(":") {
		return time.Time{}, false
	}
	c.spaces()
	c.word(`"`)
	return c.epoch()
}

// when reads what follows an anchor: a delay after "in" or "after", else
// an instant.
func (r *Reader) when(c *scanner) (time.Time, bool) {
	start := c.i
	for _, conn := range []string{"in", "after", "at", "on", ""} {
		c.i = start
		c.spaces()
		if !c.word(conn) {
			continue
		}
		c.spaces()
		if conn == "in" || conn == "after" {
			if d, ok := parseDelay(c.s[c.i:]); ok {
				return r.at.Add(d), true
			}
			continue
		}
		if t, ok := r.instant(c); ok {
			return t, true
		}
	}
	return time.Time{}, false
}

// instant reads a clock time, with the date and zone it may carry, and
// resolves it against the output's instant.
func (r *Reader) instant(c *scanner) (time.Time, bool) {
	var (
		mon             time.Month
		day, year       int
		dated, tomorrow bool
	)
	start := c.i
	if c.word("tomorrow") {
		tomorrow = true
	} else if mon, day, year, dated = date(c); !dated {
		c.i = start
	}
	if tomorrow || dated {
		c.spaces()
		c.word(",")
		c.spaces()
		c.word("at")
		c.spaces()
	}
	h, m, ok := clock(c)
	if !ok {
		return time.Time{}, false
	}
	zone, ok := r.zoneAt(c)
	if !ok {
		return time.Time{}, false
	}
	at := r.at.In(zone)
	switch {
	case dated:
		y := year
		if y == 0 {
			y = at.Year()
		}
		t := time.Date(y, mon, day, h, m, 0, 0, zone)
		if t.Day() != day {
			return time.Time{}, false // no such day
		}
		if year == 0 && t.Before(at.AddDate(0, 0, -1)) {
			t = t.AddDate(1, 0, 0)
		}
		return t, true
	case tomorrow:
		return time.Date(at.Year(), at.Month(), at.Day()+1, h, m, 0, 0, zone), true
	}
	return r.next(h, m, zone), true
}

var months = map[string]time.Month{
	"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
	// Portuguese and Spanish abbreviations that differ
	"fev": 2, "abr": 4, "mai": 5, "ago": 8, "set": 9, "out": 10, "dez": 12, "ene": 1, "dic": 12,
}

// month reads a month's name, whole or cut to three letters with a dot.
func month(c *scanner) (time.Month, bool) {
	w := c.letters()
	if len(w) < 3 || len(w) > len("september") {
		return 0, false
	}
	m, ok := months[w[:3]]
	c.word(".")
	return m, ok
}

// date reads "Sep 15", "Apr 28th, 2026" or "10 de jul. de 2026"; year is 0
// where it states none.
func date(c *scanner) (mon time.Month, day, year int, ok bool) {
	start := c.i
	if mon, ok = month(c); ok {
		c.spaces()
		if day, ok = c.number(2); ok {
			for _, suffix := range []string{"st", "nd", "rd", "th"} {
				if c.word(suffix) {
					break
				}
			}
			// A year is four digits, even glued to the clock by a wrap ("202610:03").
			at := c.i
			c.spaces()
			c.word(",")
			c.spaces()
			if len(c.s)-c.i >= 4 && allDigits(c.s[c.i:c.i+4]) {
				year, _ = strconv.Atoi(c.s[c.i : c.i+4])
				c.i += 4
			} else {
				c.i = at
			}
			return mon, day, year, day >= 1 && day <= 31
		}
	}
	c.i = start
	if day, ok = c.number(2); ok {
		c.spaces()
		if c.word("de") {
			c.spaces()
			if mon, ok = month(c); ok {
				c.spaces()
				if c.word("de") {
					c.spaces()
					if year, ok = c.number(4); ok {
						return mon, day, year, day >= 1 && day <= 31
					}
				}
			}
		}
	}
	c.i = start
	return 0, 0, 0, false
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// clock reads "5pm", "3:45 PM", "11:52": an hour alone is a clock only with
// am or pm.
func clock(c *scanner) (h, m int, ok bool) {
	start := c.i
	if h, ok = c.number(2); !ok {
		return 0, 0, false
	}
	minutes := false
	if c.word(":") {
		j := c.i
		if m, ok = c.number(2); !ok || c.i-j != 2 {
			c.i = start
			return 0, 0, false
		}
		minutes = true
	}
	afterDigits := c.i
	c.spaces()
	switch {
	case c.word("am"):
		if h == 12 {
			h = 0
		}
	case c.word("pm"):
		if h < 12 {
			h += 12
		}
	default:
		c.i = afterDigits
		if !minutes {
			c.i = start
			return 0, 0, false
		}
	}
	if h > 23 || m > 59 {
		c.i = start
		return 0, 0, false
	}
	return h, m, true
}

// Zone abbreviations read as the fixed offsets they name: "PST" is eight
// hours behind UTC whatever the season, as a message that says PST means.
// Abbreviations that name more than one zone (IST, BST) are left out: a
// message that uses one states no instant that can be known.
var zoneAbbrevs = map[string]int{
	"UTC": 0, "GMT": 0, "WET": 0, "WEST": 1 * 3600, "CET": 1 * 3600, "CEST": 2 * 3600,
	"EET": 2 * 3600, "EEST": 3 * 3600, "MSK": 3 * 3600,
	"HST": -10 * 3600, "AKST": -9 * 3600, "AKDT": -8 * 3600, "PST": -8 * 3600, "PDT": -7 * 3600,
	"MST": -7 * 3600, "MDT": -6 * 3600, "CST": -6 * 3600, "CDT": -5 * 3600, "EST": -5 * 3600, "EDT": -4 * 3600,
	"SGT": 8 * 3600, "HKT": 8 * 3600, "AWST": 8 * 3600, "JST": 9 * 3600, "KST": 9 * 3600,
	"ACST": 9*3600 + 1800, "ACDT": 10*3600 + 1800, "AEST": 10 * 3600, "AEDT": 11 * 3600,
	"NZST": 12 * 3600, "NZDT": 13 * 3600,
}

// Generic North American names follow daylight saving time, as their zones do.
var zoneGeneric = map[string]string{
	"PT": "America/Los_Angeles", "MT": "America/Denver", "CT": "America/Chicago", "ET": "America/New_York",
}

// zoneAt reads the zone after a clock, if any: the Reader's location where
// none is named. A zone named but not known is not guessed: ok is false.
func (r *Reader) zoneAt(c *scanner) (*time.Location, bool) {
	afterClock := c.i
	c.spaces()
	spaced := c.i > afterClock
	if c.word("(") {
		j := strings.IndexByte(c.s[c.i:], ')')
		if j <= 0 || j > 64 {
			return nil, false
		}
		name := c.s[c.i : c.i+j]
		c.i += j + 1
		z := loadZone(name)
		return z, z != nil
	}
	if name := c.i; c.word("utc") || c.word("gmt") {
		off, ok := offset(c)
		if !ok || c.i < len(c.s) && isLetter(c.s[c.i]) {
			return nil, false
		}
		if off == 0 {
			return time.UTC, true
		}
		return time.FixedZone(strings.ToUpper(c.s[name:c.i]), off), true
	}
	j := c.i
	for j < len(c.s) && 'A' <= c.s[j] && c.s[j] <= 'Z' {
		j++
	}
	if n := j - c.i; n >= 2 && n <= 5 && (j == len(c.s) || !isLetter(c.s[j])) {
		abbr := c.s[c.i:j]
		if off, ok := zoneAbbrevs[abbr]; ok {
			c.i = j
			return time.FixedZone(abbr, off), true
		}
		if name, ok := zoneGeneric[abbr]; ok {
			c.i = j
			z := loadZone(name)
			return z, z != nil
		}
		if spaced {
			return nil, false
		}
		// Capitals glued to the clock by a wrap are the next word, not a zone.
	}
	c.i = afterClock
	return r.loc, true
}

// offset reads "+5", "-3", "+5:30" after UTC or GMT; none is zero.
func offset(c *scanner) (int, bool) {
	if c.i >= len(c.s) || (c.s[c.i] != '+' && c.s[c.i] != '-') {
		return 0, true
	}
	sign := 1
	if c.s[c.i] == '-' {
		sign = -1
	}
	start := c.i
	c.i++
	h, ok := c.number(2)
	if !ok || h > 14 {
		c.i = start
		return 0, false
	}
	m := 0
	if c.word(":") {
		if m, ok = c.number(2); !ok || m > 59 {
			c.i = start
			return 0, false
		}
	}
	return sign * (h*3600 + m*60), true
}

var (
	zoneMu    sync.Mutex
	zoneCache = map[string]*time.Location{}
)

// loadZone resolves an IANA zone name; nil if it names none.
func loadZone(name string) *time.Location {
	for i := 0; i < len(name); i++ {
		b := name[i]
		if !isLetter(b) && !isDigit(b) && b != '/' && b != '_' && b != '+' && b != '-' {
			return nil
		}
	}
	zoneMu.Lock()
	defer zoneMu.Unlock()
	if z, ok := zoneCache[name]; ok {
		return z
	}
	z, err := time.LoadLocation(name)
	if err != nil || name == "" || name == "Local" {
		z = nil
	}
	if len(zoneCache) < 256 {
		zoneCache[name] = z
	}
	return z
}

// next is the first h:m in zone at or after the output's instant.
func (r *Reader) next(h, m int, zone *time.Location) time.Time {
	at := r.at.In(zone)
	t := time.Date(at.Year(), at.Month(), at.Day(), h, m, 0, 0, zone)
	if t.Before(at.Truncate(time.Minute)) {
		t = time.Date(at.Year(), at.Month(), at.Day()+1, h, m, 0, 0, zone)
	}
	return t
}

var delayUnits = []struct {
	name string
	unit time.Duration
}{
	{"days", 24 * time.Hour}, {"day", 24 * time.Hour}, {"d", 24 * time.Hour},
	{"hours", time.Hour}, {"hour", time.Hour}, {"hrs", time.Hour}, {"hr", time.Hour}, {"h", time.Hour},
	{"minutes", time.Minute}, {"minute", time.Minute}, {"mins", time.Minute}, {"min", time.Minute},
	{"ms", time.Millisecond}, {"m", time.Minute},
	{"seconds", time.Second}, {"second", time.Second}, {"secs", time.Second}, {"sec", time.Second}, {"s", time.Second},
}

// parseDelay reads "5 days 22 hours 11 minutes", "39.84s", "12h22m45s". A
// unit glued to the next word by a wrap ("hoursTo") still reads as the unit.
func parseDelay(s string) (time.Duration, bool) {
	var total time.Duration
	found := false
	for {
		s = strings.TrimLeft(s, " ,")
		s = strings.TrimPrefix(s, "and ")
		i := 0
		for i < len(s) && (isDigit(s[i]) || s[i] == '.') {
			i++
		}
		if i == 0 {
			break
		}
		n, err := strconv.ParseFloat(s[:i], 64)
		if err != nil {
			break
		}
		s = strings.TrimLeft(s[i:], " ")
		j := 0
		for j < len(s) && isLetter(s[j]) {
			j++
		}
		word := strings.ToLower(s[:j])
		var unit time.Duration
		for _, u := range delayUnits {
			if word == u.name {
				unit = u.unit
				break
			}
		}
		if unit == 0 && j > 0 {
			for _, u := range delayUnits {
				if len(u.name) > 2 && strings.HasPrefix(word, u.name) {
					unit, j = u.unit, len(u.name)
					break
				}
			}
		}
		if unit == 0 {
			return total, found
		}
		total += time.Duration(n * float64(unit))
		found = true
		s = s[j:]
	}
	return total, found
}
