package procgroup

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// proc is what Run needs from /proc/PID/stat.
type proc struct {
	pid, ppid, pgid int
	state           byte   // R, S, D, Z, T, …
	start           uint64 // start time in clock ticks after boot; with pid, identifies a process
}

func (p proc) zombie() bool { return p.state == 'Z' || p.state == 'X' }

// ident names one process across pid reuse.
type ident struct {
	pid   int
	start uint64
}

func (p proc) ident() ident { return ident{p.pid, p.start} }

// parseStat parses the contents of /proc/PID/stat (see proc(5)). The command
// name is in parentheses and may itself contain spaces and parentheses, so the
// fields are counted from the last ')'. It does not allocate on success, as
// every scan reads the stat file of every process.
func parseStat(b []byte) (proc, error) {
	open := bytes.IndexByte(b, '(')
	end := bytes.LastIndexByte(b, ')')
	if open < 1 || end < open {
		return proc{}, errors.New("no command name in parentheses")
	}
	pid, ok := parseDecimal(bytes.TrimRight(b[:open], " "))
	if !ok || pid <= 0 {
		return proc{}, errors.New("bad pid")
	}
	// After the name: state(3) ppid(4) pgrp(5) … starttime(22), counted from 1.
	var f [20][]byte
	n := 0
	for rest := b[end+1:]; n < len(f); n++ {
		rest = bytes.TrimLeft(rest, " \n")
		if len(rest) == 0 {
			break
		}
		i := bytes.IndexAny(rest, " \n")
		if i < 0 {
			i = len(rest)
		}
		f[n], rest = rest[:i], rest[i:]
	}
	if n < len(f) || len(f[0]) != 1 {
		return proc{}, errors.New("too few fields")
	}
	p := proc{pid: pid, state: f[0][0]}
	var okPpid, okPgid, okStart bool
	p.ppid, okPpid = parseDecimal(f[1])
	p.pgid, okPgid = parseDecimal(f[2])
	p.start, okStart = parseUnsigned(f[19])
	if !okPpid || !okPgid || !okStart {
		return proc{}, errors.New("bad number")
	}
	return p, nil
}

// parseDecimal parses an optionally negative decimal int.
func parseDecimal(b []byte) (int, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	u, ok := parseUnsigned(b)
	if !ok || u > math.MaxInt {
		return 0, false
	}
	if neg {
		return -int(u), true
	}
	return int(u), true
}

// parseUnsigned parses a decimal uint64.
func parseUnsigned(b []byte) (uint64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		d := uint64(c - '0')
		if c < '0' || c > '9' || n > (math.MaxUint64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// statReader reads /proc/PID/stat files into one reused buffer.
type statReader struct {
	buf  [1024]byte
	path []byte
}

func (r *statReader) read(pid int) (proc, error) {
	r.path = strconv.AppendInt(append(r.path[:0], "/proc/"...), int64(pid), 10)
	r.path = append(r.path, "/stat"...)
	fd, err := unix.Open(string(r.path), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return proc{}, err
	}
	defer unix.Close(fd)
	n := 0
	for n < len(r.buf) {
		m, err := unix.Read(fd, r.buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return proc{}, err
		}
		if m == 0 {
			break
		}
		n += m
	}
	if n == len(r.buf) {
		// A command name of up to 64 bytes keeps the line far shorter.
		return proc{}, fmt.Errorf("/proc/%d/stat is longer than %d bytes", pid, len(r.buf))
	}
	p, err := parseStat(r.buf[:n])
	if err == nil && p.pid != pid {
		err = fmt.Errorf("/proc/%d/stat names pid %d", pid, p.pid)
	}
	return p, err
}

func readStat(pid int) (proc, error) {
	var r statReader
	return r.read(pid)
}

// readProcs lists every process and indexes them by parent. Processes that
// vanish while /proc is read are left out.
func readProcs() (map[int][]proc, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, err
	}
	var r statReader
	children := make(map[int][]proc)
	for _, name := range names {
		pid, ok := parseDecimal([]byte(name))
		if !ok || pid <= 0 {
			continue
		}
		p, err := r.read(pid)
		if err != nil {
			continue
		}
		children[p.ppid] = append(children[p.ppid], p)
	}
	return children, nil
}

// markerValues returns the values of every MarkerEnv entry in the NUL
// separated environment block of /proc/PID/environ, split at ':'.
func markerValues(environ []byte) []string {
	var vals []string
	prefix := []byte(MarkerEnv + "=")
	for len(environ) > 0 {
		entry := environ
		if i := bytes.IndexByte(environ, 0); i >= 0 {
			entry, environ = environ[:i], environ[i+1:]
		} else {
			environ = nil
		}
		if v, ok := bytes.CutPrefix(entry, prefix); ok {
			vals = append(vals, strings.Split(string(v), ":")...)
		}
	}
	return vals
}

// execWindow bounds how long readMarkers waits for a process to get
// through an execve. The exec normally takes well under a millisecond but
// may stall on page-ins under heavy I/O.
const execWindow = 2 * time.Second

// readMarkers returns the marker values in the environment of pid. While a
// process is inside execve, between the switch to its new memory map and the
// copying of its arguments and environment, both /proc/PID/environ and
// /proc/PID/cmdline read empty, and a process of the group would go
// unrecognised. The kernel reports no event for the end of an exec to an
// unprivileged process, so the read is retried, backing off from 50 µs, until
// that passes, the process exits, or execWindow ends. An empty environ with a
// non-empty cmdline is a real empty environment.
func readMarkers(pid int) []string {
	dir := "/proc/" + strconv.Itoa(pid)
	deadline := time.Now().Add(execWindow)
	for backoff := 50 * time.Microsecond; ; backoff = min(2*backoff, 20*time.Millisecond) {
		env, err := os.ReadFile(dir + "/environ")
		if err != nil {
			return nil
		}
		if len(env) > 0 {
			return markerValues(env)
		}
		if cmdline, err := os.ReadFile(dir + "/cmdline"); err != nil || len(cmdline) > 0 {
			// The exec may have completed between the two reads.
			env, _ = os.ReadFile(dir + "/environ")
			return markerValues(env)
		}
		if p, err := readStat(pid); err != nil || p.zombie() || time.Now().After(deadline) {
			return nil
		}
		time.Sleep(backoff)
	}
}

// openPidfd returns a pidfd for p after checking that the pid still names
// the same process, or -1 with ok true when the process is gone or the pid
// was reused. Without pidfd support it returns -1 with ok false.
func openPidfd(p proc) (fd int, ok bool) {
	fd, err := unix.PidfdOpen(p.pid, 0)
	if err != nil {
		return -1, !errors.Is(err, unix.ENOSYS)
	}
	// The pidfd pins whatever process had the pid when it was opened; if that
	// process is the one scanned, its start time is unchanged.
	if cur, err := readStat(p.pid); err != nil || cur.start != p.start {
		unix.Close(fd)
		return -1, true
	}
	return fd, true
}

// signalProc sends sig to p unless p has exited or its pid now names
// another process.
func signalProc(p proc, sig unix.Signal) {
	fd, ok := openPidfd(p)
	if !ok {
		// No pidfds (Linux < 5.3): fall back to kill, which cannot rule out a
		// reused pid.
		unix.Kill(p.pid, sig)
		return
	}
	if fd < 0 {
		return
	}
	unix.PidfdSendSignal(fd, sig, nil, 0)
	unix.Close(fd)
}

// waitExited blocks until the child pid has exited, without reaping it, so
// that its pid, and its process group id, cannot be reused meanwhile.
func waitExited(pid int) error {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return err
		}
	}
}

// reap waits for the child pid and discards its status; a pid that is not a
// child of this process is ignored.
func reap(pid int) {
	for {
		var ws unix.WaitStatus
		_, err := unix.Wait4(pid, &ws, 0, nil)
		if err != unix.EINTR {
			return
		}
	}
}

// IsAncestor reports whether process ancestor is an ancestor of process pid
// (its parent, its parent's parent, …). On Linux an orphan is re-parented to
// its nearest child subreaper, so a runner that is one stays an ancestor of
// every descendant of its commands, double-forked or not.
func IsAncestor(ancestor, pid int) bool {
	for range 1024 {
		p, err := readStat(pid)
		if err != nil || p.ppid <= 1 {
			return false
		}
		if p.ppid == ancestor {
			return true
		}
		pid = p.ppid
	}
	return false
}
