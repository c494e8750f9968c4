package orchestrator

import (
	"strings"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/issuequeue"
)

// usageOf builds a window's usage: n loop executions of d each, ending at
// the given ages before testNow, with cost c each; a auto-retry loops.
func usageOf(n int, d time.Duration, c float64, a int) Usage {
	var u Usage
	for i := 0; i < n; i++ {
		u.Execs = append(u.Execs, Exec{At: testNow.Add(-time.Duration(n-i) * time.Minute), Kind: KindRegular, Duration: d, Cost: c})
	}
	for i := 0; i < a; i++ {
		u.AutoRetryLoops = append(u.AutoRetryLoops, testNow.Add(-time.Duration(a-i)*time.Minute))
	}
	return u
}

// Every rule a loop start depends on, at and around its limit: the default
// budgets are 200 loop executions, 30 auto-retry loops and 8 h of agent time
// per 24 h; cost is off unless set; max_loops 16 and the global cap 15 per
// run. Each stop names its code, a reason and a hint.
func TestGateRules(t *testing.T) {
	q, _ := parse(t, issueMD("ISSUE-20261122-001", "Auto-Retry=true"), "")
	tests := []struct {
		name string
		kind string
		set  func(in *Inputs)
		want Code // "" means the loop may start
		wait bool
	}{
		{"nothing in the way", KindAutoRetry, func(in *Inputs) {}, "", false},
		{"199 executions", KindRegular, func(in *Inputs) { in.Usage = usageOf(199, time.Second, 0, 0) }, "", false},
		{"200 executions", KindRegular, func(in *Inputs) { in.Usage = usageOf(200, time.Second, 0, 0) }, CodeDailyLoops, false},
		{"29 auto-retry loops", KindAutoRetry, func(in *Inputs) { in.Usage = usageOf(0, 0, 0, 29) }, "", false},
		{"30 auto-retry loops", KindAutoRetry, func(in *Inputs) { in.Usage = usageOf(0, 0, 0, 30) }, CodeDailyAutoRetries, false},
		{"30 auto-retry loops do not stop a regular loop", KindRegular, func(in *Inputs) { in.Usage = usageOf(0, 0, 0, 30) }, "", false},
		{"agent time under 8h", KindRegular, func(in *Inputs) {
			in.Config.Budget.Reserve = false // 8s left: a typical loop of 1h would not fit
			in.Usage = usageOf(8, time.Hour-time.Second, 0, 0)
		}, "", false},
		{"agent time at 8h", KindRegular, func(in *Inputs) { in.Usage = usageOf(8, time.Hour, 0, 0) }, CodeDailyAgentTime, false},
		{"cost off by default", KindRegular, func(in *Inputs) { in.Usage = usageOf(3, time.Second, 1000, 0) }, "", false},
		{"cost under its limit", KindRegular, func(in *Inputs) {
			in.Config.Budget.CostPerDay, in.Config.Budget.Reserve = 5, false
			in.Usage = usageOf(4, time.Second, 1.2, 0)
		}, "", false},
		{"cost at its limit", KindRegular, func(in *Inputs) {
			in.Config.Budget.CostPerDay = 5
			in.Usage = usageOf(5, time.Second, 1, 0)
		}, CodeDailyCost, false},
		{"a budget set to 0 is off", KindRegular, func(in *Inputs) {
			in.Config.Budget.LoopsPerDay = 0
			in.Usage = usageOf(1000, time.Second, 0, 0)
		}, "", false},
		{"loop 16 of 16 may run", KindRegular, func(in *Inputs) { in.Run, in.RunLoops = true, 15 }, "", false},
		{"a 17th loop may not", KindRegular, func(in *Inputs) { in.Run, in.RunLoops = true, 16 }, CodeMaxLoops, false},
		{"max_loops is a run's limit only", KindRegular, func(in *Inputs) { in.RunLoops = 16 }, "", false},
		{"cap: 14 auto-retry loops", KindAutoRetry, func(in *Inputs) { in.State.TotalAutoRetries = 14 }, "", false},
		{"cap: 15 auto-retry loops", KindAutoRetry, func(in *Inputs) { in.State.TotalAutoRetries = 15 }, CodeRunCap, false},
		{"sentinel stops auto-retry loops", KindAutoRetry, func(in *Inputs) { in.Sentinel = true }, CodeSentinel, false},
		{"sentinel does not stop the regular loop", KindRegular, func(in *Inputs) { in.Sentinel = true }, "", false},
		{"disabled", KindAutoRetry, func(in *Inputs) { in.State.AutoRetryEnabled = false }, CodeDisabled, false},
		{"paused stops every loop", KindRegular, func(in *Inputs) { in.Pause = Pause{Paused: true} }, CodePaused, true},
		{"a pause that ended", KindRegular, func(in *Inputs) { in.Pause = Pause{Paused: true, Until: testNow} }, "", false},
		{"a pause that has a minute left", KindRegular, func(in *Inputs) { in.Pause = Pause{Paused: true, Until: testNow.Add(time.Minute)} }, CodePaused, true},
		{"inside a rate-limit window", KindRegular, func(in *Inputs) { in.State.LimitedUntil = testNow.Add(time.Second) }, CodeRateLimited, true},
		{"at its end", KindRegular, func(in *Inputs) { in.State.LimitedUntil = testNow }, "", false},
		{"breaker open within its cooldown", KindRegular, func(in *Inputs) {
			in.Run = true
			in.State.Breaker, in.State.OpenedAt = issuequeue.BreakerOpen, testNow.Add(-29*time.Minute)
		}, CodeBreakerOpen, false},
		{"breaker open, cooldown over", KindRegular, func(in *Inputs) {
			in.Run = true
			in.State.Breaker, in.State.OpenedAt = issuequeue.BreakerOpen, testNow.Add(-30*time.Minute)
		}, "", false},
		{"a pause comes before a spent budget", KindRegular, func(in *Inputs) {
			in.Pause = Pause{Paused: true}
			in.Usage = usageOf(200, time.Second, 0, 0)
		}, CodePaused, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, st := parse(t, "", stateMD(0, true))
			in := testInputs(q, st)
			tt.set(&in)
			all, stop := Gate(in, tt.kind)
			if len(all) == 0 {
				t.Fatal("no verdicts")
			}
			var got Code
			if stop != nil {
				got = stop.Rule
				if stop.Reason == "" || stop.Hint == "" {
					t.Errorf("stop %s without a reason or a hint: %+v", got, stop)
				}
				if stop.Wait != tt.wait {
					t.Errorf("wait = %v, want %v", stop.Wait, tt.wait)
				}
			}
			if got != tt.want {
				t.Errorf("stop = %q, want %q (verdicts %+v)", got, tt.want, all)
			}
		})
	}
}

// A spent budget says when the next loop is possible: when enough of the
// counted executions leave the 24-hour window.
func TestBudgetNextLoop(t *testing.T) {
	q, st := parse(t, "", stateMD(0, true))
	in := testInputs(q, st)
	in.Config.Budget.LoopsPerDay = 3
	in.Usage.Execs = []Exec{
		{At: testNow.Add(-20 * time.Hour)}, {At: testNow.Add(-10 * time.Hour)}, {At: testNow.Add(-time.Hour)}, {At: testNow.Add(-time.Minute)},
	}
	_, stop := Gate(in, KindRegular)
	if stop == nil || stop.Rule != CodeDailyLoops {
		t.Fatalf("stop = %+v, want daily_loops", stop)
	}
	// 4 in the window, limit 3: below it once the two oldest have left.
	if want := testNow.Add(-10 * time.Hour).Add(24 * time.Hour); !stop.Until.Equal(want) {
		t.Errorf("next loop at %v, want %v", stop.Until, want)
	}
	if !strings.Contains(stop.Reason, "next loop possible at") {
		t.Errorf("reason %q does not say when the next loop is possible", stop.Reason)
	}

	in.Config.Budget.LoopsPerDay = 0
	in.Config.Budget.AgentTimePerDay = 90 * time.Minute
	for i := range in.Usage.Execs {
		in.Usage.Execs[i].Duration = 30 * time.Minute
	}
	_, stop = Gate(in, KindRegular)
	if stop == nil || stop.Rule != CodeDailyAgentTime {
		t.Fatalf("stop = %+v, want daily_agent_time", stop)
	}
	// 2 h used, limit 1.5 h: 1.5 h is still spent, so below it once the two
	// oldest half hours have left.
	if want := testNow.Add(-10 * time.Hour).Add(24 * time.Hour); !stop.Until.Equal(want) {
		t.Errorf("next loop at %v, want %v", stop.Until, want)
	}
}

func TestNoProgressAndCascadeVerdicts(t *testing.T) {
	cfg := testConfig()
	for stalled, want := range map[int]bool{0: false, 2: false, 3: true, 4: true} {
		if v := NoProgressVerdict(stalled, nil, cfg, ""); v.Stop != want || v.Rule != CodeNoProgress {
			t.Errorf("no progress %d: stop %v, want %v", stalled, v.Stop, want)
		}
	}
	// [stall] loops is the older name of [progress] loops, which wins.
	cfg.Stall.Loops = 5
	if v := NoProgressVerdict(4, nil, cfg, ""); v.Stop {
		t.Errorf("[stall] loops = 5: stopped after 4")
	}
	cfg.Progress.Loops = 2
	if v := NoProgressVerdict(2, nil, cfg, ""); !v.Stop {
		t.Errorf("[progress] loops = 2: not stopped after 2")
	}
	tests := []struct {
		perLoop []int
		want    bool
	}{
		{nil, false},
		{[]int{1, 1}, false},
		{[]int{1, 1, 1}, true},
		{[]int{3}, true},
		{[]int{2, 0, 0, 0, 0, 0}, false}, // the 2 left the window of 5
		{[]int{2, 0, 0, 0, 1}, true},
	}
	for _, tt := range tests {
		if v := CascadeVerdict(tt.perLoop, cfg); v.Stop != tt.want || v.Rule != CodeCascade {
			t.Errorf("cascade %v: stop %v, want %v", tt.perLoop, v.Stop, tt.want)
		}
	}
}

// The same failure under another name: an issue carrying a signature
// another issue was halted on in the last 24 hours is escalated by the
// check at once, with the other issue named; and the check changes nothing
// while a person has stopped auto-retry.
func TestDecideSameFailureElsewhere(t *testing.T) {
	const a, b = "ISSUE-20261122-001", "ISSUE-20261122-002"
	sig := strings.Repeat("ab", 32)
	q, st := parse(t, issueMD(b, "Auto-Retry=true", "Failure-Signature="+sig, "Signature-Repeat-Count=1"), stateMD(0, true))
	in := testInputs(q, st)
	in.Usage.Halts = []Attempt{hourAgo(a, sig)}
	d := Decide(in)
	if d.Outcome != CheckHuman || len(d.Halted) != 1 || d.Stop == nil || d.Stop.Rule != CodeRepeatedAcross {
		t.Fatalf("decision: outcome %v, halted %v, stop %+v; want b escalated as repeated_failure_across_issues", d.Outcome, idList(d.Halted), d.Stop)
	}
	if !strings.Contains(d.Issues[0].Because, a) {
		t.Errorf("because %q does not name %s", d.Issues[0].Because, a)
	}
	if len(d.QueueEdits) != 2 {
		t.Errorf("edits = %v, want Halted and Status", d.QueueEdits)
	}
	// A halt older than the window is not read (ReadUsage drops it), and a
	// 16-hex prefix of the signature matches it.
	in.Usage.Halts[0].Signature = sig[:16]
	if d := Decide(in); len(d.Halted) != 1 {
		t.Errorf("a 16-hex signature prefix did not match")
	}
	in.Sentinel = true
	if d := Decide(in); len(d.QueueEdits) != 0 || d.Stop.Rule != CodeSentinel {
		t.Errorf("with the sentinel: edits %v, stop %+v; want nothing changed", d.QueueEdits, d.Stop)
	}
}

// Recording a failure: the per-issue streak, the same signature across
// issues in the last 24 hours, a signature another issue was halted on, and
// an oscillation A B A B each halt with their own code. A signature
// recorded under older rules (v1, in older) still names the same failure:
// the streak goes on and the new signature is stored from then on; under
// other issues it still counts, and a halt on it still stops the failure
// elsewhere. A different failure is still different. Whatever the
// verdict, the failure's signature is stored as the Failure-Signature, and
// a streak that goes on leaves Previous-Signatures alone.
func TestDecideFailHalts(t *testing.T) {
	const id, other = "ISSUE-20261122-001", "ISSUE-20261122-002"
	sa, sb, sc := strings.Repeat("a", 64), strings.Repeat("b", 64), strings.Repeat("c", 64)
	v1, v2, v1b := strings.Repeat("1", 64), strings.Repeat("2", 64), strings.Repeat("3", 64)
	tests := []struct {
		name   string
		rows   []string
		u      Usage
		sig    string
		older  []string
		want   Code
		repeat int
	}{
		{"first failure", nil, Usage{}, sa, nil, "", 1},
		{"second in a row", []string{"Failure-Signature=" + sa, "Signature-Repeat-Count=1"}, Usage{Attempts: []Attempt{hourAgo(id, sa)}}, sa, nil, "", 2},
		{"third in a row", []string{"Failure-Signature=" + sa, "Signature-Repeat-Count=2"}, Usage{Attempts: []Attempt{hourAgo(id, sa), hourAgo(id, sa)}}, sa, nil, CodeRepeatedFailure, 3},
		{"a re-filed issue: twice under another ID", nil, Usage{Attempts: []Attempt{hourAgo(other, sa), hourAgo(other, sa)}}, sa, nil, CodeRepeatedAcross, 1},
		{"once under another ID", nil, Usage{Attempts: []Attempt{hourAgo(other, sa)}}, sa, nil, "", 1},
		{"once under another ID, and a streak of 2 here", []string{"Failure-Signature=" + sa, "Signature-Repeat-Count=1"},
			Usage{Attempts: []Attempt{hourAgo(other, sa), hourAgo(id, sa)}}, sa, nil, CodeRepeatedAcross, 2},
		{"its own earlier failures, before a person's retry, do not count", nil,
			Usage{Attempts: []Attempt{hourAgo(id, sa), hourAgo(id, sa), hourAgo(id, sa)}}, sa, nil, "", 1},
		{"another issue was halted on it", nil, Usage{Halts: []Attempt{hourAgo(other, sa)}}, sa, nil, CodeRepeatedAcross, 1},
		{"A B A B", []string{"Failure-Signature=" + sa, "Signature-Repeat-Count=1"},
			Usage{Attempts: []Attempt{hourAgo(id, sa), hourAgo(id, sb), hourAgo(id, sa)}}, sb, nil, CodeOscillation, 1},
		{"A B A C", []string{"Failure-Signature=" + sa, "Signature-Repeat-Count=1"},
			Usage{Attempts: []Attempt{hourAgo(id, sa), hourAgo(id, sb), hourAgo(id, sa)}}, sc, nil, "", 1},
		{"v1 streak of 2 goes on to a halt", []string{"Failure-Signature=" + v1, "Signature-Repeat-Count=2"},
			Usage{Attempts: []Attempt{hourAgo(id, v1), hourAgo(id, v1)}}, v2, []string{v1}, CodeRepeatedFailure, 3},
		{"v1 streak of 1 goes on", []string{"Failure-Signature=" + v1, "Signature-Repeat-Count=1"},
			Usage{Attempts: []Attempt{hourAgo(id, v1)}}, v2, []string{v1}, "", 2},
		{"another v1 failure starts over", []string{"Failure-Signature=" + v1b, "Signature-Repeat-Count=2"},
			Usage{}, v2, []string{v1}, "", 1},
		{"v1 failures under another ID count", nil,
			Usage{Attempts: []Attempt{hourAgo(other, v1), hourAgo(other, v1)}}, v2, []string{v1}, CodeRepeatedAcross, 1},
		{"a halt under v1 elsewhere", nil, Usage{Halts: []Attempt{hourAgo(other, v1)}}, v2, []string{v1}, CodeRepeatedAcross, 1},
		{"without older signatures, v1 is another failure", []string{"Failure-Signature=" + v1, "Signature-Repeat-Count=2"},
			Usage{}, v2, nil, "", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, d := decideFail(t, id, tt.rows, Failure{Type: FailVerification, Signature: tt.sig, Older: tt.older, Time: testNow}, tt.u, tt.want, tt.repeat)
			out, err := q.Apply(d.Edits...)
			if err != nil {
				t.Fatal(err)
			}
			q, _ = parse(t, string(out), "")
			is := q.Issue(id)
			if is.FailureSignature != tt.sig || is.SignatureRepeatCount != tt.repeat {
				t.Errorf("stored Failure-Signature %.8s… count %d, want %.8s… %d", is.FailureSignature, is.SignatureRepeatCount, tt.sig, tt.repeat)
			}
			if continued := tt.repeat > 1; continued && len(is.PreviousSignatures) != 0 {
				t.Errorf("the older signature went to Previous-Signatures: %v", is.PreviousSignatures)
			}
		})
	}
}

// hourAgo is a failure of issue with signature sig an hour before testNow.
func hourAgo(issue, sig string) Attempt {
	return Attempt{At: testNow.Add(-time.Hour), IssueID: issue, Signature: sig}
}

// decideFail decides failure f of issue id, an auto-retry issue with rows,
// and checks the halt code and the repeat count the decision gives.
func decideFail(t *testing.T, id string, rows []string, f Failure, u Usage, want Code, repeat int) (*issuequeue.Queue, FailDecision) {
	t.Helper()
	q, _ := parse(t, issueMD(id, append([]string{"Auto-Retry=true"}, rows...)...), "")
	d := DecideFail(q.Issue(id), f, testConfig(), u)
	if d.Code != want || d.Halted != (want != "") {
		t.Errorf("code %q halted %v, want %q", d.Code, d.Halted, want)
	}
	if d.RepeatCount != repeat {
		t.Errorf("repeat = %d, want %d", d.RepeatCount, repeat)
	}
	return q, d
}

// Every daily budget the gate applies is a figure of Budgets, which status,
// explain, metrics, report and fleet show: the same codes, and a budget is
// spent exactly when its rule stops a loop, on both sides of each limit.
func TestBudgetsAreTheGatesFigures(t *testing.T) {
	filed := func(n int) []time.Time {
		var ts []time.Time
		for i := range n {
			ts = append(ts, testNow.Add(-time.Duration(i+1)*time.Minute))
		}
		return ts
	}
	for _, n := range []int{49, 50} {
		cfg := testConfig()
		cfg.Budget.CostPerDay, cfg.Budget.TokensPerDay = 200, 1000
		// 196 or 200 executions of 144s, cost 1 and 5 tokens each; 29 or
		// 30 auto-retry loops; 49 or 50 issues filed.
		u := usageOf(n*4, 144*time.Second, 1, n*3/5)
		u.Filed = filed(n)
		for i := range u.Execs {
			u.Execs[i].Tokens = 5
		}
		q, st := parse(t, issueMD("ISSUE-20261122-001", "Auto-Retry=true"), stateMD(0, true))
		in := Inputs{Queue: q, State: st, Usage: u, Config: cfg, Now: testNow}
		all, _ := Gate(in, KindAutoRetry)
		rules := map[Code]Verdict{}
		for _, v := range all {
			if _, ok := rules[v.Rule]; !ok { // the budget's own rule, before its reserve
				rules[v.Rule] = v
			}
		}
		bs := Budgets(cfg, u)
		if len(bs) != 6 {
			t.Fatalf("Budgets lists %d budgets, want 6: %+v", len(bs), bs)
		}
		for _, b := range bs {
			v, ok := rules[b.Code]
			if !ok {
				t.Errorf("budget %s (%s) is no rule of the gate", b.Key, b.Code)
				continue
			}
			if v.Stop != b.Spent || (b.Spent && !v.Until.Equal(b.NextAt)) {
				t.Errorf("%d: %s spent %v (next %v), its rule stops %v (until %v)", n, b.Code, b.Spent, b.NextAt, v.Stop, v.Until)
			}
			if want := n == 50; b.Spent != want {
				t.Errorf("%d: %s spent %v (used %v of %v), want %v", n, b.Code, b.Spent, b.Used, b.Limit, want)
			}
		}
	}
}
