//go:build !(linux || darwin || dragonfly || freebsd || netbsd || openbsd)

package main

import "os"

// terminalWidth is 0 where the terminal driver cannot be asked: $COLUMNS
// or the default width applies.
func terminalWidth(f *os.File) int { return 0 }
