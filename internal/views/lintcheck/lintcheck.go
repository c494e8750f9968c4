// Package lintcheck holds the checks that both orchestrator lint and watch
// make of a configuration and of the queue against it, so that both report
// a problem in the same words at the same place.
package lintcheck

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/autoretry/orchestrator/internal/foundations/config"
	"github.com/autoretry/orchestrator/internal/foundations/suggest"
	"github.com/autoretry/orchestrator/issuequeue"
)

// ConfigProblems returns lint's line for each problem of err, the error of
// loading a configuration: every key run would refuse, in FILE:LINE:COL
// form where it is in the file (the column is the line's start when the
// key's is not known). An error that is no problem of the configuration's
// (a config file that cannot be read) is returned as it is.
func ConfigProblems(err error) ([]string, error) {
	var ce *config.Error
	if !errors.As(err, &ce) {
		return nil, err
	}
	out := make([]string, 0, len(ce.Problems))
	for _, p := range ce.Problems {
		if p.File != "" && p.Line > 0 && p.Col == 0 {
			p.Col = 1
		}
		out = append(out, p.String())
	}
	return out, nil
}

// VerifyFindings reports the issues whose Verify names no [verify.NAME]
// check of cfg, at the Verify field, with the nearest check name. Unless
// cfg lets commands written in the issue file run, run skips such an issue's
// verification, so that is an error; when it does, the name runs as a
// command, and only a name close to a check's is worth a warning.
func VerifyFindings(q *issuequeue.Queue, cfg *config.Config) []issuequeue.Finding {
	names := slices.Sorted(maps.Keys(cfg.Verification.Checks))
	var out []issuequeue.Finding
	for _, is := range append(slices.Clip(q.Issues), q.Quarantined...) {
		if is.Verify == "" {
			continue
		}
		if _, ok := cfg.Verify(is.Verify); ok {
			continue
		}
		line, col, _ := is.FieldPos(issuequeue.FieldVerify)
		f := issuequeue.Finding{File: q.Name(), Line: line, Col: col}
		near := suggest.Nearest(is.Verify, names)
		hint := ""
		if near != "" {
			hint = fmt.Sprintf("; did you mean %q?", near)
		}
		switch {
		case !cfg.Verification.AllowIssueCommands:
			checks := "config.toml has none"
			if len(names) > 0 {
				checks = "checks: " + joinNames(names)
			}
			f.Msg = fmt.Sprintf("Verify: %q is not a [verify.NAME] check in config.toml (%s), so run never verifies %s%s", is.Verify, checks, is.ID, hint)
		case near != "":
			f.Warning = true
			f.Msg = fmt.Sprintf("Verify: %q is not a [verify.NAME] check, so it runs as a command%s", is.Verify, hint)
		default:
			continue
		}
		out = append(out, f)
	}
	slices.SortStableFunc(out, func(a, b issuequeue.Finding) int { return a.Line - b.Line })
	return out
}

// joinNames lists check names for a message: the first few, then how many more.
func joinNames(names []string) string {
	const shown = 5
	s := ""
	for i, n := range names {
		if i == shown {
			return fmt.Sprintf("%s and %d more", s, len(names)-shown)
		}
		if i > 0 {
			s += ", "
		}
		s += n
	}
	return s
}
