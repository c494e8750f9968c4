package main

import (
	"errors"
	"fmt"

	"github.com/autoretry/orchestrator/internal/config"
	"github.com/autoretry/orchestrator/internal/statefile"
	"github.com/autoretry/orchestrator/issuequeue"
	"github.com/autoretry/orchestrator/orchestrator"
	"github.com/autoretry/orchestrator/templates"
)

// Exit codes: the one place that says what an error means to a shell.
const (
	exitOK        = 0
	exitNothing   = 1 // check: nothing needs a loop; lint: findings
	exitUsage     = 2 // bad usage, bad config, invalid state file: nothing changed
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
			return exitBusy, []string{"wait for it to finish, or stop it with 'orchestrator abort'"}
		}
		return exitBusy, []string{"try again when it has finished"}
	}
	var ue *statefile.UnsafeFileError
	if errors.As(err, &ue) {
		return exitUsage, nil
	}
	var ve *issuequeue.ValidationError
	if errors.As(err, &ve) {
		return exitUsage, []string{"fix the lines above by hand (orchestrator lint lists every problem); nothing was changed"}
	}
	var qe *issuequeue.QuarantinedError
	if errors.As(err, &qe) {
		return exitUsage, []string{"fix " + qe.Key + " by hand as the lines above say ('orchestrator lint' lists every problem); the other issues are not affected"}
	}
	var nd *issuequeue.NoStateDirError
	if errors.As(err, &nd) {
		return exitUsage, []string{"run 'orchestrator init' to create it, or pass --dir DIR"}
	}
	var cfe *issuequeue.ConflictError
	if errors.As(err, &cfe) {
		return exitUsage, []string{"someone edited the file at the same moment; run the command again"}
	}
	var nf *issuequeue.NotFoundError
	if errors.As(err, &nf) {
		return exitUsage, []string{"'orchestrator status' lists the issues"}
	}
	var ce *config.Error
	if errors.As(err, &ce) {
		return exitUsage, []string{"fix the configuration; the config.toml that 'orchestrator init' writes explains every key"}
	}
	var lc *orchestrator.LoopCommandError
	if errors.As(err, &lc) {
		return exitUsage, []string{"set [loop] command in config.toml to the script that runs one loop (run in the directory that holds the state directory)"}
	}
	var vc *orchestrator.VerifyCommandError
	if errors.As(err, &vc) {
		return exitUsage, []string{"fix [verify." + vc.Check + "] command in config.toml (the program must exist and be executable in the directory that holds the state directory)"}
	}
	var te *templates.OverrideError
	if errors.As(err, &te) {
		return exitUsage, []string{"fix or remove the override; 'orchestrator help' lists the embedded templates"}
	}
	return exitUsage, nil
}
