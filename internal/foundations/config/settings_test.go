package config

import (
	"reflect"
	"testing"
	"time"
)

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
