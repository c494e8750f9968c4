//go:build !(linux || darwin || dragonfly || freebsd || netbsd || openbsd || windows)

package main

import "os"

// terminalWidth is 0 and false where the terminal driver cannot be asked:
// $COLUMNS applies, else no limit.
func terminalWidth(f *os.File) (int, bool) { return 0, false }
