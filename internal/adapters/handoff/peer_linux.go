//go:build linux

package handoff

import (
	"net"

	"golang.org/x/sys/unix"

	"github.com/autoretry/orchestrator/internal/foundations/procgroup"
)

// peerPID is the process id the kernel recorded for the connecting peer.
func peerPID(c *net.UnixConn) (int, error) {
	var cred *unix.Ucred
	if err := sockopt(c, func(fd int) (err error) {
		cred, err = unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
		return err
	}); err != nil {
		return 0, err
	}
	return int(cred.Pid), nil
}

// descends says whether pid descends from run. The run is its loops' child
// subreaper, so a loop's orphans stay its descendants.
func descends(run, pid int) (bool, error) { return procgroup.IsAncestor(run, pid), nil }
