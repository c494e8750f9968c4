package procgroup

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// maxRounds bounds the scan-signal-reap rounds of one cleanup, so that a
// fork loop cannot keep Run busy forever.
const maxRounds = 100

// Run runs s.Command and returns when the shell has exited and been reaped,
// every process it started that Run could identify has exited and been
// reaped, and the output has been read to its end (or Spec.Drain ran out).
//
// The error reports what went wrong around the command rather than the
// command's own failure, which is in the Result: the command could not be
// started (ExitCode is then -1), the output or log could not be written, or
// processes survived SIGKILL. When the command ran, the Result describes it
// even if the error is not nil. A context cancelled before the start returns
// its error and starts nothing.
func Run(ctx context.Context, s Spec) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{ExitCode: -1}, err
	}
	if reason := s.Stop.Reason(); reason != "" {
		return Result{ExitCode: -1, StoppedBy: reason}, nil
	}
	if err := enableSubreaper(); err != nil {
		return Result{ExitCode: -1}, fmt.Errorf("becoming a child subreaper: %w", err)
	}
	// Until its shell is among the leaders, another Run must not take it
	// for an orphan of its own.
	leaders.starting(1)
	st, err := startCommand(s)
	if err != nil {
		leaders.starting(-1)
		return Result{ExitCode: -1}, err
	}
	leaders.add(st.cmd.Process.Pid)
	leaders.starting(-1)
	defer leaders.remove(st.cmd.Process.Pid)
	defer releaseToken(st.token)
	cmd := st.cmd
	// The leader is reaped only at the very end: until then its pid, which
	// is also the group's id, cannot be reused, so signalling the group
	// cannot hit another one.
	exited := make(chan struct{})
	go func() {
		waitExited(cmd.Process.Pid)
		close(exited)
	}()

	g := newGroup(cmd.Process.Pid, func(markers []string) bool {
		return slices.Contains(markers, st.token)
	})
	res := st.waitExit(ctx, exited)
	var errs []error
	var deadline time.Time
	if res.stopped() {
		deadline = time.Now().Add(st.grace)
		procs, err := g.scan()
		errs = append(errs, err)
		g.terminate(procs)
		t := time.NewTimer(st.grace)
		select {
		case <-exited:
		case <-t.C:
			errs = append(errs, g.signalAll(unix.SIGKILL))
			<-exited
		}
		t.Stop()
	}
	errs = append(errs, g.settle(deadline, st.grace), g.kill())

	werr := cmd.Wait()
	return st.finish(res, errs, werr)
}

// Sweep kills with SIGKILL, and reaps, every process left by a finished Run
// of this process that is still running, such as processes that survived
// Run's own cleanup. Processes of Runs still in progress are not touched.
// It is meant for the exit paths of a program; Run already cleans up after
// itself.
func Sweep() error {
	prefix := processPrefix() + "."
	g := newGroup(0, func(markers []string) bool {
		mine := false
		for _, m := range markers {
			if strings.HasPrefix(m, prefix) {
				if tokenActive(m) {
					return false
				}
				mine = true
			}
		}
		return mine
	})
	return g.kill()
}

// leaders holds the shells of the Runs in progress in this process.
var leaders = activeLeaders{pids: map[int]bool{}}

type activeLeaders struct {
	mu     sync.Mutex
	pids   map[int]bool
	starts int // Runs starting their shell, not yet among pids
}

func (a *activeLeaders) starting(n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.starts += n
}

func (a *activeLeaders) add(pid int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.pids[pid] = true
}

func (a *activeLeaders) remove(pid int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.pids, pid)
}

// only reports whether the Run of leader is the only one in progress, and
// no other is starting.
func (a *activeLeaders) only(leader int) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.starts == 0 && len(a.pids) == 1 && a.pids[leader]
}

var subreaper struct {
	once sync.Once
	err  error
}

func enableSubreaper() error {
	subreaper.once.Do(func() {
		subreaper.err = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	})
	return subreaper.err
}

// group finds and stops the processes of one Run: the members of the
// leader's process group and the descendants of this process that carry
// the Run's marker, with everything below them.
type group struct {
	self   int
	leader int // pid and process group id of the shell; 0 for Sweep
	owns   func(markers []string) bool
	// known holds every process found to belong to the group, so that it is
	// still recognised as a zombie, when its environment can no longer be
	// read.
	known       map[ident]bool
	termed      map[ident]bool
	groupTermed bool
}

func newGroup(leader int, owns func([]string) bool) *group {
	return &group{
		self:   os.Getpid(),
		leader: leader,
		owns:   owns,
		known:  make(map[ident]bool),
		termed: make(map[ident]bool),
	}
}

// scan returns the group's processes other than the leader, live and
// zombie, parents before children.
func (g *group) scan() ([]proc, error) {
	children, err := readProcs()
	if err != nil {
		return nil, fmt.Errorf("listing processes: %w", err)
	}
	var ours []proc
	var queue []int
	for _, c := range children[g.self] {
		switch {
		case c.pid == g.leader:
			queue = append(queue, c.pid)
		case g.known[c.ident()],
			g.leader != 0 && c.pgid == g.leader,
			!c.zombie() && g.owns(readMarkers(c.pid)),
			// An orphan re-parented to this process (its child subreaper):
			// a descendant that left the group with setsid and dropped the
			// marker with env -i. While this Run is the only one, it can
			// only be this Run's.
			g.leader != 0 && leaders.only(g.leader):
			ours = append(ours, c)
			queue = append(queue, c.pid)
		}
	}
	seen := map[int]bool{g.self: true}
	for _, pid := range queue {
		seen[pid] = true
	}
	for i := 0; i < len(queue); i++ {
		for _, c := range children[queue[i]] {
			if seen[c.pid] {
				continue
			}
			seen[c.pid] = true
			ours = append(ours, c)
			queue = append(queue, c.pid)
		}
	}
	for _, p := range ours {
		g.known[p.ident()] = true
	}
	return ours, nil
}

// terminate sends SIGTERM, then SIGCONT so that stopped processes act on
// it, to the process group the first time and to each process of procs
// that has not had it yet.
func (g *group) terminate(procs []proc) {
	viaGroup := false
	if g.leader != 0 && !g.groupTermed {
		unix.Kill(-g.leader, unix.SIGTERM)
		unix.Kill(-g.leader, unix.SIGCONT)
		g.groupTermed, viaGroup = true, true
	}
	for _, p := range procs {
		if p.zombie() || g.termed[p.ident()] {
			continue
		}
		g.termed[p.ident()] = true
		if viaGroup && p.pgid == g.leader {
			continue
		}
		signalProc(p, unix.SIGTERM)
		signalProc(p, unix.SIGCONT)
	}
}

// signalAll sends sig to the process group and to every process found.
func (g *group) signalAll(sig unix.Signal) error {
	if g.leader != 0 {
		unix.Kill(-g.leader, sig)
	}
	procs, err := g.scan()
	for _, p := range procs {
		if !p.zombie() {
			signalProc(p, sig)
		}
	}
	return err
}

// settle waits until the group has no live process left or deadline has
// passed. Processes found alive that have not had SIGTERM get it; if
// deadline is zero, it is set to grace from the first time one is found.
func (g *group) settle(deadline time.Time, grace time.Duration) error {
	for range maxRounds {
		procs, err := g.scan()
		if err != nil {
			return err
		}
		live := slices.DeleteFunc(procs, proc.zombie)
		if len(live) == 0 {
			return nil
		}
		if deadline.IsZero() {
			deadline = time.Now().Add(grace)
		}
		g.terminate(live)
		if !waitAnyExit(live, deadline) {
			return nil
		}
	}
	return nil
}

// kill sends SIGKILL to the group and reaps what becomes a child of this
// process, in rounds, until a scan finds nothing: descendants of a killed
// process are re-parented to this process only once it has died.
func (g *group) kill() error {
	var procs []proc
	for range maxRounds {
		if g.leader != 0 {
			unix.Kill(-g.leader, unix.SIGKILL)
		}
		var err error
		if procs, err = g.scan(); err != nil {
			return err
		}
		if len(procs) == 0 {
			return nil
		}
		for _, p := range procs {
			if !p.zombie() {
				signalProc(p, unix.SIGKILL)
			}
		}
		for _, p := range procs {
			if p.ppid == g.self {
				reap(p.pid)
			}
		}
	}
	return fmt.Errorf("%d processes still running after %d rounds of SIGKILL", len(procs), maxRounds)
}

// waitAnyExit blocks until one of procs exits or deadline passes, and
// reports whether waiting is worth repeating: false once deadline has
// passed, or when pidfds are not supported.
func waitAnyExit(procs []proc, deadline time.Time) bool {
	const maxFds = 256
	fds := make([]unix.PollFd, 0, min(len(procs), maxFds))
	defer func() {
		for _, p := range fds {
			unix.Close(int(p.Fd))
		}
	}()
	for _, p := range procs {
		if len(fds) == maxFds {
			break
		}
		fd, ok := openPidfd(p)
		if !ok {
			return false
		}
		if fd < 0 {
			return time.Now().Before(deadline) // gone already: look again
		}
		fds = append(fds, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN})
	}
	for {
		wait := time.Until(deadline)
		if wait <= 0 {
			return false
		}
		ms := int((wait + time.Millisecond - 1) / time.Millisecond)
		n, err := unix.Poll(fds, ms)
		if err == unix.EINTR {
			continue
		}
		return err == nil && n > 0
	}
}

// tokenActive reports whether t marks the processes of a Run still going.
func tokenActive(t string) bool {
	tokens.mu.Lock()
	defer tokens.mu.Unlock()
	return tokens.active[t]
}
