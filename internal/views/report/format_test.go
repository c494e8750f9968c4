package report

import (
	"testing"
	"time"
)

func TestDuration(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{-time.Second, "0s"},
		{0, "0s"},
		{1499 * time.Millisecond, "1s"},
		{59 * time.Second, "59s"},
		{time.Minute, "1m"},
		{65 * time.Second, "1m 5s"},
		{time.Hour, "1h"},
		{65 * time.Minute, "1h 5m"},
		{24*time.Hour + 20*time.Minute, "24h 20m"},
		{47*time.Hour + 59*time.Minute, "47h 59m"},
		{48 * time.Hour, "2d"},
		{50 * time.Hour, "2d 2h"},
	} {
		if got := duration(tc.d); got != tc.want {
			t.Errorf("duration(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

func TestPct(t *testing.T) {
	for _, tc := range []struct {
		part, whole int
		want        string
	}{{0, 0, "–"}, {0, 5, "0%"}, {1, 7, "14%"}, {1, 2, "50%"}, {2, 3, "67%"}, {5, 5, "100%"}} {
		if got := pct(tc.part, tc.whole); got != tc.want {
			t.Errorf("pct(%d, %d) = %q, want %q", tc.part, tc.whole, got, tc.want)
		}
	}
}

// Streaks are runs of one signature in a row; an empty signature never
// repeats, and only the final streak of a halted issue halted it.
func TestStreaks(t *testing.T) {
	f := func(sigs ...string) []failure {
		var out []failure
		for _, s := range sigs {
			out = append(out, failure{Signature: s})
		}
		return out
	}
	is := &issue{Halted: true, Failures: f("a", "a", "b", "", "", "c", "c", "c")}
	got := streaksOf(is)
	if len(got) != 2 {
		t.Fatalf("%d streaks, want 2: %+v", len(got), got)
	}
	if got[0].Signature != "a" || got[0].Len != 2 || got[0].Halted {
		t.Errorf("first streak %+v, want a×2 not halting", got[0])
	}
	if got[1].Signature != "c" || got[1].Len != 3 || !got[1].Halted || got[1].last != 7 {
		t.Errorf("second streak %+v, want c×3 halting, ending at 7", got[1])
	}
	if got, want := is.longestStreak(), 3; got != want {
		t.Errorf("longest streak %d, want %d", got, want)
	}
	if got, want := (&issue{Failures: f("x")}).longestStreak(), 1; got != want {
		t.Errorf("one failure: longest streak %d, want %d", got, want)
	}
}
