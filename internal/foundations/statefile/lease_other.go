//go:build unix && !linux

package statefile

import (
	"errors"
	"os"
)

// Only Linux has leases (see lease_linux.go): elsewhere a read is never
// vouched whole, and Replace compares content instead.

var errNoLease = errors.New("leases are not supported on this system")

func takeLease(*os.File) error  { return errNoLease }
func leaseBroken(*os.File) bool { return false }
