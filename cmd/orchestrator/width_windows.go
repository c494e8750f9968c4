package main

import (
	"os"

	"golang.org/x/sys/windows"
)

// terminalWidth asks the console how many columns its window has, and
// whether f is a console at all: 0 and false for no console.
func terminalWidth(f *os.File) (int, bool) {
	var info windows.ConsoleScreenBufferInfo
	if err := windows.GetConsoleScreenBufferInfo(windows.Handle(f.Fd()), &info); err != nil {
		return 0, false
	}
	return int(info.Window.Right-info.Window.Left) + 1, true
}
