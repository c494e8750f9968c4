package orchestrator

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/columns"
	"github.com/autoretry/orchestrator/issuequeue"
)

// Explanation is what the next decisions would be, rule by rule: whether a
// run could start its regular loop now, and what the end-of-loop check would
// do with the queue as it is.
type Explanation struct {
	Run   RunExplanation   `json:"run"`
	Check CheckExplanation `json:"check"`
}

// RunExplanation is whether "orchestrator run" would start a loop now.
type RunExplanation struct {
	Start bool      `json:"start"`
	Code  Code      `json:"code,omitempty"`
	Stop  string    `json:"stop,omitempty"`
	Hint  string    `json:"hint,omitempty"`
	Rules []Verdict `json:"rules"`
	// During are the rules that hold while a loop runs: they stop a
	// running loop, never keep one from starting.
	During []Verdict `json:"during_loop"`
}

// CheckExplanation is what "orchestrator check" would decide now.
type CheckExplanation struct {
	Outcome string         `json:"outcome"` // retry, nothing or stop, as check --json
	Code    Code           `json:"code,omitempty"`
	Stop    string         `json:"stop,omitempty"`
	Hint    string         `json:"hint,omitempty"`
	Retry   []string       `json:"retry"`
	Rules   []Verdict      `json:"rules"`
	Issues  []IssueVerdict `json:"issues"`
	// Spend is, for each issue explain was asked about, what its loops
	// spent and the rules of it.
	Spend []SpendExplanation `json:"spend,omitempty"`
}

// SpendExplanation is what the loops run for one issue spent, and its
// spend rules.
type SpendExplanation struct {
	ID    string     `json:"id"`
	Spend IssueSpend `json:"spend"`
	Rules []Verdict  `json:"rules"`
}

// Explain decides as the next run and the next check would, and writes
// nothing. With ids, the issues listed are those, candidates or not.
func (o *Orchestrator) Explain(ids []string) (Explanation, error) {
	var ex Explanation
	q, st, err := o.paths().Load()
	if err != nil {
		return ex, err
	}
	for _, f := range []func() error{q.Err, st.Err} {
		if err := f(); err != nil {
			return ex, err
		}
	}
	o.WarnQuarantined(q.QuarantineFindings())
	for _, id := range ids {
		if _, err := q.Lookup(id); err != nil && !errors.As(err, new(*issuequeue.QuarantinedError)) {
			return ex, err
		}
	}
	in, err := o.inputs(q, st)
	if err != nil {
		return ex, err
	}
	released := map[string]string{}
	for _, ev := range withReleases(q, in.Usage.Spend, o.Config, in.Now) {
		released[ev.IssueID] = "released first (" + ev.Cause + ")"
	}
	runIn := in
	runIn.Run = true
	all, stop := Gate(runIn, KindRegular)
	ex.Run = RunExplanation{Start: stop == nil, Rules: all, During: LoopLimits(runIn)}
	if stop != nil {
		ex.Run.Code, ex.Run.Stop, ex.Run.Hint = stop.Rule, stop.Reason, stop.Hint
	}
	d := Decide(in)
	rep := o.checkReport(d)
	ex.Check = CheckExplanation{Outcome: rep.Outcome, Code: rep.Code, Stop: rep.Reason, Hint: rep.Hint, Retry: rep.Triggered, Rules: d.Verdicts}
	verdicts := map[string]IssueVerdict{}
	for _, iv := range d.Issues {
		verdicts[iv.ID] = iv
	}
	silent, _ := SilentChecks(o.Dir)
	for _, is := range q.Issues {
		iv, candidate := verdicts[is.ID]
		if len(ids) > 0 && !slices.Contains(ids, is.ID) {
			continue
		}
		if !candidate {
			if len(ids) == 0 {
				continue
			}
			iv = IssueVerdict{ID: is.ID, Because: notCandidate(is)}
		} else if iv.Retry && d.Outcome != CheckRetry && d.Stop != nil {
			iv.Retry = false
			iv.Because += "; but no loop starts: " + string(d.Stop.Rule)
		}
		if note := released[is.ID]; note != "" {
			iv.Because = note + "; " + iv.Because
		}
		if note := SeenNote(is); note != "" {
			iv.Because += "; " + note
		}
		if note := silentNote(silent, is); note != "" {
			iv.Because += "; " + note
		}
		ex.Check.Issues = append(ex.Check.Issues, iv)
	}
	for _, is := range q.Quarantined {
		if len(ids) > 0 && !slices.Contains(ids, is.ID) {
			continue
		}
		var why []string
		for _, f := range is.Findings() {
			why = append(why, f.String())
		}
		ex.Check.Issues = append(ex.Check.Issues, IssueVerdict{ID: is.ID,
			Because: "quarantined, left alone until a person fixes it: " + strings.Join(why, "; ")})
	}
	if ex.Check.Issues == nil {
		ex.Check.Issues = []IssueVerdict{}
	}
	for _, id := range ids {
		typical, ok := in.Usage.Spend.Typical(id)
		s := in.Usage.Spend.Of(id)
		ex.Check.Spend = append(ex.Check.Spend, SpendExplanation{ID: id, Spend: s,
			Rules: SpendVerdicts(id, s, typical, ok, o.Config, o.invocation())})
	}
	return ex, nil
}

// notCandidate says why an issue is not an auto-retry candidate.
func notCandidate(is *issuequeue.Issue) string {
	var why []string
	if !is.AutoRetry {
		why = append(why, "Auto-Retry is false")
	}
	if is.Halted {
		why = append(why, "it is halted")
	}
	if is.Status != issuequeue.StatusPending {
		why = append(why, "its Status is "+is.Status)
	}
	return "not an auto-retry candidate: " + strings.Join(why, ", ")
}

// Print writes the explanation for people.
func (ex Explanation) Print(w io.Writer) error { return ex.PrintWidth(w, 0) }

// PrintWidth writes the explanation for people in lines of at most width
// columns (0: no limit): long reasons wrap inside their column.
func (ex Explanation) PrintWidth(w io.Writer, width int) error {
	tw := columns.NewWriter(w, width)
	verdict := func(v Verdict) string {
		if v.Stop {
			return "STOP: " + v.Reason
		}
		return "ok"
	}
	if ex.Run.Start {
		fmt.Fprintln(tw, "A run started now would run its regular loop.")
	} else {
		fmt.Fprintf(tw, "A run started now would stop before any loop: %s\n", Stopped(ex.Run.Code, ex.Run.Stop))
	}
	fmt.Fprintln(tw, "\nrule\tnow\tlimit\tverdict")
	for _, v := range ex.Run.Rules {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", v.Rule, v.Value, v.Limit, verdict(v))
	}
	if len(ex.Run.During) > 0 {
		fmt.Fprintln(tw, "\nWhile a loop runs:")
		fmt.Fprintln(tw, "\nrule\tnow\tlimit")
		for _, v := range ex.Run.During {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", v.Rule, v.Value, v.Limit)
		}
	}
	fmt.Fprintln(tw)
	switch ex.Check.Outcome {
	case "retry":
		fmt.Fprintf(tw, "The end-of-loop check would start an auto-retry loop for %s.\n", strings.Join(ex.Check.Retry, ", "))
	case "nothing":
		if ex.Check.Code != "" {
			fmt.Fprintf(tw, "The end-of-loop check would start no loop: %s\n", Stopped(ex.Check.Code, ex.Check.Stop))
		} else {
			fmt.Fprintln(tw, "The end-of-loop check would find nothing to retry.")
		}
	default:
		fmt.Fprintf(tw, "The end-of-loop check would stop: %s\n", Stopped(ex.Check.Code, ex.Check.Stop))
	}
	fmt.Fprintln(tw, "\nrule\tnow\tlimit\tverdict")
	for _, v := range ex.Check.Rules {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", v.Rule, v.Value, v.Limit, verdict(v))
	}
	if len(ex.Check.Issues) > 0 {
		fmt.Fprintln(tw, "\nissue\tretried\twhy")
		for _, iv := range ex.Check.Issues {
			r := "no"
			if iv.Retry {
				r = "yes"
			}
			why := iv.Because
			if iv.Code != "" {
				why = "(" + string(iv.Code) + ") " + why
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", iv.ID, r, why)
		}
	}
	for _, se := range ex.Check.Spend {
		fmt.Fprintf(tw, "\n%s: its loops spent %s, %s, %s in %d loop(s)", se.ID, measureCost.show(se.Spend.Total.Cost),
			measureTokens.show(float64(se.Spend.Total.Tokens)), measureTime.show(float64(se.Spend.Total.AgentTime)), se.Spend.Loops)
		if !se.Spend.Since.IsZero() {
			fmt.Fprintf(tw, " since %s", se.Spend.Since.UTC().Format(time.RFC3339))
		}
		fmt.Fprintln(tw, "\nrule\tnow\tlimit\tverdict")
		for _, v := range se.Rules {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", v.Rule, v.Value, v.Limit, verdict(v))
		}
	}
	if !ex.Run.Start && ex.Run.Hint != "" {
		fmt.Fprintf(tw, "\nhint: %s\n", ex.Run.Hint)
	} else if ex.Check.Hint != "" {
		fmt.Fprintf(tw, "\nhint: %s\n", ex.Check.Hint)
	}
	return tw.Flush()
}
