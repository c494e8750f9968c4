//go:build linux

package handoff

import (
	"net"

	"golang.org/x/sys/unix"

	"github.com/autoretry/orchestrator/internal/procgroup"
)

// peerPID is the process id the kernel recorded for the connecting peer.
func peerPID(c *net.UnixConn) (int, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0, err
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return 0, err
	}
	if cerr != nil {
		return 0, cerr
	}
	return int(cred.Pid), nil
}

// descends says whether pid descends from run. The run is its loops' child
// subreaper, so a loop's orphans stay its descendants.
func descends(run, pid int) (bool, error) { return procgroup.IsAncestor(run, pid), nil }

func alive(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || err == unix.EPERM
}
