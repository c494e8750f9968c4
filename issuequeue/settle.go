package issuequeue

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/autoretry/orchestrator/internal/statefile"
)

// A file a person's editor is saving is, for an instant, missing (saved
// by renaming the old file away and writing a new one), empty or cut short
// (saved in place), and parses as a queue without some issue or not at all.
// What a command reads in that instant is not what the person wrote, so a
// command that finds a state file missing, invalid, without the issue it
// needs or in conflict with its change waits for the file to settle before
// it reports anything.
const (
	// SettleTime bounds the wait of one command for its files to settle.
	SettleTime = 2 * time.Second
	// settleQuiet is how long a file must be left alone to count as
	// settled: a save takes a few milliseconds.
	settleQuiet = 300 * time.Millisecond
	// settlePoll bounds the interval between two looks at the file.
	settlePoll = 25 * time.Millisecond
)

// settler is the waiting budget of one command.
type settler struct {
	deadline time.Time
}

func newSettler() *settler {
	return &settler{deadline: time.Now().Add(SettleTime)}
}

// stamp identifies a version of a file without reading it.
type stamp struct {
	fi  os.FileInfo // nil: missing
	dir time.Time   // the directory's modification time
}

func stampOf(path string) stamp {
	var s stamp
	if fi, err := os.Lstat(path); err == nil {
		s.fi = fi
	}
	if fi, err := os.Stat(filepath.Dir(path)); err == nil {
		s.dir = fi.ModTime()
	}
	return s
}

func (s stamp) same(o stamp) bool {
	if (s.fi == nil) != (o.fi == nil) || !s.dir.Equal(o.dir) {
		return false
	}
	if s.fi == nil {
		return true
	}
	return os.SameFile(s.fi, o.fi) && s.fi.Size() == o.fi.Size() && s.fi.ModTime().Equal(o.fi.ModTime())
}

// settledAt is when the file can be taken as it is: at once if the tool
// put it in place whole; else once it has been left alone for a while
// (for a missing file, the directory: a save by renaming the old file away
// recreates it in a moment).
func (s stamp) settledAt() time.Time {
	switch {
	case s.fi == nil:
		return s.dir.Add(settleQuiet)
	case statefile.WrittenWhole(s.fi):
		return time.Time{}
	}
	return s.fi.ModTime().Add(settleQuiet)
}

// saving reports whether the file at path may be in the middle of a save
// and the command may still wait for it.
func (s *settler) saving(path string) bool {
	return s.left() && s.busy(path)
}

// busy reports whether the file at path may be in the middle of a save:
// written by someone else than the tool, a moment ago.
func (s *settler) busy(path string) bool {
	return !settled(time.Now(), stampOf(path).settledAt())
}

// settled reports whether a file that settles at at has settled by now. A
// time further ahead than a quiet period is another clock's (a copy from
// another machine, a network file system), not a save going on now.
func settled(now, at time.Time) bool {
	return !now.Before(at) || at.After(now.Add(settleQuiet))
}

// SavingError reports a state file that was still being written by
// someone else when the command had waited as long as it does: what it
// holds may be half a save, so nothing was written.
type SavingError struct{ File string }

func (e *SavingError) Error() string {
	return fmt.Sprintf("%s is being written by someone else and did not settle within %v; nothing was written", e.File, SettleTime)
}

// left reports whether the budget is not spent.
func (s *settler) left() bool { return time.Now().Before(s.deadline) }

// wait is called when what the file at path held (seen; nil: missing)
// does not make sense for the command, or may be half a save. It waits
// until the file changes, and then reports true: read it again. It reports
// false when the file is settled (see settledAt) and still holds seen, or
// when the command's budget is spent: what was seen is the verdict.
func (s *settler) wait(ctx context.Context, path string, seen []byte) bool {
	start := stampOf(path)
	for poll := time.Millisecond; ; poll = min(2*poll, settlePoll) {
		now := time.Now()
		if !now.Before(s.deadline) {
			return false
		}
		cur := stampOf(path)
		if !cur.same(start) {
			return true
		}
		quiet := cur.settledAt()
		if settled(now, quiet) {
			// Unless the content changed unseen (a save of the same
			// size within the clock's resolution), it is final.
			b, err := readSettled(path)
			return err == nil && ((b == nil) != (seen == nil) || !bytes.Equal(b, seen))
		}
		d := min(poll, s.deadline.Sub(now), quiet.Sub(now))
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-t.C:
		}
	}
}

// errSaving is what a file that may be in the middle of a save gets
// instead of having a change re-applied to it.
var errSaving = errors.New("in the middle of a save")

// midSave reports whether err is one that a file caught in the middle of
// a save explains: a read that does not parse, lacks an issue, or
// conflicts with the change being written, or shows the issue invalid.
func midSave(err error) bool {
	var (
		ve *ValidationError
		nf *NotFoundError
		ce *ConflictError
		qe *QuarantinedError
	)
	return errors.As(err, &ve) || errors.As(err, &nf) || errors.As(err, &ce) || errors.As(err, &qe) ||
		errors.Is(err, statefile.ErrDeleted) || err == errSaving
}

// readSettled reads a state file; nil means missing.
func readSettled(path string) ([]byte, error) {
	b, err := statefile.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// rebaser returns rebase for statefile.Replace: it notes in seen what the
// file held, and refuses a file being saved in place.
func (s *settler) rebaser(path string, seen *[]byte, rebase func([]byte) ([]byte, error)) func([]byte) ([]byte, error) {
	return func(cur []byte) ([]byte, error) {
		*seen = cur
		if s.busy(path) {
			if !s.left() {
				return nil, &SavingError{File: path}
			}
			return nil, errSaving
		}
		return rebase(cur)
	}
}

// replace is statefile.Replace that, when the change cannot be
// re-applied to what the file holds because that is the middle of
// someone's save, waits for the save to end and re-applies the change to
// its result.
func (s *settler) replace(ctx context.Context, path string, orig, next []byte, rebase func([]byte) ([]byte, error)) error {
	var seen []byte
	rebaseSeen := s.rebaser(path, &seen, rebase)
	for {
		seen = nil
		err := statefile.Replace(path, orig, next, rebaseSeen)
		if err == nil || !midSave(err) || !s.wait(ctx, path, seen) && err != errSaving {
			return err
		}
		for {
			cur, rerr := readSettled(path)
			if rerr != nil {
				return rerr
			}
			if cur == nil {
				err = fmt.Errorf("%s was %w", path, statefile.ErrDeleted)
			} else {
				next, err = rebaseSeen(cur)
			}
			if err == nil {
				orig = cur
				break
			}
			if !midSave(err) || !s.wait(ctx, path, cur) && err != errSaving {
				return err
			}
		}
	}
}
