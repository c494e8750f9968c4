package metrics_test

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/autoretry/orchestrator/internal/views/metrics"
	"github.com/autoretry/orchestrator/orchestrator"
)

// A loop that succeeded after one transient retry, which waited 2 s.
func ExampleSnapshot_WriteTo() {
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	hist := []orchestrator.LoopRecord{{RunID: "r1", Loop: 1, Kind: "regular", Started: start, Finished: start.Add(time.Minute),
		Result: orchestrator.ResultOK, TransientRetries: 1, Breaker: "closed"}}
	evs := []orchestrator.Event{{Time: start.Add(10 * time.Second), Event: orchestrator.EvTransient, Loop: 1, Attempt: 1, DurationMS: 2000}}

	var buf bytes.Buffer
	metrics.Compute(hist, evs).WriteTo(&buf)
	for _, l := range strings.Split(buf.String(), "\n") {
		if strings.Contains(l, `kind="transient"`) || strings.HasPrefix(l, "orchestrator_task_retry_delay_seconds_") {
			fmt.Println(l)
		}
	}
	// Output:
	// orchestrator_task_retry_attempts_total{kind="transient"} 1
	// orchestrator_task_retry_success_total{kind="transient"} 1
	// orchestrator_task_retry_failure_total{kind="transient"} 0
	// orchestrator_task_retry_delay_seconds_bucket{le="0.5"} 0
	// orchestrator_task_retry_delay_seconds_bucket{le="1"} 0
	// orchestrator_task_retry_delay_seconds_bucket{le="2"} 1
	// orchestrator_task_retry_delay_seconds_bucket{le="4"} 1
	// orchestrator_task_retry_delay_seconds_bucket{le="8"} 1
	// orchestrator_task_retry_delay_seconds_bucket{le="16"} 1
	// orchestrator_task_retry_delay_seconds_bucket{le="32"} 1
	// orchestrator_task_retry_delay_seconds_bucket{le="64"} 1
	// orchestrator_task_retry_delay_seconds_bucket{le="128"} 1
	// orchestrator_task_retry_delay_seconds_bucket{le="300"} 1
	// orchestrator_task_retry_delay_seconds_bucket{le="900"} 1
	// orchestrator_task_retry_delay_seconds_bucket{le="3600"} 1
	// orchestrator_task_retry_delay_seconds_bucket{le="+Inf"} 1
	// orchestrator_task_retry_delay_seconds_sum 2
	// orchestrator_task_retry_delay_seconds_count 1
}
