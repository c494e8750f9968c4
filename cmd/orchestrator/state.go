package main

import (
	"errors"
	"time"

	"github.com/autoretry/orchestrator/orchestrator"
)

func (e *env) paths() orchestrator.Paths { return orchestrator.PathsIn(e.dir) }

// now returns the current time, or ORCHESTRATOR_NOW when it is set, so that
// examples and tests are reproducible.
func (e *env) now() (time.Time, error) {
	if v := e.getenv("ORCHESTRATOR_NOW"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return time.Time{}, withCode(exitUsage, errors.New("ORCHESTRATOR_NOW is not an RFC 3339 time such as 2026-11-22T10:15:00Z"))
		}
		return t, nil
	}
	return time.Now(), nil
}
