package orchestrator

import (
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/config"
	"github.com/autoretry/orchestrator/issuequeue"
)

// Releases: a halted issue stays halted until a person answers it (retry,
// fix, skip, or an edit of its fields outside a loop, which the loop guard
// tells from a loop's), or until what it was halted on changes: its
// fingerprint. ReleaseHalt is the one function that decides it; nothing
// else in the tool clears a halt (archive, the completion of a half-done
// change, the loop guard, fleet, serve and replay never do).

// Causes of a release, as its halt_released event records them.
const (
	CausePerson         = "person"          // a person's retry, fix or skip, or their edit of its fields
	CauseIssueChanged   = "issue_changed"   // its summary or a section people write changed
	CauseCheckChanged   = "check_changed"   // its Verify check's command changed
	CauseCommandChanged = "command_changed" // the loop command changed
	CauseModelChanged   = "model_changed"   // the model of its retry tier changed
)

// HaltRecord is an issue's last halt as the event log records it.
type HaltRecord struct {
	At          time.Time
	Code        Code
	Fingerprint Fingerprint
	// Released: a halt_released event, or a person's answer, since.
	Released bool
}

// ReleaseFacts are what the release of an issue's halt depends on.
type ReleaseFacts struct {
	// Halted is the issue's Halted field as it stands; a halt the log
	// records and the file no longer shows was undone by a person (the
	// loop guard restores a loop's).
	Halted bool
	// Person: a person answers the issue now (retry, fix, skip).
	Person bool
	// Halt is the issue's last recorded halt; nil when the event log holds
	// none (never halted, halted before fingerprints were recorded, or
	// longer ago than the log keeps).
	Halt *HaltRecord
	// Now is the issue's fingerprint as it stands.
	Now Fingerprint
}

// ReleaseHalt decides whether an issue's halt is released now, and why: the
// cause, or "" when it stays as it is. A halt is released once: after its
// release, nothing releases it again until the issue halts again.
func ReleaseHalt(f ReleaseFacts) string {
	if f.Halt == nil || f.Halt.Released {
		if f.Person && f.Halted {
			return CausePerson // a halt the log does not record
		}
		return ""
	}
	if f.Person || !f.Halted {
		return CausePerson
	}
	was := f.Halt.Fingerprint
	switch {
	case was.Issue != f.Now.Issue:
		return CauseIssueChanged
	case was.Check != f.Now.Check:
		return CauseCheckChanged
	case was.Command != f.Now.Command:
		return CauseCommandChanged
	case was.Model != f.Now.Model:
		return CauseModelChanged
	}
	return ""
}

// releasedFields are what a release sets in the issue: not halted, its
// repeat count cleared (the halt was decided on it), pending. A person's
// retry and fix set them too.
func releasedFields() []PersonField {
	return []PersonField{
		{Field: issuequeue.FieldHalted, Value: "false"},
		{Field: issuequeue.FieldSignatureRepeatCount, Value: "0"},
		{Field: issuequeue.FieldStatus, Value: issuequeue.StatusPending},
	}
}

// releaseHalts applies ReleaseHalt to every issue of q, before the check
// decides: an issue whose fingerprint changed is released (the edits set
// releasedFields); one whose halt a person undid in the file has that
// recorded, and its repeat count cleared. Each release is one
// halt_released event, which also starts a new allowance.
func releaseHalts(q *issuequeue.Queue, l *IssueLedger, cfg *config.Config, now time.Time, runID string) ([]issuequeue.Edit, []Event) {
	var edits []issuequeue.Edit
	var evs []Event
	for _, is := range q.Issues {
		h := l.Halt(is.ID)
		if h == nil || h.Released {
			continue
		}
		cause := ReleaseHalt(ReleaseFacts{Halted: is.Halted, Halt: h, Now: FingerprintOf(is, cfg)})
		if cause == "" {
			continue
		}
		for _, f := range releasedFields() {
			switch {
			case f.Field == issuequeue.FieldHalted && !is.Halted:
			case f.Field == issuequeue.FieldSignatureRepeatCount && is.SignatureRepeatCount == 0:
			case f.Field == issuequeue.FieldStatus && (!is.Halted || is.Status != issuequeue.StatusEscalated):
			default:
				edits = append(edits, issuequeue.SetField(is.ID, f.Field, f.Value))
			}
		}
		evs = append(evs, Event{Time: now, Event: EvHaltReleased, IssueID: is.ID, RunID: runID, Cause: cause, Code: h.Code})
	}
	return edits, evs
}

// withReleases is q as the check will find it once releaseHalts' releases
// are made, and l with their new allowances, for explain, which writes
// nothing: the released issues are changed in q, which the caller loaded
// for itself. It returns the releases.
func withReleases(q *issuequeue.Queue, l *IssueLedger, cfg *config.Config, now time.Time) []Event {
	_, evs := releaseHalts(q, l, cfg, now, "")
	for _, ev := range evs {
		is := q.Issue(ev.IssueID)
		if is.Halted && is.Status == issuequeue.StatusEscalated {
			is.Status = issuequeue.StatusPending
		}
		is.Halted, is.SignatureRepeatCount = false, 0
		l.add(ev)
	}
	return evs
}
