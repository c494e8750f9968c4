package templates

import "os"

// ColorFor reports whether output written to f should be coloured: not when
// the environment sets NO_COLOR to anything (no-color.org) or TERM=dumb, and
// otherwise only when f is a terminal. A nil getenv means os.Getenv.
func ColorFor(f *os.File, getenv func(string) string) bool {
	if getenv == nil {
		getenv = os.Getenv
	}
	if getenv("NO_COLOR") != "" || getenv("TERM") == "dumb" || f == nil {
		return false
	}
	return isTerminal(f)
}
