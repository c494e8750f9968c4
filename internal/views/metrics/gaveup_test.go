package metrics

import (
	"testing"

	"github.com/autoretry/orchestrator/orchestrator"
)

// An escalation gives up on an issue when it ran out of retries or halted
// on its failures, whether the log names it by reason code or, as logs
// written before reason codes do, by the older reason words; a permanent
// error or a progress halt is not counted.
func TestGaveUpOldAndNewLogs(t *testing.T) {
	for _, tt := range []struct {
		ev   orchestrator.Event
		want bool
	}{
		{orchestrator.Event{Reason: "max_retries_exceeded"}, true},
		{orchestrator.Event{Reason: "same_failure_repeated", Code: orchestrator.CodeOscillation}, true},
		{orchestrator.Event{Reason: "max_retries", Code: orchestrator.CodeMaxRetries}, true},
		{orchestrator.Event{Reason: "repeated_failure_across_issues", Code: orchestrator.CodeRepeatedAcross}, true},
		{orchestrator.Event{Reason: "permanent_error", Code: orchestrator.CodePermanentError}, false},
		{orchestrator.Event{Reason: "no_change", Code: orchestrator.CodeNoChange}, false},
	} {
		if got := gaveUp(tt.ev); got != tt.want {
			t.Errorf("gaveUp(%+v) = %v, want %v", tt.ev, got, tt.want)
		}
	}
}
