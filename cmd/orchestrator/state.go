package main

import (
	"errors"
	"time"

	"github.com/autoretry/orchestrator/issuequeue"
)

func (e *env) paths() issuequeue.Paths { return issuequeue.Paths{Dir: e.dir} }

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

func init() {
	errorMappers = append(errorMappers, func(err error) (int, []string, bool) {
		var ve *issuequeue.ValidationError
		if errors.As(err, &ve) {
			return exitUsage, []string{"fix the lines above by hand (orchestrator lint lists every problem); nothing was changed"}, true
		}
		var nd *issuequeue.NoStateDirError
		if errors.As(err, &nd) {
			return exitUsage, []string{"run 'orchestrator init' to create it, or pass --dir DIR"}, true
		}
		var ce *issuequeue.ConflictError
		if errors.As(err, &ce) {
			return exitUsage, []string{"someone edited the file at the same moment; run the command again"}, true
		}
		var nf *issuequeue.NotFoundError
		if errors.As(err, &nf) {
			return exitUsage, []string{"'orchestrator status' lists the issues"}, true
		}
		return 0, nil, false
	})
}
