package orchestrator

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/config"
)

// The guard keeps an edit of config.toml made during a loop, whoever made
// it, if every value it changes is tightened: a limit that stops loops
// sooner. For each key below, the direction that tightens is known; a
// change of any other key, a key removed or a file that does not load is
// a loosening, and the whole file is restored.

// configLimit is one key whose tightening direction is known.
type configLimit struct {
	key string
	// get reads the value; set copies it from one configuration to another.
	get func(*config.Config) float64
	set func(dst, src *config.Config)
	// lower: a lower value tightens, else a higher one does. zeroOff: 0
	// turns the limit off, the loosest value of all.
	lower, zeroOff bool
}

// limitOf is the configLimit of key, whose value p points at in a
// configuration; every limit is a whole number, a duration or a float.
func limitOf[T int | time.Duration | float64](key string, p func(*config.Config) *T, lower, zeroOff bool) configLimit {
	return configLimit{key: key, get: func(c *config.Config) float64 { return float64(*p(c)) },
		set: func(d, s *config.Config) { *p(d) = *p(s) }, lower: lower, zeroOff: zeroOff}
}

var configLimits = []configLimit{
	limitOf("loop.timeout", func(c *config.Config) *time.Duration { return &c.Loop.Timeout }, true, true),
	limitOf("loop.max_loops", func(c *config.Config) *int { return &c.Loop.MaxLoops }, true, false),
	limitOf("auto_retry.global_cap", func(c *config.Config) *int { return &c.AutoRetry.GlobalCap }, true, false),
	limitOf("auto_retry.max_retries", func(c *config.Config) *int { return &c.AutoRetry.MaxRetries }, true, false),
	limitOf("auto_retry.halt_after_repeats", func(c *config.Config) *int { return &c.AutoRetry.HaltAfterRepeats }, true, false),
	limitOf("backoff.base", func(c *config.Config) *time.Duration { return &c.Backoff.Base }, false, false),
	limitOf("backoff.factor", func(c *config.Config) *float64 { return &c.Backoff.Factor }, false, false),
	limitOf("backoff.max", func(c *config.Config) *time.Duration { return &c.Backoff.Max }, false, false),
	limitOf("backoff.attempts", func(c *config.Config) *int { return &c.Backoff.Attempts }, true, false),
	limitOf("backoff.rate_limit_attempts", func(c *config.Config) *int { return &c.Backoff.RateLimitAttempts }, true, false),
	limitOf("budget.loops_per_day", func(c *config.Config) *int { return &c.Budget.LoopsPerDay }, true, true),
	limitOf("budget.auto_retry_loops_per_day", func(c *config.Config) *int { return &c.Budget.AutoRetryLoopsPerDay }, true, true),
	limitOf("budget.agent_time_per_day", func(c *config.Config) *time.Duration { return &c.Budget.AgentTimePerDay }, true, true),
	limitOf("budget.cost_per_day", func(c *config.Config) *float64 { return &c.Budget.CostPerDay }, true, true),
	limitOf("budget.tokens_per_day", func(c *config.Config) *int { return &c.Budget.TokensPerDay }, true, true),
	limitOf("budget.issue_cost", func(c *config.Config) *float64 { return &c.Budget.IssueCost }, true, true),
	limitOf("budget.issue_tokens", func(c *config.Config) *int { return &c.Budget.IssueTokens }, true, true),
	limitOf("budget.issue_agent_time", func(c *config.Config) *time.Duration { return &c.Budget.IssueAgentTime }, true, true),
	limitOf("progress.spend_cost", func(c *config.Config) *float64 { return &c.Progress.SpendCost }, true, true),
	limitOf("progress.spend_tokens", func(c *config.Config) *int { return &c.Progress.SpendTokens }, true, true),
	limitOf("progress.spend_agent_time", func(c *config.Config) *time.Duration { return &c.Progress.SpendAgentTime }, true, true),
	limitOf("loop.idle_timeout", func(c *config.Config) *time.Duration { return &c.Loop.IdleTimeout }, true, true),
	limitOf("circuit_breaker.threshold", func(c *config.Config) *int { return &c.CircuitBreaker.Threshold }, true, false),
	limitOf("circuit_breaker.cooldown", func(c *config.Config) *time.Duration { return &c.CircuitBreaker.Cooldown }, false, false),
	limitOf("stall.loops", func(c *config.Config) *int { return &c.Stall.Loops }, true, false),
	limitOf("cascade.threshold", func(c *config.Config) *int { return &c.Cascade.Threshold }, true, false),
	limitOf("cascade.window", func(c *config.Config) *int { return &c.Cascade.Window }, false, false),
}

// tightens says whether a change of l from a to b tightens (or keeps) it.
func (l configLimit) tightens(a, b float64) bool {
	switch {
	case a == b:
		return true
	case l.zeroOff && b == 0:
		return false
	case l.zeroOff && a == 0:
		return true
	case l.lower:
		return b < a
	default:
		return b > a
	}
}

// configLoosens compares two versions of config.toml and returns the
// changes that loosen, none if every change tightens. The environment
// plays no part: both are read as files.
func configLoosens(before, after []byte) []string {
	a, aerr := config.Parse(config.Layer{File: "config.toml", Data: before})
	b, berr := config.Parse(config.Layer{File: "config.toml", Data: after})
	switch {
	case berr != nil:
		return []string{"the file does not load: " + firstLine(berr.Error())}
	case aerr != nil:
		return []string{"the file before the loop did not load either"}
	}
	var loose []string
	for _, l := range configLimits {
		x, y := l.get(a), l.get(b)
		if !l.tightens(x, y) {
			loose = append(loose, fmt.Sprintf("%s %v → %v", l.key, l.format(x), l.format(y)))
		}
		l.set(b, a) // what is left to compare is every other key
	}
	types := map[string]bool{}
	for t := range a.AutoRetry.MaxRetriesByType {
		types[t] = true
	}
	for t := range b.AutoRetry.MaxRetriesByType {
		types[t] = true
	}
	names := make([]string, 0, len(types))
	for t := range types {
		names = append(names, t)
	}
	slices.Sort(names)
	for _, t := range names {
		if x, y := a.MaxRetriesFor(t), b.MaxRetriesFor(t); y > x {
			loose = append(loose, fmt.Sprintf("auto_retry.max_retries_by_type.%s %d → %d", t, x, y))
		}
	}
	b.AutoRetry.MaxRetriesByType = a.AutoRetry.MaxRetriesByType
	if !reflect.DeepEqual(a, b) {
		loose = append(loose, "a key whose change the guard does not count as tightening")
	}
	return loose
}

func (l configLimit) format(v float64) string {
	if strings.HasSuffix(l.key, "timeout") || strings.HasSuffix(l.key, "cooldown") || strings.HasSuffix(l.key, "_time_per_day") ||
		l.key == "backoff.base" || l.key == "backoff.max" {
		return time.Duration(v).String()
	}
	return fmt.Sprint(v)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
