package orchestrator

import (
	"testing"
	"time"

	"github.com/autoretry/orchestrator/internal/adapters/agentout"
)

// The failures that belong to the machine, read from the agent's report:
// refused credentials, a limit (with the instant it lifts when the agent
// said it), an overload. A limit the agent got past on its own (exit 0, no
// error) and the work's own errors are not the machine's.
func TestAgentFailureOf(t *testing.T) {
	reset := testNow.Add(time.Hour)
	tests := []struct {
		name  string
		rep   agentout.Report
		exit  int
		class string
		until time.Time
	}{
		{"auth", agentout.Report{Error: true, ErrorKind: agentout.ErrAuth}, 1, classAuth, time.Time{}},
		{"usage limit with reset, exit 0", agentout.Report{Error: true, ErrorKind: agentout.ErrUsageLimit,
			Limit: &agentout.Limit{Until: reset, Text: "You've hit your limit"}}, 0, classRateLimit, reset},
		{"rate limit without reset", agentout.Report{Error: true, ErrorKind: agentout.ErrRateLimit, Limit: &agentout.Limit{Text: "429"}}, 1, classRateLimit, time.Time{}},
		{"overloaded", agentout.Report{Error: true, ErrorKind: agentout.ErrOverloaded}, 1, classTransient, time.Time{}},
		{"a rate limit the agent got past", agentout.Report{Error: true, ErrorKind: agentout.ErrRateLimit, Limit: &agentout.Limit{Text: "429"}}, 0, "", time.Time{}},
		{"an overload the agent got past", agentout.Report{Error: true, ErrorKind: agentout.ErrOverloaded}, 0, "", time.Time{}},
		{"auth, exit 0", agentout.Report{Error: true, ErrorKind: agentout.ErrAuth}, 0, classAuth, time.Time{}},
		{"max turns is the work's", agentout.Report{Error: true, ErrorKind: agentout.ErrMaxTurns}, 1, "", time.Time{}},
		{"execution error is the work's", agentout.Report{Error: true, ErrorKind: agentout.ErrExecution}, 1, "", time.Time{}},
		{"success", agentout.Report{}, 0, "", time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := agentFailureOf(tt.rep, tt.exit)
			if got, want := f.class, tt.class; got != want {
				t.Errorf("class = %q, want %q", got, want)
			}
			if got, want := f.until, tt.until; !got.Equal(want) {
				t.Errorf("until = %v, want %v", got, want)
			}
		})
	}
}

// tokens_per_day counts the tokens the agents reported; window_share stops
// loops (a wait, exit 0) while the agent's last report of its usage window
// is at or over the share, until the window resets.
func TestAgentRules(t *testing.T) {
	q, st := parse(t, "", stateMD(0, true))
	reset := testNow.Add(2 * time.Hour)
	exec := func(tokens int64, used float64, resets time.Time) Exec {
		return Exec{At: testNow.Add(-time.Minute), Kind: KindRegular, Tokens: tokens, WindowUsed: used, WindowReset: resets}
	}
	tests := []struct {
		name  string
		set   func(in *Inputs)
		want  Code
		until time.Time
		wait  bool
	}{
		{"tokens off", func(in *Inputs) { in.Usage.Execs = []Exec{exec(5000, 0, time.Time{})} }, "", time.Time{}, false},
		{"tokens under", func(in *Inputs) {
			in.Config.Budget.TokensPerDay = 5001
			in.Usage.Execs = []Exec{exec(5000, 0, time.Time{})}
		}, "", time.Time{}, false},
		{"tokens at the limit", func(in *Inputs) {
			in.Config.Budget.TokensPerDay = 5000
			in.Usage.Execs = []Exec{exec(5000, 0, time.Time{})}
		}, CodeDailyTokens, testNow.Add(-time.Minute).Add(24 * time.Hour), false},
		{"window share off", func(in *Inputs) { in.Usage.Execs = []Exec{exec(0, 0.9, reset)} }, "", time.Time{}, false},
		{"window under the share", func(in *Inputs) {
			in.Config.Budget.WindowShare = 0.5
			in.Usage.Execs = []Exec{exec(0, 0.49, reset)}
		}, "", time.Time{}, false},
		{"window at the share", func(in *Inputs) {
			in.Config.Budget.WindowShare = 0.5
			in.Usage.Execs = []Exec{exec(0, 0.5, reset)}
		}, CodeWindowShare, reset, true},
		{"window reset already", func(in *Inputs) {
			in.Config.Budget.WindowShare = 0.5
			in.Usage.Execs = []Exec{exec(0, 0.9, testNow)}
		}, "", time.Time{}, false},
		{"the last report counts", func(in *Inputs) {
			in.Config.Budget.WindowShare = 0.5
			later := exec(0, 0.1, reset)
			later.At = testNow
			in.Usage.Execs = []Exec{exec(0, 0.9, reset), later}
		}, "", time.Time{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := testInputs(q, st)
			tt.set(&in)
			_, stop := Gate(in, KindRegular)
			var got Code
			if stop != nil {
				got = stop.Rule
				if !stop.Until.Equal(tt.until) || stop.Wait != tt.wait {
					t.Errorf("until, wait = %v, %v; want %v, %v", stop.Until, stop.Wait, tt.until, tt.wait)
				}
			}
			if got != tt.want {
				t.Errorf("stop = %q, want %q", got, tt.want)
			}
		})
	}
}
