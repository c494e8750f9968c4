package orchestrator

import (
	"context"
	"fmt"
	"strconv"

	"github.com/autoretry/orchestrator/issuequeue"
)

// breakerAfter records a loop's success or failure in the circuit breaker
// and returns its state, and a *StopError if it opened. Failed loops in a
// row open it: threshold of them, or the one trial loop of a half-open
// breaker.
func (r *Runner) breakerAfter(ctx context.Context, failed, halfOpen bool) (string, error) {
	o := r.O
	cb := o.Config.CircuitBreaker
	now := r.now()
	var state string
	var stop *StopError
	err := o.store().Update(context.WithoutCancel(ctx), func(q *issuequeue.Queue, st *issuequeue.State) (issuequeue.Change, error) {
		const sec = issuequeue.SectionBreaker
		n := st.ConsecutiveFailures
		state = issuequeue.BreakerClosed
		edits := []issuequeue.Edit{}
		if !failed {
			edits = append(edits, issuequeue.SetField(sec, issuequeue.StateConsecutiveFailures, "0"),
				issuequeue.SetField(sec, issuequeue.StateBreaker, issuequeue.BreakerClosed),
				issuequeue.SetField(sec, issuequeue.StateOpenedAt, issuequeue.Null))
			if halfOpen {
				r.progress("circuit breaker closed: the trial loop succeeded")
			}
			return issuequeue.Change{State: edits}, nil
		}
		n++
		edits = append(edits, issuequeue.SetField(sec, issuequeue.StateConsecutiveFailures, strconv.Itoa(n)))
		if n >= cb.Threshold || halfOpen {
			state = issuequeue.BreakerOpen
			until := now.Add(cb.Cooldown)
			edits = append(edits, issuequeue.SetField(sec, issuequeue.StateBreaker, issuequeue.BreakerOpen),
				issuequeue.SetField(sec, issuequeue.StateOpenedAt, issuequeue.FormatTime(now)))
			stop = stopBreakerOpened(n, halfOpen, until, now, o.paths().LoopLogs(), o.invocation())
		} else {
			state = st.Breaker
			if state == issuequeue.BreakerHalfOpen {
				state = issuequeue.BreakerClosed
			}
		}
		return issuequeue.Change{State: edits}, nil
	})
	if err != nil {
		return state, fmt.Errorf("recording the loop in the circuit breaker: %w", err)
	}
	if stop != nil {
		return state, stop
	}
	return state, nil
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
