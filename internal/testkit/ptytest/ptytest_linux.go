package ptytest

import (
	"os"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// Open returns both sides of a new pseudo-terminal: ptm, the side a test
// reads and sizes, and pts, the terminal a command writes to. Both are
// closed when the test ends. Where no pseudo-terminal can be had, the test
// is skipped.
func Open(t testing.TB) (ptm, pts *os.File) {
	t.Helper()
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { ptm.Close() })
	fd := int(ptm.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("unlocking pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Skipf("pseudo-terminal number: %v", err)
	}
	pts, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("opening pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { pts.Close() })
	return ptm, pts
}
