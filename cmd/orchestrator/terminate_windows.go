package main

import "errors"

// terminate is not supported on Windows: a run stops its loops with Unix
// signals and process groups, and so is stopped by one.
func terminate(int) error {
	return &exitError{code: exitUsage, err: errors.New("abort needs a Unix system (Linux, macOS or FreeBSD): runs are stopped with signals")}
}
