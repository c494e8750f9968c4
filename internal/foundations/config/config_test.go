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
		{"auto_retry.progress_resets", "true", "false"},
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
		{"loop.idle_timeout", "15m", "0s"},
		{"budget.issue_cost", "0", "5"},
		{"budget.issue_tokens", "0", "2000000"},
		{"budget.issue_agent_time", "4h", "1h"},
		{"budget.reserve", "true", "false"},
		{"budget.window_pace", "false", "true"},
		{"progress.spend_cost", "0", "2"},
		{"progress.spend_tokens", "0", "300000"},
		{"progress.spend_agent_time", "90m", "1h"},
		{"schedule.active_hours", "", "Mon-Fri 09:00-18:00"},
		{"schedule.timezone", "", "Europe/Paris"},
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
	const path = "../../../.orchestrator.example/config.toml"
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
			c.Loop = Loop{Command: "make fix", Timeout: 90 * time.Minute, MaxLoops: 4, KillGrace: 10 * time.Second, IdleTimeout: 15 * time.Minute}
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
