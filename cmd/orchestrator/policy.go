package main

import "github.com/autoretry/orchestrator"

// policy returns the check's limits from the configuration.
func (e *env) policy() (orchestrator.Policy, error) {
	return orchestrator.Policy{
		GlobalCap:        15,
		MaxRetries:       10,
		MaxRetriesByType: map[string]int{"build": 1, "test": 3, "review": 2},
		HaltAfterRepeats: 3,
		SentinelPresent:  e.paths().SentinelPresent(),
	}, nil
}
