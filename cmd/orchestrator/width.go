package main

import (
	"os"
	"strconv"
)

// defaultWidth is the width assumed when neither the terminal nor $COLUMNS
// says: the width of a terminal nobody resized.
const defaultWidth = 80

// outputWidth is the number of columns the output of status and explain
// fits: the terminal's own width when standard output is one (what the
// terminal says beats a $COLUMNS that a shell did not update after a
// resize, or never exported), else $COLUMNS, else 80.
func (e *env) outputWidth() int {
	if f, ok := e.stdout.(*os.File); ok {
		if n := terminalWidth(f); n >= 20 {
			return n
		}
	}
	if n, err := strconv.Atoi(e.getenv("COLUMNS")); err == nil && n >= 20 {
		return n
	}
	return defaultWidth
}
