package main

import (
	"fmt"
	"os"

	"github.com/autoretry/orchestrator/internal/foundations/procgroup"
	"github.com/autoretry/orchestrator/internal/foundations/statefile"
)

// inLoop says why this command runs inside a loop (or a verification) of
// "orchestrator run", or "" if it does not. The runner marks its loops in
// the environment (ORCHESTRATOR_LOOP); a loop can unset that, so the command
// also looks for the running run among its own ancestors, which a double
// fork cannot hide from on Linux: the runner is its loops' child
// subreaper, so orphans become its children.
func (e *env) inLoop() string {
	if e.getenv("ORCHESTRATOR_LOOP") != "" {
		return "ORCHESTRATOR_LOOP is set"
	}
	holder, held, err := statefile.RunHolder(e.dir)
	if err != nil || !held || holder.PID <= 0 {
		return ""
	}
	if procgroup.IsAncestor(holder.PID, os.Getpid()) {
		return fmt.Sprintf("it descends from the running 'orchestrator run', pid %d", holder.PID)
	}
	return ""
}
