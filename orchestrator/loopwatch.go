package orchestrator

import (
	"bytes"
	"sync"
	"time"

	"github.com/autoretry/orchestrator/internal/adapters/agentout"
	"github.com/autoretry/orchestrator/internal/foundations/procgroup"
)

// loopWatch watches one execution of the loop command while it runs: it
// is the execution's output writer, reads the agent's reports as they
// stream, and on each new report, and when the agent time left runs out,
// asks the governor (DuringLoop) whether the loop may go on; when a rule
// says no it fires the execution's Stopper with the rule's code. Writes
// come from procgroup's reading goroutine and the timer from its own, so
// a mutex orders them.
type loopWatch struct {
	mu      sync.Mutex
	ar      *agentout.Reader // nil: the output is not read
	in      InLoop
	started time.Time
	now     func() time.Time
	stop    *procgroup.Stopper
	seen    LoopSpend // the agent's reports so far, without the time
	timer   *time.Timer
	closed  bool
	hit     *Verdict // the rule that stopped the loop
}

// watchLoop starts watching an execution for issues, started at started,
// whose agent's output ar reads (nil: none), against the day's usage and
// what the issues' loops spent before it.
func (r *Runner) watchLoop(ar *agentout.Reader, started time.Time, stop *procgroup.Stopper, issues []string) (*loopWatch, error) {
	o := r.O
	u, err := ReadUsage(o.Dir, started)
	if err != nil {
		return nil, err
	}
	var ledger *IssueLedger
	if len(issues) > 0 {
		if ledger, err = ReadIssueLedger(o.Dir); err != nil {
			return nil, err
		}
	}
	sh, err := o.ReadShared(started)
	if err != nil {
		return nil, err
	}
	w := &loopWatch{ar: ar, started: started, now: r.now, stop: stop,
		in: InLoop{Config: o.Config, Usage: u, Shared: sh, Issues: issues, Ledger: ledger, Invocation: o.invocation()}}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.check()
	return w, nil
}

// Write reads p as the next output; a line that completes a new report of
// the agent's spend is checked at once.
func (w *loopWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ar == nil {
		return len(p), nil
	}
	w.ar.Write(p)
	if bytes.IndexByte(p, '\n') < 0 {
		return len(p), nil
	}
	if s := spendOf(w.ar.Sofar()); s != w.seen {
		w.seen = s
		w.check()
	}
	return len(p), nil
}

// check asks the governor about the spend so far, stops the loop if it
// must, and otherwise sets the timer to when the agent time left runs
// out. The caller holds mu.
func (w *loopWatch) check() {
	if w.hit != nil || w.closed {
		return
	}
	w.in.Now = w.now()
	w.in.Spend = w.seen
	w.in.Spend.Time = w.in.Now.Sub(w.started)
	if _, v := DuringLoop(w.in); v != nil {
		w.hit = v
		w.stop.Stop(string(v.Rule))
		return
	}
	left, ok := AgentTimeLeft(w.in)
	if !ok {
		return
	}
	left += time.Millisecond // past the limit, not at it
	if w.timer == nil {
		w.timer = time.AfterFunc(left, func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.check()
		})
		return
	}
	w.timer.Reset(left)
}

// close ends the watch once the execution ended, and returns the rule that
// stopped it, if one did.
func (w *loopWatch) close() *Verdict {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	if w.timer != nil {
		w.timer.Stop()
	}
	return w.hit
}

// spendOf is the spend an agent's report states: its tokens as the
// budgets count them, its cost, its usage window.
func spendOf(rep agentout.Report) LoopSpend {
	s := LoopSpend{Tokens: budgetTokens(rep)}
	if rep.CostUSD != nil && *rep.CostUSD > 0 {
		s.Cost = *rep.CostUSD
	}
	if w := rep.Window; w != nil && w.Used != nil {
		s.WindowUsed, s.WindowReset = *w.Used, w.ResetsAt
	}
	return s
}
