package orchestrator

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// The active hours gate every loop start, read on the wall clock of their
// zone across a daylight-saving change: both sides of each boundary, a
// range across midnight, and both kinds of loop.
func TestActiveHours(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no tz database:", err)
	}
	at := func(y int, m time.Month, d, h, min, s int) time.Time { return time.Date(y, m, d, h, min, s, 0, ny) }
	q, _ := parse(t, issueMD("ISSUE-20261122-001", "Auto-Retry=true"), "")
	tests := []struct {
		name  string
		hours []string
		kind  string
		now   time.Time
		stop  bool
		next  time.Time // when it stops: when it lifts
	}{
		{"no hours: always", nil, KindRegular, at(2026, 3, 7, 3, 0, 0), false, time.Time{}},
		{"Friday 08:59:59 EST", []string{"Mon-Fri 09:00-18:00"}, KindRegular, at(2026, 3, 6, 8, 59, 59), true, at(2026, 3, 6, 9, 0, 0)},
		{"Friday 09:00 EST", []string{"Mon-Fri 09:00-18:00"}, KindRegular, at(2026, 3, 6, 9, 0, 0), false, time.Time{}},
		{"Friday 17:59:59", []string{"Mon-Fri 09:00-18:00"}, KindRegular, at(2026, 3, 6, 17, 59, 59), false, time.Time{}},
		{"Friday 18:00: Monday next, after the change", []string{"Mon-Fri 09:00-18:00"}, KindRegular, at(2026, 3, 6, 18, 0, 0), true, at(2026, 3, 9, 9, 0, 0)},
		{"an auto-retry loop too", []string{"Mon-Fri 09:00-18:00"}, KindAutoRetry, at(2026, 3, 6, 18, 0, 0), true, at(2026, 3, 9, 9, 0, 0)},
		{"Monday 08:59 EDT", []string{"Mon-Fri 09:00-18:00"}, KindRegular, at(2026, 3, 9, 8, 59, 0), true, at(2026, 3, 9, 9, 0, 0)},
		{"Monday 09:30 EDT", []string{"Mon-Fri 09:00-18:00"}, KindRegular, at(2026, 3, 9, 9, 30, 0), false, time.Time{}},
		{"across midnight: 01:59", []string{"22:00-02:00"}, KindRegular, at(2026, 3, 7, 1, 59, 0), false, time.Time{}},
		{"across midnight: 02:00", []string{"22:00-02:00"}, KindRegular, at(2026, 3, 7, 2, 0, 0), true, at(2026, 3, 7, 22, 0, 0)},
		{"across midnight: 21:59", []string{"22:00-02:00"}, KindRegular, at(2026, 3, 7, 21, 59, 0), true, at(2026, 3, 7, 22, 0, 0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, st := parse(t, "", stateMD(0, true))
			in := testInputs(q, st)
			in.Config.Schedule.ActiveHours, in.Config.Schedule.Timezone = tt.hours, "America/New_York"
			in.Now = tt.now
			v := ruleActiveHours(in)
			if v.Stop != tt.stop {
				t.Fatalf("stop = %v, want %v (%+v)", v.Stop, tt.stop, v)
			}
			_, stop := Gate(in, tt.kind)
			if got := stop != nil && stop.Rule == CodeOutsideActiveHours; got != tt.stop {
				t.Errorf("Gate stops for the hours = %v, want %v", got, tt.stop)
			}
			// A loop run again after a transient failure has started: the
			// hours do not cut it.
			in.ReRun = true
			if _, stop := Gate(in, tt.kind); stop != nil && stop.Rule == CodeOutsideActiveHours {
				t.Error("Gate stops a re-run of a started loop for the hours")
			}
			if !tt.stop {
				return
			}
			if !v.Until.Equal(tt.next) || !v.Wait {
				t.Errorf("until %s wait %v, want %s and a wait", v.Until, v.Wait, tt.next)
			}
			if want := "the next loop may start at " + tt.next.Format("Mon Jan 2 15:04 MST"); !strings.Contains(v.Reason, want) {
				t.Errorf("reason %q does not say %q", v.Reason, want)
			}
			if NeedsPerson(v.Rule) {
				t.Error("outside the active hours needs a person")
			}
		})
	}
}

// A stop that lifts by itself outside the active hours lifts at their next
// start: the later of the two.
func TestRateLimitLiftsInActiveHours(t *testing.T) {
	q, _ := parse(t, issueMD("ISSUE-20261122-001", "Auto-Retry=true"), "")
	_, st := parse(t, "", stateMD(0, true))
	in := testInputs(q, st)
	in.Config.Schedule.ActiveHours, in.Config.Schedule.Timezone = []string{"09:00-18:00"}, "UTC"
	in.Now = time.Date(2026, 11, 23, 17, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		limited, want time.Time
	}{
		{in.Now.Add(30 * time.Minute), in.Now.Add(30 * time.Minute)},
		{in.Now.Add(2 * time.Hour), time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)},
	} {
		st.LimitedUntil = tt.limited
		_, stop := Gate(in, KindRegular)
		if stop == nil || stop.Rule != CodeRateLimited {
			t.Fatalf("stop %+v, want rate_limited", stop)
		}
		if !stop.Until.Equal(tt.want) {
			t.Errorf("window until %s: lifts at %s, want %s", tt.limited, stop.Until, tt.want)
		}
	}
}

// window_pace: a loop starts while the share used of each reported window
// is at most the share elapsed plus 0.2; the tighter window decides.
func TestWindowPace(t *testing.T) {
	q, _ := parse(t, issueMD("ISSUE-20261122-001", "Auto-Retry=true"), "")
	// Of a 5-hour window resetting in 3 hours, 40% has elapsed; of a week
	// resetting in 3.5 days, half.
	five := func(used float64) WindowReport {
		return WindowReport{Name: "five_hour", Used: used, Reset: testNow.Add(3 * time.Hour)}
	}
	week := func(used float64) WindowReport {
		return WindowReport{Name: "seven_day", Used: used, Reset: testNow.Add(84 * time.Hour)}
	}
	tests := []struct {
		name    string
		on      bool
		windows []WindowReport
		stop    bool
		until   time.Time
	}{
		{"off", false, []WindowReport{five(0.9)}, false, time.Time{}},
		{"none reported", true, nil, false, time.Time{}},
		{"five_hour at elapsed + 0.2", true, []WindowReport{five(0.6)}, false, time.Time{}},
		{"five_hour above it", true, []WindowReport{five(0.61)}, true, testNow.Add(3 * time.Minute)}, // 41% elapsed: 1% of 5 hours on
		{"week at pace", true, []WindowReport{week(0.7)}, false, time.Time{}},
		{"week above it", true, []WindowReport{week(0.8)}, true, testNow.Add(84*time.Hour - time.Duration(0.4*float64(7*24*time.Hour)))},
		{"the tighter decides", true, []WindowReport{five(0.7), week(0.8)}, true, testNow.Add(84*time.Hour - time.Duration(0.4*float64(7*24*time.Hour)))},
		{"all used: once 80% has elapsed", true, []WindowReport{five(1)}, true, testNow.Add(2 * time.Hour)},
		{"a window that has reset", true, []WindowReport{{Name: "five_hour", Used: 1, Reset: testNow}}, false, time.Time{}},
		{"a window of unknown length", true, []WindowReport{{Name: "monthly", Used: 1, Reset: testNow.Add(time.Hour)}}, false, time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, st := parse(t, "", stateMD(0, true))
			in := testInputs(q, st)
			in.Config.Budget.WindowPace = tt.on
			if tt.windows != nil {
				in.Usage.Execs = []Exec{{At: testNow.Add(-time.Minute), Kind: KindRegular, Windows: tt.windows}}
			}
			v := ruleWindowPace(in)
			if v.Stop != tt.stop {
				t.Fatalf("stop = %v, want %v (%+v)", v.Stop, tt.stop, v)
			}
			if !tt.stop {
				return
			}
			if d := v.Until.Sub(tt.until); d > time.Second || d < -time.Second {
				t.Errorf("until %s, want %s", v.Until, tt.until)
			}
			if !v.Wait || !strings.Contains(v.Reason, "elapsed") || !strings.Contains(v.Reason, "the next loop may start at") {
				t.Errorf("verdict %+v: want a wait whose reason says the share used, elapsed and the next loop", v)
			}
			if _, stop := Gate(in, KindRegular); stop == nil || stop.Rule != CodeWindowPace {
				t.Errorf("Gate stop %+v, want window_pace", stop)
			}
		})
	}
}

// An event log that cannot be read stops loops; it never reads as nothing
// spent.
func TestBudgetUnreadable(t *testing.T) {
	q, _ := parse(t, issueMD("ISSUE-20261122-001", "Auto-Retry=true"), "")
	_, st := parse(t, "", stateMD(0, true))
	in := testInputs(q, st)
	if _, stop := Gate(in, KindRegular); stop != nil {
		t.Fatalf("a readable log stops: %+v", stop)
	}
	in.Usage.Unreadable = &UnreadableLogError{File: "logs/retry.jsonl", Line: 7, Err: errors.New("invalid character")}
	_, stop := Gate(in, KindRegular)
	if stop == nil || stop.Rule != CodeBudgetUnreadable || stop.Wait {
		t.Fatalf("stop %+v, want budget_unreadable that needs a person", stop)
	}
	if !strings.Contains(stop.Hint, "line 7 of logs/retry.jsonl") {
		t.Errorf("hint %q does not name the line", stop.Hint)
	}
}
