package main

import (
	"github.com/autoretry/orchestrator/internal/foundations/config"
	"github.com/autoretry/orchestrator/internal/views/lintcheck"
)

// configFindings loads the configuration as every other command does and
// returns it, or, when it has problems, nil and lint's line for each: every
// key run would refuse, in FILE:LINE:COL form where it is in the file (the
// column is the line's start when the key's is not known). An error that
// is no problem of the configuration's (a --config file that cannot be
// read) is returned.
func configFindings(e *env) (*config.Config, []string, error) {
	cfg, err := e.config()
	if err == nil {
		return cfg, nil, nil
	}
	out, err := lintcheck.ConfigProblems(err)
	return nil, out, err
}
