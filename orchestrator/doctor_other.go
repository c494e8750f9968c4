//go:build !unix

package orchestrator

import "os"

// fileOwner is not known here.
func fileOwner(os.FileInfo) (int, bool) { return 0, false }
