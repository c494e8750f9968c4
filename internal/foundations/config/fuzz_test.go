package config

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// FuzzLoad: no file content makes Load panic; a file either loads to a
// Config that keeps every rule of the configuration, or gives a *Error whose every
// problem names the file and a line inside it.
func FuzzLoad(f *testing.F) {
	seeds, err := filepath.Glob("testdata/*.toml")
	if err != nil {
		f.Fatal(err)
	}
	seeds = append(seeds, "../../../.orchestrator.example/config.toml")
	for _, s := range seeds {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	// Inputs run one at a time in each fuzzing process: one file will do.
	path := filepath.Join(f.TempDir(), "config.toml")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := Load(path, nil)
		if err == nil {
			checkInvariants(t, c)
			return
		}
		var ce *Error
		if !errors.As(err, &ce) || len(ce.Problems) == 0 {
			t.Fatalf("error %v (%T) is not a *config.Error with problems", err, err)
		}
		lines := strings.Count(string(data), "\n") + 1
		for _, p := range ce.Problems {
			if p.File != path || p.Msg == "" || p.Line < 0 || p.Line > lines {
				t.Errorf("bad problem %+v (file has %d lines)", p, lines)
			}
		}
	})
}

// FuzzSet: no key or value makes Set panic, a rejected value changes
// nothing, and an accepted one keeps every rule.
func FuzzSet(f *testing.F) {
	for _, k := range fixedKeys() {
		f.Add(k, "1")
	}
	f.Add("verify.x.command", "make")
	f.Add("auto_retry.max_retries_by_type.build", "-1")
	f.Add("classify.transient", `["a,b", "c"]`)
	f.Add("backoff.jitter", "NaN")
	f.Fuzz(func(t *testing.T, key, value string) {
		c := Default()
		if err := c.Set(key, value); err != nil {
			var ce *Error
			if !errors.As(err, &ce) || len(ce.Problems) != 1 {
				t.Fatalf("error %v is not a *config.Error with one problem", err)
			}
			if !reflect.DeepEqual(c, Default()) {
				t.Fatalf("rejected Set(%q, %q) changed the config", key, value)
			}
			return
		}
		checkInvariants(t, c)
	})
}

// checkInvariants asserts the rules every loaded Config keeps.
func checkInvariants(t *testing.T, c *Config) {
	t.Helper()
	positive := map[string]int64{
		"loop.timeout": int64(c.Loop.Timeout), "loop.max_loops": int64(c.Loop.MaxLoops),
		"auto_retry.halt_after_repeats": int64(c.AutoRetry.HaltAfterRepeats),
		"backoff.base":                  int64(c.Backoff.Base), "backoff.max": int64(c.Backoff.Max),
		"backoff.attempts": int64(c.Backoff.Attempts), "backoff.rate_limit_attempts": int64(c.Backoff.RateLimitAttempts),
		"circuit_breaker.threshold": int64(c.CircuitBreaker.Threshold), "circuit_breaker.cooldown": int64(c.CircuitBreaker.Cooldown),
		"stall.loops": int64(c.Stall.Loops), "cascade.threshold": int64(c.Cascade.Threshold), "cascade.window": int64(c.Cascade.Window),
		"logs.text_retention": int64(c.Logs.TextRetention), "logs.jsonl_retention": int64(c.Logs.JSONLRetention),
	}
	for k, v := range positive {
		if v <= 0 {
			t.Errorf("%s = %d, want > 0", k, v)
		}
	}
	nonNegative := map[string]int{
		"auto_retry.global_cap": c.AutoRetry.GlobalCap, "auto_retry.max_retries": c.AutoRetry.MaxRetries,
		"tiers.same_agent": c.Tiers.SameAgent, "tiers.fresh_agent": c.Tiers.FreshAgent,
	}
	for typ, n := range c.AutoRetry.MaxRetriesByType {
		nonNegative["auto_retry.max_retries_by_type."+typ] = n
		if typ != strings.ToLower(typ) || strings.TrimSpace(typ) == "" {
			t.Errorf("type %q is not lower-case", typ)
		}
	}
	for k, v := range nonNegative {
		if v < 0 {
			t.Errorf("%s = %d, want ≥ 0", k, v)
		}
	}
	if f := c.Backoff.Factor; !(f >= 1) || math.IsInf(f, 0) {
		t.Errorf("backoff.factor = %v", f)
	}
	if j := c.Backoff.Jitter; !(j >= 0 && j <= 1) {
		t.Errorf("backoff.jitter = %v", j)
	}
	if n := c.Signature.Normalize; n != "v3" && n != "v2" && n != "v1" && n != "off" {
		t.Errorf("signature.normalize = %q", n)
	}
	for _, p := range c.Signature.ExtraPatterns {
		if err := checkRegexp(p); err != nil {
			t.Errorf("signature.extra_patterns: %v", err)
		}
	}
	for _, p := range append(append([]string{}, c.Classify.Transient...), c.Classify.Permanent...) {
		if p == "" {
			t.Error("empty classify pattern")
		}
	}
	for name, ch := range c.Verification.Checks {
		if ch.Name != name || strings.TrimSpace(name) == "" || strings.TrimSpace(ch.Command) == "" || ch.Timeout <= 0 {
			t.Errorf("check %q = %+v", name, ch)
		}
	}
}
