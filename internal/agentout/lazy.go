package agentout

import (
	"regexp"
	"sync"
)

// lazyRegexp compiles expr the first time it is used, not when the program
// starts: every command of the binary links this package, and most never
// read an agent's output, so compiling its expressions at start-up would
// cost each of them (check, lint, status, …) time for nothing.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
