package orchestrator

import (
	"fmt"
	"io"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/statefile"
	"github.com/autoretry/orchestrator/issuequeue"
)

// DryRun prints what a run would do now, and runs and writes nothing.
func (r *Runner) DryRun(w io.Writer) error {
	o := r.O
	q, st, err := o.paths().Load()
	if err != nil {
		return err
	}
	if err := q.Err(); err != nil {
		return err
	}
	o.WarnQuarantined(q.QuarantineFindings())
	if err := st.Err(); err != nil {
		return err
	}
	if holder, held, err := statefile.RunHolder(o.Dir); err == nil && held {
		fmt.Fprintf(w, "A run is in progress (pid %d, started %s): run would exit 4.\n", holder.PID, holder.Since.Format(time.RFC3339))
		return nil
	}
	cfg := o.Config
	in, err := o.inputs(q, st)
	if err != nil {
		return err
	}
	in.Run = true
	if _, v := Gate(in, KindRegular); v != nil {
		code := 3
		if !NeedsPerson(v.Rule) {
			code = 0 // a pause or a rate-limit window: nothing is wrong
		}
		fmt.Fprintf(w, "No loop would start: %s. run would exit %d.\nhint: %s\n", Stopped(v.Rule, v.Reason), code, v.Hint)
		fmt.Fprintln(w, "Dry run: nothing was run and nothing was written.")
		return nil
	}
	if st.Breaker == issuequeue.BreakerOpen {
		fmt.Fprintln(w, "Circuit breaker open, cooldown over: the first loop would be a half-open trial.")
	}
	fmt.Fprintf(w, "Would run the regular loop: sh -c %q (timeout %s, at most %d loops).\n", cfg.Loop.Command, cfg.Loop.Timeout, cfg.Loop.MaxLoops)
	// The run starts with fresh counters: decide as its first check would.
	fresh := issuequeue.ParseState(o.paths().State(), []byte(issuequeue.StateTemplate))
	fresh.AutoRetryEnabled = st.AutoRetryEnabled
	fresh.Breaker, fresh.LimitedUntil = st.Breaker, st.LimitedUntil
	in.State, in.RunLoops = fresh, 1
	d := Decide(in)
	switch {
	case d.Disabled != "":
		fmt.Fprintf(w, "No auto-retry loop would follow: %s.\n", d.Disabled)
	case len(d.Exhausted)+len(d.Halted) > 0 || len(d.Triggered) > 0 || d.Stop != nil:
		for _, is := range d.Exhausted {
			fmt.Fprintf(w, "Would escalate %s (retries used up): %s\n", is.ID, is.Summary())
		}
		for _, iv := range d.Issues {
			if iv.Code == CodeRepeatedAcross {
				fmt.Fprintf(w, "Would escalate %s (%s): %s\n", iv.ID, iv.Code, iv.Because)
			}
		}
		trig := d.Triggered
		if d.Stop != nil && len(d.WouldQualify) > 0 {
			trig = d.WouldQualify
			fmt.Fprintf(w, "The check after the loop would stop (%s): %s\n", d.Stop.Rule, d.Stop.Reason)
		}
		if len(trig) > 0 {
			fmt.Fprintln(w, "If the queue stays as it is now, the check after the loop would retry, in this order:")
			for _, is := range trig {
				fmt.Fprintf(w, "  %s  attempt %d of %d  %s\n", is.ID, is.RetryCount+1, MaxRetries(cfg, is), is.Summary())
			}
		}
	default:
		fmt.Fprintln(w, "No issue is waiting for an auto-retry now; the loop's QA step may file some.")
	}
	fmt.Fprintln(w, "Dry run: nothing was run and nothing was written.")
	return nil
}
