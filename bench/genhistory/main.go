// Command genhistory writes the state directory of a long-lived installation
// for the history benchmarks (bench/history.sh): a cron job that has run
// every 10 minutes for DAYS days, three loops a run, through the tool's own
// writers — history.csv rows by AppendHistory, logs/retry.jsonl and
// logs/retry.log events by EventLog.Record — and a small queue and session
// state from the queue generator. The same flags always give the same bytes
// for the same -end.
//
// Usage:
//
//	genhistory -dir DIR [-days 365] [-ledger-days 30] [-end RFC3339] [-rotate]
//
// Each run has a regular loop that files an issue, an auto-retry loop that
// fails on it and one that resolves it; one run in 20 has a transient retry
// and one in 50 ends with the issue escalated instead. The event log holds
// the last LEDGER-DAYS days (what [logs] jsonl_retention keeps; more makes
// an unpruned log). Without -rotate, history.csv is one file, as an
// installation that predates rotation has it; with -rotate, history.csv is
// rotated by month as the tool does at the first run of a month.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/autoretry/orchestrator/internal/testkit/queuegen"
	"github.com/autoretry/orchestrator/orchestrator"
)

func main() {
	dir := flag.String("dir", "", "state directory to write (created if needed)")
	days := flag.Int("days", 365, "days of history")
	ledgerDays := flag.Int("ledger-days", 30, "days of the event log")
	endFlag := flag.String("end", "", "when the last run started (RFC 3339; default: 10 minutes ago)")
	rotate := flag.Bool("rotate", false, "rotate history.csv by month, as the tool does")
	flag.Parse()
	if *dir == "" || flag.NArg() != 0 || *days <= 0 || *ledgerDays < 0 {
		fmt.Fprintln(os.Stderr, "usage: genhistory -dir DIR [-days N] [-ledger-days N] [-end RFC3339] [-rotate]")
		os.Exit(2)
	}
	end := time.Now().UTC().Add(-10 * time.Minute).Truncate(10 * time.Minute)
	if *endFlag != "" {
		t, err := time.Parse(time.RFC3339, *endFlag)
		if err != nil {
			fmt.Fprintln(os.Stderr, "genhistory: -end:", err)
			os.Exit(2)
		}
		end = t.UTC()
	}
	if err := run(*dir, *days, *ledgerDays, end, *rotate); err != nil {
		fmt.Fprintln(os.Stderr, "genhistory:", err)
		os.Exit(1)
	}
}

func run(dir string, days, ledgerDays int, end time.Time, rotate bool) error {
	// Ten issues: fewer than the first one the queue generator makes
	// retryable, so a run on this queue does one trivial loop.
	if err := queuegen.Generate(queuegen.Options{Issues: 10, Seed: 1}).Write(dir); err != nil {
		return err
	}
	log := orchestrator.EventLog{Dir: dir}
	ledgerFrom := end.Add(-time.Duration(ledgerDays) * 24 * time.Hour)
	runs, loops, events := 0, 0, 0
	start := end.Add(-time.Duration(days) * 24 * time.Hour).Add(10 * time.Minute)
	month := ""
	for at := start; !at.After(end); at = at.Add(10 * time.Minute) {
		if m := at.Format("2006-01"); rotate && m != month {
			if err := orchestrator.RotateHistory(dir, at, 0); err != nil {
				return err
			}
			month = m
		}
		rows, evs := oneRun(runs, at)
		for _, r := range rows {
			if err := orchestrator.AppendHistory(dir, r); err != nil {
				return err
			}
		}
		if !at.Before(ledgerFrom) {
			for _, ev := range evs {
				if err := log.Record(ev); err != nil {
					return err
				}
			}
			events += len(evs)
		}
		runs++
		loops += len(rows)
	}
	fmt.Fprintf(os.Stderr, "%s: %d runs, %d loops, %d events, from %s to %s\n", dir, runs, loops, events,
		start.Format(time.RFC3339), end.Format(time.RFC3339))
	return nil
}

// oneRun returns the history rows and the events of run n, started at at.
func oneRun(n int, at time.Time) ([]orchestrator.LoopRecord, []orchestrator.Event) {
	runID := at.Format("20060102T150405Z") + fmt.Sprintf("-%d", 1000+n%9000)
	issue := fmt.Sprintf("ISSUE-%s-%03d", at.Format("20060102"), 1+n%144)
	sig := fmt.Sprintf("%064x", uint64(n%97)*0x9e3779b97f4a7c15)
	escalate := n%50 == 49
	transient := 0
	if n%20 == 7 {
		transient = 1
	}
	var rows []orchestrator.LoopRecord
	evs := []orchestrator.Event{{Time: at, Event: orchestrator.EvRunStarted, RunID: runID}}
	t := at
	loop := func(i int, kind, result string, exit, retries int, issues, resolved, failed, escalated []string) {
		d := time.Duration(40+n%50) * time.Second
		if retries > 0 {
			evs = append(evs, orchestrator.Event{Time: t.Add(d), Event: orchestrator.EvTransient, RunID: runID, Loop: i, Attempt: 1,
				Reason: "rate_limit", DurationMS: 1000})
			d += 2 * time.Second
		}
		fin := t.Add(d)
		evs = append(evs,
			orchestrator.Event{Time: fin, Event: orchestrator.EvExec, RunID: runID, Loop: i, Kind: kind, DurationMS: d.Milliseconds(), Cost: 0.05},
			orchestrator.Event{Time: fin, Event: orchestrator.EvLoop, RunID: runID, Loop: i, Kind: kind, Status: result, DurationMS: d.Milliseconds()})
		rows = append(rows, orchestrator.LoopRecord{RunID: runID, Loop: i, Kind: kind, Started: t, Finished: fin, ExitCode: exit, Result: result,
			TransientRetries: retries, Issues: issues, Resolved: resolved, Failed: failed, Escalated: escalated, TotalAutoRetries: i - 1, Breaker: "closed"})
		t = fin.Add(3 * time.Second)
	}
	one := []string{issue}
	loop(1, "regular", orchestrator.ResultOK, 0, transient, nil, nil, nil, nil)
	evs = append(evs,
		orchestrator.Event{Time: t, Event: orchestrator.EvTriggered, IssueID: issue, RunID: runID, Attempt: 1},
		orchestrator.Event{Time: t, Event: orchestrator.EvAutoRetryLoop, RunID: runID, Loop: 2})
	loop(2, "auto_retry", orchestrator.ResultFailed, 1, 0, one, nil, one, nil)
	evs = append(evs,
		orchestrator.Event{Time: t, Event: orchestrator.EvAttempt, IssueID: issue, RunID: runID, Attempt: 1, Status: "failed",
			FailureType: "test_failure", Error: "--- FAIL: TestServer " + strings.Repeat("x", n%40), Signature: sig, RepeatCount: 1},
		orchestrator.Event{Time: t, Event: orchestrator.EvFeedbackInjected, IssueID: issue, Attempt: 2},
		orchestrator.Event{Time: t, Event: orchestrator.EvTriggered, IssueID: issue, RunID: runID, Attempt: 2},
		orchestrator.Event{Time: t, Event: orchestrator.EvAutoRetryLoop, RunID: runID, Loop: 3})
	if escalate {
		loop(3, "auto_retry", orchestrator.ResultFailed, 1, 0, one, nil, one, one)
		evs = append(evs, orchestrator.Event{Time: t, Event: orchestrator.EvEscalated, IssueID: issue, Reason: "max_retries_exceeded", TotalAttempts: 3})
	} else {
		loop(3, "auto_retry", orchestrator.ResultOK, 0, 0, one, one, nil, nil)
		evs = append(evs, orchestrator.Event{Time: t, Event: orchestrator.EvResolved, IssueID: issue, Resolution: "resolved", TotalAttempts: 3})
	}
	evs = append(evs, orchestrator.Event{Time: t, Event: orchestrator.EvRunFinished, RunID: runID, Status: "completed"})
	return rows, evs
}
