package orchestrator

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/autoretry/orchestrator/internal/adapters/agentout"
)

// DoctorFinding is one problem of a setup that doctor found: which check
// found it, how bad it is (error: loops will not run or not be bounded;
// warning: a rule cannot work as configured), what is wrong and what to do.
type DoctorFinding struct {
	Check    string `json:"check"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
	Hint     string `json:"hint"`
}

// Severities of a DoctorFinding.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
)

// doctorLoops is how many of the last loops doctor reads for what the
// agent reported.
const doctorLoops = 10

// Doctor checks the setup of the state directory end to end, beyond what
// lint checks of each file: that the loop command resolves, that the agent
// [agent] kind names is the one the last loops' output shows, that every
// cost budget is fed a cost, that some brake bounds a day of cron, that
// the state files belong to the user running it, and that the event log
// the budgets count from reads. getenv is the environment the loop gets.
func (o *Orchestrator) Doctor(getenv func(string) string) []DoctorFinding {
	var out []DoctorFinding
	add := func(check, sev, msg, hint string) {
		out = append(out, DoctorFinding{Check: check, Severity: sev, Message: msg, Hint: hint})
	}
	cfg, inv := o.Config, o.invocation()
	abs, err := filepath.Abs(o.Dir)
	if err != nil {
		abs = o.Dir
	}
	switch err := CheckLoopCommand(cfg.Loop.Command, filepath.Dir(abs), getenv); {
	case strings.TrimSpace(cfg.Loop.Command) == "":
		add("loop_command", SeverityError, "no loop command: [loop] command is not set",
			"set [loop] command in config.toml to the script that runs one loop")
	case err != nil:
		add("loop_command", SeverityError, fmt.Sprintf("the loop command %q does not run: %v", cfg.Loop.Command, err),
			"fix [loop] command in config.toml: its first word must be an executable file, a program on PATH or a shell builtin")
	}

	var execs []Event
	EachEvent(o.Dir, time.Time{}, func(ev Event) {
		if ev.Event == EvExec {
			execs = append(execs, ev)
		}
	})
	if n := len(execs); n > doctorLoops {
		execs = execs[n-doctorLoops:]
	}
	o.doctorAgent(execs, add)
	o.doctorCost(execs, add)
	doctorBrakes(o, add)
	o.doctorOwners(add)
	if u, _ := ReadUsage(o.Dir, o.now()); u.Unreadable != nil {
		v := ruleBudgetReadable(Inputs{Usage: u, Invocation: inv})
		add("event_log", SeverityError, v.Reason, v.Hint)
	}
	return out
}

// doctorAgent compares [agent] kind with the agent the last loops' output
// showed.
func (o *Orchestrator) doctorAgent(execs []Event, add func(check, sev, msg, hint string)) {
	kind := o.Config.Agent.Kind
	if kind == "" || kind == string(agentout.KindAuto) || kind == string(agentout.KindNone) {
		return
	}
	seen := map[string]int{}
	var other string
	for _, ev := range execs {
		if ev.Agent != "" {
			seen[ev.Agent]++
			if ev.Agent != kind {
				other = ev.Agent
			}
		}
	}
	if other != "" && seen[kind] == 0 {
		add("agent", SeverityWarning,
			fmt.Sprintf("[agent] kind is %s, but the last loops' output was %s's", kind, other),
			fmt.Sprintf("set [agent] kind = %q (or \"auto\") in config.toml, so that its cost, tokens and limits are read", other))
	}
}

// doctorCost names every cost budget that is on while the agent reported
// no cost in its last loops: such a budget is never spent.
func (o *Orchestrator) doctorCost(execs []Event, add func(check, sev, msg, hint string)) {
	if len(execs) == 0 {
		return
	}
	for _, ev := range execs {
		if ev.Cost > 0 {
			return
		}
	}
	cfg := o.Config
	budgets := []struct {
		key string
		on  bool
	}{
		{"budget.cost_per_day", cfg.Budget.CostPerDay > 0},
		{"shared_budget.cost_per_day", cfg.SharedBudget.CostPerDay > 0},
		{"budget.issue_cost", cfg.Budget.IssueCost > 0},
		{"progress.spend_cost", cfg.Progress.SpendCost > 0},
	}
	for _, b := range budgets {
		if b.on {
			add("cost", SeverityWarning,
				fmt.Sprintf("%s is set, but the agent reported no cost in its last %d loop(s): the budget is never spent", b.key, len(execs)),
				"have the loop print its cost (set [agent] kind to the agent it runs, or [budget] cost_pattern), or write it to $ORCHESTRATOR_COST_FILE; else bound the loops with budget.agent_time_per_day")
		}
	}
}

// brakeOff is the size past which a per-run limit no longer brakes.
const brakeOff = 1000

// doctorBrakes reports a setup where nothing bounds a day of cron: every
// daily budget off, and the per-run limits too large to stop a runaway.
func doctorBrakes(o *Orchestrator, add func(check, sev, msg, hint string)) {
	cfg := o.Config
	b := cfg.Budget
	if b.LoopsPerDay > 0 || b.AutoRetryLoopsPerDay > 0 || b.AgentTimePerDay > 0 || b.CostPerDay > 0 || b.TokensPerDay > 0 {
		return
	}
	off := []string{"every daily budget (budget.loops_per_day, auto_retry_loops_per_day, agent_time_per_day, cost_per_day, tokens_per_day are 0)"}
	sev := SeverityWarning
	var run []string
	if cfg.Loop.MaxLoops >= brakeOff {
		run = append(run, fmt.Sprintf("loop.max_loops is %d", cfg.Loop.MaxLoops))
	}
	if cfg.AutoRetry.GlobalCap >= brakeOff {
		run = append(run, fmt.Sprintf("auto_retry.global_cap is %d", cfg.AutoRetry.GlobalCap))
	}
	if t := cfg.CircuitBreaker.Threshold; t <= 0 || t >= brakeOff {
		run = append(run, fmt.Sprintf("circuit_breaker.threshold is %d", t))
	}
	if len(run) > 0 {
		off = append(off, run...)
		sev = SeverityError
	}
	add("brakes", sev, "no brake bounds a day of cron: "+strings.Join(off, "; "),
		"set budget.loops_per_day or budget.agent_time_per_day in config.toml (the defaults are 200 and 8h)")
}

// doctorOwners reports the state files owned by another user than the one
// running: a person's editor and the tool then do not share a user, and no
// lease protects a save.
func (o *Orchestrator) doctorOwners(add func(check, sev, msg, hint string)) {
	p := o.paths()
	me := os.Getuid()
	for _, path := range []string{p.Queue(), p.State(), p.Archive(), filepath.Join(o.Dir, "config.toml"), p.Ledger()} {
		fi, err := os.Stat(path)
		if err != nil {
			continue
		}
		if uid, ok := fileOwner(fi); ok && me >= 0 && uid != me {
			add("owner", SeverityWarning,
				fmt.Sprintf("%s belongs to user %d, not to the user running '%s' (%d)", path, uid, o.invocation(), me),
				fmt.Sprintf("run '%s' as the user who edits the files, or 'chown' them to it", o.invocation()))
		}
	}
}
