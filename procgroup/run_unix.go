//go:build unix

package procgroup

import (
	"crypto/rand"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"

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

func tokenActive(t string) bool {
	tokens.mu.Lock()
	defer tokens.mu.Unlock()
	return tokens.active[t]
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

// collector fans the output out to the live writer, the tail and the log.
type collector struct {
	out     io.Writer
	tail    *ring
	log     *logFile
	n       int64
	readErr error
	outErr  error
	logErr  error
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
