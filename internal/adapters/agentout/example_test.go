package agentout_test

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/autoretry/orchestrator/internal/adapters/agentout"
)

func ExampleReader() {
	at := time.Date(2025, 9, 19, 8, 0, 0, 0, time.UTC) // when the run ended
	r := agentout.NewReader(agentout.KindAuto, at, time.UTC)
	// The run's output, as a terminal wrapped it.
	io.Copy(r, strings.NewReader("■ You've hit your usage limit. Upgrade to Pro (https://openai.com/chatgpt/pricing) or try again in 5 days 22 hours 11\nminutes.\n"))
	rep := r.Report()
	fmt.Println(rep.Agent, rep.ErrorKind, rep.Limit.Until.Format(time.RFC3339))
	// Output: codex usage_limit 2025-09-25T06:11:00Z
}

func ExampleReport_JSON() {
	r := agentout.NewReader(agentout.KindAuto, time.Time{}, nil)
	fmt.Fprintln(r, `{"type":"step_finish","timestamp":1758919898483,"sessionID":"ses_1","part":{"type":"step-finish","tokens":{"input":11087,"output":145,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0.0070147}}`)
	fmt.Println(string(r.Report().JSON()))
	// Output: {"agent":"opencode","cost_usd":0.0070147,"tokens":{"input":11087,"output":145,"cache_read":0,"cache_write":0},"error":false,"error_kind":null,"limit":null}
}
