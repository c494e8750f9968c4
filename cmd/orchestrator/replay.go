package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"

	"github.com/autoretry/orchestrator/orchestrator"
)

func init() {
	register(&command{
		name:    "replay",
		summary: "decide the recorded loops again under a config",
		usage: `Usage: orchestrator replay [--config FILE] [--since DURATION] [--json] [--dir DIR]

Applies the progress rules (no_progress, no_change, cycle) again to the
loops recorded in logs/retry.jsonl, under the current config.toml or the
one --config names, and prints the runs where the decision would differ:
where the run would have stopped instead, and how many loops that saves or
adds. Loops after a run's recorded end are not known; loops added are an
estimate that repeats the run's last loop until a rule or [loop] max_loops
stops it. Under the config the loops were recorded with, nothing differs.

Options:
    --since DURATION  only loops of the last DURATION (e.g. 72h, 7d)
    --json            {"differences": [...], "loops_recorded": N,
                      "loops_saved": N, "loops_added": N}

Examples:
    orchestrator replay --config stricter.toml
    orchestrator replay --since 7d --json
`,
		run: func(ctx context.Context, e *env, args []string) error {
			c := commands["replay"]
			fs := flag.NewFlagSet("replay", flag.ContinueOnError)
			asJSON := fs.Bool("json", false, "")
			sinceFlag := fs.String("since", "", "")
			if err := e.noArgs(c, fs, args); err != nil {
				return err
			}
			since, err := sinceStart(c, *sinceFlag, e.now)
			if err != nil {
				return err
			}
			cfg, err := e.config()
			if err != nil {
				return err
			}
			rep, errs := orchestrator.Replay(e.dir, since, cfg)
			if len(errs) > 0 {
				return fmt.Errorf("reading the event log: %w", errors.Join(errs...))
			}
			if *asJSON {
				return json.NewEncoder(e.stdout).Encode(rep)
			}
			for _, d := range rep.Differences {
				fmt.Fprintf(e.stdout, "run %s: recorded %s, replayed %s", d.RunID, stopAt(d.RecordedLoop, d.RecordedCode), stopAt(d.ReplayedLoop, d.ReplayedCode))
				switch {
				case d.LoopsSaved > 0:
					fmt.Fprintf(e.stdout, " (%d loop(s) saved)", d.LoopsSaved)
				case d.LoopsAdded > 0:
					fmt.Fprintf(e.stdout, " (about %d loop(s) added)", d.LoopsAdded)
				}
				fmt.Fprintln(e.stdout)
			}
			fmt.Fprintf(e.stdout, "%d loop(s) recorded, %d run(s) decided differently: %d loop(s) saved, %d added\n",
				rep.LoopsRecorded, len(rep.Differences), rep.LoopsSaved, rep.LoopsAdded)
			return nil
		},
	})
}

// stopAt says where a run stopped on a progress rule.
func stopAt(loop int, code orchestrator.Code) string {
	if code == "" {
		return "no stop"
	}
	return fmt.Sprintf("%s at loop %d", code, loop)
}
