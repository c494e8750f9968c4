package replay

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/config"
	"github.com/autoretry/orchestrator/orchestrator"
)

const issue = "ISSUE-20261102-001"

const queue = `# Issue Queue

## ISSUE-20261102-001

| Field | Value |
|-------|-------|
| Type | bug |
| Priority | critical |
| Status | pending |
| Auto-Retry | true |
| Retry-Count | 0 |
| Max-Retries | 20 |
| Halted | false |
| Blocking | true |
| Verify | test |

### Summary
TestParse fails
`

// oneRun is a history of one run: a regular loop, then the loops given.
func oneRun(loops ...Loop) *History {
	return &History{Name: "test", Label: Never, Kind: KindSynthetic, Config: "[verify.test]\ncommand = \"go test ./...\"\n",
		Start: time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC), Queue: queue,
		Runs: []Run{{Loops: append([]Loop{{Exec: Exec{Minutes: 5}, Workspace: "w0"}}, loops...)}}}
}

// failing is a loop that changed the workspace to ws and after which the
// check fails with out.
func failing(ws, out string) Loop {
	return Loop{Exec: Exec{Minutes: 5, Cost: 0.5}, Workspace: ws, Verify: map[string]Result{issue: {Exit: 1, Output: out}}}
}

func passing(ws string) Loop {
	return Loop{Exec: Exec{Minutes: 5, Cost: 0.5}, Workspace: ws, Verify: map[string]Result{issue: {Exit: 0, Output: "ok\texample.com/p\t0.01s\n"}}}
}

// goTest is go test's output with the tests named failing.
func goTest(n int, failing ...string) string {
	var b strings.Builder
	for _, name := range failing {
		fmt.Fprintf(&b, "--- FAIL: %s (0.%02ds)\n    parse_test.go:%d: got 3, want 4\n", name, n%100, 10+len(name))
	}
	fmt.Fprintf(&b, "FAIL\nFAIL\texample.com/p\t0.%03ds\nFAIL\n", n)
	return b.String()
}

var words = []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf"}

// goTestSaying is go test's output of one failing test with a message.
func goTestSaying(n int, name, msg string) string {
	return fmt.Sprintf("--- FAIL: %s (0.%02ds)\n    parse_test.go:12: %s\nFAIL\nFAIL\texample.com/p\t0.%03ds\nFAIL\n", name, n%100, msg, n)
}

// rules writes a rule set to judge a history by.
func rules(t *testing.T, toml string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rules.toml")
	if err := os.WriteFile(path, []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func play(t *testing.T, h *History, rulesPath string) *Played {
	t.Helper()
	cfg, err := h.ConfigWith(rulesPath)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Play(context.Background(), h, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// sameFailure is an agent that changes files every loop and fails the
// same way every time, its timings aside.
func sameFailure(n int) *History {
	var loops []Loop
	for i := 1; i <= n; i++ {
		loops = append(loops, failing(fmt.Sprintf("w%d", i), goTest(i*7, "TestParse")))
	}
	return oneRun(loops...)
}

// The same failure halts its issue at its third repeat (loop 4: the
// regular loop, then three failing retries); at four repeats, a loop
// later. Both run with the progress rules out of the way.
func TestSameFailureHaltsAtItsLimit(t *testing.T) {
	h := sameFailure(12)
	for _, c := range []struct {
		repeats, loop int
	}{{3, 4}, {4, 5}} {
		p := play(t, h, rules(t, fmt.Sprintf("[auto_retry]\nhalt_after_repeats = %d\n[progress]\nloops = 20\n", c.repeats)))
		got := FirstStop(h, p)
		if got.Loop != c.loop || got.Code != orchestrator.CodeRepeatedFailure || got.Issue != issue {
			t.Errorf("halt_after_repeats = %d: first stop %+v; want %s halted repeated_failure after loop %d", c.repeats, got, issue, c.loop)
		}
	}
}

// An agent that leaves the workspace as it found it halts no_change after
// two such auto-retry loops (loop 3); with that rule off, the run stops
// no_progress after three (loop 4), and cron's next run goes on.
func TestIdleAgentHaltsNoChange(t *testing.T) {
	var loops []Loop
	for i := 1; i <= 8; i++ {
		loops = append(loops, failing("w0", goTestSaying(i, "TestParse", fmt.Sprintf("attempt %s went wrong", words[i%len(words)]))))
	}
	h := oneRun(loops...)
	if got := FirstStop(h, play(t, h, "")); got.Loop != 3 || got.Code != orchestrator.CodeNoChange {
		t.Errorf("default: first stop %+v; want no_change after loop 3", got)
	}
	p := play(t, h, rules(t, "[progress]\nidle_loops = 0\n"))
	if o := p.Outcomes[0]; o.Loops != 4 || o.Code != orchestrator.CodeNoProgress || len(o.Halts) != 0 || len(p.Runs) < 2 {
		t.Errorf("idle_loops = 0: %+v over %d runs; want run 1 stopped no_progress after loop 4, then more runs", o, len(p.Runs))
	}
}

// A slow fixer whose failing tests drop one every other loop is never
// stopped, and resolves its issue; allowed less agent time without
// progress than one loop takes, it is halted at its first plateau, a
// false stop.
func TestSlowFixerIsLetRun(t *testing.T) {
	names := []string{"TestA", "TestB", "TestC", "TestD", "TestE"}
	var loops []Loop
	for i := 1; i <= 9; i++ {
		left := names[:len(names)-i/2]
		loops = append(loops, failing(fmt.Sprintf("w%d", i), goTest(i, left...)))
	}
	loops = append(loops, passing("w10"))
	h := oneRun(loops...)
	p := play(t, h, "")
	if s := ScoreOf(h, p); s.Verdict != VerdictLetRun {
		t.Errorf("default: %+v; want let run", s)
	}
	if last := p.Outcomes[len(p.Outcomes)-1]; last.Loops != h.Loops() || last.Code != "" {
		t.Errorf("default: %+v; want all %d loops, completed", last, h.Loops())
	}
	if s := ScoreOf(h, play(t, h, rules(t, "[progress]\nspend_agent_time = \"4m\"\n"))); s.Verdict != VerdictFalseStop || s.Stop.Code != orchestrator.CodeNoProgressSpend {
		t.Errorf("spend_agent_time = 4m: %+v; want a false stop, no_progress_spend", s)
	}
}

// A run recorded under a strict rule, made into a history from its own
// event log, replays the same under that rule; under the default one it
// goes on past its recorded end: the loops added are estimated from its
// last loop, with what they would spend.
func TestLogReplaysTheSameAndEstimatesLoopsAdded(t *testing.T) {
	strict := rules(t, "[auto_retry]\nhalt_after_repeats = 2\n")
	dir := t.TempDir()
	h := sameFailure(12)
	cfg, err := h.ConfigWith(strict)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := PlayIn(context.Background(), h, cfg, dir); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, ".orchestrator")
	if err := os.WriteFile(filepath.Join(state, "config.toml"), []byte(h.Config+"\n[auto_retry]\nhalt_after_repeats = 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	logged, err := FromLog(state, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	// Run 1 halts the issue after loop 3; cron's next run has only its
	// regular loop left to run.
	if len(logged.Runs) != 2 || len(logged.Runs[0].Loops) != 3 || logged.Recorded[0].Halts[0].Code != orchestrator.CodeRepeatedFailure {
		t.Fatalf("from the log: %d runs, recorded %+v; want run 1 of 3 loops halted repeated_failure, then a run", len(logged.Runs), logged.Recorded)
	}
	if d := Compare(logged, logged.Recorded, play(t, logged, "")); len(d) != 0 {
		t.Errorf("under the config it ran with: %+v; want no difference", d)
	}
	d := Compare(logged, logged.Recorded, play(t, logged, rules(t, "[auto_retry]\nhalt_after_repeats = 3\n")))
	if len(d) != 1 || d[0].LoopsAdded != 1 || !d[0].Estimated || d[0].CostAdded != 0.5 || d[0].MinutesAdded != 5 {
		t.Errorf("halt_after_repeats = 3: %+v; want one loop added, estimated, $0.50 and 5 minutes", d)
	}
}

// A history that cannot be read names the file, line and column.
func TestBadHistoryNamesWhere(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"{\n  \"label\": 3,\n  \"kind\": \"recorded\",\n  \"runs\": [}\n", "h.json:4:12: invalid character '}'"},
		{"{\n  \"label\": \"soon\"\n}", `h.json:2:`},
		{"{\n  \"kind\": \"made up\", \"start\": \"2026-11-02T09:00:00Z\"\n}", `h.json: kind: want recorded, incident or synthetic; got "made up"`},
		{"{\n  \"kind\": \"synthetic\",\n  \"lable\": 3\n}", `h.json:3:`},
		{`{"kind": "synthetic", "start": "2026-11-02T09:00:00Z", "label": 9, "runs": [{"loops": [{}]}]}`, "h.json: label: loop 9, but the history holds 1 loops"},
		{`{"kind": "synthetic", "start": "2026-11-02T09:00:00Z", "runs": [{"loops": [{"person": ["shout"]}]}]}`, `run 1, loop 1: person: "shout"`},
	} {
		_, err := Parse("h.json", []byte(c.text))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v; want %q", c.text, err, c.want)
		}
	}
}

// A loop that prints nothing past [loop] idle_timeout is stopped as hung:
// the loop that ran away is cut short, a stop even though cron's next run
// goes on. Under a longer idle_timeout it is not hung.
func TestSilentLoopStopsHung(t *testing.T) {
	hung := failing("w2", goTest(2, "TestParse", "TestLex"))
	hung.Minutes, hung.Silent = 40, 30
	h := oneRun(failing("w1", goTest(1, "TestParse", "TestLex", "TestRun")), hung, failing("w3", goTest(3, "TestParse")), passing("w4"))
	p := play(t, h, "")
	if got := FirstStop(h, p); got.Loop != 3 || got.Code != orchestrator.CodeHung || len(p.Runs) != 2 {
		t.Errorf("default: first stop %+v over %d runs; want hung at loop 3, then a second run", got, len(p.Runs))
	}
	if got := FirstStop(h, play(t, h, rules(t, "[loop]\nidle_timeout = \"45m\"\n"))); got.Loop != 0 {
		t.Errorf("idle_timeout 45m: first stop %+v; want none", got)
	}
}

// A run stopped for no progress whose work cron's next run takes up again
// raised an alarm; it did not stop the loops.
func TestNoProgressRunStopPacesTheLoops(t *testing.T) {
	var loops []Loop
	for i := 1; i <= 6; i++ {
		loops = append(loops, failing(fmt.Sprintf("w%d", i), goTestSaying(i, "TestParse", "attempt "+words[i%len(words)])))
	}
	h := oneRun(append(loops, passing("w7"))...)
	p := play(t, h, "")
	if s := ScoreOf(h, p); s.Verdict != VerdictLetRun || p.Outcomes[0].Code != orchestrator.CodeNoProgress {
		t.Errorf("%+v, run 1 %+v; want run 1 stopped no_progress, the work let run", s, p.Outcomes[0])
	}
}

// A run that reaches [loop] max_loops is paced, not stopped, when cron's
// next run takes the work up.
func TestPerRunCapPacesTheLoops(t *testing.T) {
	names := []string{"TestA", "TestB", "TestC", "TestD", "TestE", "TestF"}
	var loops []Loop
	for i := 1; i <= 6; i++ {
		loops = append(loops, failing(fmt.Sprintf("w%d", i), goTest(i, names[:len(names)-i+1]...)))
	}
	h := oneRun(append(loops, passing("w7"))...)
	p := play(t, h, rules(t, "[loop]\nmax_loops = 4\n"))
	if s := ScoreOf(h, p); s.Verdict != VerdictLetRun || p.Outcomes[0].Code != orchestrator.CodeMaxLoops {
		t.Errorf("max_loops = 4: %+v, run 1 %+v; want run 1 capped, the work let run", s, p.Outcomes[0])
	}
}

// A rate-limited loop that waits out its reset and resumes is no stop; the
// tries before it are executions of the same loop.
func TestRateLimitedLoopResumes(t *testing.T) {
	limited := failing("w2", goTest(2, "TestParse"))
	limited.Tries = []Exec{{Minutes: 0.2, Exit: 1, Output: "Error: 429 Too Many Requests; retry after 20s\n"}}
	h := oneRun(failing("w1", goTest(1, "TestParse", "TestLex")), limited, passing("w3"))
	p := play(t, h, "")
	if s := ScoreOf(h, p); s.Verdict != VerdictLetRun || p.Outcomes[0].Loops != 4 {
		t.Errorf("%+v, outcomes %+v; want let run, 4 loops", s, p.Outcomes)
	}
}

// An issue's cost cap halts it once its loops' cost reaches it.
func TestIssueCostCapHalts(t *testing.T) {
	h := sameFailure(10)
	for i := range h.Runs[0].Loops[1:] {
		h.Runs[0].Loops[1+i].Verify[issue] = Result{Exit: 1, Output: goTestSaying(i, "TestParse", "attempt "+words[i%len(words)])}
	}
	p := play(t, h, rules(t, "[budget]\nissue_cost = 2.0\n[progress]\nloops = 20\nidle_loops = 0\n"))
	if got := FirstStop(h, p); got.Code != orchestrator.CodeIssueCost || got.Issue != issue {
		t.Errorf("first stop %+v; want %s halted issue_cost", got, issue)
	}
}

// A person's no_auto_retry during a loop ends the run after it: no stop
// of the tool's own.
func TestPersonsSentinelIsNoStop(t *testing.T) {
	l := failing("w1", goTest(1, "TestParse"))
	l.Person = []string{"sentinel"}
	h := oneRun(l, failing("w2", goTest(2, "TestParse")))
	p := play(t, h, "")
	if got := FirstStop(h, p); got.Loop != 0 || p.Outcomes[0].Loops != 2 {
		t.Errorf("first stop %+v, outcomes %+v; want none, 2 loops", got, p.Outcomes)
	}
}

// Scores: caught by the label, late, missed, a false stop, let run; the
// totals count them and take the median loop of the stops.
func TestScoresAndTotals(t *testing.T) {
	h := func(label Label) *History {
		return &History{Name: fmt.Sprint(label), Label: label, Runs: []Run{{Loops: make([]Loop, 10)}}}
	}
	stopAt := func(loop int) *Played {
		p := &Played{Outcomes: []Outcome{{Run: 1, Loops: 10}}, Runs: []PlayedRun{{}}}
		if loop > 0 {
			p.Outcomes[0] = Outcome{Run: 1, Loops: loop, Code: orchestrator.CodeMaxLoops}
		}
		for i := range p.Outcomes[0].Loops {
			p.Runs[0].Loops = append(p.Runs[0].Loops, PlayedLoop{Index: i + 1})
		}
		return p
	}
	var scores []Score
	for _, c := range []struct {
		label Label
		stop  int
		want  string
	}{{4, 3, VerdictCaught}, {4, 4, VerdictCaught}, {4, 6, VerdictLate}, {4, 0, VerdictMissed}, {Never, 5, VerdictFalseStop}, {Never, 0, VerdictLetRun}} {
		s := ScoreOf(h(c.label), stopAt(c.stop))
		if s.Verdict != c.want {
			t.Errorf("label %s, stop %d: %s; want %s", c.label, c.stop, s.Verdict, c.want)
		}
		scores = append(scores, s)
	}
	got := TotalsOf("ours", scores).String()
	if want := "ours: caught 3/4, median 4 loops, false stops 1 (1 caught late; saved 17 loops, 17m0s agent time, $0.00)"; got != want {
		t.Errorf("totals:\n%s\nwant\n%s", got, want)
	}
}

// The layered config: the history's own, then the rules over it.
func TestConfigWithLayersRulesOverTheHistorys(t *testing.T) {
	h := oneRun()
	h.Config += "[loop]\nmax_loops = 7\n"
	cfg, err := h.ConfigWith(rules(t, "[auto_retry]\nhalt_after_repeats = 9\n"))
	if err != nil {
		t.Fatal(err)
	}
	def := config.Default()
	if cfg.Loop.MaxLoops != 7 || cfg.AutoRetry.HaltAfterRepeats != 9 || cfg.Verification.Checks["test"].Command == "" || cfg.Budget.LoopsPerDay != def.Budget.LoopsPerDay {
		t.Errorf("layered config: max_loops %d, halt_after_repeats %d, checks %v", cfg.Loop.MaxLoops, cfg.AutoRetry.HaltAfterRepeats, cfg.Verification.Checks)
	}
	if _, err := h.ConfigWith(rules(t, "[auto_retry]\nhalt_after = 2\n")); err == nil || !strings.Contains(err.Error(), "rules.toml") {
		t.Errorf("a bad rule set: %v; want an error naming its file", err)
	}
}
