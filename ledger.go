package orchestrator

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"time"
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
// in file order. It finds where the window starts by reading backwards from
// the end, so its cost follows the window, not the size of the log; it
// returns exactly what reading the whole log and keeping the events at or
// after since returns, unless more than oldRunStop older lines in a row sit
// between two of the window's. Lines it cannot read are skipped.
func readLedgerSince(path string, since time.Time) ([]Event, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	from, err := windowStart(f, fi.Size(), since, jsonTime)
	if err != nil {
		return nil, err
	}
	var evs []Event
	err = eachLine(io.NewSectionReader(f, from, fi.Size()-from), func(line []byte) error {
		var ev Event
		if json.Unmarshal(line, &ev) == nil && !ev.Time.IsZero() && !ev.Time.Before(since) {
			evs = append(evs, ev)
		}
		return nil
	})
	return evs, err
}

// eachLine calls fn with every non-blank line of r, without its newline.
// It reads in bounded memory: a line longer than maxLine is an error.
func eachLine(r io.Reader, fn func(line []byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for sc.Scan() {
		if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 {
			if err := fn(line); err != nil {
				return err
			}
		}
	}
	return sc.Err()
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
