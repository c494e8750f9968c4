package orchestrator

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/statefile"
)

// ledgerChunk is how much of a log the backward scan reads at a time.
const ledgerChunk = 64 << 10

// maxLine bounds a line the backward scan assembles: longer is not an
// event, and the scan stops there rather than hold it.
const maxLine = 16 << 20

// oldRunStop is how many lines in a row older than the window the backward
// scan must meet before it stops. The tool appends in time order, but a
// clock stepped back or a line a person pasted in puts an old time among
// recent ones; one such line must not hide the window's earlier events.
const oldRunStop = 64

// openLog opens a log to read it, with its size; a missing log is a nil
// file and no error.
func openLog(path string) (*os.File, int64, error) {
	f, fi, err := statefile.OpenThrough(path) // a FIFO is refused, not waited on
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	return f, fi.Size(), nil
}

// scanBack calls fn for each line of f that ends at or before end, newest
// first, with the offset the line starts at; a last line without its
// newline (being written, or torn by a crash) is passed too. fn returns
// false to stop.
func scanBack(f *os.File, end int64, fn func(line []byte, start int64) bool) error {
	buf := make([]byte, ledgerChunk)
	var carry []byte // the end of a line whose start is in an earlier chunk
	for end > 0 {
		n := min(int64(ledgerChunk), end)
		start := end - n
		if _, err := f.ReadAt(buf[:n], start); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		chunk := append(append([]byte(nil), buf[:n]...), carry...)
		for {
			// The last newline that ends a line: the chunk's own final
			// byte may be the newline of the line being cut out.
			i := bytes.LastIndexByte(chunk[:max(0, len(chunk)-1)], '\n')
			if i < 0 {
				break
			}
			if !fn(chunk[i+1:], start+int64(i)+1) {
				return nil
			}
			chunk = chunk[:i+1]
		}
		carry = chunk
		end = start
		if len(carry) > maxLine {
			return nil
		}
	}
	if len(carry) > 0 {
		fn(carry, 0)
	}
	return nil
}

// windowStart returns the offset from which a log holds every line at or
// after since, as when reads a line's time: reading backwards from size, it
// stops after oldRunStop lines in a row older than since. Lines without a
// readable time neither extend nor end the window.
func windowStart(f *os.File, size int64, since time.Time, when func([]byte) (time.Time, bool)) (int64, error) {
	from, old := size, 0
	err := scanBack(f, size, func(line []byte, start int64) bool {
		t, ok := when(line)
		switch {
		case !ok:
		case t.Before(since):
			old++
		default:
			old, from = 0, start
		}
		return old < oldRunStop
	})
	return from, err
}

// readLedgerSince returns the events of a JSON-lines log at or after since,
// in file order, those named in only when it is not nil. It finds where the
// window starts by reading backwards from the end, so its cost follows the
// window, not the size of the log; it returns exactly what reading the
// whole log and keeping the events at or after since returns, unless more
// than oldRunStop older lines in a row sit between two of the window's.
// Lines it cannot read are skipped.
//
// With a memo, what an earlier call read is kept there, and a later call
// decodes only what was appended since: a run reads the window before and
// after every loop.
func readLedgerSince(path string, since time.Time, only map[string]bool, m *ledgerMemo) ([]Event, error) {
	return readLedgerWindow(path, since, only, m, false)
}

// readLedgerStrict is readLedgerSince for a reader that must not miss an
// event (the budgets): a line before the last that cannot be read is an
// *UnreadableLogError naming it. The last line, when it has no newline,
// is one being written or torn by a crash, and is read if it can be.
func readLedgerStrict(path string, since time.Time, only map[string]bool, m *ledgerMemo) ([]Event, error) {
	return readLedgerWindow(path, since, only, m, true)
}

// UnreadableLogError is a log that cannot be read: the file, or its line
// Line (from 1; 0 when the file itself cannot be read).
type UnreadableLogError struct {
	File string
	Line int
	Err  error
}

func (e *UnreadableLogError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("reading %s: %v", e.File, e.Err)
	}
	return fmt.Sprintf("%s:%d: not an event: %v", e.File, e.Line, e.Err)
}

func (e *UnreadableLogError) Unwrap() error { return e.Err }

// asUnreadable is err reading the log at path as an *UnreadableLogError.
func asUnreadable(path string, err error) *UnreadableLogError {
	var ue *UnreadableLogError
	if errors.As(err, &ue) {
		return ue
	}
	return &UnreadableLogError{File: path, Err: err}
}

// lineAt is the number (from 1) of the line that starts at offset off of
// f: one more than the newlines before it.
func lineAt(f *os.File, off int64) (int, error) {
	n := 1
	err := scanEvents(io.NewSectionReader(f, 0, off), func(ledgerLine) error { n++; return nil })
	return n, err
}

func readLedgerWindow(path string, since time.Time, only map[string]bool, m *ledgerMemo, strict bool) ([]Event, error) {
	f, size, err := openLog(path)
	if f == nil {
		return nil, err
	}
	defer f.Close()
	if m == nil {
		m = &ledgerMemo{}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var from int64
	var evs []Event
	if m.path == path && m.off > 0 && !since.Before(m.since) && atLine(f, size, m.off, m.last) {
		from = m.off
		for _, ev := range m.evs {
			if !ev.Time.Before(since) {
				evs = append(evs, ev)
			}
		}
	} else if from, err = windowStart(f, size, since, jsonTime); err != nil {
		return nil, err
	}
	whole, err := wholeLines(f, size)
	if err != nil {
		return nil, err
	}
	var last []byte
	var torn []Event // of a last line without its newline: read, not kept
	bad, badErr := 0, error(nil)
	add := func(into *[]Event, whole bool) func(ledgerLine) error {
		return func(l ledgerLine) error {
			if l.Blank() {
				return nil
			}
			last = append(last[:0], l.Text...)
			if only != nil {
				if name, ok := eventName(l.Text); ok && !only[string(name)] {
					return nil
				}
			}
			ev, err := l.Event()
			if err != nil && whole && bad == 0 {
				bad, badErr = l.N, err
			}
			if err == nil && !ev.Time.IsZero() && !ev.Time.Before(since) && (only == nil || only[ev.Event]) {
				*into = append(*into, ev)
			}
			return nil
		}
	}
	if whole > from {
		if err := scanEvents(io.NewSectionReader(f, from, whole-from), add(&evs, true)); err != nil {
			return nil, err
		}
		if strict && bad > 0 {
			n, err := lineAt(f, from)
			if err != nil {
				return nil, err
			}
			return nil, &UnreadableLogError{File: path, Line: n + bad - 1, Err: badErr}
		}
		m.last = string(last)
	}
	if size > max(whole, from) {
		if err := scanEvents(io.NewSectionReader(f, max(whole, from), size-max(whole, from)), add(&torn, false)); err != nil {
			return nil, err
		}
	}
	if whole > from || from == m.off && m.path == path {
		m.path, m.since, m.off, m.evs = path, since, max(whole, from), evs
	}
	return append(slices.Clip(evs), torn...), nil
}

// ledgerMemo is what readLedgerSince read last: the events of one log at or
// after since up to offset off, after line last.
type ledgerMemo struct {
	mu    sync.Mutex
	path  string
	since time.Time
	off   int64
	last  string
	evs   []Event
}

// eventNamePrefix follows the time in every line the tool writes.
var eventNamePrefix = []byte(`"event":"`)

// eventName returns the event name of a ledger line without decoding it;
// ok is false when it is not found where the tool writes it.
func eventName(line []byte) ([]byte, bool) {
	i := bytes.Index(line, eventNamePrefix)
	if i < 0 || !bytes.HasPrefix(line, timestampPrefix) {
		return nil, false
	}
	rest := line[i+len(eventNamePrefix):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 || bytes.IndexByte(rest[:j], '\\') >= 0 {
		return nil, false
	}
	return rest[:j], true
}

// ledgerLine is one line of the ledger as scanEvents reads it: its number
// (from 1) and its text, without the newline and the space around it.
type ledgerLine struct {
	N    int
	Text []byte
}

// Blank reports whether the line holds nothing.
func (l ledgerLine) Blank() bool { return len(l.Text) == 0 }

// Event decodes the line. A line that starts with what a crash left of
// an event, torn before its newline, and goes on with an event appended
// after it, is that event: the fragment is not read.
func (l ledgerLine) Event() (Event, error) {
	var ev Event
	err := json.Unmarshal(l.Text, &ev)
	if err == nil {
		return ev, nil
	}
	for rest := l.Text; len(rest) > 1; {
		i := bytes.Index(rest[1:], timestampPrefix)
		if i < 0 {
			break
		}
		rest = rest[i+1:]
		var after Event
		if json.Unmarshal(rest, &after) == nil {
			return after, nil
		}
	}
	return ev, err
}

// scanEvents calls fn with every line of ledger text read from r, in order,
// blank ones included; a line is decoded only when fn asks, so a reader
// that looks for a few events skips the others by name (eventName). It
// reads in bounded memory: a line longer than maxLine is an error. Every
// reader of the ledger reads it through this function.
func scanEvents(r io.Reader, fn func(l ledgerLine) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for n := 1; sc.Scan(); n++ {
		if err := fn(ledgerLine{N: n, Text: bytes.TrimSpace(sc.Bytes())}); err != nil {
			return err
		}
	}
	return sc.Err()
}

// ReadEvents reads logs/retry.jsonl; a missing file is no events. Lines that
// cannot be read are skipped and reported.
func ReadEvents(dir string) ([]Event, []error) {
	var evs []Event
	errs := EachEvent(dir, time.Time{}, func(ev Event) { evs = append(evs, ev) })
	return evs, errs
}

// EachEvent calls fn with the events of logs/retry.jsonl, in file order,
// holding one at a time: all of them, or, when since is not zero, those
// logged at or after since, read from where the window starts (found
// reading backwards from the end, as the budgets find it). Lines that
// cannot be read are skipped and reported.
func EachEvent(dir string, since time.Time, fn func(Event)) []error {
	f, _, err := statefile.OpenThrough(PathsIn(dir).Ledger())
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return []error{err}
	}
	defer f.Close()
	var from int64
	where := func(n int) string { return fmt.Sprintf("retry.jsonl:%d", n) }
	if !since.IsZero() {
		fi, err := f.Stat()
		if err == nil {
			from, err = windowStart(f, fi.Size(), since, jsonTime)
		}
		if err != nil {
			return []error{err}
		}
		where = func(int) string { return fmt.Sprintf("retry.jsonl (from byte %d)", from) }
	}
	var errs []error
	err = scanEvents(io.NewSectionReader(f, from, math.MaxInt64-from), func(l ledgerLine) error {
		ev, err := l.Event()
		if err != nil {
			if since.IsZero() || !l.Blank() {
				errs = append(errs, fmt.Errorf("%s: %w", where(l.N), err))
			}
			return nil
		}
		if since.IsZero() || !ev.Time.Before(since) {
			fn(ev)
		}
		return nil
	})
	if err != nil {
		errs = append(errs, err)
	}
	return errs
}

// timestampPrefix is how every line the tool writes begins.
var timestampPrefix = []byte(`{"timestamp":"`)

// jsonTime returns the time of a ledger line. Lines the tool wrote start
// with it and are read without decoding the rest; others are decoded.
func jsonTime(line []byte) (time.Time, bool) {
	if rest, ok := bytes.CutPrefix(line, timestampPrefix); ok {
		if i := bytes.IndexByte(rest, '"'); i > 0 {
			if t, err := time.Parse(time.RFC3339Nano, string(rest[:i])); err == nil {
				return t, true
			}
		}
	}
	var v struct {
		Timestamp time.Time `json:"timestamp"`
	}
	if json.Unmarshal(bytes.TrimSpace(line), &v) != nil || v.Timestamp.IsZero() {
		return time.Time{}, false
	}
	return v.Timestamp, true
}

// LedgerCursor marks how far a reader has read the ledger: the offset after
// the last line it read, and that line, by which it recognises the ledger
// after pruning or any other rewrite. The zero cursor is the start.
type LedgerCursor struct {
	Offset int64  `json:"offset"`
	Last   string `json:"last,omitempty"`
}

// ReadLedgerAfter calls fn with every event appended to the ledger of dir
// after c, in file order, and returns the cursor after them. Only whole
// lines are read: one being written is left for the next read. When the
// ledger no longer holds c's line at c's offset (it was pruned, or
// rewritten), the line is looked for from the end; when it is gone, the
// events newer than it are read. Lines that cannot be read are skipped.
func ReadLedgerAfter(dir string, c LedgerCursor, fn func(Event)) (LedgerCursor, error) {
	f, size, err := openLog(PathsIn(dir).Ledger())
	if err != nil {
		return c, err
	}
	if f == nil {
		return LedgerCursor{}, nil
	}
	defer f.Close()
	end, err := wholeLines(f, size)
	if err != nil {
		return c, err
	}
	from, after := c.Offset, time.Time{}
	if !atLine(f, end, c.Offset, c.Last) {
		from, after, err = findLine(f, end, []byte(c.Last))
		if err != nil {
			return c, err
		}
	}
	next := LedgerCursor{Offset: from, Last: c.Last}
	if from >= end {
		if from > end {
			next.Offset = end
		}
		return next, nil
	}
	var last []byte
	err = scanEvents(io.NewSectionReader(f, from, end-from), func(l ledgerLine) error {
		if l.Blank() {
			return nil
		}
		last = append(last[:0], l.Text...)
		if ev, err := l.Event(); err == nil && !ev.Time.IsZero() && ev.Time.After(after) {
			fn(ev)
		}
		return nil
	})
	if last != nil {
		next.Last = string(last)
	}
	next.Offset = end
	return next, err
}

// wholeLines returns the offset after the last newline before size.
func wholeLines(f *os.File, size int64) (int64, error) {
	end := int64(0)
	err := scanBack(f, size, func(line []byte, start int64) bool {
		if n := len(line); n > 0 && line[n-1] == '\n' {
			end = start + int64(n)
			return false
		}
		return true
	})
	return end, err
}

// atLine reports whether f, up to end, holds line last (without its
// newline) just before offset off; at offset 0, no line is before.
func atLine(f *os.File, end, off int64, last string) bool {
	if off == 0 {
		return last == ""
	}
	if off > end || last == "" || int64(len(last)+1) > off {
		return false
	}
	b := make([]byte, len(last)+1)
	if _, err := f.ReadAt(b, off-int64(len(b))); err != nil {
		return false
	}
	return b[len(b)-1] == '\n' && bytes.Equal(bytes.TrimSpace(b), []byte(last))
}

// findLine returns the offset after the last copy of line in the ledger,
// looking backwards from end no further than oldRunStop lines older than
// line's time. When it is not there, it returns where the lines from its
// time on start, and its time: only what is newer is new.
func findLine(f *os.File, end int64, want []byte) (int64, time.Time, error) {
	if len(want) == 0 {
		return 0, time.Time{}, nil
	}
	at, ok := jsonTime(want)
	if !ok {
		return 0, time.Time{}, nil
	}
	found, old := int64(-1), 0
	err := scanBack(f, end, func(line []byte, start int64) bool {
		if bytes.Equal(bytes.TrimSpace(line), want) {
			found = start + int64(len(line))
			return false
		}
		if t, ok := jsonTime(line); ok && t.Before(at) {
			old++
		}
		return old < oldRunStop
	})
	if err != nil || found >= 0 {
		return found, time.Time{}, err
	}
	from, err := windowStart(f, end, at, jsonTime)
	return from, at, err
}
