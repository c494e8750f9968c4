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
	kept     []KeptSave // the saves it could not put back, kept beside their files
	lost     []error    // the saves it could not keep either
	// replaced, if not nil, is called when replaceKeeping's Replace has
	// returned, before it looks for saves into the replaced file. Tests
	// set it.
	replaced func()
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
// put it in place whole; else once it has been left alone for quiet()
// (for a missing file, the directory: a save by renaming the old file away
// recreates it in a moment).
func (s stamp) settledAt() time.Time {
	switch {
	case s.fi == nil:
		return s.dir.Add(settleQuiet)
	case statefile.WrittenWhole(s.fi):
		return time.Time{}
	}
	return s.fi.ModTime().Add(s.quiet())
}

// quiet is how long a file must be left alone to count as settled where no
// lease can tell: settleQuiet, as a save takes milliseconds; but an empty
// file is far more often a save in place that truncated it and has not
// written yet (an editor stalled on a loaded machine) than what a person
// meant, and building on it would throw the queue away, so it is waited
// for as long as a command waits at all.
func (s stamp) quiet() time.Duration {
	if s.fi != nil && s.fi.Size() == 0 {
		return SettleTime
	}
	return settleQuiet
}

// saving reports whether the file at path, read as seen (nil: missing),
// may be in the middle of a save and the command may still wait for it.
func (s *settler) saving(path string, seen []byte) bool {
	return s.left() && s.busy(path, seen)
}

// busy reports whether the file at path, read as seen (nil: missing), may
// be in the middle of a save: where leases tell, open for writing, or
// changed a moment ago and since it was read; where they cannot tell,
// changed a moment ago and not put in place whole by the tool.
func (s *settler) busy(path string, seen []byte) bool {
	st := stampOf(path)
	now := time.Now()
	switch state, same := leaseOf(now, st, path, seen); state {
	case leaseFree:
		return !same
	case leaseIdle:
		return false
	case leaseWriting:
		return true
	}
	return !settled(now, st.settledAt(), st.quiet())
}

// leaseOf is what a lease tells (see leasedHolds) about the file at path,
// stamped st; leaseUnknown if it is missing. Where a lease tells, it is the
// answer, whatever the modification time says: one file in a thousand
// saved in place has the tool's mark by chance (see
// statefile.WrittenWhole), and an editor that truncated the file and then
// stalled (a loaded machine, a process stopped) leaves it unchanged for
// longer than a save takes while it still has it open for writing.
//
// A file left alone longer than a save takes is only asked whether a
// process has it open for writing (leaseWriting or leaseIdle): comparing it
// with seen would read it again, on every command, for nothing.
func leaseOf(now time.Time, st stamp, path string, seen []byte) (leaseState, bool) {
	switch {
	case st.fi == nil:
		return leaseUnknown, false
	case settled(now, st.fi.ModTime().Add(settleQuiet), settleQuiet):
		return writers(path), false
	}
	return leasedHolds(path, seen)
}

// writers is whether a lease can be taken on the file at path: leaseIdle
// if so (no process has it open for writing), leaseWriting if a process
// has it open for writing, leaseUnknown where no lease can tell.
func writers(path string) leaseState {
	l, err := lease(path)
	l.close()
	switch {
	case err == errWriting:
		return leaseWriting
	case l != nil:
		return leaseIdle
	}
	return leaseUnknown
}

// leaseState is what a lease tells about a file.
type leaseState int

const (
	leaseUnknown leaseState = iota // no lease can be taken: wait for quiet
	leaseFree                      // no process has it open for writing
	leaseIdle                      // as leaseFree, for a file left alone long enough: not compared
	leaseWriting                   // a process has it open for writing
)

// leasedHolds reports what a lease on the file at path tells, and, when
// no process has it open for writing, whether it holds seen (nil: no
// file), compared under the lease so that no save can begin meanwhile.
func leasedHolds(path string, seen []byte) (leaseState, bool) {
	l, err := lease(path)
	switch {
	case err == errWriting:
		return leaseWriting, false
	case l == nil:
		return leaseUnknown, false
	}
	defer l.close()
	if seen == nil {
		return leaseFree, false
	}
	same, err := l.holds(seen)
	return leaseFree, err == nil && same
}

// settled reports whether a file that settles at at, once left alone for
// quiet, has settled by now. A modification time ahead of now by no more
// than quiet may be a save going on now on a file server whose clock is a
// little ahead; one further ahead is another clock's (a copy from another
// machine), not a save going on now.
func settled(now, at time.Time, quiet time.Duration) bool {
	return !now.Before(at) || at.After(now.Add(2*quiet))
}

// SavingError reports a state file that was still being written by
// someone else when the command had waited as long as it does: what it
// holds may be half a save, so nothing was written.
type SavingError struct{ File string }

func (e *SavingError) Error() string {
	return fmt.Sprintf("%s is being written by someone else and did not settle within %v; nothing was written", e.File, SettleTime)
}

// EmptyFileError reports an empty state file where no lease can tell
// whether someone has it open for writing: an editor that saves in place
// empties the file first, and one that stalled there would lose what it
// then writes if a change built on the empty file replaced it.
type EmptyFileError struct{ File string }

func (e *EmptyFileError) Error() string {
	return fmt.Sprintf("%s is empty, and this system cannot tell whether an editor is in the middle of saving it; nothing was written", e.File)
}

// left reports whether the budget is not spent.
func (s *settler) left() bool { return time.Now().Before(s.deadline) }

// extend gives the rest of a change that has made its first write a
// budget of its own: it must be made, and a save going on takes
// milliseconds.
func (s *settler) extend() {
	if by := time.Now().Add(SettleTime); by.After(s.deadline) {
		s.deadline = by
	}
}

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
		quiet, d := cur.settledAt(), cur.quiet()
		switch state, same := leaseOf(now, cur, path, seen); state {
		case leaseFree:
			// No one has the file open for writing: what it holds now
			// is final.
			return !same
		case leaseIdle:
			quiet = time.Time{} // no one is writing it: it is final
		case leaseWriting:
			quiet, d = now.Add(settleQuiet), settleQuiet // not settled, whatever the mark says
		}
		if settled(now, quiet, d) {
			// Unless the content changed unseen (a save of the same
			// size within the clock's resolution), it is final.
			b, err := readSettled(path)
			return err == nil && ((b == nil) != (seen == nil) || !bytes.Equal(b, seen))
		}
		if !sleep(ctx, min(poll, s.deadline.Sub(now), quiet.Sub(now))) {
			return false
		}
	}
}

// sleep waits for d, or until ctx is done; it reports whether ctx is not.
// The waits of a command start at a millisecond and double up to
// settlePoll: a save takes a few milliseconds.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
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

// readSettled reads a state file; nil means missing. Where a lease can be
// taken, the file is read under it, so that no save in place can begin
// while it is read.
func readSettled(path string) ([]byte, error) {
	f, err := statefile.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readLeased(f)
}

// rebaser returns rebase for statefile.Replace: it notes in seen what the
// file held, and refuses a file being saved in place.
func (s *settler) rebaser(path string, seen *[]byte, rebase func([]byte) ([]byte, error)) func([]byte) ([]byte, error) {
	return func(cur []byte) ([]byte, error) {
		*seen = cur
		if s.busy(path, cur) {
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
//
// pre, if not nil, is next written ahead (see writeAhead); it is put in
// place or removed.
func (s *settler) replace(ctx context.Context, path string, orig, next []byte, rebase func([]byte) ([]byte, error), pre *statefile.Prepared) error {
	var seen []byte
	rebaseSeen := s.rebaser(path, &seen, rebase)
	for {
		err := s.replaceKeeping(ctx, path, orig, next, rebase, &seen, pre)
		pre = nil
		if err == nil || !midSave(err) || !s.wait(ctx, path, seen) && err != errSaving {
			return err
		}
		for {
			if err := ctx.Err(); err != nil {
				return err // interrupted while it waited for a save to end
			}
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

// KeptSave is a save that went into File while a change replaced it and
// could not be put back in its place: what the save wrote is kept in
// Saved, for a person to merge into File. Cut, if not nil, says why
// the save may not be whole: it had not ended, or could not be read to its
// end, when it was kept.
type KeptSave struct {
	File, Saved string
	Cut         error
}

func (k KeptSave) String() string {
	kept := "kept"
	if k.Cut != nil {
		kept = "kept as far as it went (" + k.Cut.Error() + ")"
	}
	return fmt.Sprintf("%s was saved while this command replaced it, and the save could not be merged: it is %s in %s; merge it into %s by hand, then remove %s", k.File, kept, k.Saved, k.File, k.Saved)
}

// replaceKeeping is statefile.Replace (rebasing with rebase, which it
// wraps with rebaser) under a read lease on the file it replaces, where
// one can be taken, so that a save in place that opens that file meanwhile
// is not lost with it. It returns errSaving, having written nothing, while
// a process has the file open for writing.
//
// Such a save writes into the file that no longer has the name. The lease
// keeps it from writing before the swap, so it wrote what the person's
// editor holds, which may be older than what the change replaced: like a
// save that comes before a change, it is put back in place with the
// change re-applied on top of it (rebase). A change that conflicts with it
// gives way to it: the save is put back alone and the *ConflictError
// returned, as if the save had come first. The file put in place is leased
// before the save is let go on, so that no other save can go into it
// meanwhile unseen.
//
// A save that is not put back is never dropped: it is kept beside the file
// (see statefile.SetAside) and noted in s.kept, and what is in place
// stands. That is so for a second save, into the file the put-back
// replaced (what it was made on cannot be known: merging it could undo the
// change or the first save), a save when someone saved into the new file
// meanwhile (the later save stands, as any later save does), a save that
// does not end within SettleTime, and where the new file cannot be leased.
// Waiting for a save may take up to SettleTime past the command's budget,
// as a save takes milliseconds: up to twice, for the first save and a
// second.
//
// What remains is a save that opens the replaced file in the moment
// between the last check of its lease and the closing of the tool's
// descriptor: it writes into the replaced file after the tool has let it
// go.
//
// pre, if not nil, is next written ahead (see writeAhead); it is put in
// place or removed.
func (s *settler) replaceKeeping(ctx context.Context, path string, orig, next []byte, rebase func([]byte) ([]byte, error), seen *[]byte, pre *statefile.Prepared) error {
	l, err := lease(path)
	if err == errWriting {
		pre.Discard()
		if !s.left() {
			return &SavingError{File: path}
		}
		return errSaving
	}
	*seen = nil
	opt := statefile.ReplaceOptions{Prepared: pre}
	if l != nil {
		// The lease was taken before Replace compares the file with
		// orig: while it holds, that file is not read a second time
		// after the swap.
		opt.Unchanged = l.vouches
	}
	placed := next // what is put in place: next, or next re-applied
	rebased := s.rebaser(path, seen, rebase)
	err = statefile.ReplaceWith(path, orig, next, func(cur []byte) ([]byte, error) {
		b, err := rebased(cur)
		if err == nil {
			placed = b
		}
		return b, err
	}, opt)
	if err == nil && s.replaced != nil {
		s.replaced()
	}
	if l == nil || err != nil || l.at(path) {
		// Nothing was swapped (the file held what the change makes of
		// it): a save into the leased file is a save into the file in
		// place, and stands.
		l.close()
		return err
	}
	replaced := orig
	if *seen != nil {
		replaced = *seen
	}
	var conflict error
	for i := 0; ; i++ {
		if !l.broken() {
			// The replaced file is unlinked: closing its last descriptor
			// frees its pages and blocks, which takes as long as writing
			// a few MiB. That is done meanwhile, by another thread.
			go l.close()
			return conflict
		}
		var nl *leased
		if i == 0 { // only the first save is put back
			nl, _ = lease(path) // before the save goes on
		}
		l.release()
		by := time.Now().Add(SettleTime) // a save takes milliseconds
		if s.deadline.After(by) {
			by = s.deadline
		}
		theirs, cut := afterWriters(ctx, l, by)
		l.close()
		if cut == nil && bytes.Equal(theirs, replaced) {
			nl.close()
			return conflict // nothing was saved into it
		}
		if cut != nil || nl == nil {
			nl.close()
			return s.setAside(path, theirs, cut, conflict)
		}
		cur, err := nl.read()
		if err != nil || !bytes.Equal(cur, placed) {
			nl.close() // someone saved into the new file: that save stands
			return s.setAside(path, theirs, nil, conflict)
		}
		want, c := rebase(theirs)
		if c != nil {
			want, conflict = theirs, c
		}
		if err := statefile.Replace(path, cur, want, nil); err != nil {
			nl.close()
			// The change is still in place, whether or not the save
			// conflicted with it: the change stands, and the save is
			// kept beside it.
			return s.setAside(path, theirs, nil, nil)
		}
		l, replaced, placed = nl, cur, want
	}
}

// setAside keeps theirs, a save that went into a replaced file and could
// not be put back, beside path and notes it in s.kept; cut, if not nil,
// says why it may not be whole. It returns conflict: what is in place
// stands. A save that cannot be kept (the disk is full) is noted in
// s.lost, as the change itself is made.
func (s *settler) setAside(path string, theirs []byte, cut, conflict error) error {
	saved, err := statefile.SetAside(path, theirs)
	if err != nil {
		s.lost = append(s.lost, fmt.Errorf("%s was saved while this command replaced it, and the save could not be kept: %w", path, err))
		return conflict
	}
	s.kept = append(s.kept, KeptSave{File: path, Saved: saved, Cut: cut})
	return conflict
}

// errUnended reports a save that had not ended when it was read.
var errUnended = errors.New("the save had not ended")

// afterWriters waits until no process has the leased file open for
// writing, or until by or the end of ctx, and returns what it holds then:
// a save that has not ended is read as far as it went, with an error that
// says it had not ended.
func afterWriters(ctx context.Context, l *leased, by time.Time) ([]byte, error) {
	for poll := time.Millisecond; ; poll = min(2*poll, settlePoll) {
		if l.again() {
			b, err := l.read()
			l.release()
			if err != nil {
				return b, fmt.Errorf("reading it failed: %w", err)
			}
			return b, nil
		}
		left := time.Until(by)
		if left <= 0 || !sleep(ctx, min(poll, left)) {
			b, _ := l.read()
			return b, errUnended
		}
	}
}

// ahead is a file's new content being written ahead (statefile.Prepare)
// by another goroutine, while the command does other work: the syncs of
// the new files and of the intent record wait for the disk together.
type ahead struct {
	done chan struct{}
	pre  *statefile.Prepared
}

// writeAhead starts writing next for the file at path.
func writeAhead(path string, next []byte) *ahead {
	a := &ahead{done: make(chan struct{})}
	go func() {
		defer close(a.done)
		// A failure is left to the replacement, which writes next again
		// and reports it.
		a.pre, _ = statefile.Prepare(path, next)
	}()
	return a
}

// take waits for the write and returns it, for statefile.ReplaceWith; nil
// if it failed, or for a nil ahead.
func (a *ahead) take() *statefile.Prepared {
	if a == nil {
		return nil
	}
	<-a.done
	pre := a.pre
	a.pre = nil
	return pre
}

// discard removes what was written ahead and not taken; a nil ahead is
// left alone.
func (a *ahead) discard() { a.take().Discard() }
