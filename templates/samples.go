package templates

import "time"

// samples returns, for every template, data Check executes overrides with:
// a full value that reaches every field and branch of the embedded
// template, and a minimal one with the optional parts left empty.
func samples() map[string][]any {
	full := Issue{
		ID:               "ISSUE-20261122-001",
		Summary:          "Server fails to start (TypeError in src/index.ts:42)",
		Type:             "bug",
		Priority:         "critical",
		Status:           "in_progress",
		Blocking:         true,
		RetryCount:       3,
		MaxRetries:       10,
		Signature:        "3f2a9c1d0b7e45a6c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5",
		RepeatCount:      3,
		Verify:           "build",
		FailureDetails:   "src/index.ts:42\n  TypeError: Cannot read properties of undefined (reading 'port')\n    at start (src/index.ts:42:17)\n",
		VerificationStep: "npm run build && npm start",
		SuggestedFix:     "Load the config before reading config.port",
		FixInstruction:   "Check that config.load() is awaited before start()",
		History: []Attempt{
			{Number: 1, Time: "2026-11-22T10:05:00Z", Type: "verification_failed", Signature: "3f2a9c1d0b7e45a6c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5", Error: "TypeError in src/index.ts:42"},
			{Number: 2, Time: "2026-11-22T10:21:00Z", Type: "verification_failed", Signature: "3f2a9c1d0b7e45a6c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5", Error: "TypeError in src/index.ts:42"},
		},
	}
	bare := Issue{
		ID:         "ISSUE-20261122-002",
		Summary:    "Build fails",
		Type:       "build",
		Priority:   "high",
		Status:     "pending",
		RetryCount: 1,
		MaxRetries: 1,
	}
	spent := full
	spent.RetryCount, spent.Status = 10, "escalated"
	spent.History = append(spent.History, Attempt{Number: 3, Time: "2026-11-22T10:40:00Z", Type: "timeout", Error: "no response from :8080 within 30s"})
	stuck := bare
	stuck.Signature, stuck.RepeatCount, stuck.Status = "9b8a7c6d5e4f30112233445566778899aabbccddeeff00112233445566778899", 3, "escalated"
	return map[string][]any{
		"triggered": {Triggered{Issues: []Issue{full, bare}}, Triggered{Issues: []Issue{bare}}},
		"succeeded": {Succeeded{Issue: full}, Succeeded{Issue: bare}},
		"exhausted": {
			Exhausted{Issues: []Issue{spent}, Dir: ".orchestrator"},
			Exhausted{Issues: []Issue{spent, bare}, Dir: "/srv/app/.orchestrator"},
		},
		"halted": {
			Halted{Issue: full, Threshold: 3, Command: "orchestrator"},
			Halted{Issue: stuck, Threshold: 3},
		},
		"cap": {Cap{GlobalCap: 15, TotalAutoRetries: 15}},
		"escalation": {
			Escalation{Issue: spent, Reason: "exhausted", Command: "orchestrator"},
			Escalation{Issue: stuck, Reason: "halted", Threshold: 3, Command: "orchestrator --dir ci/.orchestrator"},
			Escalation{Issue: bare, Reason: "permanent error", Detail: `the loop output matched "permission denied"`},
		},
		"retry_context": {
			RetryContext{Issues: []Issue{full, bare}, Tier: "fresh_agent", Model: "large"},
			RetryContext{Issues: []Issue{bare}, Tier: "escalate_model"},
			RetryContext{Issues: []Issue{bare}, Tier: "same_agent"},
			RetryContext{Issues: []Issue{bare}, Tier: "same_agent", LastLoop: &LoopFailure{Loop: 1, Exit: "exit status 139 (SIGSEGV)",
				Output: "starting agent\nsegfault at 0x0 ip 00007f <agent>"}},
		},
		"summary": {
			RunSummary{
				RunID: "20261122T101500Z-4242", Issues: 2, FirstAttempt: 1, Retried: 1,
				RetrySuccesses: 1, Loops: 3, Wall: 12*time.Minute + 30*time.Second,
				Details: []SummaryRow{
					{ID: full.ID, Summary: full.Summary, Attempts: 3, Result: "success (retry worked)"},
					{ID: bare.ID, Summary: bare.Summary, Attempts: 1, Result: "success"},
				},
				Patterns: []Pattern{{Name: "verification_failed", Count: 2}},
				Outcome:  "completed",
				Reason:   "no issue needs another loop",
			},
			RunSummary{Outcome: "completed"},
		},
		"issue": {
			NewIssue{
				ID: "ISSUE-20261122-003", Type: "bug", Priority: "critical", Status: "pending",
				Source: "user", Category: "backend", Created: "2026-11-22T10:00:00Z",
				AutoRetry: "true", RetryCount: "0", MaxRetries: "10", PreviousSignatures: "[]",
				SignatureRepeatCount: "0", Halted: "false", Blocking: "true", Verify: "build",
				Summary: "Server fails to start", Details: Fence("TypeError: x is undefined"),
				VerificationStep: "npm start", SuggestedFix: "Initialise x",
			},
			NewIssue{ID: "ISSUE-20261122-004", Summary: "Lint fails"},
		},
	}
}
