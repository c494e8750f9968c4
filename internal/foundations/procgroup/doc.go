// Package procgroup runs a shell command in its own process group and
// guarantees that nothing it started outlives it, keeping a bounded copy of
// its output.
//
// # What Run does
//
// The command runs as /bin/sh -c COMMAND with stdin from /dev/null (run from
// cron there is no terminal, and an agent must never sit waiting for input)
// and with stdout and stderr joined in one pipe, so the two streams keep
// their relative order. The output is streamed to Spec.Output as it comes,
// the last Spec.Tail bytes are returned in Result.Tail, and the last
// Spec.LogLimit bytes are kept in the file Spec.LogPath.
//
// The command gets a process group of its own. Four things stop it before
// it exits on its own: Spec.Timeout; Spec.IdleTimeout, once no output has
// come for that long (a hung command); the cancellation of ctx (a CLI
// cancels it on SIGINT or SIGTERM); and Spec.Stop, a Stopper the caller
// fires with a reason, typically from Spec.Output's Write when a report in
// the output crosses a budget. Whichever comes first is reported in the
// Result (TimedOut, Idle, Canceled or StoppedBy), and all stop the command
// the same way: the whole group, and every process the command started
// that Run can find (see below), gets SIGTERM (and SIGCONT, so stopped
// members see it), Run waits up to Spec.Grace for them to exit, then sends
// SIGKILL. When the group leader exits on its own, whatever it left running
// gets the same SIGTERM-then-SIGKILL treatment before Run returns.
//
// # Descendants that leave the group
//
// A process that calls setsid or setpgid (a daemon, `setsid cmd &`) escapes a
// signal sent to the group, and once its parent dies it would be re-parented
// to init and survive. To prevent that, the first Run makes the calling
// process a child subreaper (prctl PR_SET_CHILD_SUBREAPER). This is a
// process-wide setting and stays on: orphaned descendants of any child of the
// process are re-parented to it instead of to init. Run tells the ones it
// started apart from others by a variable it adds to the command's
// environment, MarkerEnv, whose value carries a token unique to the Run
// (appended to the value inherited from an enclosing Run, if any). After the
// leader exits, Run scans /proc for descendants of the calling process that
// are in the command's process group, carry the token, or descend from such a
// process; it signals them (through pidfds, after checking that the pid still
// names the same process), waits for them with the same grace, kills the
// rest with SIGKILL and reaps the ones that became its children, so no
// zombies remain.
//
// Limits: a descendant that both clears its environment (env -i) and leaves
// the process group, then is orphaned, cannot be told apart from children
// the process started by other means, and is not killed. If it keeps the
// output pipe open, Run stops reading Spec.Drain after the leader exited and
// everything it could identify was killed, and reports Result.DrainTimedOut.
// An escaped process that exits on its own after being orphaned and before
// Run looks for it stays a zombie child of the calling process until that
// process exits (a zombie's environment can no longer be read). Children of
// the calling process started by other means, such as os/exec, are never
// signalled or reaped by this package, but their own orphaned descendants
// are re-parented to it and, once they exit, stay zombies until it exits.
//
// The package is for Linux: it relies on /proc, pidfd_open (Linux 5.3) and
// PR_SET_CHILD_SUBREAPER.
package procgroup
