package orchestrator

import (
	"strings"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/config"
)

// spendCode is the code of the first spend rule that stops, "" for none.
func spendCode(vs []Verdict) (Code, string) {
	for _, v := range vs {
		if v.Stop {
			return v.Rule, v.Reason
		}
	}
	return "", ""
}

// Every spend limit halts at its value and above, not below; a limit of 0
// is off whatever was spent.
func TestSpendVerdictsBoundaries(t *testing.T) {
	tests := []struct {
		name  string
		set   func(*config.Config)
		spend Spend
		want  Code
	}{
		{"cost below", func(c *config.Config) { c.Budget.IssueCost = 2 }, Spend{Cost: 1.99}, ""},
		{"cost at", func(c *config.Config) { c.Budget.IssueCost = 2 }, Spend{Cost: 2}, CodeIssueCost},
		{"cost above", func(c *config.Config) { c.Budget.IssueCost = 2 }, Spend{Cost: 2.5}, CodeIssueCost},
		{"cost off", func(c *config.Config) { c.Budget.IssueCost = 0 }, Spend{Cost: 1e6}, ""},
		{"tokens below", func(c *config.Config) { c.Budget.IssueTokens = 1000 }, Spend{Tokens: 999}, ""},
		{"tokens at", func(c *config.Config) { c.Budget.IssueTokens = 1000 }, Spend{Tokens: 1000}, CodeIssueTokens},
		{"tokens above", func(c *config.Config) { c.Budget.IssueTokens = 1000 }, Spend{Tokens: 1001}, CodeIssueTokens},
		{"agent time below", func(c *config.Config) {}, Spend{AgentTime: 4*time.Hour - time.Second}, ""},
		{"agent time at", func(c *config.Config) {}, Spend{AgentTime: 4 * time.Hour}, CodeIssueAgentTime},
		{"agent time above", func(c *config.Config) {}, Spend{AgentTime: 5 * time.Hour}, CodeIssueAgentTime},
		{"agent time off", func(c *config.Config) { c.Budget.IssueAgentTime = 0 }, Spend{AgentTime: 5 * time.Hour}, ""},
		{"spend cost below", func(c *config.Config) { c.Progress.SpendCost = 1 }, Spend{Cost: 0.99}, ""},
		{"spend cost at", func(c *config.Config) { c.Progress.SpendCost = 1 }, Spend{Cost: 1}, CodeNoProgressSpend},
		{"spend cost above", func(c *config.Config) { c.Progress.SpendCost = 1 }, Spend{Cost: 1.01}, CodeNoProgressSpend},
		{"spend tokens below", func(c *config.Config) { c.Progress.SpendTokens = 500 }, Spend{Tokens: 499}, ""},
		{"spend tokens at", func(c *config.Config) { c.Progress.SpendTokens = 500 }, Spend{Tokens: 500}, CodeNoProgressSpend},
		{"spend tokens above", func(c *config.Config) { c.Progress.SpendTokens = 500 }, Spend{Tokens: 501}, CodeNoProgressSpend},
		{"spend time below", func(c *config.Config) {}, Spend{AgentTime: 90*time.Minute - time.Second}, ""},
		{"spend time at", func(c *config.Config) {}, Spend{AgentTime: 90 * time.Minute}, CodeNoProgressSpend},
		{"spend time above", func(c *config.Config) {}, Spend{AgentTime: 2 * time.Hour}, CodeNoProgressSpend},
		{"spend time off", func(c *config.Config) { c.Progress.SpendAgentTime = 0 }, Spend{AgentTime: 2 * time.Hour}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.Budget.Reserve = false
			tt.set(cfg)
			s := IssueSpend{Total: tt.spend}
			if strings.HasPrefix(tt.name, "spend ") {
				s = IssueSpend{SinceProgress: tt.spend}
			}
			got, why := spendCode(SpendVerdicts("ISSUE-1", s, Spend{}, false, cfg, ""))
			if got != tt.want {
				t.Errorf("code %q (%s), want %q", got, why, tt.want)
			}
		})
	}
}

// With [budget] reserve, an allowance left smaller than a typical loop
// halts the issue with the cap's code, saying what a loop needs and what
// is left; as large as a typical loop, it does not. Off, it never does.
func TestSpendVerdictsReserve(t *testing.T) {
	tests := []struct {
		name    string
		reserve bool
		used    time.Duration
		typical time.Duration
		want    Code
	}{
		{"left above typical", true, 3 * time.Hour, 50 * time.Minute, ""},
		{"left equals typical", true, 3 * time.Hour, time.Hour, ""},
		{"left below typical", true, 3 * time.Hour, 61 * time.Minute, CodeIssueAgentTime},
		{"reserve off", false, 3 * time.Hour, 2 * time.Hour, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.Progress.SpendAgentTime = 0
			cfg.Budget.Reserve = tt.reserve
			got, why := spendCode(SpendVerdicts("ISSUE-1", IssueSpend{Total: Spend{AgentTime: tt.used}}, Spend{AgentTime: tt.typical}, true, cfg, ""))
			if got != tt.want {
				t.Fatalf("code %q (%s), want %q", got, why, tt.want)
			}
			if got != "" && !strings.Contains(why, "a typical loop for ISSUE-1 needs 1h1m0s of agent time and 1h0m0s of agent time is left") {
				t.Errorf("reason %q does not say what a loop needs and what is left", why)
			}
		})
	}
	// No loop recorded: nothing to compare with.
	cfg := config.Default()
	if got, why := spendCode(SpendVerdicts("ISSUE-1", IssueSpend{Total: Spend{AgentTime: 3 * time.Hour}}, Spend{}, false, cfg, "")); got != "" {
		t.Errorf("without a typical loop: %q (%s)", got, why)
	}
}

// Halt applies the caps to a failure being recorded, but the spend since
// progress only before a loop: the loop whose failure is being recorded
// has no progress verdict yet.
func TestHaltSpend(t *testing.T) {
	cfg := config.Default()
	cfg.Budget.IssueTokens = 1000
	cfg.Progress.SpendTokens = 100
	l := newIssueLedger()
	l.Issues["A"] = &IssueSpend{SinceProgress: Spend{Tokens: 200}, Total: Spend{Tokens: 200}}
	u := Usage{Spend: l}
	if code, _ := Halt(HaltFacts{Issue: "A", Failure: Failure{Signature: "x"}, New: true, Repeats: 1, Usage: u}, cfg); code != "" {
		t.Errorf("recording a failure: %q, want no halt", code)
	}
	if code, _ := Halt(HaltFacts{Issue: "A", Usage: u}, cfg); code != CodeNoProgressSpend {
		t.Errorf("before a loop: %q, want %q", code, CodeNoProgressSpend)
	}
	l.Issues["A"].Total.Tokens = 1000
	if code, _ := Halt(HaltFacts{Issue: "A", Failure: Failure{Signature: "x"}, New: true, Repeats: 1, Usage: u}, cfg); code != CodeIssueTokens {
		t.Errorf("recording a failure past the cap: %q, want %q", code, CodeIssueTokens)
	}
	if code, _ := Halt(HaltFacts{Issue: "A", Usage: Usage{}}, cfg); code != "" {
		t.Errorf("spend not read: %q, want no halt", code)
	}
}
