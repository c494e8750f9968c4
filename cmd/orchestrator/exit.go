package main

import (
	"errors"
	"fmt"

	"github.com/autoretry/orchestrator/internal/foundations/config"
	"github.com/autoretry/orchestrator/internal/foundations/statefile"
	"github.com/autoretry/orchestrator/issuequeue"
	"github.com/autoretry/orchestrator/orchestrator"
	"github.com/autoretry/orchestrator/templates"
)

// Exit codes: the one place that says what an error means to a shell.
const (
	exitOK        = 0
	exitNothing   = 1 // check: nothing needs a loop; lint: findings
	exitUsage     = 2 // bad usage, bad config, invalid state file: nothing changed, unless the message says the change is half made or a save could not be kept
	exitSafeguard = 3 // stopped by a rule or a person is needed; always with a reason code
	exitBusy      = 4 // another orchestrator holds the lock
)

// quietStatus is the exit status for an err that prints nothing: no error,
// or a silentExit; ok is false for any other.
func quietStatus(err error) (code int, ok bool) {
	var s silentExit
	switch {
	case err == nil:
		return exitOK, true
	case errors.As(err, &s):
		return int(s), true
	}
	return 0, false
}

// report prints err, with its hints, and returns the exit code.
func report(e *env, err error) int {
	if code, ok := quietStatus(err); ok {
		return code
	}
	code, hints := classify(err)
	fmt.Fprintf(e.stderr, "orchestrator: %s\n", err)
	for _, h := range hints {
		fmt.Fprintf(e.stderr, "hint: %s\n", h)
	}
	return code
}

// classify maps an error to its exit code and hints. Library packages return
// typed errors; this is the one place that knows what they mean to a shell.
func classify(err error) (int, []string) {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code, ee.hints
	}
	var se *orchestrator.StopError
	if errors.As(err, &se) {
		var hints []string
		if se.Hint != "" {
			hints = []string{se.Hint}
		}
		if se.Wait {
			return exitOK, hints // a rate-limit window or a pause: nothing is wrong
		}
		return exitSafeguard, hints
	}
	var be *statefile.BusyError
	if errors.As(err, &be) {
		if be.Lock == "run" {
			return exitBusy, []string{"wait for it to finish, or stop it with '" + self + " abort'"}
		}
		return exitBusy, []string{"try again when it has finished"}
	}
	for _, hint := range usageHints {
		if hints, ok := hint(err); ok {
			return exitUsage, hints
		}
	}
	return exitUsage, nil
}

// usageHints are the errors that exit with exitUsage (bad input, and state
// files someone is still writing), in the order they are tried, each with
// what a person can do about it.
var usageHints = []func(error) ([]string, bool){
	// First: what it wraps (a save going on, a conflict) would say "run it again".
	hintFor[*issuequeue.UnfinishedError]("do not run this command again, or the change is made twice: the next command that changes this directory completes it"),
	hintFor[*statefile.UnsafeFileError](""),
	hintFor[*issuequeue.ValidationError]("fix the lines above by hand ('" + self + " lint' lists every problem); nothing was changed"),
	hintFrom(func(qe *issuequeue.QuarantinedError) string {
		return "fix " + qe.Key + " by hand as the lines above say ('" + self + " lint' lists every problem); the other issues are not affected"
	}),
	hintFor[*issuequeue.NoStateDirError]("run '" + self + " init' to create it, or pass --dir DIR"),
	hintFor[*issuequeue.ConflictError]("someone edited the file at the same moment; run the command again"),
	hintFrom(func(ee *issuequeue.EmptyFileError) string {
		return "if it was emptied on purpose, remove it ('rm " + ee.File + "'): the next command starts it again; else run the command again once the editor has saved"
	}),
	hintFrom(func(se *statefile.WritingError) string {
		return "someone is still writing it (an editor in the middle of a save, or a program that keeps it open for writing: 'fuser " + se.File + "' names it); run the command again once they have finished"
	}),
	hintFor[*issuequeue.NotFoundError]("'" + self + " status' lists the issues"),
	hintFrom(func(ue *orchestrator.UnreadableLogError) string {
		if ue.Line == 0 {
			return "make " + ue.File + " readable by the user running '" + self + "'"
		}
		return fmt.Sprintf("fix or delete line %d of %s (each line is one JSON object the tool wrote)", ue.Line, ue.File)
	}),
	hintFor[*config.Error]("fix the configuration; the config.toml that '" + self + " init' writes explains every key"),
	hintFor[*orchestrator.LoopCommandError]("set [loop] command in config.toml to the script that runs one loop (run in the directory that holds the state directory)"),
	hintFrom(func(vc *orchestrator.VerifyCommandError) string {
		return "fix [verify." + vc.Check + "] command in config.toml (the program must exist and be executable in the directory that holds the state directory)"
	}),
	hintFor[*templates.OverrideError]("fix or remove the override; '" + self + " help' lists the embedded templates"),
}

// hintFor matches an error of type E, whose hint is always hint (none if
// empty).
func hintFor[E error](hint string) func(error) ([]string, bool) {
	return hintFrom(func(E) string { return hint })
}

// hintFrom matches an error of type E; hint makes its hint from it (none
// if empty).
func hintFrom[E error](hint func(E) string) func(error) ([]string, bool) {
	return func(err error) ([]string, bool) {
		var e E
		if !errors.As(err, &e) {
			return nil, false
		}
		if h := hint(e); h != "" {
			return []string{h}, true
		}
		return nil, true
	}
}
