package config

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"regexp/syntax"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/autoretry/orchestrator/internal/foundations/schedule"
	"github.com/autoretry/orchestrator/internal/foundations/suggest"
)

// checkActiveHours checks one entry of schedule.active_hours.
func checkActiveHours(s string) error {
	_, err := schedule.Parse([]string{s}, "UTC")
	var se *schedule.Error
	if errors.As(err, &se) {
		return errors.New(se.Msg)
	}
	return err
}

// checkTimezone checks schedule.timezone: an IANA zone, UTC or Local.
func checkTimezone(s string) error {
	_, err := schedule.Parse(nil, s)
	var ze *schedule.ZoneError
	if errors.As(err, &ze) {
		return fmt.Errorf("%q is not a known time zone (want an IANA name such as America/New_York, or UTC or Local)", s)
	}
	return err
}

// A setting is one key: how to set it from a decoded TOML value (the file)
// and from text (the environment and flags). Both validate before they
// assign, so a rejected value leaves the Config unchanged. Their errors do
// not name the key; the caller adds it.
type setting struct {
	key      string
	fromTOML func(c *Config, v any) error
	fromText func(c *Config, s string) error
}

// fixedSettings are the keys whose names do not depend on the file. Their
// defaults live in Default.
var fixedSettings = []setting{
	stringKey("loop.command", nil, func(c *Config, s string) { c.Loop.Command = s }),
	durationKey("loop.timeout", func(c *Config, d time.Duration) { c.Loop.Timeout = d }),
	intKey("loop.max_loops", 1, func(c *Config, n int) { c.Loop.MaxLoops = n }),
	durationKey("loop.kill_grace", func(c *Config, d time.Duration) { c.Loop.KillGrace = d }),
	offDurationKey("loop.idle_timeout", func(c *Config, d time.Duration) { c.Loop.IdleTimeout = d }),

	intKey("auto_retry.global_cap", 0, func(c *Config, n int) { c.AutoRetry.GlobalCap = n }),
	intKey("auto_retry.max_retries", 0, func(c *Config, n int) { c.AutoRetry.MaxRetries = n }),
	intKey("auto_retry.halt_after_repeats", 1, func(c *Config, n int) { c.AutoRetry.HaltAfterRepeats = n }),
	boolKey("auto_retry.progress_resets", func(c *Config, b bool) { c.AutoRetry.ProgressResets = b }),

	stringKey("signature.normalize", oneOf("v3", "v2", "v1", "off"), func(c *Config, s string) { c.Signature.Normalize = s }),
	listKey("signature.extra_patterns", checkRegexp, func(c *Config, l []string) { c.Signature.ExtraPatterns = l }),

	durationKey("backoff.base", func(c *Config, d time.Duration) { c.Backoff.Base = d }),
	floatKey("backoff.factor", 1, math.Inf(1), func(c *Config, f float64) { c.Backoff.Factor = f }),
	durationKey("backoff.max", func(c *Config, d time.Duration) { c.Backoff.Max = d }),
	floatKey("backoff.jitter", 0, 1, func(c *Config, f float64) { c.Backoff.Jitter = f }),
	intKey("backoff.attempts", 1, func(c *Config, n int) { c.Backoff.Attempts = n }),
	intKey("backoff.rate_limit_attempts", 1, func(c *Config, n int) { c.Backoff.RateLimitAttempts = n }),
	durationKey("backoff.max_wait", func(c *Config, d time.Duration) { c.Backoff.MaxWait = d }),

	listKey("classify.transient", checkPattern, func(c *Config, l []string) { c.Classify.Transient = l }),
	listKey("classify.permanent", checkPattern, func(c *Config, l []string) { c.Classify.Permanent = l }),
	listKey("classify.rate_limit", checkPattern, func(c *Config, l []string) { c.Classify.RateLimit = l }),

	intKey("budget.loops_per_day", 0, func(c *Config, n int) { c.Budget.LoopsPerDay = n }),
	intKey("budget.auto_retry_loops_per_day", 0, func(c *Config, n int) { c.Budget.AutoRetryLoopsPerDay = n }),
	durationKey("budget.agent_time_per_day", func(c *Config, d time.Duration) { c.Budget.AgentTimePerDay = d }),
	floatKey("budget.cost_per_day", 0, math.Inf(1), func(c *Config, f float64) { c.Budget.CostPerDay = f }),
	stringKey("budget.cost_pattern", checkCostPattern, func(c *Config, s string) { c.Budget.CostPattern = s }),
	intKey("budget.issues_filed_per_day", 0, func(c *Config, n int) { c.Budget.IssuesFiledPerDay = n }),

	intKey("circuit_breaker.threshold", 1, func(c *Config, n int) { c.CircuitBreaker.Threshold = n }),
	durationKey("circuit_breaker.cooldown", func(c *Config, d time.Duration) { c.CircuitBreaker.Cooldown = d }),
	intKey("stall.loops", 1, func(c *Config, n int) { c.Stall.Loops = n }),
	intKey("cascade.threshold", 1, func(c *Config, n int) { c.Cascade.Threshold = n }),
	intKey("cascade.window", 1, func(c *Config, n int) { c.Cascade.Window = n }),

	intKey("tiers.same_agent", 0, func(c *Config, n int) { c.Tiers.SameAgent = n }),
	intKey("tiers.fresh_agent", 0, func(c *Config, n int) { c.Tiers.FreshAgent = n }),
	stringKey("tiers.model", nil, func(c *Config, s string) { c.Tiers.Model = s }),
	stringKey("tiers.escalation_model", nil, func(c *Config, s string) { c.Tiers.EscalationModel = s }),

	boolKey("verify.allow_issue_commands", func(c *Config, b bool) { c.Verification.AllowIssueCommands = b }),

	durationKey("logs.text_retention", func(c *Config, d time.Duration) { c.Logs.TextRetention = d }),
	durationKey("logs.jsonl_retention", func(c *Config, d time.Duration) { c.Logs.JSONLRetention = d }),
	intKey("logs.history_keep", 0, func(c *Config, n int) { c.Logs.HistoryKeep = n }),

	stringKey("metrics.textfile", nil, func(c *Config, s string) { c.Metrics.Textfile = s }),

	stringKey("notify.command", nil, func(c *Config, s string) { c.Notify.Command = s }),

	stringKey("agent.kind", oneOf("auto", "claude", "codex", "gemini", "aider", "opencode", "none"), func(c *Config, s string) { c.Agent.Kind = s }),
	intKey("budget.tokens_per_day", 0, func(c *Config, n int) { c.Budget.TokensPerDay = n }),
	floatKey("budget.window_share", 0, 1, func(c *Config, f float64) { c.Budget.WindowShare = f }),
	floatKey("budget.issue_cost", 0, math.Inf(1), func(c *Config, f float64) { c.Budget.IssueCost = f }),
	intKey("budget.issue_tokens", 0, func(c *Config, n int) { c.Budget.IssueTokens = n }),
	offDurationKey("budget.issue_agent_time", func(c *Config, d time.Duration) { c.Budget.IssueAgentTime = d }),
	boolKey("budget.reserve", func(c *Config, b bool) { c.Budget.Reserve = b }),
	boolKey("budget.window_pace", func(c *Config, b bool) { c.Budget.WindowPace = b }),
	floatKey("progress.spend_cost", 0, math.Inf(1), func(c *Config, f float64) { c.Progress.SpendCost = f }),
	intKey("progress.spend_tokens", 0, func(c *Config, n int) { c.Progress.SpendTokens = n }),
	offDurationKey("progress.spend_agent_time", func(c *Config, d time.Duration) { c.Progress.SpendAgentTime = d }),
	listKey("schedule.active_hours", checkActiveHours, func(c *Config, l []string) { c.Schedule.ActiveHours = l }),
	stringKey("schedule.timezone", checkTimezone, func(c *Config, s string) { c.Schedule.Timezone = s }),
	boolKey("progress.enabled", func(c *Config, b bool) { c.Progress.Enabled = b }),
	intKey("progress.idle_loops", 0, func(c *Config, n int) { c.Progress.IdleLoops = n }),
	intKey("progress.loops", 0, func(c *Config, n int) { c.Progress.Loops = n }),
	stringKey("notify.heartbeat", nil, func(c *Config, s string) { c.Notify.Heartbeat = s }),

	stringKey("shared_budget.dir", nil, func(c *Config, s string) { c.SharedBudget.Dir = s }),
	intKey("shared_budget.loops_per_day", 0, func(c *Config, n int) { c.SharedBudget.LoopsPerDay = n }),
	intKey("shared_budget.auto_retry_loops_per_day", 0, func(c *Config, n int) { c.SharedBudget.AutoRetryLoopsPerDay = n }),
	offDurationKey("shared_budget.agent_time_per_day", func(c *Config, d time.Duration) { c.SharedBudget.AgentTimePerDay = d }),
	floatKey("shared_budget.cost_per_day", 0, math.Inf(1), func(c *Config, f float64) { c.SharedBudget.CostPerDay = f }),
	intKey("shared_budget.tokens_per_day", 0, func(c *Config, n int) { c.SharedBudget.TokensPerDay = n }),
}

// sections are the tables of the file, in the order of the documented reference.
var sections = []string{"loop", "auto_retry", "signature", "backoff", "classify", "budget",
	"circuit_breaker", "stall", "cascade", "tiers", "verify", "logs", "metrics", "notify", "agent", "progress",
	"shared_budget", "schedule"}

const (
	byTypeTable = "max_retries_by_type"
	byTypeKey   = "auto_retry." + byTypeTable
)

// checkKeys are the keys of a [verify.NAME] table.
var checkKeys = []string{"command", "timeout"}

var fixedByKey = func() map[string]setting {
	m := make(map[string]setting, len(fixedSettings))
	for _, s := range fixedSettings {
		m[s.key] = s
	}
	return m
}()

// fixedKeys returns the keys of fixedSettings, sorted.
func fixedKeys() []string {
	keys := make([]string, 0, len(fixedSettings))
	for _, s := range fixedSettings {
		keys = append(keys, s.key)
	}
	sort.Strings(keys)
	return keys
}

// lookup finds the setting for a dotted key, including the entries of the
// open tables. A by-type entry may be new; a check key needs the check to
// exist unless it sets the command, which creates the check.
func (c *Config) lookup(key string) (setting, error) {
	if s, ok := fixedByKey[key]; ok {
		return s, nil
	}
	if typ, ok := strings.CutPrefix(key, byTypeKey+"."); ok && strings.TrimSpace(typ) != "" {
		return byTypeSetting(key, typ), nil
	}
	if rest, ok := strings.CutPrefix(key, "verify."); ok {
		for _, k := range checkKeys {
			name, ok := strings.CutSuffix(rest, "."+k)
			if !ok || strings.TrimSpace(name) == "" {
				continue
			}
			if _, exists := c.Verification.Checks[name]; !exists && k != "command" {
				return setting{}, fmt.Errorf("no check [verify.%s]: set verify.%s.command first", name, name)
			}
			return checkSetting(key, name, k), nil
		}
	}
	msg := fmt.Sprintf("unknown key %q", key)
	if near := suggest.Nearest(key, c.knownKeys()); near != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", near)
	}
	return setting{}, errors.New(msg)
}

// knownKeys lists every key c has, open-table entries included.
func (c *Config) knownKeys() []string {
	keys := fixedKeys()
	for typ := range c.AutoRetry.MaxRetriesByType {
		keys = append(keys, byTypeKey+"."+typ)
	}
	for name := range c.Verification.Checks {
		for _, k := range checkKeys {
			keys = append(keys, "verify."+name+"."+k)
		}
	}
	sort.Strings(keys)
	return keys
}

func byTypeSetting(key, typ string) setting {
	typ = strings.ToLower(typ)
	return intKey(key, 0, func(c *Config, n int) {
		if c.AutoRetry.MaxRetriesByType == nil {
			c.AutoRetry.MaxRetriesByType = map[string]int{}
		}
		c.AutoRetry.MaxRetriesByType[typ] = n
	})
}

func checkSetting(key, name, field string) setting {
	update := func(c *Config, f func(*Check)) {
		if c.Verification.Checks == nil {
			c.Verification.Checks = map[string]Check{}
		}
		ch, ok := c.Verification.Checks[name]
		if !ok {
			ch = Check{Name: name, Timeout: DefaultCheckTimeout}
		}
		f(&ch)
		c.Verification.Checks[name] = ch
	}
	if field == "timeout" {
		return durationKey(key, func(c *Config, d time.Duration) {
			update(c, func(ch *Check) { ch.Timeout = d })
		})
	}
	return stringKey(key, notBlank, func(c *Config, cmd string) {
		update(c, func(ch *Check) { ch.Command = cmd })
	})
}

func intKey(key string, min int, set func(*Config, int)) setting {
	check := func(c *Config, n int64) error {
		if n < int64(min) {
			return fmt.Errorf("must be at least %d, got %d", min, n)
		}
		if int64(int(n)) != n {
			return fmt.Errorf("%d is too large", n)
		}
		set(c, int(n))
		return nil
	}
	return setting{
		key:      key,
		fromTOML: fromTOMLAs("a whole number", check),
		fromText: func(c *Config, s string) error {
			n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
			if err != nil {
				return fmt.Errorf("%q is not a whole number", s)
			}
			return check(c, n)
		},
	}
}

// floatKey accepts a value in [min, max]; NaN and infinities never pass.
func floatKey(key string, min, max float64, set func(*Config, float64)) setting {
	check := func(c *Config, f float64) error {
		switch {
		case math.IsNaN(f) || math.IsInf(f, 0):
			return fmt.Errorf("must be a finite number, got %v", f)
		case f < min && math.IsInf(max, 1):
			return fmt.Errorf("must be at least %v, got %v", min, f)
		case f < min || f > max:
			return fmt.Errorf("must be between %v and %v, got %v", min, max, f)
		}
		set(c, f)
		return nil
	}
	return setting{
		key: key,
		fromTOML: func(c *Config, v any) error {
			switch n := v.(type) {
			case float64:
				return check(c, n)
			case int64:
				return check(c, float64(n))
			}
			return typeError("a number", v)
		},
		fromText: func(c *Config, s string) error {
			f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil {
				return fmt.Errorf("%q is not a number", s)
			}
			return check(c, f)
		},
	}
}

// durationKey accepts a positive duration in Go syntax ("30m").
func durationKey(key string, set func(*Config, time.Duration)) setting {
	parse := func(c *Config, s string) error {
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("%q is not a duration (use Go syntax such as \"30m\" or \"1h30m\")", s)
		}
		if d <= 0 {
			return fmt.Errorf("must be positive, got %q", s)
		}
		set(c, d)
		return nil
	}
	return textKey(key, "a duration string such as \"30m\"", parse)
}

func boolKey(key string, set func(*Config, bool)) setting {
	return setting{
		key: key,
		fromTOML: fromTOMLAs("true or false", func(c *Config, b bool) error {
			set(c, b)
			return nil
		}),
		fromText: func(c *Config, s string) error {
			switch strings.ToLower(strings.TrimSpace(s)) {
			case "true", "1", "yes":
				set(c, true)
			case "false", "0", "no":
				set(c, false)
			default:
				return fmt.Errorf("%q is not a boolean (true or false)", s)
			}
			return nil
		},
	}
}

// stringKey accepts a string that passes valid, or any string if valid is nil.
func stringKey(key string, valid func(string) error, set func(*Config, string)) setting {
	check := func(c *Config, s string) error {
		if valid != nil {
			if err := valid(s); err != nil {
				return err
			}
		}
		set(c, s)
		return nil
	}
	return textKey(key, "a string", check)
}

// textKey is a setting written as a TOML string, read as its text is;
// want says what string it expects, for a value of another type.
func textKey(key, want string, parse func(*Config, string) error) setting {
	return setting{
		key:      key,
		fromTOML: fromTOMLAs(want, parse),
		fromText: parse,
	}
}

func oneOf(allowed ...string) func(string) error {
	return func(s string) error {
		if !slices.Contains(allowed, s) {
			return fmt.Errorf("%q is not one of %s", s, quoteAll(allowed))
		}
		return nil
	}
}

func notBlank(s string) error {
	if strings.TrimSpace(s) == "" {
		return errors.New("must not be empty")
	}
	return nil
}

// listKey accepts an array of strings, each passing item.
func listKey(key string, item func(string) error, set func(*Config, []string)) setting {
	check := func(c *Config, items []string) error {
		var errs []string
		for i, it := range items {
			if err := item(it); err != nil {
				errs = append(errs, fmt.Sprintf("item %d: %v", i+1, err))
			}
		}
		if errs != nil {
			return errors.New(strings.Join(errs, "; "))
		}
		set(c, items)
		return nil
	}
	fromTOML := func(c *Config, v any) error {
		arr, ok := v.([]any)
		if !ok {
			return typeError("an array of strings", v)
		}
		items := make([]string, len(arr))
		for i, e := range arr {
			s, ok := e.(string)
			if !ok {
				return fmt.Errorf("item %d: %v", i+1, typeError("a string", e))
			}
			items[i] = s
		}
		return check(c, items)
	}
	return setting{
		key:      key,
		fromTOML: fromTOML,
		fromText: func(c *Config, s string) error {
			if t := strings.TrimSpace(s); strings.HasPrefix(t, "[") {
				var doc map[string]any
				md, err := toml.Decode("v = "+t, &doc)
				if err != nil || len(md.Keys()) != 1 {
					return fmt.Errorf("%q is not a TOML array of strings", s)
				}
				return fromTOML(c, doc["v"])
			}
			items := []string{}
			for _, it := range strings.Split(s, ",") {
				if it = strings.TrimSpace(it); it != "" {
					items = append(items, it)
				}
			}
			return check(c, items)
		},
	}
}

func checkPattern(p string) error {
	if p == "" {
		return errors.New("empty pattern would match any output")
	}
	return nil
}

func checkRegexp(p string) error {
	re, err := regexp.Compile(p)
	if err != nil {
		var se *syntax.Error
		if errors.As(err, &se) {
			return fmt.Errorf("invalid regexp %q: %s", p, se.Code)
		}
		return fmt.Errorf("invalid regexp %q: %v", p, err)
	}
	if re.MatchString("") {
		return fmt.Errorf("regexp %q matches the empty string", p)
	}
	return nil
}

// fromTOMLAs reads a TOML value that must have Go type T (int64, bool,
// string), as want words it, with parse; a value of another type is a
// typeError.
func fromTOMLAs[T any](want string, parse func(*Config, T) error) func(*Config, any) error {
	return func(c *Config, v any) error {
		x, ok := v.(T)
		if !ok {
			return typeError(want, v)
		}
		return parse(c, x)
	}
}

func typeError(want string, v any) error {
	return fmt.Errorf("must be %s, not %s", want, tomlType(v))
}

func tomlType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "a whole number"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any, []map[string]any:
		return "an array"
	case map[string]any:
		return "a table"
	default:
		return "a date or time"
	}
}

func quoteAll(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}

// checkCostPattern accepts an empty pattern (the built-in one) or a regexp
// with one capture group: the cost, a decimal number.
func checkCostPattern(p string) error {
	if p == "" {
		return nil
	}
	if err := checkRegexp(p); err != nil {
		return err
	}
	if n := regexp.MustCompile(p).NumSubexp(); n != 1 {
		return fmt.Errorf("regexp %q must have exactly one capture group (the cost), not %d", p, n)
	}
	return nil
}

// offDurationKey is durationKey for a limit that 0 turns off.
func offDurationKey(key string, set func(*Config, time.Duration)) setting {
	parse := func(c *Config, s string) error {
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("%q is not a duration (use Go syntax such as \"30m\" or \"1h30m\")", s)
		}
		if d < 0 {
			return fmt.Errorf("must not be negative, got %q", s)
		}
		set(c, d)
		return nil
	}
	return textKey(key, "a duration string such as \"30m\"", parse)
}
