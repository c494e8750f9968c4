package statefile

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// takeLease takes a read lease on f, open for reading only: the kernel
// grants it only while no process has the file open for writing, and an
// open for writing while it is held waits until it is given up (closing f
// gives it up). It returns errWriting while a process has the file open for
// writing, and another error where no lease can be taken (another user's
// file, a network file system).
func takeLease(f *os.File) error {
	_, err := fcntlInt(f, unix.F_SETLEASE, unix.F_RDLCK)
	if errors.Is(err, unix.EAGAIN) {
		return errWriting
	}
	return err
}

// leaseBroken reports whether a process opened f's file for writing while
// the lease was held: it is waiting for the lease to be given up.
func leaseBroken(f *os.File) bool {
	t, err := fcntlInt(f, unix.F_GETLEASE, 0)
	return err == nil && t != unix.F_RDLCK
}

func fcntlInt(f *os.File, cmd, arg int) (int, error) {
	for {
		n, err := unix.FcntlInt(f.Fd(), cmd, arg)
		if !errors.Is(err, unix.EINTR) {
			return n, err
		}
	}
}
