package orchestrator

import (
	"context"
	"fmt"
	"strconv"

	"github.com/autoretry/orchestrator/issuequeue"
)

// breakerAfter records a loop's success or failure in the circuit breaker
// and returns what became of it: failed loops in a row open it (see
// BreakerOpens).
func (r *Runner) breakerAfter(ctx context.Context, failed, halfOpen bool) (BreakerFacts, error) {
	o := r.O
	cb := o.Config.CircuitBreaker
	now := r.now()
	b := BreakerFacts{HalfOpen: halfOpen}
	err := o.store().Update(context.WithoutCancel(ctx), func(q *issuequeue.Queue, st *issuequeue.State) (issuequeue.Change, error) {
		const sec = issuequeue.SectionBreaker
		b.State = issuequeue.BreakerClosed
		if !failed {
			if halfOpen {
				r.progress("circuit breaker closed: the trial loop succeeded")
			}
			return issuequeue.Change{State: []issuequeue.Edit{issuequeue.SetField(sec, issuequeue.StateConsecutiveFailures, "0"),
				issuequeue.SetField(sec, issuequeue.StateBreaker, issuequeue.BreakerClosed),
				issuequeue.SetField(sec, issuequeue.StateOpenedAt, issuequeue.Null)}}, nil
		}
		b.Failures = st.ConsecutiveFailures + 1
		edits := []issuequeue.Edit{issuequeue.SetField(sec, issuequeue.StateConsecutiveFailures, strconv.Itoa(b.Failures))}
		if b.Opened = BreakerOpens(b.Failures, halfOpen, o.Config); b.Opened {
			b.State, b.Until = issuequeue.BreakerOpen, now.Add(cb.Cooldown)
			edits = append(edits, issuequeue.SetField(sec, issuequeue.StateBreaker, issuequeue.BreakerOpen),
				issuequeue.SetField(sec, issuequeue.StateOpenedAt, issuequeue.FormatTime(now)))
		} else if st.Breaker != issuequeue.BreakerHalfOpen {
			b.State = st.Breaker
		}
		return issuequeue.Change{State: edits}, nil
	})
	if err != nil {
		return b, fmt.Errorf("recording the loop in the circuit breaker: %w", err)
	}
	return b, nil
}

// ResetBreaker closes the circuit breaker and clears its count of failed
// loops: a person's answer once the cause is fixed.
func (o *Orchestrator) ResetBreaker(ctx context.Context) (was string, err error) {
	err = o.store().Update(ctx, func(q *issuequeue.Queue, st *issuequeue.State) (issuequeue.Change, error) {
		const sec = issuequeue.SectionBreaker
		was = st.Breaker
		return issuequeue.Change{State: []issuequeue.Edit{
			issuequeue.SetField(sec, issuequeue.StateBreaker, issuequeue.BreakerClosed),
			issuequeue.SetField(sec, issuequeue.StateConsecutiveFailures, "0"),
			issuequeue.SetField(sec, issuequeue.StateOpenedAt, issuequeue.Null),
		}, After: func() error {
			return o.log().Record(Event{Time: o.now(), Event: EvUserResponse, Response: "breaker_reset", Reason: "was " + was})
		}}, nil
	})
	return was, err
}
