//go:build linux || darwin

package handoff

import (
	"net"

	"golang.org/x/sys/unix"
)

// sockopt runs get on the socket of c and returns what get returned.
func sockopt(c *net.UnixConn, get func(fd int) error) error {
	raw, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var gerr error
	if err := raw.Control(func(fd uintptr) { gerr = get(int(fd)) }); err != nil {
		return err
	}
	return gerr
}

func alive(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || err == unix.EPERM
}
