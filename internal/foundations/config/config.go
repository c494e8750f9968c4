package config

import (
	"bytes"
	"strings"
	"time"
)

// Config holds every setting of config.toml. Use [Default] for a complete value;
// a zero Config is not valid.
type Config struct {
	Loop           Loop
	AutoRetry      AutoRetry
	Signature      Signature
	Backoff        Backoff
	Classify       Classify
	Budget         Budget
	CircuitBreaker CircuitBreaker
	Stall          Stall
	Cascade        Cascade
	Tiers          Tiers
	Verification   Verification // the [verify] section
	Logs           Logs
	Metrics        Metrics
	Notify         Notify
	Agent          Agent
	Progress       Progress
	SharedBudget   SharedBudget // the [shared_budget] section
	Schedule       Schedule
}

// Schedule is the [schedule] section: when loops may start.
type Schedule struct {
	// ActiveHours lists the ranges in which a run starts loops, such as
	// "Mon-Fri 09:00-18:00"; empty means always.
	ActiveHours []string
	// Timezone is the IANA zone the ranges are read in; empty means the
	// local one.
	Timezone string
}

// Notify is the [notify] section: a command run once for each event that
// needs a person.
type Notify struct {
	Command string // run with sh -c; empty: no notifications
	// Heartbeat is run with sh -c once after every run, whatever its
	// outcome, for a monitor that expects to hear from each run; empty:
	// none.
	Heartbeat string
}

// Loop is the [loop] section: the regular loop that run executes.
type Loop struct {
	Command  string        // run with sh -c; empty until configured
	Timeout  time.Duration // per execution of Command
	MaxLoops int           // loops in one run, the regular one included
	// KillGrace is how long a stopped loop's processes get between SIGTERM
	// and SIGKILL.
	KillGrace time.Duration
	// IdleTimeout stops a loop that prints nothing for this long (0: off).
	IdleTimeout time.Duration
}

// AutoRetry is the [auto_retry] section.
type AutoRetry struct {
	GlobalCap        int // auto-retry loops per run
	MaxRetries       int // per issue, for types without an entry in MaxRetriesByType
	HaltAfterRepeats int // identical failure signatures in a row that halt an issue
	// ProgressResets: a failure with fewer failing tests than the issue's
	// last starts its repeat count at 0 and gives its attempt back.
	ProgressResets bool

	// MaxRetriesByType maps a lower-case issue Type to its Max-Retries
	// default. File entries are merged over the defaults; see MaxRetriesFor.
	MaxRetriesByType map[string]int
}

// Signature is the [signature] section: how failure output is normalized
// before hashing.
type Signature struct {
	Normalize     string   // "v3", "v2", "v1" or "off"
	ExtraPatterns []string // Go regexps, each replaced by <redacted>; all compile and none matches ""
}

// Backoff is the [backoff] section: re-executing a loop after a transient
// failure.
type Backoff struct {
	Base              time.Duration // delay before the second try
	Factor            float64       // ≥ 1; each delay is the previous one times Factor
	Max               time.Duration // cap on one delay
	Jitter            float64       // in [0, 1]: fraction of the delay that is randomized
	Attempts          int           // tries in all, the first included
	RateLimitAttempts int           // tries in all when the failure is a rate limit
	// MaxWait is the longest wait a run sleeps through for a rate limit's
	// reset hint; a longer one opens a rate-limit window that later runs
	// honour instead, without holding the lock.
	MaxWait time.Duration
}

// Classify is the [classify] section: patterns that mark a failed loop as
// transient (re-executed after backoff) or permanent (the run stops). A
// pattern matches when the output contains it, compared without regard to
// case; patterns are plain text, not regexps.
type Classify struct {
	Transient []string
	Permanent []string
	// RateLimit marks a transient failure as a rate limit: more tries, and
	// its "resets at …" hint is honoured.
	RateLimit []string
}

// MatchRateLimit reports the first rate-limit pattern that output contains.
func (c Classify) MatchRateLimit(output []byte) (pattern string, ok bool) {
	return matchAny(c.RateLimit, output)
}

// Budget is the [budget] section: limits over a rolling 24 hours, counted
// from the tool's own event log. Zero turns a limit off.
type Budget struct {
	LoopsPerDay          int           // executions of the loop command, re-runs included
	AutoRetryLoopsPerDay int           // auto-retry loops
	AgentTimePerDay      time.Duration // wall time of the loop command
	CostPerDay           float64       // cost reported by the loop, in its currency
	// CostPattern is a regexp with one group, the cost, matched against the
	// end of a loop's output; empty means the built-in one, which reads the
	// "total_cost_usd" (or "cost_usd") of a coding agent's JSON result.
	CostPattern string
	// IssuesFiledPerDay bounds the issues filed from inside loops ("orchestrator
	// add" run by the agent); a person's filings are not counted.
	IssuesFiledPerDay int
	// TokensPerDay limits the tokens the agent reported (input and output,
	// as it stated them) over the window.
	TokensPerDay int
	// WindowShare stops loops once the agent reports that this share (0..1)
	// of its provider's usage window is used, until the window resets.
	WindowShare float64
	// IssueCost, IssueTokens and IssueAgentTime bound what all the loops
	// run for one issue may spend over its life, until a person's retry
	// starts a new allowance; zero turns one off.
	IssueCost      float64
	IssueTokens    int
	IssueAgentTime time.Duration
	// Reserve keeps a loop from starting when what is left of a budget is
	// below what a typical loop (the median of the last ten) spends.
	Reserve bool
	// WindowPace starts a loop only while the share of each usage window
	// the agent reports used is at most the share of the window elapsed
	// plus 0.2.
	WindowPace bool
}

// Agent is the [agent] section: which coding agent's output the loop
// prints, so that its cost, tokens, errors and limits are read.
type Agent struct {
	// Kind is auto, claude, codex, gemini, aider, opencode or none (the
	// output is not read).
	Kind string
}

// BudgetWindow is the rolling window the budgets count over.
const BudgetWindow = 24 * time.Hour

// MatchTransient reports the first transient pattern that output contains.
func (c Classify) MatchTransient(output []byte) (pattern string, ok bool) {
	return matchAny(c.Transient, output)
}

// MatchPermanent reports the first permanent pattern that output contains.
func (c Classify) MatchPermanent(output []byte) (pattern string, ok bool) {
	return matchAny(c.Permanent, output)
}

func matchAny(patterns []string, output []byte) (string, bool) {
	if len(patterns) == 0 {
		return "", false
	}
	lower := bytes.ToLower(output)
	for _, p := range patterns {
		if p != "" && bytes.Contains(lower, []byte(strings.ToLower(p))) {
			return p, true
		}
	}
	return "", false
}

// CircuitBreaker is the [circuit_breaker] section.
type CircuitBreaker struct {
	Threshold int           // consecutive failed loops that open the breaker
	Cooldown  time.Duration // how long it stays open before one half-open loop
}

// Stall is the [stall] section.
type Stall struct {
	Loops int // auto-retry loops in a row that resolved nothing
}

// Cascade is the [cascade] section: Threshold new failures (new
// issues, or failures of issues other than those being retried) within
// Window loops stop the run.
type Cascade struct {
	Threshold int
	Window    int
}

// Tiers is the [tiers] section: how a retried issue escalates.
type Tiers struct {
	SameAgent       int    // retries with the same agent
	FreshAgent      int    // then retries with a fresh agent
	Model           string // ORCHESTRATOR_MODEL for the first two tiers
	EscalationModel string // ORCHESTRATOR_MODEL once escalated
}

// Verification is the [verify] section.
type Verification struct {
	// AllowIssueCommands lets commands written inside the issue file run.
	// Issue files are written by agents, config by people: default false.
	AllowIssueCommands bool

	// Checks are the [verify.NAME] tables, by NAME.
	Checks map[string]Check
}

// Check is one [verify.NAME] table: the command an issue with "Verify | NAME"
// runs to prove it is fixed.
type Check struct {
	Name    string
	Command string        // run with sh -c; never empty in a loaded Config
	Timeout time.Duration // default 5m
}

// DefaultCheckTimeout is the timeout of a [verify.NAME] check that sets none.
const DefaultCheckTimeout = 5 * time.Minute

// Logs is the [logs] section.
type Logs struct {
	TextRetention  time.Duration // logs/retry.log entries older than this are pruned
	JSONLRetention time.Duration // logs/retry.jsonl entries older than this are pruned
	// HistoryKeep is how many months of history.csv are kept once rotated
	// (history-YYYY-MM.csv); 0 keeps them all.
	HistoryKeep int
}

// Metrics is the [metrics] section.
type Metrics struct {
	Textfile string // Prometheus text file to write; empty: none
}

// Default returns the configuration used when there is no config.toml. It
// includes the per-type retry limits (build 1, test 3, review 2)
// and no verification checks.
func Default() *Config {
	return &Config{
		Loop: Loop{
			Timeout:     30 * time.Minute,
			MaxLoops:    16,
			KillGrace:   10 * time.Second,
			IdleTimeout: 15 * time.Minute,
		},
		AutoRetry: AutoRetry{
			GlobalCap:        15,
			MaxRetries:       10,
			HaltAfterRepeats: 3,
			ProgressResets:   true,
			MaxRetriesByType: map[string]int{"build": 1, "test": 3, "review": 2},
		},
		Signature: Signature{
			Normalize:     "v3",
			ExtraPatterns: []string{},
		},
		Backoff: Backoff{
			Base:              time.Second,
			Factor:            2.0,
			Max:               30 * time.Second,
			Jitter:            0.1,
			Attempts:          3,
			RateLimitAttempts: 5,
			MaxWait:           5 * time.Minute,
		},
		Classify: Classify{
			Transient: []string{"rate limit", "429", "503", "ECONNRESET", "ETIMEDOUT", "overloaded", "temporarily unavailable"},
			Permanent: []string{"permission denied", "unauthorized", "invalid api key", "forbidden", "usage allocation has been disabled"},
			RateLimit: []string{"rate limit", "rate_limit", "429", "too many requests", "hit your limit", "hit your session limit",
				"usage limit", "out of extra usage", "limit will reset"},
		},
		Budget: Budget{LoopsPerDay: 200, AutoRetryLoopsPerDay: 30, AgentTimePerDay: 8 * time.Hour, IssuesFiledPerDay: 50,
			IssueAgentTime: 4 * time.Hour, Reserve: true},
		CircuitBreaker: CircuitBreaker{Threshold: 3, Cooldown: 30 * time.Minute},
		Stall:          Stall{Loops: 3},
		Cascade:        Cascade{Threshold: 3, Window: 5},
		Tiers:          Tiers{SameAgent: 3, FreshAgent: 3},
		Verification:   Verification{Checks: map[string]Check{}},
		Logs:           Logs{TextRetention: 168 * time.Hour, JSONLRetention: 720 * time.Hour, HistoryKeep: 24},
		Agent:          Agent{Kind: "auto"},
		Progress:       Progress{Enabled: true, IdleLoops: 2, SpendAgentTime: 90 * time.Minute},
		Schedule:       Schedule{ActiveHours: []string{}},
	}
}

// MaxRetriesFor returns the Max-Retries default for an issue of the given
// Type: its entry in [auto_retry.max_retries_by_type] (Type compared without
// regard to case or surrounding spaces), else auto_retry.max_retries.
func (c *Config) MaxRetriesFor(issueType string) int {
	if n, ok := c.AutoRetry.MaxRetriesByType[strings.ToLower(strings.TrimSpace(issueType))]; ok {
		return n
	}
	return c.AutoRetry.MaxRetries
}

// Verify returns the [verify.NAME] check with the given name.
func (c *Config) Verify(name string) (Check, bool) {
	ch, ok := c.Verification.Checks[name]
	return ch, ok
}

// Progress is the [progress] section: how loops are judged by what they did
// to the workspace and to the failing tests.
type Progress struct {
	// Enabled records the workspace's state before and after every loop;
	// false judges loops by their tests alone.
	Enabled bool
	// IdleLoops is how many auto-retry loops in a row that left the
	// workspace as they found it halt their issues (0: never).
	IdleLoops int
	// Loops is how many auto-retry loops in a row without progress stop
	// the run; 0 means [stall] loops, the older name of this setting.
	Loops int
	// SpendCost, SpendTokens and SpendAgentTime bound what an issue's
	// loops may spend since the last loop that progressed on it; zero
	// turns one off.
	SpendCost      float64
	SpendTokens    int
	SpendAgentTime time.Duration
}

// NoProgressLoops returns how many auto-retry loops in a row without
// progress stop a run: [progress] loops, else [stall] loops.
func (c *Config) NoProgressLoops() int {
	if c.Progress.Loops > 0 {
		return c.Progress.Loops
	}
	return c.Stall.Loops
}

// SharedBudget is the [shared_budget] section: daily limits over a rolling
// 24 hours that several state directories share. Every loop of every state
// directory naming Dir is counted in Dir's ledger. Zero turns a limit off;
// an empty Dir turns the section off.
type SharedBudget struct {
	Dir                  string
	LoopsPerDay          int
	AutoRetryLoopsPerDay int
	AgentTimePerDay      time.Duration
	CostPerDay           float64
	TokensPerDay         int
}
