package agentout

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// readUntil reads text as a whole output and returns the limit's instant.
func readUntil(text string, at time.Time, loc *time.Location) (time.Time, bool) {
	r := NewReader(KindAuto, at, loc)
	r.Write([]byte(text))
	l := r.Report().Limit
	if l == nil {
		return time.Time{}, false
	}
	return l.Until, true
}

// Each form of the grammar, as the agents word it.
func TestUntilGrammar(t *testing.T) {
	at := time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC) // a Thursday, 12:00 UTC
	for _, tc := range []struct{ msg, want string }{
		{"You've hit your limit · resets 5pm", "2026-01-15T17:00:00Z"},
		{"You've hit your limit · resets 11am", "2026-01-16T11:00:00Z"},
		{"You've hit your limit · resets 12am", "2026-01-16T00:00:00Z"},
		{"You've hit your limit · resets 4:10pm (America/Chicago)", "2026-01-15T22:10:00Z"},
		{"You've hit your limit · resets Dec 3 at 5pm", "2026-12-03T17:00:00Z"},
		{"You've hit your limit · resets Jan 14 at 5pm", "2026-01-14T17:00:00Z"}, // a day late, not a year early
		{"You've hit your limit · resets Oct 9, 4pm (America/Chicago)", "2026-10-09T21:00:00Z"},
		{"You've hit your limit · resets September 15 at 7:30pm", "2026-09-15T19:30:00Z"},
		{"You've hit your limit · resets tomorrow at 3pm", "2026-01-16T15:00:00Z"},
		{"Usage limit reached. Please try again at 3:45 PM", "2026-01-15T15:45:00Z"},
		{"You've hit your usage limit. Try again at 9:05", "2026-01-16T09:05:00Z"},
		{"You've hit your usage limit. Try again at Apr 28th, 2026 10:03 PM.", "2026-04-28T22:03:00Z"},
		{"You've hit your usage limit. Try again at 10 de jul. de 2026, 11:52.", "2026-07-10T11:52:00Z"},
		{"You're out of Codex messages. Your rate limit resets on Jul 12, 2026, 5:04 AM.", "2026-07-12T05:04:00Z"},
		{"You've hit your usage limit. Try again in 3h 2m.", "2026-01-15T15:02:00Z"},
		{"You've hit your usage limit. Try again in 5 days 22 hours 11 minutes.", "2026-01-21T10:11:00Z"},
		{"Quota exceeded. Please retry after 25s.", "2026-01-15T12:00:25Z"},
		{"429 Too Many Requests retrying in 59 minutes 12 seconds", "2026-01-15T12:59:12Z"},
		{"Monthly usage limit reached. It will reset in 10 days 19 hours.", "2026-01-26T07:00:00Z"},
		{"Claude AI usage limit reached|1750708800", "2025-06-23T20:00:00Z"},
		{`Error: {"error":{"type":"usage_limit_reached","resets_at":1775317531,"resets_in_seconds":602705}}`, "2026-04-04T15:45:31Z"},
		{"Usage limit reached for gemini-2.5-pro. Access resets at 10:55 PM UTC.", "2026-01-15T22:55:00Z"},
		{"Usage limit reached for gemini-2.5-pro. Access resets at 10:57 PM GMT-3.", "2026-01-16T01:57:00Z"},
		{"Usage limit reached for gemini-2.5-pro. Access resets at 1:30 AM GMT+5:30.", "2026-01-15T20:00:00Z"},
		// Not a statement of an instant.
		{"You've hit your usage limit. Upgrade to Pro, or wait for limits to reset (every 5h and every week.).", ""},
		{"429 rate limit exceeded. Please retry after a brief wait.", ""},
		{`Error: {"error":{"type":"usage_limit_reached","resets_in_seconds":602705,"X-Primary-Reset-At":"1775317531"}}`, ""},
		{"You've hit your limit · resets Feb 30 at 5pm", ""},
		{"You've hit your limit · resets 25:00", ""},
	} {
		got, limit := readUntil(tc.msg, at, time.UTC)
		if !limit {
			t.Errorf("%q: no limit read", tc.msg)
			continue
		}
		s := ""
		if !got.IsZero() {
			s = got.UTC().Format(time.RFC3339)
		}
		if s != tc.want {
			t.Errorf("%q: until %q, want %q", tc.msg, s, tc.want)
		}
	}
}

// A zone abbreviation is the fixed offset it names; PT follows daylight
// saving time as its zone does; one not known, or naming several zones, is
// not guessed.
func TestZoneAbbreviations(t *testing.T) {
	winter := time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC)
	summer := time.Date(2026, 7, 15, 12, 0, 0, 0, time.UTC)
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		msg  string
		at   time.Time
		want string // "" = no instant
	}{
		{"You've hit your limit · resets 5pm PST", winter, "2026-01-16T01:00:00Z"},
		{"You've hit your limit · resets 5pm PDT", summer, "2026-07-16T00:00:00Z"},
		{"You've hit your limit · resets 5pm PST", summer, "2026-07-16T01:00:00Z"}, // PST says -8, whatever the season
		{"You've hit your limit · resets 5pm PT", winter, "2026-01-16T01:00:00Z"},
		{"You've hit your limit · resets 5pm PT", summer, "2026-07-16T00:00:00Z"},
		{"You've hit your limit · resets 5pm EST", winter, "2026-01-15T22:00:00Z"},
		{"You've hit your limit · resets 5pm EDT", summer, "2026-07-15T21:00:00Z"},
		{"You've hit your limit · resets 5pm CET", winter, "2026-01-15T16:00:00Z"},
		{"You've hit your limit · resets 5pm UTC", winter, "2026-01-15T17:00:00Z"},
		{"You've hit your limit · resets 5pm GMT", winter, "2026-01-15T17:00:00Z"},
		{"You've hit your limit · resets 5pm XYZ", winter, ""},
		{"You've hit your limit · resets 5pm IST", winter, ""},
		{"You've hit your limit · resets 5pm (Mars/Olympus_Mons)", winter, ""},
	} {
		got, limit := readUntil(tc.msg, tc.at, berlin)
		if !limit {
			t.Errorf("%q: no limit read", tc.msg)
			continue
		}
		s := ""
		if !got.IsZero() {
			s = got.UTC().Format(time.RFC3339)
		}
		if s != tc.want {
			t.Errorf("%q at %s: until %q, want %q", tc.msg, tc.at.Format("Jan"), s, tc.want)
		}
	}
}

// wrap breaks s every width runes, mid-word, as a terminal does.
func wrap(s string, width int) string {
	var b strings.Builder
	n := 0
	for _, r := range s {
		if r == '\n' {
			n = 0
		} else if n == width {
			b.WriteByte('\n')
			n = 0
		}
		b.WriteRune(r)
		if r != '\n' {
			n++
		}
	}
	return b.String()
}

// A limit message wrapped at any width from 20 to 120 columns, mid-word or
// at a blank, states the same instant as unwrapped. The seeds are the real
// samples that state one.
func FuzzWrappedLimit(f *testing.F) {
	files, _ := filepath.Glob("testdata/real/*.txt")
	for _, file := range files {
		w, ok := realWants[filepath.Base(file)]
		if !ok || w.until == "" {
			continue
		}
		if data, err := os.ReadFile(file); err == nil {
			f.Add(string(data), w.at, w.loc)
		}
	}
	f.Fuzz(func(t *testing.T, text, at, zone string) {
		when, err := time.Parse(time.RFC3339, at)
		if err != nil || !utf8.ValidString(text) || len(text) > 1000 {
			return
		}
		loc := time.UTC
		if zone != "" {
			if loc, err = time.LoadLocation(zone); err != nil {
				return
			}
		}
		want, limit := readUntil(text, when, loc)
		if !limit || want.IsZero() {
			return
		}
		for width := 20; width <= 120; width++ {
			wrapped := wrap(text, width)
			got, limit := readUntil(wrapped, when, loc)
			if !limit || !got.Equal(want) {
				t.Fatalf("wrapped at %d columns: until %v (limit %v), unwrapped %v\n%s", width, got, limit, want, wrapped)
			}
		}
	})
}
