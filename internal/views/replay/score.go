package replay

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/autoretry/orchestrator/internal/foundations/columns"
	"github.com/autoretry/orchestrator/orchestrator"
)

// notStops are the codes that call a person without a stop of the
// tool's own: the sentinel and auto_retry_enabled are a person's, an
// unreadable budget is the machine's, and loop_failed tells that a
// finished run's last loop had failed. What needs no person (a pause, a
// limit waited out, an abort) is no stop either.
var notStops = map[orchestrator.Code]bool{
	orchestrator.CodeSentinel: true, orchestrator.CodeDisabled: true,
	orchestrator.CodeBudgetUnreadable: true, orchestrator.CodeLoopFailed: true,
}

// Stop is where the engine stopped a history's loops for good: the loop,
// counted over all the loops it ran, after which a rule halted an issue
// (it is not retried until a person says so), or ended a run for a
// person after which no auto-retry loop ran while the history held more,
// or cut a hung loop short (the loop that ran away is stopped). A run
// stopped for a person whose work cron's next run takes up again (a cap
// per run, no progress in this run) paced the loops and raised an alarm;
// it did not stop them. Loop 0: it never did.
type Stop struct {
	Loop  int               `json:"loop"`
	Code  orchestrator.Code `json:"code,omitempty"`
	Issue string            `json:"issue,omitempty"` // the issue a halt stopped
}

// FirstStop is the first stop in what the engine decided when it played
// h.
func FirstStop(h *History, p *Played) Stop {
	auto := 0 // the history's auto-retry loops
	for _, r := range h.Runs {
		auto += max(len(r.Loops)-1, 0)
	}
	before, taken := 0, 0 // loops of the runs before; the history's auto-retry loops they ran
	for i, o := range p.Outcomes {
		if len(o.Halts) > 0 {
			h := o.Halts[0]
			return Stop{Loop: before + max(h.Loop, 1), Code: h.Code, Issue: h.Issue}
		}
		if i < len(p.Runs) {
			for j, l := range p.Runs[i].Loops {
				if j > 0 && l.Index > 0 {
					taken++
				}
			}
		}
		if o.Code == orchestrator.CodeHung ||
			orchestrator.NeedsPerson(o.Code) && !notStops[o.Code] && !retriedAfter(p.Outcomes[i+1:]) && taken < auto {
			return Stop{Loop: before + o.Loops, Code: o.Code}
		}
		before += o.Loops
	}
	return Stop{}
}

// retriedAfter reports whether any of the runs ran an auto-retry loop.
func retriedAfter(outs []Outcome) bool {
	return slices.ContainsFunc(outs, func(o Outcome) bool { return o.Loops > 1 })
}

// Verdicts of a history's replay.
const (
	VerdictCaught    = "caught in time" // a runaway stopped by its label
	VerdictLate      = "caught late"    // a runaway stopped after its label
	VerdictMissed    = "missed"         // a runaway never stopped
	VerdictFalseStop = "false stop"     // a productive history stopped
	VerdictLetRun    = "let run"        // a productive history never stopped
)

// Score is one history's replay under one rule set.
type Score struct {
	History string `json:"history"`
	Kind    string `json:"kind"`
	Label   Label  `json:"label"`
	Loops   int    `json:"loops"` // the history's loops
	Stop    Stop   `json:"stop"`
	Verdict string `json:"verdict"`
	// Saved is what the history's loops after the stop spent.
	Saved Spend `json:"saved"`
}

// ScoreOf judges where the engine stopped h.
func ScoreOf(h *History, p *Played) Score {
	s := Score{History: h.Name, Kind: h.Kind, Label: h.Label, Loops: h.Loops(), Stop: FirstStop(h, p)}
	switch {
	case h.Productive() && s.Stop.Loop == 0:
		s.Verdict = VerdictLetRun
	case h.Productive():
		s.Verdict = VerdictFalseStop
	case s.Stop.Loop == 0:
		s.Verdict = VerdictMissed
	case s.Stop.Loop <= int(h.Label):
		s.Verdict = VerdictCaught
	default:
		s.Verdict = VerdictLate
	}
	if s.Stop.Loop > 0 {
		// The history's loops the engine had not run by the stop.
		ran, n := map[int]bool{}, 0
		for _, r := range p.Runs {
			for _, l := range r.Loops {
				if n++; n <= s.Stop.Loop {
					ran[l.Index] = true
				}
			}
		}
		n = 0
		for _, r := range h.Runs {
			for _, l := range r.Loops {
				if n++; !ran[n] {
					s.Saved.saved(l)
				}
			}
		}
	}
	return s
}

// Totals sums scores of one rule set: runaways caught (Late of them after
// their label), the median loop of the stops, productive histories
// stopped, and what was saved.
type Totals struct {
	Name       string  `json:"name"`
	Runaways   int     `json:"runaways"`
	Caught     int     `json:"caught"`
	Late       int     `json:"late"`
	Missed     int     `json:"missed"`
	Median     float64 `json:"median_loops"`
	Productive int     `json:"productive"`
	FalseStops int     `json:"false_stops"`
	Saved      Spend   `json:"saved"`
}

// TotalsOf sums scores.
func TotalsOf(name string, scores []Score) Totals {
	t := Totals{Name: name}
	var stops []int
	for _, s := range scores {
		switch s.Verdict {
		case VerdictCaught:
			t.Caught++
		case VerdictLate:
			t.Caught++
			t.Late++
		case VerdictMissed:
			t.Missed++
		case VerdictFalseStop:
			t.FalseStops++
		}
		if s.Label == Never {
			t.Productive++
			continue
		}
		t.Runaways++
		if s.Stop.Loop > 0 {
			stops = append(stops, s.Stop.Loop)
		}
		t.Saved.Add(s.Saved)
	}
	t.Median = median(stops)
	return t
}

func median(xs []int) float64 {
	if len(xs) == 0 {
		return 0
	}
	sort.Ints(xs)
	if n := len(xs); n%2 == 1 {
		return float64(xs[n/2])
	} else {
		return float64(xs[n/2-1]+xs[n/2]) / 2
	}
}

// String is the totals line.
func (t Totals) String() string {
	return fmt.Sprintf("%s: caught %d/%d, median %s loops, false stops %d (%d caught late; saved %d loops, %s agent time, $%.2f)",
		t.Name, t.Caught, t.Runaways, trimFloat(t.Median), t.FalseStops, t.Late, t.Saved.LoopsSaved,
		orNone(AgentTime(t.Saved.MinutesSaved)), t.Saved.CostSaved)
}

func trimFloat(f float64) string { return strings.TrimSuffix(fmt.Sprintf("%.1f", f), ".0") }

func orNone(s string) string {
	if s == "" {
		return "0s"
	}
	return s
}

// WriteTable writes one line per history: its label, where the rule set
// stopped it, the verdict and what was saved.
func WriteTable(w io.Writer, scores []Score) error {
	tw := columns.NewWriter(w, 0)
	fmt.Fprintln(tw, "history\tkind\tloops\tlabel\tstopped\tverdict\tsaved")
	for _, s := range scores {
		stop := "never"
		if s.Stop.Loop > 0 {
			stop = fmt.Sprintf("%d (%s)", s.Stop.Loop, s.Stop.Code)
		}
		saved := "-"
		if s.Saved.LoopsSaved > 0 {
			saved = fmt.Sprintf("%d loops, %s", s.Saved.LoopsSaved, orNone(AgentTime(s.Saved.MinutesSaved)))
			if s.Saved.CostSaved > 0 {
				saved += fmt.Sprintf(", $%.2f", s.Saved.CostSaved)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\n", s.History, s.Kind, s.Loops, s.Label, stop, s.Verdict, saved)
	}
	return tw.Flush()
}
