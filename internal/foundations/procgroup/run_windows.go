package procgroup

import (
	"context"
	"errors"
)

// ErrUnsupported is returned by Run on systems without Unix process groups
// and signals, which running a loop depends on.
var ErrUnsupported = errors.New("running loop commands needs a Unix system (Linux, macOS or FreeBSD): process groups and signals are how they are stopped")

// Run is not supported on Windows; it returns ErrUnsupported.
func Run(ctx context.Context, s Spec) (Result, error) { return Result{ExitCode: -1}, ErrUnsupported }

// Sweep does nothing on Windows.
func Sweep() error { return nil }
