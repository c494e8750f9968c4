//go:build darwin

package handoff

import (
	"net"

	"golang.org/x/sys/unix"
)

// peerPID is the process id the kernel recorded for the connecting peer.
func peerPID(c *net.UnixConn) (int, error) {
	var pid int
	err := sockopt(c, func(fd int) (err error) {
		pid, err = unix.GetsockoptInt(fd, unix.SOL_LOCAL, unix.LOCAL_PEERPID)
		return err
	})
	return pid, err
}

// descends walks pid's parents up to run. macOS has no child subreaper: a
// loop's process whose parent exited is adopted by launchd and no longer
// descends from the run, so there a loop can pass for a person.
func descends(run, pid int) (bool, error) {
	for range 1024 {
		kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
		if err != nil {
			return false, err
		}
		ppid := int(kp.Eproc.Ppid)
		if ppid == run {
			return true, nil
		}
		if ppid <= 1 {
			return false, nil
		}
		pid = ppid
	}
	return false, nil
}
