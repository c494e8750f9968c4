package issuequeue

import (
	"bytes"
	"errors"
	"io"
	"os"

	"github.com/autoretry/orchestrator/internal/statefile"
	"golang.org/x/sys/unix"
)

// On Linux the tool can tell exactly whether a save in place is going on:
// a read lease (fcntl F_SETLEASE) can be taken on a file only while no
// process has it open for writing, and while it is held, an open for
// writing waits until it is given up. A file read under a lease is whole
// (no save was half done), and a save that opens the file while the tool
// holds a lease on it is seen. Where leases cannot be taken (another
// user's file, a network file system), the tool waits for quiet instead.

// leased is a read lease on a state file, through a descriptor of its own.
type leased struct{ f *os.File }

// errWriting reports a file that a process has open for writing.
var errWriting = errors.New("open for writing")

// lease takes a read lease on the file at path. It returns nil and no
// error where leases cannot be taken, and errWriting while a process has
// the file open for writing.
func lease(path string) (*leased, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil
	}
	if err := takeLease(f); err != nil {
		f.Close()
		if errors.Is(err, unix.EAGAIN) {
			return nil, errWriting
		}
		return nil, nil
	}
	return &leased{f: f}, nil
}

// takeLease takes a read lease on f.
func takeLease(f *os.File) error {
	_, err := fcntlInt(f, unix.F_SETLEASE, unix.F_RDLCK)
	return err
}

// readLeased reads the file f, open for reading, from its start, under a
// read lease where one can be taken (not while a process has it open for
// writing: then it is read as it is).
func readLeased(f *os.File) ([]byte, error) {
	l := &leased{f: f}
	if takeLease(f) == nil {
		defer l.release()
	}
	return l.read()
}

func fcntlInt(f *os.File, cmd, arg int) (int, error) {
	for {
		n, err := unix.FcntlInt(f.Fd(), cmd, arg)
		if !errors.Is(err, unix.EINTR) {
			return n, err
		}
	}
}

// broken reports whether a process opened the file for writing while the
// lease was held: it is waiting for the lease to be given up.
func (l *leased) broken() bool {
	t, err := fcntlInt(l.f, unix.F_GETLEASE, 0)
	return err == nil && t != unix.F_RDLCK
}

// vouches reports whether fi describes the leased file and no process
// opened it for writing since the lease was taken: it holds what it held
// then.
func (l *leased) vouches(fi os.FileInfo) bool {
	mine, err := l.f.Stat()
	return err == nil && os.SameFile(mine, fi) && !l.broken()
}

// at reports whether the leased file is the one at path.
func (l *leased) at(path string) bool {
	mine, err := l.f.Stat()
	fi, lerr := os.Lstat(path)
	return err == nil && lerr == nil && os.SameFile(mine, fi)
}

// release gives the lease up, keeping the descriptor.
func (l *leased) release() { _, _ = fcntlInt(l.f, unix.F_SETLEASE, unix.F_UNLCK) }

// close gives the lease up and closes the descriptor; a nil lease is left
// alone.
func (l *leased) close() {
	if l != nil {
		l.f.Close()
	}
}

// read returns the file's content, from its start.
func (l *leased) read() ([]byte, error) {
	n, err := l.size()
	if err != nil {
		return nil, err
	}
	b := bytes.NewBuffer(make([]byte, 0, n+512))
	_, err = b.ReadFrom(io.NewSectionReader(l.f, 0, 1<<62))
	return b.Bytes(), err
}

// holds reports whether the file holds exactly want, without reading it
// into a copy; it reads from the descriptor's start, where lease left it.
func (l *leased) holds(want []byte) (bool, error) { return statefile.SameAs(l.f, want) }

// size returns the file's size.
func (l *leased) size() (int64, error) {
	fi, err := l.f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// again takes the lease again; false while a process has the file open
// for writing.
func (l *leased) again() bool { return takeLease(l.f) == nil }
