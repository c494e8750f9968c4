package config

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestEnvOverrides sets each key through its environment variable.
func TestEnvOverrides(t *testing.T) {
	const file = "[verify.build]\ncommand = \"make\"\n[verify.go-vet]\ncommand = \"go vet ./...\"\n"
	tests := []struct {
		name, value string
		want        func(c *Config)
	}{
		{"ORCHESTRATOR_LOOP_COMMAND", "./loop.sh --fast", func(c *Config) { c.Loop.Command = "./loop.sh --fast" }},
		{"ORCHESTRATOR_LOOP_TIMEOUT", "10m", func(c *Config) { c.Loop.Timeout = 10 * time.Minute }},
		{"ORCHESTRATOR_LOOP_MAX_LOOPS", " 3 ", func(c *Config) { c.Loop.MaxLoops = 3 }},
		{"ORCHESTRATOR_AUTO_RETRY_GLOBAL_CAP", "20", func(c *Config) { c.AutoRetry.GlobalCap = 20 }},
		{"ORCHESTRATOR_AUTO_RETRY_MAX_RETRIES", "0", func(c *Config) { c.AutoRetry.MaxRetries = 0 }},
		{"ORCHESTRATOR_AUTO_RETRY_HALT_AFTER_REPEATS", "5", func(c *Config) { c.AutoRetry.HaltAfterRepeats = 5 }},
		{"ORCHESTRATOR_AUTO_RETRY_MAX_RETRIES_BY_TYPE_BUILD", "2", func(c *Config) { c.AutoRetry.MaxRetriesByType["build"] = 2 }},
		{"ORCHESTRATOR_SIGNATURE_NORMALIZE", "off", func(c *Config) { c.Signature.Normalize = "off" }},
		{"ORCHESTRATOR_SIGNATURE_EXTRA_PATTERNS", `["x{1,2}", "y"]`, func(c *Config) { c.Signature.ExtraPatterns = []string{"x{1,2}", "y"} }},
		{"ORCHESTRATOR_BACKOFF_BASE", "250ms", func(c *Config) { c.Backoff.Base = 250 * time.Millisecond }},
		{"ORCHESTRATOR_BACKOFF_FACTOR", "1.5", func(c *Config) { c.Backoff.Factor = 1.5 }},
		{"ORCHESTRATOR_BACKOFF_MAX", "1m", func(c *Config) { c.Backoff.Max = time.Minute }},
		{"ORCHESTRATOR_BACKOFF_JITTER", "0.2", func(c *Config) { c.Backoff.Jitter = 0.2 }},
		{"ORCHESTRATOR_BACKOFF_ATTEMPTS", "1", func(c *Config) { c.Backoff.Attempts = 1 }},
		{"ORCHESTRATOR_BACKOFF_RATE_LIMIT_ATTEMPTS", "8", func(c *Config) { c.Backoff.RateLimitAttempts = 8 }},
		{"ORCHESTRATOR_CLASSIFY_TRANSIENT", "quota exceeded, 502 ,,", func(c *Config) { c.Classify.Transient = []string{"quota exceeded", "502"} }},
		{"ORCHESTRATOR_CLASSIFY_PERMANENT", "no such model", func(c *Config) { c.Classify.Permanent = []string{"no such model"} }},
		{"ORCHESTRATOR_CIRCUIT_BREAKER_THRESHOLD", "2", func(c *Config) { c.CircuitBreaker.Threshold = 2 }},
		{"ORCHESTRATOR_CIRCUIT_BREAKER_COOLDOWN", "2h", func(c *Config) { c.CircuitBreaker.Cooldown = 2 * time.Hour }},
		{"ORCHESTRATOR_STALL_LOOPS", "6", func(c *Config) { c.Stall.Loops = 6 }},
		{"ORCHESTRATOR_PROGRESS_ENABLED", "false", func(c *Config) { c.Progress.Enabled = false }},
		{"ORCHESTRATOR_PROGRESS_IDLE_LOOPS", "0", func(c *Config) { c.Progress.IdleLoops = 0 }},
		{"ORCHESTRATOR_PROGRESS_LOOPS", "5", func(c *Config) { c.Progress.Loops = 5 }},
		{"ORCHESTRATOR_CASCADE_THRESHOLD", "9", func(c *Config) { c.Cascade.Threshold = 9 }},
		{"ORCHESTRATOR_CASCADE_WINDOW", "10", func(c *Config) { c.Cascade.Window = 10 }},
		{"ORCHESTRATOR_TIERS_SAME_AGENT", "1", func(c *Config) { c.Tiers.SameAgent = 1 }},
		{"ORCHESTRATOR_TIERS_FRESH_AGENT", "0", func(c *Config) { c.Tiers.FreshAgent = 0 }},
		{"ORCHESTRATOR_TIERS_MODEL", "small", func(c *Config) { c.Tiers.Model = "small" }},
		{"ORCHESTRATOR_TIERS_ESCALATION_MODEL", "large", func(c *Config) { c.Tiers.EscalationModel = "large" }},
		{"ORCHESTRATOR_VERIFY_ALLOW_ISSUE_COMMANDS", "yes", func(c *Config) { c.Verification.AllowIssueCommands = true }},
		{"ORCHESTRATOR_VERIFY_BUILD_COMMAND", "make all", func(c *Config) {
			c.Verification.Checks["build"] = Check{Name: "build", Command: "make all", Timeout: DefaultCheckTimeout}
		}},
		{"ORCHESTRATOR_VERIFY_GO_VET_TIMEOUT", "90s", func(c *Config) {
			c.Verification.Checks["go-vet"] = Check{Name: "go-vet", Command: "go vet ./...", Timeout: 90 * time.Second}
		}},
		{"ORCHESTRATOR_LOGS_TEXT_RETENTION", "1h", func(c *Config) { c.Logs.TextRetention = time.Hour }},
		{"ORCHESTRATOR_LOGS_JSONL_RETENTION", "2h", func(c *Config) { c.Logs.JSONLRetention = 2 * time.Hour }},
		{"ORCHESTRATOR_LOGS_HISTORY_KEEP", "6", func(c *Config) { c.Logs.HistoryKeep = 6 }},
		{"ORCHESTRATOR_METRICS_TEXTFILE", "out.prom", func(c *Config) { c.Metrics.Textfile = "out.prom" }},
		{"ORCHESTRATOR_NOTIFY_COMMAND", "./tell-me.sh", func(c *Config) { c.Notify.Command = "./tell-me.sh" }},
		{"ORCHESTRATOR_LOOP_KILL_GRACE", "3s", func(c *Config) { c.Loop.KillGrace = 3 * time.Second }},
		{"ORCHESTRATOR_LOOP_IDLE_TIMEOUT", "0s", func(c *Config) { c.Loop.IdleTimeout = 0 }},
		{"ORCHESTRATOR_BUDGET_ISSUE_COST", "2.5", func(c *Config) { c.Budget.IssueCost = 2.5 }},
		{"ORCHESTRATOR_BUDGET_ISSUE_TOKENS", "500000", func(c *Config) { c.Budget.IssueTokens = 500000 }},
		{"ORCHESTRATOR_BUDGET_ISSUE_AGENT_TIME", "2h", func(c *Config) { c.Budget.IssueAgentTime = 2 * time.Hour }},
		{"ORCHESTRATOR_BUDGET_RESERVE", "false", func(c *Config) { c.Budget.Reserve = false }},
		{"ORCHESTRATOR_AUTO_RETRY_PROGRESS_RESETS", "false", func(c *Config) { c.AutoRetry.ProgressResets = false }},
		{"ORCHESTRATOR_BUDGET_WINDOW_PACE", "true", func(c *Config) { c.Budget.WindowPace = true }},
		{"ORCHESTRATOR_PROGRESS_SPEND_COST", "1.5", func(c *Config) { c.Progress.SpendCost = 1.5 }},
		{"ORCHESTRATOR_PROGRESS_SPEND_TOKENS", "100000", func(c *Config) { c.Progress.SpendTokens = 100000 }},
		{"ORCHESTRATOR_PROGRESS_SPEND_AGENT_TIME", "30m", func(c *Config) { c.Progress.SpendAgentTime = 30 * time.Minute }},
		{"ORCHESTRATOR_SCHEDULE_ACTIVE_HOURS", "Mon-Fri 09:00-18:00", func(c *Config) { c.Schedule.ActiveHours = []string{"Mon-Fri 09:00-18:00"} }},
		{"ORCHESTRATOR_SCHEDULE_TIMEZONE", "America/New_York", func(c *Config) { c.Schedule.Timezone = "America/New_York" }},
		{"ORCHESTRATOR_BACKOFF_MAX_WAIT", "1m", func(c *Config) { c.Backoff.MaxWait = time.Minute }},
		{"ORCHESTRATOR_CLASSIFY_RATE_LIMIT", "quota,slow down", func(c *Config) { c.Classify.RateLimit = []string{"quota", "slow down"} }},
		{"ORCHESTRATOR_BUDGET_LOOPS_PER_DAY", "50", func(c *Config) { c.Budget.LoopsPerDay = 50 }},
		{"ORCHESTRATOR_BUDGET_AUTO_RETRY_LOOPS_PER_DAY", "5", func(c *Config) { c.Budget.AutoRetryLoopsPerDay = 5 }},
		{"ORCHESTRATOR_BUDGET_AGENT_TIME_PER_DAY", "2h", func(c *Config) { c.Budget.AgentTimePerDay = 2 * time.Hour }},
		{"ORCHESTRATOR_BUDGET_COST_PER_DAY", "12.5", func(c *Config) { c.Budget.CostPerDay = 12.5 }},
		{"ORCHESTRATOR_BUDGET_ISSUES_FILED_PER_DAY", "7", func(c *Config) { c.Budget.IssuesFiledPerDay = 7 }},
		{"ORCHESTRATOR_BUDGET_COST_PATTERN", `cost: ([0-9.]+)`, func(c *Config) { c.Budget.CostPattern = `cost: ([0-9.]+)` }},
		{"ORCHESTRATOR_AGENT_KIND", "codex", func(c *Config) { c.Agent.Kind = "codex" }},
		{"ORCHESTRATOR_BUDGET_TOKENS_PER_DAY", "2000000", func(c *Config) { c.Budget.TokensPerDay = 2000000 }},
		{"ORCHESTRATOR_BUDGET_WINDOW_SHARE", "0.8", func(c *Config) { c.Budget.WindowShare = 0.8 }},
		{"ORCHESTRATOR_NOTIFY_HEARTBEAT", "./ping.sh", func(c *Config) { c.Notify.Heartbeat = "./ping.sh" }},
		{"ORCHESTRATOR_SHARED_BUDGET_DIR", "/srv/budget", func(c *Config) { c.SharedBudget.Dir = "/srv/budget" }},
		{"ORCHESTRATOR_SHARED_BUDGET_LOOPS_PER_DAY", "100", func(c *Config) { c.SharedBudget.LoopsPerDay = 100 }},
		{"ORCHESTRATOR_SHARED_BUDGET_AUTO_RETRY_LOOPS_PER_DAY", "9", func(c *Config) { c.SharedBudget.AutoRetryLoopsPerDay = 9 }},
		{"ORCHESTRATOR_SHARED_BUDGET_AGENT_TIME_PER_DAY", "3h", func(c *Config) { c.SharedBudget.AgentTimePerDay = 3 * time.Hour }},
		{"ORCHESTRATOR_SHARED_BUDGET_COST_PER_DAY", "40", func(c *Config) { c.SharedBudget.CostPerDay = 40 }},
		{"ORCHESTRATOR_SHARED_BUDGET_TOKENS_PER_DAY", "5000000", func(c *Config) { c.SharedBudget.TokensPerDay = 5000000 }},
	}
	path := writeConfig(t, file)
	base, err := Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{tt.name: tt.value,
				// Never settings; present in every loop's environment.
				"ORCHESTRATOR_DIR": "/nowhere", "ORCHESTRATOR_NOW": "2026-11-22T10:15:00Z", "ORCHESTRATOR_LOOP_KIND": "regular"}
			c, err := Load(path, envFunc(env))
			if err != nil {
				t.Fatal(err)
			}
			want, _ := Load(path, nil)
			tt.want(want)
			if !reflect.DeepEqual(c, want) {
				t.Errorf("got\n%+v\nwant\n%+v", c, want)
			}
			if reflect.DeepEqual(c, base) {
				t.Errorf("%s=%q changed nothing", tt.name, tt.value)
			}
		})
	}
	for _, tt := range tests {
		covered[tt.name] = true
	}
	for _, k := range fixedKeys() {
		if !covered[envName(k)] {
			t.Errorf("no environment test for %s (%s)", k, envName(k))
		}
	}
}

// TestPrecedence sets loop.max_loops at all four levels and removes them
// from the top: flag > environment > file > default.
func TestPrecedence(t *testing.T) {
	tests := []struct {
		file, env, flag bool
		want            int
	}{
		{true, true, true, 7},
		{true, true, false, 6},
		{true, false, false, 5},
		{false, false, false, 16},
		{false, true, false, 6},
		{false, false, true, 7},
		{true, false, true, 7},
	}
	for _, tt := range tests {
		content := ""
		if tt.file {
			content = "[loop]\nmax_loops = 5\n"
		}
		env := map[string]string{}
		if tt.env {
			env["ORCHESTRATOR_LOOP_MAX_LOOPS"] = "6"
		}
		c, err := Load(writeConfig(t, content), envFunc(env))
		if err != nil {
			t.Fatal(err)
		}
		if tt.flag {
			if err := c.Set("loop.max_loops", "7"); err != nil {
				t.Fatal(err)
			}
		}
		if got := c.Loop.MaxLoops; got != tt.want {
			t.Errorf("file=%v env=%v flag=%v: max_loops %d, want %d", tt.file, tt.env, tt.flag, got, tt.want)
		}
	}
}

func TestEnvBadValues(t *testing.T) {
	tests := []struct{ name, value, want string }{
		{"ORCHESTRATOR_AUTO_RETRY_GLOBAL_CAP", "-1", "ORCHESTRATOR_AUTO_RETRY_GLOBAL_CAP: auto_retry.global_cap: must be at least 0, got -1"},
		{"ORCHESTRATOR_BACKOFF_JITTER", "1.2", "ORCHESTRATOR_BACKOFF_JITTER: backoff.jitter: must be between 0 and 1, got 1.2"},
		{"ORCHESTRATOR_BACKOFF_JITTER", "NaN", "ORCHESTRATOR_BACKOFF_JITTER: backoff.jitter: must be a finite number, got NaN"},
		{"ORCHESTRATOR_LOOP_TIMEOUT", "10", `ORCHESTRATOR_LOOP_TIMEOUT: loop.timeout: "10" is not a duration (use Go syntax such as "30m" or "1h30m")`},
		{"ORCHESTRATOR_VERIFY_ALLOW_ISSUE_COMMANDS", "maybe", `ORCHESTRATOR_VERIFY_ALLOW_ISSUE_COMMANDS: verify.allow_issue_commands: "maybe" is not a boolean (true or false)`},
		{"ORCHESTRATOR_SIGNATURE_NORMALIZE", "V1", `ORCHESTRATOR_SIGNATURE_NORMALIZE: signature.normalize: "V1" is not one of "v3", "v2", "v1", "off"`},
		{"ORCHESTRATOR_SIGNATURE_EXTRA_PATTERNS", "a,(", `ORCHESTRATOR_SIGNATURE_EXTRA_PATTERNS: signature.extra_patterns: item 2: invalid regexp "(": missing closing )`},
		{"ORCHESTRATOR_CLASSIFY_TRANSIENT", `["a", 1]`, "ORCHESTRATOR_CLASSIFY_TRANSIENT: classify.transient: item 2: must be a string, not a whole number"},
		{"ORCHESTRATOR_CLASSIFY_TRANSIENT", `[a`, `ORCHESTRATOR_CLASSIFY_TRANSIENT: classify.transient: "[a" is not a TOML array of strings`},
		{"ORCHESTRATOR_VERIFY_BUILD_COMMAND", " ", "ORCHESTRATOR_VERIFY_BUILD_COMMAND: verify.build.command: must not be empty"},
	}
	path := writeConfig(t, "[verify.build]\ncommand = \"make\"\n")
	for _, tt := range tests {
		_, err := Load(path, envFunc(map[string]string{tt.name: tt.value}))
		ps := problems(t, err)
		if len(ps) != 1 {
			t.Fatalf("%s=%q: got %v", tt.name, tt.value, err)
		}
		if got := ps[0].String(); got != tt.want {
			t.Errorf("%s=%q:\n got %s\nwant %s", tt.name, tt.value, got, tt.want)
		}
		if ps[0].Var != tt.name || ps[0].File != "" {
			t.Errorf("%s: problem has Var %q File %q", tt.name, ps[0].Var, ps[0].File)
		}
	}
}

// TestEnvCompletesCheck: a check whose command comes from the environment
// is complete.
func TestEnvCompletesCheck(t *testing.T) {
	path := writeConfig(t, "[verify.lint]\ntimeout = \"1m\"\n")
	c, err := Load(path, envFunc(map[string]string{"ORCHESTRATOR_VERIFY_LINT_COMMAND": "golangci-lint run"}))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.Verification.Checks["lint"], (Check{Name: "lint", Command: "golangci-lint run", Timeout: time.Minute}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestEnvAmbiguousName(t *testing.T) {
	path := writeConfig(t, "[verify.go-vet]\ncommand = \"a\"\n[verify.go_vet]\ncommand = \"b\"\n")
	if _, err := Load(path, nil); err != nil {
		t.Fatalf("two checks whose variables collide load while the variable is unset: %v", err)
	}
	_, err := Load(path, envFunc(map[string]string{"ORCHESTRATOR_VERIFY_GO_VET_COMMAND": "c"}))
	want := "ORCHESTRATOR_VERIFY_GO_VET_COMMAND: names more than one key (verify.go-vet.command, verify.go_vet.command); rename one in the config file"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

func TestCheckEnviron(t *testing.T) {
	c, err := Load(writeConfig(t, "[verify.build]\ncommand = \"make\"\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	environ := []string{
		"PATH=/bin",
		"ORCHESTRATOR_DIR=.orchestrator", "ORCHESTRATOR_NOW=2026-11-22T10:15:00Z",
		"ORCHESTRATOR_RUN_ID=x", "ORCHESTRATOR_LOOP=2", "ORCHESTRATOR_LOOP_KIND=auto_retry", "ORCHESTRATOR_ROOT=/w",
		"ORCHESTRATOR_ISSUES=ISSUE-20261122-001", "ORCHESTRATOR_RETRY_CONTEXT=/tmp/x",
		"ORCHESTRATOR_RETRY_TIER=same_agent", "ORCHESTRATOR_MODEL=m", "ORCHESTRATOR_COST_FILE=/tmp/c",
		"ORCHESTRATOR_SOMETHING_ELSE=1",
		"ORCHESTRATOR_AUTO_RETRY_GLOBAL_CAP=20",
		"ORCHESTRATOR_VERIFY_BUILD_TIMEOUT=1m",
		"ORCHESTRATOR_AUTO_RETRY_MAX_RETRIES_BY_TYPE_TEST=1",
		"ORCHESTRATOR_AUTO_RETRY_GLOBALCAP=20",
		"ORCHESTRATOR_AUTO_RETRY_GLOBALCAP=20",
		"ORCHESTRATOR_LOOP_MAXLOOPS=3",
		"ORCHESTRATOR_VERIFY_LINT_COMMAND=golangci-lint run",
		"ORCHESTRATOR_VERIFY_BUILD_COMAND=make",
		"ORCHESTRATOR_AUTO_RETRY_MAX_RETRIES_BY_TYPE_SECURITY=2",
		"ORCHESTRATOR_CIRCUIT_BREAKER_COOLDOWN=",
		"ORCHESTRATOR_CIRCUIT_BREAKER_RESET=1h",
		"ORCHESTRATOR_AUTO_RETRY_MAX_RETRIES_BY_TYPE_BIULD=2",
		"ORCHESTRATOR_VERIFY_BIULD_TIMEOUT=1m",
	}
	err = c.CheckEnviron(environ)
	want := []string{
		"ORCHESTRATOR_AUTO_RETRY_GLOBALCAP: not a setting of [auto_retry] (did you mean ORCHESTRATOR_AUTO_RETRY_GLOBAL_CAP?)",
		`ORCHESTRATOR_AUTO_RETRY_MAX_RETRIES_BY_TYPE_BIULD: no entry for type "biuld" in [auto_retry.max_retries_by_type]; the environment only overrides entries that the config file or the defaults define (did you mean ORCHESTRATOR_AUTO_RETRY_MAX_RETRIES_BY_TYPE_BUILD?)`,
		`ORCHESTRATOR_AUTO_RETRY_MAX_RETRIES_BY_TYPE_SECURITY: no entry for type "security" in [auto_retry.max_retries_by_type]; the environment only overrides entries that the config file or the defaults define`,
		"ORCHESTRATOR_CIRCUIT_BREAKER_RESET: not a setting of [circuit_breaker]",
		"ORCHESTRATOR_LOOP_MAXLOOPS: not a setting of [loop] (did you mean ORCHESTRATOR_LOOP_MAX_LOOPS?)",
		"ORCHESTRATOR_VERIFY_BIULD_TIMEOUT: no check [verify.biuld] in the config file; the environment only overrides checks that the file defines (did you mean ORCHESTRATOR_VERIFY_BUILD_TIMEOUT?)",
		"ORCHESTRATOR_VERIFY_BUILD_COMAND: not a setting of [verify] (did you mean ORCHESTRATOR_VERIFY_BUILD_COMMAND?)",
		"ORCHESTRATOR_VERIFY_LINT_COMMAND: no check [verify.lint] in the config file; the environment only overrides checks that the file defines",
	}
	if err == nil {
		t.Fatal("no error")
	}
	if got := err.Error(); got != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
	if err := c.CheckEnviron([]string{"ORCHESTRATOR_LOOP_KIND=regular", "HOME=/root", "ORCHESTRATOR_LOOP_TIMEOUT=1m"}); err != nil {
		t.Errorf("clean environment: %v", err)
	}
}
