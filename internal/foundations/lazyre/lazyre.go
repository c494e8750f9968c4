// Package lazyre compiles regular expressions the first time they are
// used, not when the program starts: every command of the binary links
// the packages that hold them, and most commands never use most of them,
// so compiling them at start-up would cost each command (check, lint,
// status, …) time for nothing.
package lazyre

import (
	"regexp"
	"sync"
)

// New returns a function that returns expr compiled, compiling it on its
// first call. expr must be valid: an invalid one panics on that call.
func New(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
