package statefile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// LockFile is the name of the lock file inside the state directory.
const LockFile = ".lock"

type lockKind int

const (
	runLock   lockKind = iota // byte 0 of .lock; line 1 holds the owner
	writeLock                 // byte 1 of .lock; line 2 holds the owner
)

func (k lockKind) String() string {
	if k == runLock {
		return "run"
	}
	return "write"
}

// ownerLineSize is the width of each owner line in .lock, newline included.
const ownerLineSize = 256

// Field limits keep the widest owner line inside ownerLineSize.
const (
	maxCommandLen = 64
	maxRunIDLen   = 64
)

// errBusy is what the platform lock calls return when another open file
// description holds the lock.
var errBusy = errors.New("lock is held")

// Owner describes the holder of a lock, as it recorded itself in .lock.
type Owner struct {
	PID     int
	Since   time.Time // when the lock was taken (whole seconds, UTC)
	Command string    // the command holding it, e.g. "run" or "fail"
	RunID   string    // the run's id, if the holder is a run
}

// BusyError is returned when a lock is held by someone else.
type BusyError struct {
	Lock   string // "run" or "write"
	Path   string // the lock file
	Owner  Owner  // zero if the holder has not recorded itself
	Waited time.Duration
}

func (e *BusyError) Error() string {
	since := e.Owner.Since.UTC().Format(time.RFC3339)
	if e.Lock == "run" {
		if e.Owner.PID == 0 {
			return fmt.Sprintf("another run holds %s", e.Path)
		}
		return fmt.Sprintf("another run (pid %d, started %s) holds %s", e.Owner.PID, since, e.Path)
	}
	who := "another orchestrator command"
	if e.Owner.PID != 0 {
		cmd := "orchestrator"
		if e.Owner.Command != "" {
			cmd += " " + e.Owner.Command
		}
		who = fmt.Sprintf("%s (pid %d, since %s)", cmd, e.Owner.PID, since)
	}
	return fmt.Sprintf("%s holds the write lock on %s; gave up after %s", who, e.Path, e.Waited)
}

// A Lock is a held run or write lock. Release it with Unlock.
type Lock struct {
	kind  lockKind
	path  string   // lock file, for messages
	f     *os.File // carries the lock
	info  *os.File // .lock, where the owner line goes; f itself on Linux
	owner Owner
	// dir, for the run lock, is the state directory itself, locked too:
	// deleting or replacing .lock cannot undo a lock on the directory, so
	// overlapping runs stay impossible whatever happens to the file.
	dir *os.File

	mu   sync.Mutex
	done bool
}

// TryRunLock takes the run lock of the state directory dir, or fails at once
// with a *BusyError naming the holder. Zero fields of o default to this
// process's pid and the current time.
func TryRunLock(dir string, o Owner) (*Lock, error) {
	l, err := openLock(dir, runLock, o)
	if err != nil {
		return nil, err
	}
	if err := tryLock(l.f, runLock); err != nil {
		return nil, l.refused(err)
	}
	d, err := lockDir(dir)
	if err != nil {
		_ = unlock(l.f, runLock)
		l.close()
		if errors.Is(err, errBusy) {
			// A run holds the directory although .lock says nothing: its
			// .lock was deleted or replaced while it ran.
			return nil, &BusyError{Lock: "run", Path: dir}
		}
		return nil, fmt.Errorf("locking %s: %w", dir, err)
	}
	l.dir = d
	return l.acquired()
}

// refused closes l, whose lock could not be taken, and returns the error
// to report: a *BusyError naming the holder if someone holds it.
func (l *Lock) refused(err error) error {
	if errors.Is(err, errBusy) {
		err = l.busy(0)
	} else {
		err = fmt.Errorf("locking %s: %w", l.path, err)
	}
	l.close()
	return err
}

// LockWrite takes the write lock of the state directory dir, waiting up to
// wait for it (not at all if wait <= 0), then failing with a *BusyError
// naming the holder. Zero fields of o default to this process's pid and the
// current time.
//
// A wait that times out or is cancelled leaves a goroutine blocked in the
// kernel until the holder releases; it then drops the lock at once.
func LockWrite(ctx context.Context, dir string, wait time.Duration, o Owner) (*Lock, error) {
	l, err := openLock(dir, writeLock, o)
	if err != nil {
		return nil, err
	}
	err = tryLock(l.f, writeLock)
	if errors.Is(err, errBusy) && wait > 0 {
		err = l.wait(ctx, wait)
		if err == nil {
			return l.acquired()
		}
		return nil, err // l belongs to the abandoned waiter now
	}
	if err != nil {
		return nil, l.refused(err)
	}
	return l.acquired()
}

// wait blocks for the lock until it is granted, wait passes or ctx is done.
// On failure the lock files are handed to a goroutine that releases the
// lock if the kernel grants it later.
func (l *Lock) wait(ctx context.Context, wait time.Duration) error {
	granted := make(chan error, 1)
	go func() { granted <- waitLock(l.f, l.kind) }()
	t := time.NewTimer(wait)
	defer t.Stop()
	var err error
	select {
	case err := <-granted:
		if err != nil {
			l.close()
			return fmt.Errorf("locking %s: %w", l.path, err)
		}
		return nil
	case <-t.C:
		err = l.busy(wait)
	case <-ctx.Done():
		err = fmt.Errorf("waiting for the write lock on %s: %w", l.path, ctx.Err())
	}
	go func() {
		if <-granted == nil {
			_ = unlock(l.f, l.kind) // granted too late: nobody will use it
		}
		l.close()
	}()
	return err
}

// Unlock blanks the owner line and releases the lock. Calling it again does
// nothing.
func (l *Lock) Unlock() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return nil
	}
	l.done = true
	_, werr := l.info.WriteAt(blankLine(), l.kind.offset())
	uerr := unlock(l.f, l.kind)
	cerr := l.close()
	if err := errors.Join(werr, uerr, cerr); err != nil {
		return fmt.Errorf("unlocking %s: %w", l.path, err)
	}
	return nil
}

// RunHolder reports whether the run lock of dir is held, and by whom.
func RunHolder(dir string) (Owner, bool, error) { return holder(dir, runLock) }

// WriteHolder reports whether the write lock of dir is held, and by whom.
func WriteHolder(dir string) (Owner, bool, error) { return holder(dir, writeLock) }

func holder(dir string, k lockKind) (Owner, bool, error) {
	infoPath := filepath.Join(dir, LockFile)
	// A lock file that taking a lock refuses (a link, a FIFO that a plain
	// open would wait on for ever) is refused here too.
	info, err := OpenNoLink(infoPath, os.O_RDONLY|nonBlock, 0)
	if errors.Is(err, os.ErrNotExist) {
		return Owner{}, false, nil
	}
	if err != nil {
		return Owner{}, false, fmt.Errorf("reading lock holder: %w", err)
	}
	defer info.Close()
	lf := info
	if p := lockPath(dir, k); p != infoPath {
		lf, err = OpenNoLink(p, os.O_RDONLY|nonBlock, 0)
		if errors.Is(err, os.ErrNotExist) {
			return Owner{}, false, nil
		}
		if err != nil {
			return Owner{}, false, fmt.Errorf("reading lock holder: %w", err)
		}
		defer lf.Close()
	}
	// Read the line on both sides of the check, so that a line rewritten
	// meanwhile (a holder coming or going) is read again.
	for range 3 {
		before := readLine(info, k)
		held, err := isLocked(lf, k)
		if err != nil {
			return Owner{}, false, fmt.Errorf("reading lock holder of %s: %w", lf.Name(), err)
		}
		if !held {
			return Owner{}, false, nil
		}
		if after := readLine(info, k); bytes.Equal(before, after) {
			o, _ := parseOwner(after, k)
			return o, true, nil
		}
	}
	return Owner{}, true, nil
}

// normalize fills in o's defaults and makes it fit the owner line.
func normalize(o Owner) Owner {
	if o.PID == 0 {
		o.PID = os.Getpid()
	}
	if o.Since.IsZero() {
		o.Since = time.Now()
	}
	o.Since = o.Since.UTC().Truncate(time.Second)
	o.Command = sanitize(o.Command, maxCommandLen)
	o.RunID = sanitize(o.RunID, maxRunIDLen)
	return o
}

func openLock(dir string, k lockKind, o Owner) (*Lock, error) {
	o = normalize(o)
	infoPath := filepath.Join(dir, LockFile)
	info, err := OpenNoLink(infoPath, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening lock file: %w", err)
	}
	l := &Lock{kind: k, path: infoPath, f: info, info: info, owner: o}
	if p := lockPath(dir, k); p != infoPath {
		l.path = p
		if l.f, err = OpenNoLink(p, os.O_RDWR|os.O_CREATE, 0o644); err != nil {
			info.Close()
			return nil, fmt.Errorf("opening lock file: %w", err)
		}
	}
	return l, nil
}

func (l *Lock) acquired() (*Lock, error) {
	if _, err := l.info.WriteAt(formatOwner(l.owner, l.kind), l.kind.offset()); err != nil {
		_ = unlock(l.f, l.kind)
		l.close()
		return nil, fmt.Errorf("recording lock holder in %s: %w", l.info.Name(), err)
	}
	return l, nil
}

// busy builds the error for a lock found held, naming the holder recorded
// in the lock file.
func (l *Lock) busy(waited time.Duration) error {
	o, _ := parseOwner(readLine(l.info, l.kind), l.kind)
	return &BusyError{Lock: l.kind.String(), Path: l.path, Owner: o, Waited: waited}
}

func (l *Lock) close() error {
	err := l.f.Close()
	if l.dir != nil {
		err = errors.Join(err, l.dir.Close()) // releases the directory's lock
	}
	if l.info != l.f {
		err = errors.Join(err, l.info.Close())
	}
	return err
}

func (k lockKind) offset() int64 { return int64(k) * ownerLineSize }

func readLine(f *os.File, k lockKind) []byte {
	buf := make([]byte, ownerLineSize)
	n, _ := f.ReadAt(buf, k.offset()) // a short file has a blank line
	return buf[:n]
}

func blankLine() []byte {
	b := bytes.Repeat([]byte{' '}, ownerLineSize)
	b[ownerLineSize-1] = '\n'
	return b
}

// formatOwner renders o as the fixed-width owner line of lock k, e.g.
// "run pid=4242 since=2026-11-22T10:15:00Z cmd=run id=20261122-101500".
func formatOwner(o Owner, k lockKind) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "%s pid=%d since=%s", k, o.PID, o.Since.UTC().Format(time.RFC3339))
	if o.Command != "" {
		b.WriteString(" cmd=" + o.Command)
	}
	if o.RunID != "" {
		b.WriteString(" id=" + o.RunID)
	}
	line := blankLine()
	copy(line[:ownerLineSize-1], b.String())
	return line
}

// parseOwner reads an owner line of lock k. A blank, foreign or torn line
// yields false.
func parseOwner(line []byte, k lockKind) (Owner, bool) {
	fields := strings.Fields(strings.ReplaceAll(string(line), "\x00", " "))
	if len(fields) < 3 || fields[0] != k.String() {
		return Owner{}, false
	}
	var o Owner
	for _, f := range fields[1:] {
		key, val, ok := strings.Cut(f, "=")
		if !ok {
			return Owner{}, false
		}
		switch key {
		case "pid":
			pid, err := strconv.Atoi(val)
			if err != nil || pid <= 0 {
				return Owner{}, false
			}
			o.PID = pid
		case "since":
			t, err := time.Parse(time.RFC3339, val)
			if err != nil {
				return Owner{}, false
			}
			o.Since = t.UTC()
		case "cmd":
			o.Command = val
		case "id":
			o.RunID = val
		}
	}
	if o.PID == 0 || o.Since.IsZero() {
		return Owner{}, false
	}
	return o, true
}

// sanitize keeps s printable and free of spaces and '=' so that the owner
// line parses back, and cuts it to max bytes.
func sanitize(s string, max int) string {
	b := []byte(s)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			strings.IndexByte("._:-/+@", c) >= 0
		if !ok {
			b[i] = '_'
		}
	}
	if len(b) > max {
		b = b[:max]
	}
	return string(b)
}
