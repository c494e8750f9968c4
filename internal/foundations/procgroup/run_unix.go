//go:build unix

package procgroup

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// exitStatus maps a shell's end to an exit code the way shells report their
// children's: 128+N and the signal's name when killed by signal N.
func exitStatus(ps *os.ProcessState) (code int, signal string) {
	if ps == nil {
		return -1, ""
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), unix.SignalName(ws.Signal())
	}
	return ps.ExitCode(), ""
}

func closeLog(l *logFile) {
	if l != nil {
		l.f.Close()
	}
}

var tokens struct {
	once   sync.Once
	prefix string
	mu     sync.Mutex
	seq    uint64
	active map[string]bool
}

// processPrefix is random per process, so that tokens of this process never
// match those of another, including an enclosing one.
func processPrefix() string {
	tokens.once.Do(func() {
		tokens.prefix = rand.Text()
		tokens.active = make(map[string]bool)
	})
	return tokens.prefix
}

func newToken() string {
	prefix := processPrefix()
	tokens.mu.Lock()
	defer tokens.mu.Unlock()
	tokens.seq++
	t := prefix + "." + strconv.FormatUint(tokens.seq, 10)
	tokens.active[t] = true
	return t
}

func releaseToken(t string) {
	tokens.mu.Lock()
	defer tokens.mu.Unlock()
	delete(tokens.active, t)
}

// withMarker returns env with MarkerEnv set to the inherited value, if any,
// followed by token.
func withMarker(env []string, token string) []string {
	out := make([]string, 0, len(env)+1)
	val := token
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, MarkerEnv+"="); ok {
			val = token
			if v != "" {
				val = v + ":" + token
			}
			continue
		}
		out = append(out, kv)
	}
	return append(out, MarkerEnv+"="+val)
}

// collector fans the output out to the live writer, the tail and the log,
// and restarts the idle timer, if any, on every byte.
type collector struct {
	out       io.Writer
	tail      *ring
	log       *logFile
	idle      *time.Timer // nil without Spec.IdleTimeout
	idleAfter time.Duration
	n         int64
	readErr   error
	outErr    error
	logErr    error
}

func (c *collector) copyFrom(r io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			c.write(buf[:n])
		}
		if err != nil {
			if err != io.EOF && !errors.Is(err, os.ErrDeadlineExceeded) {
				c.readErr = err
			}
			return
		}
	}
}

func (c *collector) write(p []byte) {
	if c.idle != nil {
		c.idle.Reset(c.idleAfter)
	}
	c.n += int64(len(p))
	if c.out != nil && c.outErr == nil {
		if _, err := c.out.Write(p); err != nil {
			c.outErr = err
		}
	}
	c.tail.Write(p)
	if c.log != nil && c.logErr == nil {
		if _, err := c.log.Write(p); err != nil {
			c.logErr = err
		}
	}
}

// started is a command Run has started in a process group of its own, with
// its merged output read into a collector.
type started struct {
	cmd      *exec.Cmd
	token    string        // the marker in its environment, released by the caller
	grace    time.Duration // the Spec's periods, defaults filled in
	drain    time.Duration
	timeout  time.Duration
	stop     *Stopper
	pr       *os.File
	c        *collector
	log      *logFile
	readDone chan struct{}
	start    time.Time
}

// startCommand starts s.Command with sh -c, its stdin /dev/null and its
// stdout and stderr one pipe, a new marker token in its environment. Once it
// has started, the caller releases the token (releaseToken) when the Run
// ends; if it has not, the token is released already.
func startCommand(s Spec) (*started, error) {
	token := newToken()
	st, err := startWith(s, token)
	if err != nil {
		releaseToken(token)
		return nil, err
	}
	return st, nil
}

// startWith starts s.Command as startCommand does, with token.
func startWith(s Spec, token string) (*started, error) {
	env := s.Env
	if env == nil {
		env = os.Environ()
	}

	var log *logFile
	if s.LogPath != "" {
		var err error
		if log, err = createLogFile(s.LogPath, s.LogLimit); err != nil {
			return nil, fmt.Errorf("creating log: %w", err)
		}
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		closeLog(log)
		return nil, fmt.Errorf("creating output pipe: %w", err)
	}
	stdin, err := os.Open(os.DevNull)
	if err != nil {
		pr.Close()
		pw.Close()
		closeLog(log)
		return nil, fmt.Errorf("opening stdin: %w", err)
	}
	cmd := &exec.Cmd{
		Path:        "/bin/sh",
		Args:        []string{"sh", "-c", s.Command},
		Dir:         s.Dir,
		Env:         withMarker(env, token),
		Stdin:       stdin,
		Stdout:      pw,
		Stderr:      pw,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	start := time.Now()
	err = cmd.Start()
	pw.Close()
	stdin.Close()
	if err != nil {
		pr.Close()
		closeLog(log)
		return nil, fmt.Errorf("starting command: %w", err)
	}

	c := &collector{out: s.Output, tail: newRing(s.Tail), log: log}
	if s.IdleTimeout > 0 {
		c.idle, c.idleAfter = time.NewTimer(s.IdleTimeout), s.IdleTimeout
	}
	readDone := make(chan struct{})
	go func() {
		c.copyFrom(pr)
		close(readDone)
	}()
	grace, drain := s.periods()
	return &started{
		cmd: cmd, token: token,
		grace: grace, drain: drain, timeout: s.Timeout, stop: s.Stop,
		pr: pr, c: c, log: log, readDone: readDone, start: start,
	}, nil
}

// periods returns s's grace and drain periods, the defaults where unset.
func (s Spec) periods() (grace, drain time.Duration) {
	grace, drain = s.Grace, s.Drain
	if grace <= 0 {
		grace = DefaultGrace
	}
	if drain <= 0 {
		drain = DefaultDrain
	}
	return grace, drain
}

// waitExit waits until exited is closed or something stops the command
// first: the timeout, the idle timeout, ctx or the Stopper. It reports in
// the result which came first. A command that exits at the same moment
// counts as having exited on its own.
func (st *started) waitExit(ctx context.Context, exited <-chan struct{}) Result {
	var res Result
	var expired, idle <-chan time.Time
	if st.timeout > 0 {
		t := time.NewTimer(st.timeout)
		defer t.Stop()
		expired = t.C
	}
	if st.c.idle != nil {
		idle = st.c.idle.C
	}
	select {
	case <-exited:
	case <-expired:
		res.TimedOut = true
	case <-idle:
		res.Idle = true
	case <-ctx.Done():
		res.Canceled = true
	case <-st.stop.fired():
		res.StoppedBy = st.stop.Reason()
	}
	select {
	case <-exited:
		res = Result{}
	default:
	}
	return res
}

// stopped reports whether something other than the command's own exit
// ended it: Timeout, IdleTimeout, the context or the Stopper.
func (r Result) stopped() bool {
	return r.TimedOut || r.Idle || r.Canceled || r.StoppedBy != ""
}

// finish completes res with how the command ended (werr is what waiting for
// it returned) and with the rest of the output, read for at most the drain
// period once the processes are gone, and with what went wrong.
func (st *started) finish(res Result, errs []error, werr error) (Result, error) {
	var exitErr *exec.ExitError
	if werr != nil && !errors.As(werr, &exitErr) {
		errs = append(errs, fmt.Errorf("waiting for command: %w", werr))
	}
	res.ExitCode, res.Signal = exitStatus(st.cmd.ProcessState)

	pr, c, log, readDone, start := st.pr, st.c, st.log, st.readDone, st.start
	t := time.NewTimer(st.drain)
	select {
	case <-readDone:
	case <-t.C:
		res.DrainTimedOut = true
		pr.SetReadDeadline(time.Now())
		<-readDone
	}
	t.Stop()
	pr.Close()
	if c.idle != nil {
		c.idle.Stop() // the reader is done: nothing restarts it
	}

	res.Tail = c.tail.Bytes()
	res.OutputBytes = c.n
	if c.readErr != nil {
		errs = append(errs, fmt.Errorf("reading output: %w", c.readErr))
	}
	if c.outErr != nil {
		errs = append(errs, fmt.Errorf("writing output: %w", c.outErr))
	}
	if c.logErr != nil {
		errs = append(errs, fmt.Errorf("writing log: %w", c.logErr))
	}
	if log != nil {
		if err := log.Close(); err != nil && c.logErr == nil {
			errs = append(errs, fmt.Errorf("writing log: %w", err))
		}
	}
	res.Duration = time.Since(start)
	return res, errors.Join(errs...)
}
