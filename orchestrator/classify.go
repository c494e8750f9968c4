package orchestrator

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/config"
	"github.com/autoretry/orchestrator/internal/foundations/lazyre"
	"github.com/autoretry/orchestrator/internal/foundations/procgroup"
)

// Classes of a failed loop besides ResultPermanent.
const (
	classTransient = "transient"
	classRateLimit = "rate_limit"
)

// classify matches a failed loop's exit status and output tail against the
// [classify] patterns: ResultPermanent, classRateLimit, classTransient or
// "" (an ordinary failure), and the pattern that matched.
func classify(cfg *config.Config, res procgroup.Result) (string, string) {
	if res.ExitCode == 126 || res.ExitCode == 127 {
		return ResultPermanent, "exit status " + strconv.Itoa(res.ExitCode)
	}
	c := cfg.Classify
	if p, ok := c.MatchPermanent(res.Tail); ok {
		return ResultPermanent, p
	}
	if p, ok := c.MatchRateLimit(res.Tail); ok {
		return classRateLimit, p
	}
	if p, ok := c.MatchTransient(res.Tail); ok {
		return classTransient, p
	}
	return "", ""
}

// backoffDelay returns the delay before try n+1 after n failed tries (n ≥ 1):
// Base·Factor^(n-1), capped at Max, plus up to Jitter of itself; r is a
// random number in [0, 1).
func backoffDelay(b config.Backoff, n int, r float64) time.Duration {
	d := float64(b.Base) * math.Pow(b.Factor, float64(n-1))
	if d > float64(b.Max) {
		d = float64(b.Max)
	}
	return time.Duration(d + d*b.Jitter*r)
}

// Retry hints in the wordings agent CLIs and HTTP APIs print. They are
// compiled the first time a hint is looked for, not when the program
// starts: most commands never read an agent's output.
var (
	retryAfterRe = lazyre.New(`(?i)retry[- ]after[:= ]+(\d+)\s*(ms|s|secs?|seconds?|m|mins?|minutes?|h|hours?)?\b`)
	tryAgainRe   = lazyre.New(`(?i)try again in (\d+)\s*(ms|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?)\b`)
	// "resets 3pm (Europe/Dublin)", "resets at 3:45 PM", "will reset at
	// 9am (America/Chicago)", "resets at 15:00".
	resetsRe = lazyre.New(`(?i)\bresets?(?:\s+at)?\s+(\d{1,2})(?::(\d{2}))?\s*([ap]\.?m\.?)?(?:\s*\(([A-Za-z_]+(?:/[A-Za-z_+\-]+)*)\))?`)
	// "Claude AI usage limit reached|1762952400": the reset as a Unix time.
	epochRe = lazyre.New(`(?i)limit reached\|(\d{9,11})\b`)
)

// maxHint bounds a reset hint: no limit of these services resets later than
// a week ahead, and a misread number must not stop loops for longer.
const maxHint = 7 * 24 * time.Hour

// RetryHint reads how long to wait from a rate-limit message in a loop's
// output: "Retry-After: 120", "try again in 20 minutes", "resets 3pm
// (Europe/Dublin)", "resets at 3:45 PM", "usage limit reached|1762952400".
// A clock time without a zone is the machine's local time; a time already
// past today is tomorrow's. The last hint in the output wins.
func RetryHint(out []byte, now time.Time) (time.Duration, bool) {
	type hit struct {
		at int
		d  time.Duration
	}
	var best *hit
	consider := func(at int, d time.Duration) {
		if d < 0 {
			return
		}
		if best == nil || at >= best.at {
			best = &hit{at, min(d, maxHint)}
		}
	}
	for _, m := range retryAfterRe().FindAllSubmatchIndex(out, -1) {
		n, _ := strconv.Atoi(string(out[m[2]:m[3]]))
		unit := ""
		if m[4] >= 0 {
			unit = string(out[m[4]:m[5]])
		}
		consider(m[0], time.Duration(n)*durationUnit(unit, time.Second))
	}
	for _, m := range tryAgainRe().FindAllSubmatchIndex(out, -1) {
		n, _ := strconv.Atoi(string(out[m[2]:m[3]]))
		consider(m[0], time.Duration(n)*durationUnit(string(out[m[4]:m[5]]), time.Second))
	}
	for _, m := range epochRe().FindAllSubmatchIndex(out, -1) {
		sec, _ := strconv.ParseInt(string(out[m[2]:m[3]]), 10, 64)
		consider(m[0], time.Unix(sec, 0).Sub(now))
	}
	for _, m := range resetsRe().FindAllSubmatchIndex(out, -1) {
		group := func(i int) string {
			if m[2*i] < 0 {
				return ""
			}
			return string(out[m[2*i]:m[2*i+1]])
		}
		hour, _ := strconv.Atoi(group(1))
		minute, ampm, zone := 0, strings.ToLower(strings.ReplaceAll(group(3), ".", "")), group(4)
		if group(2) == "" && ampm == "" {
			continue // "resets 3 times" is no clock time
		}
		if group(2) != "" {
			minute, _ = strconv.Atoi(group(2))
		}
		switch {
		case ampm == "pm" && hour < 12:
			hour += 12
		case ampm == "am" && hour == 12:
			hour = 0
		}
		if hour > 23 || minute > 59 {
			continue
		}
		loc := time.Local
		if zone != "" {
			if l, err := time.LoadLocation(zone); err == nil {
				loc = l
			}
		}
		t := now.In(loc)
		at := time.Date(t.Year(), t.Month(), t.Day(), hour, minute, 0, 0, loc)
		if !at.After(t) {
			at = at.AddDate(0, 0, 1)
		}
		consider(m[0], at.Sub(now))
	}
	if best == nil {
		return 0, false
	}
	return best.d, true
}

func durationUnit(u string, def time.Duration) time.Duration {
	switch u = strings.ToLower(u); {
	case u == "ms":
		return time.Millisecond
	case u == "":
		return def
	case u[0] == 's':
		return time.Second
	case u[0] == 'm':
		return time.Minute
	case u[0] == 'h':
		return time.Hour
	}
	return def
}
