package main

import (
	"os"
	"strconv"
)

// defaultWidth is the width assumed for a terminal that cannot say how
// wide it is: the width of a terminal nobody resized.
const defaultWidth = 80

// outputWidth is the number of columns the output of status, explain and
// fleet status fits, 0 for no limit: the terminal's own width when
// standard output is one (what the terminal says beats a $COLUMNS that a
// shell did not update after a resize, or never exported), else $COLUMNS,
// else 80 for a terminal that cannot say, else no limit: a pipe or a file
// gets every line whole, for a program or a person to read later at
// whatever width.
func (e *env) outputWidth() int {
	tty := false
	if f, ok := e.stdout.(*os.File); ok {
		var n int
		if n, tty = terminalWidth(f); n >= 20 {
			return n
		}
	}
	if n, err := strconv.Atoi(e.getenv("COLUMNS")); err == nil && n >= 20 {
		return n
	}
	if tty {
		return defaultWidth
	}
	return 0
}
