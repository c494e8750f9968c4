//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A process as /proc/PID/stat describes it.
type procStat struct {
	state      byte
	pgrp, sid  int
	startTicks uint64 // start time after boot: tells a reused pid apart
}

func readProcStat(pid int) (procStat, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, false
	}
	// The command name is in parentheses and may hold anything.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return procStat{}, false
	}
	var s procStat
	s.state = f[0][0]
	s.pgrp, _ = strconv.Atoi(f[2])
	s.sid, _ = strconv.Atoi(f[3])
	s.startTicks, _ = strconv.ParseUint(f[19], 10, 64)
	return s, true
}

// watched is a process that a test checks on, and kills when it ends if the
// product left it running.
type watched struct {
	pid  int
	stat procStat
	// exited is closed when the process exits; died is then the time on
	// the boot clock (monotonic, counting suspend).
	exited chan struct{}
	died   time.Duration
}

func watch(t *testing.T, pid int) *watched {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		t.Fatalf("process %d: %v", pid, err)
	}
	s, ok := readProcStat(pid)
	if !ok {
		unix.Close(fd)
		t.Fatalf("process %d is not running", pid)
	}
	w := &watched{pid: pid, stat: s, exited: make(chan struct{})}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			n, err := unix.Poll(fds, 100)
			if n > 0 || err != nil && err != unix.EINTR {
				w.died = bootNow()
				close(w.exited)
				return
			}
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	t.Cleanup(func() {
		close(stop)
		<-done
		if w.running() {
			unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
		}
		unix.Close(fd)
	})
	return w
}

// bootNow reads the boot clock.
func bootNow() time.Duration {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts)
	return time.Duration(ts.Nano())
}

// running reports whether the process still runs: same pid, same start
// time, and not a zombie (a zombie has exited; only its parent's wait is
// missing).
func (w *watched) running() bool {
	s, ok := readProcStat(w.pid)
	return ok && s.startTicks == w.stat.startTicks && s.state != 'Z' && s.state != 'X'
}

// groupMembers returns the live processes in process group pgrp.
func groupMembers(pgrp int) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if s, ok := readProcStat(pid); ok && s.pgrp == pgrp && s.state != 'Z' && s.state != 'X' {
			pids = append(pids, pid)
		}
	}
	return pids
}
