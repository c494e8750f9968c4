package orchestrator

import (
	"bytes"

	"github.com/autoretry/orchestrator/internal/foundations/config"
	"github.com/autoretry/orchestrator/issuequeue"
	"github.com/autoretry/orchestrator/templates"
)

// What an auto-retry loop is told: the retry context of its issues, and the
// tier (and model) of its attempt.

// Retry tiers, as given to the loop in ORCHESTRATOR_RETRY_TIER: the first
// same_agent attempts reuse the agent with accumulated context, the next
// fresh_agent start a fresh agent, and later ones escalate the model.
const (
	TierSameAgent     = "same_agent"
	TierFreshAgent    = "fresh_agent"
	TierEscalateModel = "escalate_model"
)

// retryTier returns the tier and model for a retry attempt (1 for the first
// retry).
func retryTier(t config.Tiers, attempt int) (tier, model string) {
	switch {
	case attempt <= t.SameAgent:
		return TierSameAgent, t.Model
	case attempt <= t.SameAgent+t.FreshAgent:
		return TierFreshAgent, t.Model
	}
	if t.EscalationModel != "" {
		return TierEscalateModel, t.EscalationModel
	}
	return TierEscalateModel, t.Model
}

// RetryContext renders the retry context for the given issues, as
// an auto-retry loop receives it.
func (o *Orchestrator) RetryContext(q *issuequeue.Queue, ids []string) ([]byte, error) {
	return o.retryContext(q, ids, "")
}

// retryContext renders the retry context, telling the loop the previous
// loop's progress verdict (prev; "" for none).
func (o *Orchestrator) retryContext(q *issuequeue.Queue, ids []string, prev string) ([]byte, error) {
	data := templates.RetryContext{PreviousProgress: prev}
	attempt := 0
	for _, id := range ids {
		is, err := q.Lookup(id)
		if err != nil {
			return nil, err
		}
		ti := o.tmplIssue(is)
		if is.Status != issuequeue.StatusInProgress {
			ti.RetryCount++ // shown ahead of the check: the attempt that would run next
		}
		attempt = max(attempt, ti.RetryCount)
		data.Issues = append(data.Issues, ti)
	}
	data.Tier, data.Model = retryTier(o.Config.Tiers, attempt)
	data.LastLoop = o.lastLoopFailure()
	var b bytes.Buffer
	if err := o.Templates.Render(&b, "retry_context", data); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// lastLoopFailure returns how the last loop recorded in the event log (in
// the last 24 hours) failed, or nil if it did not: the next loop is told
// what the last one ran into.
func (o *Orchestrator) lastLoopFailure() *templates.LoopFailure {
	evs, err := readLedgerSince(o.paths().Ledger(), o.now().Add(-config.BudgetWindow), map[string]bool{EvLoop: true}, nil)
	if err != nil || len(evs) == 0 {
		return nil
	}
	ev := evs[len(evs)-1]
	if ev.Error == "" {
		return nil
	}
	return &templates.LoopFailure{Loop: ev.Loop, Exit: ev.Error, Output: ev.OutputTail}
}
