package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
)

// writeConfig writes content to config.toml in a new temp dir and returns
// its path.
func writeConfig(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func envFunc(env map[string]string) func(string) string {
	return func(k string) string { return env[k] }
}

// problems returns the problems of err, which must be an *Error.
func problems(t *testing.T, err error) []Problem {
	t.Helper()
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("error %v (%T) is not a *config.Error", err, err)
	}
	return ce.Problems
}

// TestDefaultsAreSpec loads the reference configuration block, which shows
// every key with its default, and expects Default() except for the two
// entries that it shows as an example (loop.command and [verify.build]).
func TestDefaultsAreSpec(t *testing.T) {
	c, err := Load("testdata/spec.toml", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.Loop.Command = "./improve.sh"
	want.Verification.Checks["build"] = Check{Name: "build", Command: "go build ./...", Timeout: 5 * time.Minute}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("the reference block loads as\n%+v\nwant\n%+v", c, want)
	}
}

// TestDefaultValues states each default independently of the reference
// block above: setting a key to its documented default changes nothing, and
// setting it to another value does change something (so Set is not a no-op).
func TestDefaultValues(t *testing.T) {
	tests := []struct{ key, spec, other string }{
		{"loop.command", "", "./improve.sh"},
		{"loop.timeout", "30m", "31m"},
		{"loop.max_loops", "16", "17"},
		{"auto_retry.global_cap", "15", "16"},
		{"auto_retry.max_retries", "10", "11"},
		{"auto_retry.halt_after_repeats", "3", "4"},
		{"auto_retry.max_retries_by_type.build", "1", "2"},
		{"auto_retry.max_retries_by_type.test", "3", "4"},
		{"auto_retry.max_retries_by_type.review", "2", "3"},
		{"signature.normalize", "v3", "off"},
		{"signature.extra_patterns", "[]", "x"},
		{"backoff.base", "1s", "2s"},
		{"backoff.factor", "2.0", "3"},
		{"backoff.max", "30s", "31s"},
		{"backoff.jitter", "0.1", "0.2"},
		{"backoff.attempts", "3", "4"},
		{"backoff.rate_limit_attempts", "5", "6"},
		{"classify.transient", `["rate limit", "429", "503", "ECONNRESET", "ETIMEDOUT", "overloaded", "temporarily unavailable"]`, "x"},
		{"classify.permanent", "permission denied, unauthorized, invalid api key, forbidden, usage allocation has been disabled", "x"},
		{"classify.rate_limit", `["rate limit", "rate_limit", "429", "too many requests", "hit your limit", "hit your session limit", "usage limit", "out of extra usage", "limit will reset"]`, "x"},
		{"loop.kill_grace", "10s", "11s"},
		{"backoff.max_wait", "5m", "6m"},
		{"budget.loops_per_day", "200", "201"},
		{"budget.auto_retry_loops_per_day", "30", "31"},
		{"budget.agent_time_per_day", "8h", "9h"},
		{"budget.cost_per_day", "0", "5.5"},
		{"budget.cost_pattern", "", `spent \$([0-9.]+)`},
		{"budget.issues_filed_per_day", "50", "0"},
		{"circuit_breaker.threshold", "3", "4"},
		{"circuit_breaker.cooldown", "30m", "31m"},
		{"stall.loops", "3", "4"},
		{"cascade.threshold", "3", "4"},
		{"cascade.window", "5", "6"},
		{"tiers.same_agent", "3", "4"},
		{"tiers.fresh_agent", "3", "4"},
		{"tiers.model", "", "m"},
		{"tiers.escalation_model", "", "m"},
		{"verify.allow_issue_commands", "false", "true"},
		{"logs.text_retention", "168h", "169h"},
		{"logs.jsonl_retention", "720h", "721h"},
		{"logs.history_keep", "24", "12"},
		{"metrics.textfile", "", "m.prom"},
		{"notify.command", "", "notify-send orchestrator"},
		{"agent.kind", "auto", "claude"},
		{"budget.tokens_per_day", "0", "100000"},
		{"budget.window_share", "0", "0.5"},
		{"progress.enabled", "true", "false"},
		{"progress.idle_loops", "2", "3"},
		{"progress.loops", "0", "4"},
		{"notify.heartbeat", "", "curl -fsS https://example.invalid/ping"},
		{"shared_budget.dir", "", "/srv/budget"},
		{"shared_budget.loops_per_day", "0", "100"},
		{"shared_budget.auto_retry_loops_per_day", "0", "10"},
		{"shared_budget.agent_time_per_day", "0s", "4h"},
		{"shared_budget.cost_per_day", "0", "20"},
		{"shared_budget.tokens_per_day", "0", "1000000"},
	}
	covered := map[string]bool{}
	for _, tt := range tests {
		covered[tt.key] = true
		t.Run(tt.key, func(t *testing.T) {
			c := Default()
			if err := c.Set(tt.key, tt.spec); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(c, Default()) {
				t.Errorf("default of %s is not %q", tt.key, tt.spec)
			}
			if err := c.Set(tt.key, tt.other); err != nil {
				t.Fatal(err)
			}
			if reflect.DeepEqual(c, Default()) {
				t.Errorf("Set(%q, %q) changed nothing", tt.key, tt.other)
			}
		})
	}
	for _, k := range fixedKeys() {
		if !covered[k] {
			t.Errorf("key %s has no test of its default", k)
		}
	}
	if got := len(Default().Verification.Checks); got != 0 {
		t.Errorf("Default has %d verify checks, want none", got)
	}
}

// TestExampleFile proves that the example config copied by init documents
// every key and loads to the defaults, apart from what it sets on purpose.
func TestExampleFile(t *testing.T) {
	const path = "../../.orchestrator.example/config.toml"
	c, err := Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.Loop.Command = "./improve.sh"
	want.Verification.Checks["build"] = Check{Name: "build", Command: "go build ./...", Timeout: DefaultCheckTimeout}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("example loads as\n%+v\nwant\n%+v", c, want)
	}

	var doc map[string]any
	md, err := toml.DecodeFile(path, &doc)
	if err != nil {
		t.Fatal(err)
	}
	keys := append(fixedKeys(),
		"auto_retry.max_retries_by_type.build", "auto_retry.max_retries_by_type.test",
		"auto_retry.max_retries_by_type.review", "verify.build.command", "verify.build.timeout")
	for _, k := range keys {
		if !md.IsDefined(strings.Split(k, ".")...) {
			t.Errorf("example config lacks %s", k)
		}
	}

	// Each key line is explained by a comment above it or by the comment
	// block of its table.
	lines := strings.Split(string(must(os.ReadFile(path))), "\n")
	for i, l := range lines {
		if l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "[") {
			continue
		}
		explained := false
		for j := i - 1; j >= 0 && lines[j] != "" && !explained; j-- {
			explained = strings.HasPrefix(lines[j], "#")
		}
		if !explained {
			t.Errorf("example line %d %q has no comment above it", i+1, l)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestLoadFile(t *testing.T) {
	tests := []struct {
		name, file string
		want       func(c *Config)
	}{
		{"empty", "", func(c *Config) {}},
		{"comments only", "# nothing\n\n", func(c *Config) {}},
		{"loop", "[loop]\ncommand = \"make fix\"\ntimeout = \"1h30m\"\nmax_loops = 4\n", func(c *Config) {
			c.Loop = Loop{Command: "make fix", Timeout: 90 * time.Minute, MaxLoops: 4, KillGrace: 10 * time.Second}
		}},
		{"dotted keys at top level", "loop.max_loops = 2\nbackoff.jitter = 0\n", func(c *Config) {
			c.Loop.MaxLoops = 2
			c.Backoff.Jitter = 0
		}},
		{"inline table", "backoff = { base = \"2s\", factor = 3, attempts = 1 }\n", func(c *Config) {
			c.Backoff.Base = 2 * time.Second
			c.Backoff.Factor = 3
			c.Backoff.Attempts = 1
		}},
		{"zero caps", "[auto_retry]\nglobal_cap = 0\nmax_retries = 0\n", func(c *Config) {
			c.AutoRetry.GlobalCap = 0
			c.AutoRetry.MaxRetries = 0
		}},
		{"by type merges over defaults", "[auto_retry.max_retries_by_type]\nSecurity = 5\nbuild = 4\n", func(c *Config) {
			c.AutoRetry.MaxRetriesByType = map[string]int{"build": 4, "test": 3, "review": 2, "security": 5}
		}},
		{"signature", "[signature]\nnormalize = \"off\"\nextra_patterns = ['req-\\d{1,3}', \"id=\\\\w+\"]\n", func(c *Config) {
			c.Signature = Signature{Normalize: "off", ExtraPatterns: []string{`req-\d{1,3}`, `id=\w+`}}
		}},
		{"classify", "[classify]\ntransient = [\"quota\"]\npermanent = []\n", func(c *Config) {
			c.Classify = Classify{Transient: []string{"quota"}, Permanent: []string{}, RateLimit: Default().Classify.RateLimit}
		}},
		{"safeguards", "[circuit_breaker]\nthreshold = 5\ncooldown = \"1h\"\n[stall]\nloops = 2\n[cascade]\nthreshold = 4\nwindow = 8\n", func(c *Config) {
			c.CircuitBreaker = CircuitBreaker{Threshold: 5, Cooldown: time.Hour}
			c.Stall.Loops = 2
			c.Cascade = Cascade{Threshold: 4, Window: 8}
		}},
		{"tiers", "[tiers]\nsame_agent = 0\nfresh_agent = 2\nmodel = \"small\"\nescalation_model = \"large\"\n", func(c *Config) {
			c.Tiers = Tiers{SameAgent: 0, FreshAgent: 2, Model: "small", EscalationModel: "large"}
		}},
		{"verify", "[verify]\nallow_issue_commands = true\n[verify.build]\ncommand = \"go build ./...\"\n[verify.\"unit tests\"]\ncommand = \"go test ./...\"\ntimeout = \"15m\"\n", func(c *Config) {
			c.Verification.AllowIssueCommands = true
			c.Verification.Checks = map[string]Check{
				"build":      {Name: "build", Command: "go build ./...", Timeout: 5 * time.Minute},
				"unit tests": {Name: "unit tests", Command: "go test ./...", Timeout: 15 * time.Minute},
			}
		}},
		{"logs and metrics", "[logs]\ntext_retention = \"24h\"\njsonl_retention = \"48h\"\n[metrics]\ntextfile = \"/var/lib/node_exporter/orchestrator.prom\"\n", func(c *Config) {
			c.Logs = Logs{TextRetention: 24 * time.Hour, JSONLRetention: 48 * time.Hour, HistoryKeep: 24}
			c.Metrics.Textfile = "/var/lib/node_exporter/orchestrator.prom"
		}},
		{"byte order mark and CRLF", "\uFEFF[loop]\r\nmax_loops = 3\r\n", func(c *Config) { c.Loop.MaxLoops = 3 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(writeConfig(t, tt.file), nil)
			if err != nil {
				t.Fatal(err)
			}
			want := Default()
			tt.want(want)
			if !reflect.DeepEqual(c, want) {
				t.Errorf("got\n%+v\nwant\n%+v", c, want)
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	env := envFunc(map[string]string{"ORCHESTRATOR_LOOP_MAX_LOOPS": "7"})

	if _, err := Load(path, env); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load of a missing --config file: error %v, want one wrapping fs.ErrNotExist", err)
	} else if !strings.Contains(err.Error(), path) {
		t.Errorf("error %q does not name the file", err)
	}

	c, err := LoadOptional(path, env)
	if err != nil {
		t.Fatalf("LoadOptional of a missing default file: %v", err)
	}
	want := Default()
	want.Loop.MaxLoops = 7
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got %+v, want the defaults with the environment applied", c)
	}

	// A state directory that is a file is not "missing": it is an error.
	notDir := writeConfig(t, "")
	if _, err := LoadOptional(filepath.Join(notDir, "config.toml"), nil); err == nil {
		t.Error("LoadOptional under a regular file: no error")
	}
}

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

func TestUnknownKeys(t *testing.T) {
	const file = `# line 1
[loop]
command = "x"
[auto_retry]
global_cap = 15
globl_cap = 20
[auto_retry.max_retries_by_type]
build = 1
[lop]
max_loops = 3

[verify.build]
comand = "go build"
command = "go build"
[backoff]
jitter = 0.1
  GLOBAL_CAP = 1
extra = { a = 1 }
`
	path := writeConfig(t, file)
	_, err := Load(path, nil)
	// [lop] hides its keys: one problem, at the section.
	want := []string{
		path + `:6: unknown key "globl_cap" in [auto_retry] (did you mean "global_cap"?)`,
		path + `:9: unknown section [lop] (did you mean [loop]?)`,
		path + `:13: unknown key "comand" in [verify.build] (did you mean "command"?)`,
		path + `:17: unknown key "GLOBAL_CAP" in [backoff]`,
		path + `:18: unknown key "extra" in [backoff]`,
	}
	ps := problems(t, err)
	var got []string
	for _, p := range ps {
		got = append(got, p.String())
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got, want := err.Error(), strings.Join(want, "\n"); got != want {
		t.Errorf("Error() = %q, want the problems one per line", got)
	}
	if got, want := ps[0].Key, "auto_retry.globl_cap"; got != want {
		t.Errorf("Key = %q, want %q", got, want)
	}
}

func TestUnknownTopLevelKey(t *testing.T) {
	path := writeConfig(t, "\nglobal_cap = 20\n")
	_, err := Load(path, nil)
	if got, want := err.Error(), path+`:2: unknown key "global_cap" outside any section (did you mean to put it under [auto_retry]?)`; got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// TestLocateCaseSiblings: the TOML decoder matches names without regard to
// case when there is no exact match; the line of a key must not depend on
// map order when a sibling differs from it only in case.
func TestLocateCaseSiblings(t *testing.T) {
	path := writeConfig(t, "[auto_retry]\nglobal_cap = 1\nGlobal_Cap = 2\nGLOBAL_CAP = 3\n")
	for range 20 {
		_, err := Load(path, nil)
		ps := problems(t, err)
		if len(ps) != 2 || ps[0].Line != 3 || ps[1].Line != 4 {
			t.Fatalf("got %v, want unknown keys on lines 3 and 4", err)
		}
	}
}

func TestSyntaxErrors(t *testing.T) {
	tests := []struct {
		file      string
		line, col int
		msg       string
	}{
		{"[loop]\nmax_loops = = 3\n", 2, 13, "syntax error: expected value but found '=' instead"},
		{"[loop]\ncommand = \"x\nmax_loops = 3\n", 2, 13, "syntax error: strings cannot contain newlines"},
		{"\n\n[loop\n", 3, 6, "syntax error: expected '.' or ']' to end table name, but got '\\n' instead"},
		{"[loop]\nmax_loops = 3\nmax_loops = 4\n", 3, 1, "syntax error: key 'loop.max_loops' has already been defined"},
		{"\uFEFFa = @\n", 1, 5, "syntax error: expected value but found '@' instead"},
		{"[stall]\nloops = 99999999999999999999\n", 2, 9, "syntax error: 99999999999999999999 is out of range for int64"},
	}
	for _, tt := range tests {
		path := writeConfig(t, tt.file)
		_, err := Load(path, nil)
		ps := problems(t, err)
		if len(ps) != 1 {
			t.Fatalf("%q: got %d problems, want 1: %v", tt.file, len(ps), err)
		}
		p := ps[0]
		if p.File != path || p.Line != tt.line || p.Col != tt.col || p.Msg != tt.msg {
			t.Errorf("%q: got %s:%d:%d: %s\nwant %s:%d:%d: %s", tt.file, p.File, p.Line, p.Col, p.Msg, path, tt.line, tt.col, tt.msg)
		}
	}
}

func TestBadValues(t *testing.T) {
	tests := []struct {
		file string
		want string // line: message
	}{
		{"[auto_retry]\nglobal_cap = -1", "2: auto_retry.global_cap: must be at least 0, got -1"},
		{"[auto_retry]\nmax_retries = -3", "2: auto_retry.max_retries: must be at least 0, got -3"},
		{"[auto_retry]\nhalt_after_repeats = 0", "2: auto_retry.halt_after_repeats: must be at least 1, got 0"},
		{"[auto_retry.max_retries_by_type]\nbuild = -1", "2: auto_retry.max_retries_by_type.build: must be at least 0, got -1"},
		{"[auto_retry.max_retries_by_type]\nbuild = \"1\"", "2: auto_retry.max_retries_by_type.build: must be a whole number, not a string"},
		{"[auto_retry.max_retries_by_type]\nbuild = 1\nBuild = 2", `2: auto_retry.max_retries_by_type: "Build" and "build" are the same type (types are compared without regard to case)`},
		{"[auto_retry]\nmax_retries_by_type = 3", "2: auto_retry.max_retries_by_type: must be a table ([auto_retry.max_retries_by_type]), not a whole number"},
		{"[loop]\nmax_loops = 0", "2: loop.max_loops: must be at least 1, got 0"},
		{"[loop]\nmax_loops = 2.5", "2: loop.max_loops: must be a whole number, not a number"},
		{"[loop]\ntimeout = \"30 minutes\"", `2: loop.timeout: "30 minutes" is not a duration (use Go syntax such as "30m" or "1h30m")`},
		{"[loop]\ntimeout = 30", `2: loop.timeout: must be a duration string such as "30m", not a whole number`},
		{"[loop]\ntimeout = \"-5m\"", `2: loop.timeout: must be positive, got "-5m"`},
		{"[loop]\ncommand = [\"a\"]", "2: loop.command: must be a string, not an array"},
		{"loop = 3", "1: loop: must be a table ([loop]), not a whole number"},
		{"[backoff]\njitter = 1.5", "2: backoff.jitter: must be between 0 and 1, got 1.5"},
		{"[backoff]\njitter = -0.1", "2: backoff.jitter: must be between 0 and 1, got -0.1"},
		{"[backoff]\njitter = nan", "2: backoff.jitter: must be a finite number, got NaN"},
		{"[backoff]\nfactor = 0.5", "2: backoff.factor: must be at least 1, got 0.5"},
		{"[backoff]\nfactor = inf", "2: backoff.factor: must be a finite number, got +Inf"},
		{"[backoff]\nattempts = 0", "2: backoff.attempts: must be at least 1, got 0"},
		{"[backoff]\nbase = \"0s\"", `2: backoff.base: must be positive, got "0s"`},
		{"[signature]\nnormalize = \"v4\"", `2: signature.normalize: "v4" is not one of "v3", "v2", "v1", "off"`},
		{"[signature]\nextra_patterns = [\"ok\", \"(\"]", `2: signature.extra_patterns: item 2: invalid regexp "(": missing closing )`},
		{"[signature]\nextra_patterns = [\"\\\\d*\"]", `2: signature.extra_patterns: item 1: regexp "\\d*" matches the empty string`},
		{"[signature]\nextra_patterns = \"x\"", "2: signature.extra_patterns: must be an array of strings, not a string"},
		{"[classify]\ntransient = [\"a\", 429]", "2: classify.transient: item 2: must be a string, not a whole number"},
		{"[classify]\npermanent = [\"\"]", "2: classify.permanent: item 1: empty pattern would match any output"},
		{"[verify]\nallow_issue_commands = \"yes\"", "2: verify.allow_issue_commands: must be true or false, not a string"},
		{"[verify.build]\ntimeout = \"1m\"", `1: verify.build: command is missing; a check needs command = "...", the shell command that verifies an issue's fix`},
		{"[verify.build]\ncommand = \"  \"", "2: verify.build.command: must not be empty"},
		{"[verify.build]\ncommand = \"make\"\ntimeout = \"soon\"", `3: verify.build.timeout: "soon" is not a duration (use Go syntax such as "30m" or "1h30m")`},
		{"[logs]\ntext_retention = 168", `2: logs.text_retention: must be a duration string such as "30m", not a whole number`},
		{"[circuit_breaker]\ncooldown = 1979-05-27", `2: circuit_breaker.cooldown: must be a duration string such as "30m", not a date or time`},
		{"[stall]\nloops = true", "2: stall.loops: must be a whole number, not a boolean"},
		{"[cascade]\nwindow = 0", "2: cascade.window: must be at least 1, got 0"},
		{"[tiers]\nsame_agent = -1", "2: tiers.same_agent: must be at least 0, got -1"},
		{"[[verify.build]]\ncommand = \"x\"", `1: verify.build: a check must be a table ([verify.build] with command = "..."), not an array`},
		{"[auto_retry.max_retries_by_type]\n\"\" = 1", "2: auto_retry.max_retries_by_type: a type name must not be empty"},
		{"[verify.\" \"]\ncommand = \"x\"", "1: verify: a check name must not be empty"},
		{"[metrics]\ntextfile = {}", "2: metrics.textfile: must be a string, not a table"},
		{"[verify]\nbuild = \"go build\"", `2: verify.build: a check must be a table ([verify.build] with command = "..."), not a string`},
		{"[verify]\nalow_issue_commands = true", `2: unknown key "alow_issue_commands" in [verify] (did you mean "allow_issue_commands"?)`},
	}
	for _, tt := range tests {
		path := writeConfig(t, tt.file+"\n")
		c, err := Load(path, nil)
		if c != nil {
			t.Errorf("%q: Load returned a config with an error", tt.file)
		}
		ps := problems(t, err)
		if len(ps) != 1 {
			t.Errorf("%q: got %d problems, want 1: %v", tt.file, len(ps), err)
			continue
		}
		if got, want := ps[0].String(), path+":"+tt.want; got != want {
			t.Errorf("%q:\n got %s\nwant %s", tt.file, got, want)
		}
	}
}

// TestAllProblemsAtOnce: one Load reports every bad value, in file order.
func TestAllProblemsAtOnce(t *testing.T) {
	path := writeConfig(t, `[backoff]
jitter = 2
factor = 0
[loop]
max_loops = -1
[auto_retry]
global_cap = "many"
`)
	env := envFunc(map[string]string{"ORCHESTRATOR_STALL_LOOPS": "x"})
	_, err := Load(path, env)
	ps := problems(t, err)
	var got []string
	for _, p := range ps {
		got = append(got, strings.TrimPrefix(p.String(), path))
	}
	want := []string{
		":2: backoff.jitter: must be between 0 and 1, got 2",
		":3: backoff.factor: must be at least 1, got 0",
		":5: loop.max_loops: must be at least 1, got -1",
		":7: auto_retry.global_cap: must be a whole number, not a string",
		`ORCHESTRATOR_STALL_LOOPS: stall.loops: "x" is not a whole number`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
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

func TestSet(t *testing.T) {
	c := Default()
	if err := c.Set("verify.lint.command", "golangci-lint run"); err != nil {
		t.Fatal(err)
	}
	if got, ok := c.Verify("lint"); !ok || got != (Check{Name: "lint", Command: "golangci-lint run", Timeout: DefaultCheckTimeout}) {
		t.Errorf("Set created %+v, %v", got, ok)
	}
	if err := c.Set("verify.lint.timeout", "2m"); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.Verify("lint"); got.Timeout != 2*time.Minute {
		t.Errorf("timeout %v, want 2m", got.Timeout)
	}
	if err := c.Set("auto_retry.max_retries_by_type.Security", "4"); err != nil {
		t.Fatal(err)
	}
	if got := c.MaxRetriesFor("security"); got != 4 {
		t.Errorf("MaxRetriesFor(security) = %d, want 4", got)
	}

	errTests := []struct{ key, value, want string }{
		{"loop.max_loop", "3", `unknown key "loop.max_loop" (did you mean "loop.max_loops"?)`},
		{"loop.max_loops", "0", "loop.max_loops: must be at least 1, got 0"},
		{"loop.max_loops", "many", `loop.max_loops: "many" is not a whole number`},
		{"verify.fmt.timeout", "1m", "no check [verify.fmt]: set verify.fmt.command first"},
		{"verify.lint.command", "", "verify.lint.command: must not be empty"},
		{"nonsense", "1", `unknown key "nonsense"`},
		{"auto_retry.max_retries_by_type. ", "1", `unknown key "auto_retry.max_retries_by_type. " (did you mean "auto_retry.max_retries_by_type.test"?)`},
		{"verify..command", "x", `unknown key "verify..command" (did you mean "notify.command"?)`},
	}
	for _, tt := range errTests {
		before := Default()
		_ = before.Set("verify.lint.command", "golangci-lint run")
		c := Default()
		_ = c.Set("verify.lint.command", "golangci-lint run")
		err := c.Set(tt.key, tt.value)
		if err == nil {
			t.Errorf("Set(%q, %q): no error", tt.key, tt.value)
			continue
		}
		ps := problems(t, err)
		if len(ps) != 1 || ps[0].String() != tt.want || ps[0].Key != tt.key {
			t.Errorf("Set(%q, %q) = %v, want %s", tt.key, tt.value, err, tt.want)
		}
		if !reflect.DeepEqual(c, before) {
			t.Errorf("Set(%q, %q) failed but changed the config", tt.key, tt.value)
		}
	}
}

func TestSetList(t *testing.T) {
	tests := []struct {
		value string
		want  []string
	}{
		{"a, b ,c", []string{"a", "b", "c"}},
		{"single", []string{"single"}},
		{" , ", []string{}},
		{`["a,b", "c"]`, []string{"a,b", "c"}},
		{` [] `, []string{}},
	}
	for _, tt := range tests {
		c := Default()
		if err := c.Set("classify.transient", tt.value); err != nil {
			t.Fatalf("%q: %v", tt.value, err)
		}
		if !reflect.DeepEqual(c.Classify.Transient, tt.want) {
			t.Errorf("%q: got %q, want %q", tt.value, c.Classify.Transient, tt.want)
		}
	}
	// A TOML array in a variable cannot smuggle in other keys.
	c := Default()
	if err := c.Set("classify.transient", "[\"a\"]\nloop.max_loops = 1"); err == nil {
		t.Errorf("a value with a second TOML key was accepted: %q", c.Classify.Transient)
	}
}

func TestMaxRetriesFor(t *testing.T) {
	c := Default()
	c.AutoRetry.MaxRetries = 7
	tests := []struct {
		typ  string
		want int
	}{
		{"build", 1}, {"Build", 1}, {" test ", 3}, {"review", 2},
		{"bug", 7}, {"", 7}, {"security", 7},
	}
	for _, tt := range tests {
		if got := c.MaxRetriesFor(tt.typ); got != tt.want {
			t.Errorf("MaxRetriesFor(%q) = %d, want %d", tt.typ, got, tt.want)
		}
	}
}

func TestVerify(t *testing.T) {
	c, err := Load(writeConfig(t, "[verify.build]\ncommand = \"go build ./...\"\ntimeout = \"2m\"\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := c.Verify("build"); !ok || got != (Check{Name: "build", Command: "go build ./...", Timeout: 2 * time.Minute}) {
		t.Errorf("Verify(build) = %+v, %v", got, ok)
	}
	if _, ok := c.Verify("lint"); ok {
		t.Error("Verify(lint) found a check that is not configured")
	}
}

func TestClassifyMatch(t *testing.T) {
	c := Default().Classify
	tests := []struct {
		out                  string
		transient, permanent string // matched pattern, "" for none
	}{
		{"Error: Rate Limit exceeded, retry after 30s", "rate limit", ""},
		{"HTTP 429 Too Many Requests", "429", ""},
		{"read tcp: econnreset by peer", "ECONNRESET", ""},
		{"the model is Overloaded", "overloaded", ""},
		{"open /etc/x: Permission denied", "", "permission denied"},
		{"401 Unauthorized", "", "unauthorized"},
		{"Invalid API key provided", "", "invalid api key"},
		{"--- FAIL: TestX (0.03s)", "", ""},
		{"", "", ""},
	}
	for _, tt := range tests {
		got, ok := c.MatchTransient([]byte(tt.out))
		if got != tt.transient || ok != (tt.transient != "") {
			t.Errorf("MatchTransient(%q) = %q, %v; want %q", tt.out, got, ok, tt.transient)
		}
		got, ok = c.MatchPermanent([]byte(tt.out))
		if got != tt.permanent || ok != (tt.permanent != "") {
			t.Errorf("MatchPermanent(%q) = %q, %v; want %q", tt.out, got, ok, tt.permanent)
		}
	}
}

// TestManyProblemsBounded: a file with a great many bad keys is reported
// quickly (lines are looked up for the first ones only) and completely.
func TestManyProblemsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("[loop]\n")
	const n = 300
	for i := range n {
		b.WriteString("k")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(string(rune('a'+i%26)) + strings.Repeat("y", i/26) + " = 1\n")
	}
	path := writeConfig(t, b.String())
	start := time.Now()
	_, err := Load(path, nil)
	ps := problems(t, err)
	if len(ps) != n {
		t.Errorf("got %d problems, want %d", len(ps), n)
	}
	located := 0
	for _, p := range ps {
		if p.Line > 0 {
			located++
		}
	}
	if located != maxLocated {
		t.Errorf("%d problems have a line, want %d", located, maxLocated)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %v", d)
	}
}
