package orchestrator

import (
	"strings"
	"testing"
)

func TestConfigLoosens(t *testing.T) {
	base := "[loop]\ncommand = \"sh loop.sh\"\nmax_loops = 3\n[budget]\nloops_per_day = 50\n[circuit_breaker]\ncooldown = \"30m\"\n"
	for _, tc := range []struct {
		name, after string
		loose       string // "" : only tightening
	}{
		{"same", base, ""},
		{"fewer loops", strings.Replace(base, "max_loops = 3", "max_loops = 2", 1), ""},
		{"more loops", strings.Replace(base, "max_loops = 3", "max_loops = 100", 1), "loop.max_loops 3 → 100"},
		{"smaller budget", strings.Replace(base, "loops_per_day = 50", "loops_per_day = 5", 1), ""},
		{"budget off", strings.Replace(base, "loops_per_day = 50", "loops_per_day = 0", 1), "budget.loops_per_day 50 → 0"},
		{"longer cooldown", strings.Replace(base, `"30m"`, `"2h"`, 1), ""},
		{"shorter cooldown", strings.Replace(base, `"30m"`, `"1m"`, 1), "circuit_breaker.cooldown 30m0s → 1m0s"},
		{"lower by type", base + "[auto_retry.max_retries_by_type]\ntest = 1\n", ""},
		{"higher by type", base + "[auto_retry.max_retries_by_type]\ntest = 9\n", "max_retries_by_type.test 3 → 9"},
		{"lower max_retries", base + "[auto_retry]\nmax_retries = 2\n", ""},
		{"other key", strings.Replace(base, `sh loop.sh`, `sh other.sh`, 1), "does not count as tightening"},
		{"broken", base + "[[[", "does not load"},
	} {
		got := strings.Join(configLoosens([]byte(base), []byte(tc.after)), "; ")
		if tc.loose == "" && got != "" || tc.loose != "" && !strings.Contains(got, tc.loose) {
			t.Errorf("%s: loosens %q, want %q", tc.name, got, tc.loose)
		}
	}
}
