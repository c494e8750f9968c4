// Package handoff is the channel through which a person's command tells a
// running "orchestrator run" what it changed, so that the run's loop guard
// keeps the change instead of undoing it as the loop's.
//
// The run listens on a unix socket in its state directory. A person's
// command connects, sends an intent (what it is about to set), makes its
// change, then sends a commit; the run answers each with an ack. The run
// believes the socket only as far as it can tell who is at the other end:
// it reads the peer's process id from the kernel (SO_PEERCRED on Linux,
// LOCAL_PEERPID on macOS) and refuses a peer that is the run itself or
// descends from it, since the loop and everything it starts descend from
// the run. Where the kernel gives no peer process id, every message is
// refused, and the guard treats a person's change during a loop as it
// treats the loop's.
//
// Everything is bounded: a message is at most MaxMessage bytes, at most
// MaxConns connections are served at once, and a conversation that does
// not end within ConnTimeout is cut.
package handoff

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"
)

// SocketFile is the socket's name in the state directory.
const SocketFile = ".run.sock"

const (
	// MaxMessage bounds one message, the newline included.
	MaxMessage = 64 << 10
	// MaxConns bounds the connections served at once; more are closed
	// unanswered.
	MaxConns = 8
	// ConnTimeout bounds a whole conversation: intent, the change, commit.
	ConnTimeout = 30 * time.Second
	// AckTimeout bounds how long a command waits for one ack.
	AckTimeout = 2 * time.Second
)

// A message on the wire: one JSON object on one line.
type message struct {
	Op      string          `json:"op"` // intent, commit, abort
	Payload json.RawMessage `json:"payload,omitempty"`
}

// Accepted is a committed message, with the process that sent it.
type Accepted struct {
	PID     int
	Payload []byte
}

// Server is the run's end of the channel.
type Server struct {
	ln   net.Listener
	path string
	self int
	// check validates an intent's payload; an error refuses it.
	check func([]byte) error

	sem  chan struct{}
	wg   sync.WaitGroup
	mu   sync.Mutex
	cond *sync.Cond
	// pending counts intents not yet committed or dropped.
	pending   int
	committed []Accepted
	closed    bool
	conns     map[net.Conn]bool
}

// Listen starts listening on path for the run whose process id is self.
// A socket already at path is a dead run's (the caller holds the run lock)
// and is replaced. check validates each intent's payload.
func Listen(path string, self int, check func([]byte) error) (*Server, error) {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("%s exists and is not a socket", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		os.Remove(path)
		return nil, err
	}
	s := &Server{ln: ln, path: path, self: self, check: check, sem: make(chan struct{}, MaxConns), conns: map[net.Conn]bool{}}
	s.cond = sync.NewCond(&s.mu)
	s.wg.Add(1)
	go s.serve()
	return s, nil
}

// Close stops listening, removes the socket, cuts the conversations in
// progress and waits for them to end.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	err := s.ln.Close()
	if rerr := os.Remove(s.path); rerr != nil && !errors.Is(rerr, os.ErrNotExist) && err == nil {
		err = rerr
	}
	s.wg.Wait()
	return err
}

// Take returns the messages committed since the last Take, waiting up to
// wait for intents already acked to be committed or dropped. An intent
// still open when the wait ends is left for the next Take.
func (s *Server) Take(wait time.Duration) []Accepted {
	deadline := time.Now().Add(wait)
	t := time.AfterFunc(wait, func() { s.mu.Lock(); s.cond.Broadcast(); s.mu.Unlock() })
	defer t.Stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.pending > 0 && time.Now().Before(deadline) {
		s.cond.Wait()
	}
	out := s.committed
	s.committed = nil
	return out
}

func (s *Server) serve() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return
		}
		select {
		case s.sem <- struct{}{}:
		default:
			c.Close() // too many at once
			continue
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			<-s.sem
			continue
		}
		s.conns[c] = true
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			defer func() { <-s.sem }()
			defer func() {
				s.mu.Lock()
				delete(s.conns, c)
				s.mu.Unlock()
				c.Close()
			}()
			s.conversation(c)
		}()
	}
}

// conversation serves one connection: an intent, then a commit or abort.
func (s *Server) conversation(c net.Conn) {
	_ = c.SetDeadline(time.Now().Add(ConnTimeout))
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return
	}
	r := bufio.NewReaderSize(io.LimitReader(c, 2*MaxMessage), 4096)
	m, err := readMessage(r)
	if err != nil || m.Op != "intent" {
		reply(c, "refused: expected an intent")
		return
	}
	pid, err := s.person(uc)
	if err != nil {
		reply(c, "refused: "+err.Error())
		return
	}
	if err := s.check(m.Payload); err != nil {
		reply(c, "refused: "+err.Error())
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		reply(c, "refused: the run is ending")
		return
	}
	s.pending++
	s.mu.Unlock()
	done := false
	defer func() {
		if !done {
			s.mu.Lock()
			s.pending--
			s.cond.Broadcast()
			s.mu.Unlock()
		}
	}()
	if !reply(c, "ok") {
		return
	}
	end, err := readMessage(r)
	if err != nil || end.Op != "commit" {
		return // aborted, or the command died: nothing is kept
	}
	// The peer is checked again: it must still be the same, living
	// outsider that sent the intent.
	if again, err := s.person(uc); err != nil || again != pid {
		reply(c, "refused: the sender changed")
		return
	}
	s.mu.Lock()
	s.pending--
	s.committed = append(s.committed, Accepted{PID: pid, Payload: append([]byte(nil), m.Payload...)})
	done = true
	s.cond.Broadcast()
	s.mu.Unlock()
	reply(c, "ok")
}

// person returns the peer's process id if it is a person's: alive, not
// the run, not descended from it.
func (s *Server) person(c *net.UnixConn) (int, error) {
	pid, err := peerPID(c)
	if err != nil {
		return 0, err
	}
	if pid <= 0 || pid == s.self {
		return 0, fmt.Errorf("the sender is the run itself")
	}
	if !alive(pid) {
		return 0, fmt.Errorf("the sender, pid %d, is gone", pid)
	}
	desc, err := descends(s.self, pid)
	if err != nil {
		return 0, err
	}
	if desc || !alive(pid) {
		return 0, fmt.Errorf("the sender, pid %d, runs inside the run's loop", pid)
	}
	return pid, nil
}

func readMessage(r *bufio.Reader) (message, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > MaxMessage {
			return message{}, fmt.Errorf("message longer than %d bytes", MaxMessage)
		}
		if err == nil {
			break
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return message{}, err
		}
	}
	var m message
	if err := json.Unmarshal(bytes.TrimSpace(line), &m); err != nil {
		return message{}, err
	}
	return m, nil
}

func reply(c net.Conn, s string) bool {
	_, err := io.WriteString(c, s+"\n")
	return err == nil
}

// ErrNoRun is returned by Begin when no run listens: nothing needs telling.
var ErrNoRun = errors.New("no run listens")

// Conn is a person's command's end of one conversation.
type Conn struct {
	c net.Conn
	r *bufio.Reader
}

// Begin tells the run listening on path what the command is about to
// set. It returns ErrNoRun if no run listens, and an error if the run
// refused or did not answer within AckTimeout; then the run will treat
// the change as any other made during its loop.
func Begin(path string, payload []byte) (*Conn, error) {
	if len(payload)+64 > MaxMessage {
		return nil, fmt.Errorf("message longer than %d bytes", MaxMessage)
	}
	c, err := net.DialTimeout("unix", path, AckTimeout)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || isRefused(err) {
			return nil, ErrNoRun
		}
		return nil, err
	}
	k := &Conn{c: c, r: bufio.NewReaderSize(io.LimitReader(c, MaxMessage), 4096)}
	if err := k.say(message{Op: "intent", Payload: payload}); err != nil {
		c.Close()
		return nil, err
	}
	return k, nil
}

// Commit tells the run the change is made.
func (k *Conn) Commit() error {
	defer k.c.Close()
	return k.say(message{Op: "commit"})
}

// Abort tells the run the change was not made.
func (k *Conn) Abort() {
	_ = k.send(message{Op: "abort"})
	k.c.Close()
}

func (k *Conn) send(m message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	_ = k.c.SetDeadline(time.Now().Add(AckTimeout))
	_, err = k.c.Write(append(b, '\n'))
	return err
}

func (k *Conn) say(m message) error {
	if err := k.send(m); err != nil {
		return err
	}
	line, err := k.r.ReadString('\n')
	if err != nil {
		return fmt.Errorf("the run did not answer: %w", err)
	}
	line = string(bytes.TrimSpace([]byte(line)))
	if line != "ok" {
		return errors.New(line)
	}
	return nil
}
