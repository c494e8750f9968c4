package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/autoretry/orchestrator/internal/views/replay"
)

func init() {
	register(&command{
		name:    "replay",
		summary: "run the engine again on recorded loops, under a config",
		usage: `Usage: orchestrator replay [--config FILE] [--since DURATION] [--json]
       orchestrator replay --history PATH [--config FILE] [--as NAME] [--json]

Runs the engine again on what the recorded loops did, with a simulated
clock in a temporary directory, so that every rule decides again: the
failure signatures, retries and caps, the budgets of the day and of each
issue, spend since progress, the progress rules, cascade, the circuit
breaker, rate limits, hangs, active hours. Nothing in the state directory
is changed.

Without --history it replays the runs in logs/retry.jsonl under the
current config.toml, or the one --config names, and prints each run the
engine would decide otherwise: where it would stop, what it would halt,
and the loops, agent time, tokens and cost that saves or adds. Under the
config the loops ran with, nothing differs. The log keeps signatures, not
whole outputs: a rule that reads failing tests' names sees none.

With --history it plays histories (a NAME.json file, or a directory of
them; the format is in bench/histories/FORMAT.md) under each one's own
config, with the rules of --config over it, and prints per history where
the engine first stopped the loops, against the loop by which a careful
person would have (its label): caught, late, missed, a false stop of a
productive history, or let run; then one totals line.

Loops a run would have run past the recorded ones are estimates: the
run's last loop repeated.

Options:
    --since DURATION  only runs of the last DURATION (default 7d; e.g.
                      72h, 30d): every run is played again, about 10
                      to 20 ms a loop
    --history PATH    play a history file or a directory of them
    --as NAME         name the totals line (default: ours, or the
                      --config file's name)
    --json            the log: {"differences": [...], "loops_recorded": N,
                      "loops_saved": N, "loops_added": N, ...};
                      histories: {"histories": [...], "totals": {...}}

Examples:
    orchestrator replay --config stricter.toml
    orchestrator replay --since 7d --json
    orchestrator replay --history bench/histories
    orchestrator replay --history bench/histories --config bench/peers/iteration-cap.toml
`,
		run: func(ctx context.Context, e *env, args []string) error {
			c := commands["replay"]
			fs := flag.NewFlagSet("replay", flag.ContinueOnError)
			asJSON := fs.Bool("json", false, "")
			sinceFlag := fs.String("since", "", "")
			history := fs.String("history", "", "")
			as := fs.String("as", "", "")
			if err := e.noArgs(c, fs, args); err != nil {
				return err
			}
			if *history != "" {
				return replayHistories(ctx, e, *history, *as, *asJSON)
			}
			if *sinceFlag == "" {
				*sinceFlag = "7d" // each run is played again: a year of cron would take minutes
			}
			since, err := sinceStart(c, *sinceFlag, e.now)
			if err != nil {
				return err
			}
			cfg, err := e.config()
			if err != nil {
				return err
			}
			h, err := replay.FromLog(e.dir, since)
			if err != nil {
				return err
			}
			p, err := replay.Play(ctx, h, cfg)
			if err != nil {
				return fmt.Errorf("replaying %s: %w", e.dir, err)
			}
			rep := logReport{Differences: append([]replay.Difference{}, replay.Compare(h, h.Recorded, p)...), LoopsRecorded: h.Loops()}
			for _, d := range rep.Differences {
				rep.Add(d.Spend)
			}
			if *asJSON {
				return json.NewEncoder(e.stdout).Encode(rep)
			}
			for _, d := range rep.Differences {
				when := "a run cron would have started after the recorded ones"
				if d.Run <= len(h.Runs) {
					when = h.Runs[d.Run-1].At.Format("2006-01-02 15:04")
				}
				fmt.Fprintf(e.stdout, "run %d (%s): recorded %s; replayed %s%s\n", d.Run, when,
					outcomeText(d.Recorded), outcomeText(d.Replayed), spendText(d.Spend, d.Estimated))
			}
			fmt.Fprintf(e.stdout, "%d loop(s) recorded in %d run(s), %d run(s) decided differently: %d loop(s) saved, %d added%s\n",
				rep.LoopsRecorded, len(h.Runs), len(rep.Differences), rep.LoopsSaved, rep.LoopsAdded, spendText(rep.Spend, false))
			return nil
		},
	})
}

// logReport is replay's answer for the event log.
type logReport struct {
	Differences   []replay.Difference `json:"differences"`
	LoopsRecorded int                 `json:"loops_recorded"`
	replay.Spend
}

// outcomeText says what a run decided.
func outcomeText(o replay.Outcome) string {
	s := fmt.Sprintf("%d loop(s)", o.Loops)
	if o.Code != "" {
		s += ", stopped " + string(o.Code)
	}
	for _, h := range o.Halts {
		s += fmt.Sprintf(", %s halted %s after loop %d", h.Issue, h.Code, h.Loop)
	}
	return s
}

// spendText says what loops saved or added spent.
func spendText(s replay.Spend, estimated bool) string {
	var parts []string
	if t := replay.AgentTime(s.MinutesSaved); s.LoopsSaved > 0 && t != "" {
		parts = append(parts, "saved "+t+" of agent time")
	}
	if s.TokensSaved > 0 {
		parts = append(parts, fmt.Sprintf("%d tokens", s.TokensSaved))
	}
	if s.CostSaved > 0 {
		parts = append(parts, fmt.Sprintf("$%.2f", s.CostSaved))
	}
	if t := replay.AgentTime(s.MinutesAdded); s.LoopsAdded > 0 && t != "" {
		a := "added " + t + " of agent time"
		if estimated {
			a = "added about " + t + " of agent time"
		}
		parts = append(parts, a)
	}
	if s.TokensAdded > 0 {
		parts = append(parts, fmt.Sprintf("%d tokens added", s.TokensAdded))
	}
	if s.CostAdded > 0 {
		parts = append(parts, fmt.Sprintf("$%.2f added", s.CostAdded))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// historyResult is one history's replay.
type historyResult struct {
	replay.Score
	Differences []replay.Difference `json:"differences,omitempty"`
}

// replayHistories plays the histories in path under the rules of
// --config, if any.
func replayHistories(ctx context.Context, e *env, path, as string, asJSON bool) error {
	hs, err := replay.Corpus(path)
	if err != nil {
		return withCode(exitUsage, fmt.Errorf("--history: %w", err))
	}
	if as == "" {
		as = "ours"
		if e.configPath != "" {
			as = strings.TrimSuffix(filepath.Base(e.configPath), filepath.Ext(e.configPath))
		}
	}
	var results []historyResult
	var scores []replay.Score
	for _, h := range hs {
		cfg, err := h.ConfigWith(e.configPath)
		if err != nil {
			return withCode(exitUsage, err)
		}
		p, err := replay.Play(ctx, h, cfg)
		if err != nil {
			return fmt.Errorf("history %s: %w", h.Name, err)
		}
		r := historyResult{Score: replay.ScoreOf(h, p)}
		if len(h.Recorded) > 0 {
			r.Differences = replay.Compare(h, h.Recorded, p)
		}
		results = append(results, r)
		scores = append(scores, r.Score)
	}
	totals := replay.TotalsOf(as, scores)
	if asJSON {
		return json.NewEncoder(e.stdout).Encode(struct {
			Histories []historyResult `json:"histories"`
			Totals    replay.Totals   `json:"totals"`
		}{results, totals})
	}
	if err := replay.WriteTable(e.stdout, scores); err != nil {
		return err
	}
	writeRecordedDifferences(e.stdout, e.configPath == "", results)
	_, err = fmt.Fprintln(e.stdout, totals)
	return err
}

// writeRecordedDifferences says, under the histories' own configs, which
// decided otherwise than recorded.
func writeRecordedDifferences(w io.Writer, own bool, results []historyResult) {
	if !own {
		return
	}
	for _, r := range results {
		for _, d := range r.Differences {
			fmt.Fprintf(w, "%s run %d: recorded %s; replayed %s\n", r.History, d.Run, outcomeText(d.Recorded), outcomeText(d.Replayed))
		}
	}
}
