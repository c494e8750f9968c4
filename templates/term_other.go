//go:build !(linux || darwin || dragonfly || freebsd || netbsd || openbsd)

package templates

import "os"

// isTerminal falls back to the file mode where there is no termios; it
// takes other character devices for terminals too.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
