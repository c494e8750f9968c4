package orchestrator

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/statefile"
)

// HistoryHeader is the header row of history.csv: one row per loop,
// append-only.
var HistoryHeader = []string{
	"run_id", "loop", "kind", "started_at", "finished_at", "duration_ms", "exit_code", "result",
	"transient_retries", "issues", "resolved", "failed", "halted", "escalated", "total_auto_retries", "breaker",
	"progress", "stopped_by",
}

// historyMinFields is the number of columns every version of history.csv
// has written: columns are only ever appended, so a row with fewer than
// HistoryHeader (written before progress existed) is read with the later
// columns empty.
const historyMinFields = 16

// Loop results in history.csv.
const (
	ResultOK        = "ok"        // the loop command exited 0
	ResultFailed    = "failed"    // it exited non-zero
	ResultTimeout   = "timeout"   // it ran past [loop] timeout
	ResultPermanent = "permanent" // it failed with a permanent error
	ResultAborted   = "aborted"   // it was stopped by abort or a signal
)

// LoopRecord is one row of history.csv.
type LoopRecord struct {
	RunID            string
	Loop             int
	Kind             string // "regular" or "auto_retry"
	Started          time.Time
	Finished         time.Time
	ExitCode         int
	Result           string
	TransientRetries int
	Issues           []string // retried in this loop
	Resolved         []string
	Failed           []string
	Halted           []string
	Escalated        []string
	TotalAutoRetries int
	Breaker          string
	Progress         string // the loop's progress verdict; "" in older rows
	// StoppedBy is the reason code of the rule that stopped the loop while
	// it ran (a budget, hung); "" when none did, and in older rows.
	StoppedBy Code

	// Not in history.csv: in the loop's event.
	Workspace *WorkspaceChange
	Facts     *LoopProgress
}

func (r LoopRecord) row() []string {
	j := func(ids []string) string { return strings.Join(ids, " ") }
	return []string{
		r.RunID, strconv.Itoa(r.Loop), r.Kind, r.Started.UTC().Format(time.RFC3339), r.Finished.UTC().Format(time.RFC3339),
		strconv.FormatInt(r.Finished.Sub(r.Started).Milliseconds(), 10), strconv.Itoa(r.ExitCode), r.Result,
		strconv.Itoa(r.TransientRetries), j(r.Issues), j(r.Resolved), j(r.Failed), j(r.Halted), j(r.Escalated),
		strconv.Itoa(r.TotalAutoRetries), r.Breaker, r.Progress, string(r.StoppedBy),
	}
}

// HistoryPath returns the path of history.csv in a state directory.
func HistoryPath(dir string) string { return PathsIn(dir).History() }

// AppendHistory appends one row, writing the header first into a new file.
func AppendHistory(dir string, r LoopRecord) error {
	path := HistoryPath(dir)
	f, err := statefile.OpenNoLink(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	var b strings.Builder
	w := csv.NewWriter(&b)
	if fi.Size() == 0 {
		w.Write(HistoryHeader)
	}
	w.Write(r.row())
	w.Flush()
	_, werr := io.WriteString(f, b.String())
	if err := f.Close(); werr == nil {
		werr = err
	}
	return werr
}

// ReadHistory reads the history: the months rotated out of history.csv
// (history-YYYY-MM.csv, oldest first), then history.csv; missing files are
// an empty history. Rows that cannot be read are skipped and reported in the
// error list, so one damaged line does not hide the rest.
func ReadHistory(dir string) ([]LoopRecord, []error) {
	var out []LoopRecord
	errs := EachHistory(dir, time.Time{}, func(r LoopRecord) { out = append(out, r) })
	return out, errs
}

// EachHistory calls fn with every row of the history that finished at or
// after since, in the order of ReadHistory, holding one row at a time.
// Rotated months that end before since are not opened.
func EachHistory(dir string, since time.Time, fn func(LoopRecord)) []error {
	var errs []error
	skipBefore := since.UTC().Format("2006-01")
	for _, path := range HistoryFiles(dir) {
		if m, ok := rotatedMonth(path); ok && !since.IsZero() && m < skipBefore {
			continue
		}
		_, e := ScanHistoryFile(path, 0, func(r LoopRecord, _, _ int64) {
			if !r.Finished.Before(since) {
				fn(r)
			}
		})
		errs = append(errs, e...)
	}
	return errs
}

// HistoryFiles lists the history of dir in order: the rotated months,
// oldest first, then history.csv.
func HistoryFiles(dir string) []string { return append(rotatedHistory(dir), HistoryPath(dir)) }

// rotatedHistory lists the rotated history files of dir, oldest first.
func rotatedHistory(dir string) []string {
	paths, _ := filepath.Glob(filepath.Join(dir, "history-[0-9][0-9][0-9][0-9]-[0-9][0-9].csv"))
	sort.Strings(paths)
	return paths
}

// rotatedMonth returns the month (YYYY-MM) a rotated history file holds.
func rotatedMonth(path string) (string, bool) {
	name := filepath.Base(path)
	if m, ok := strings.CutPrefix(strings.TrimSuffix(name, ".csv"), "history-"); ok && len(m) == 7 {
		return m, true
	}
	return "", false
}

// RotateHistory moves the rows of history.csv that finished before the
// month of now into history-YYYY-MM.csv, one file per month, and removes
// rotated months beyond the newest keep (keep ≤ 0 keeps them all), so the
// history people open stays small. In the usual case, the first run of a
// month, history.csv holds one earlier month and is renamed; a history.csv
// that spans several months (one written before rotation existed) is split
// once, row by row. Only the first and the last rows are read to decide, so
// a run that has nothing to rotate does not read the history.
// The caller holds the write lock.
func RotateHistory(dir string, now time.Time, keep int) error {
	path := HistoryPath(dir)
	month := now.UTC().Format("2006-01")
	first, last, err := historyMonths(path)
	if err != nil {
		return fmt.Errorf("rotating %s: %w", path, err)
	}
	switch {
	case last == "" || first >= month:
	case first == last && last < month:
		target := filepath.Join(dir, "history-"+last+".csv")
		if _, err := os.Lstat(target); err == nil {
			return fmt.Errorf("rotating %s: %s exists already; merge the two by hand", path, target)
		}
		if err := os.Rename(path, target); err != nil {
			return fmt.Errorf("rotating %s: %w", path, err)
		}
	default:
		if err := splitHistory(dir, month); err != nil {
			return fmt.Errorf("rotating %s: %w", path, err)
		}
	}
	if old := rotatedHistory(dir); keep > 0 && len(old) > keep {
		for _, p := range old[:len(old)-keep] {
			if err := os.Remove(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// historyMonths returns the months of the first and the last readable row
// of a history file, reading only its two ends.
func historyMonths(path string) (first, last string, err error) {
	f, size, err := openLog(path)
	if f == nil {
		return "", "", err
	}
	defer f.Close()
	err = scanBack(f, size, func(line []byte, _ int64) bool {
		last, _ = rowMonth(line)
		return last == ""
	})
	if err != nil || last == "" {
		return "", "", err
	}
	err = eachLine(f, func(line []byte) error {
		if first, _ = rowMonth(line); first != "" {
			return io.EOF
		}
		return nil
	})
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return first, last, err
}

// rowMonth returns the month (YYYY-MM, UTC) a history line's loop finished
// in; ok is false for the header and for lines that cannot be read.
func rowMonth(line []byte) (string, bool) {
	var field string
	if bytes.IndexByte(line, '"') < 0 {
		// The tool's rows quote nothing: the fifth field, without a parser.
		f := bytes.SplitN(line, []byte{','}, 6)
		if len(f) < 6 || bytes.Count(f[5], []byte{','}) < historyMinFields-6 {
			return "", false
		}
		field = string(f[4])
	} else {
		rec, err := csv.NewReader(bytes.NewReader(line)).Read()
		if err != nil || len(rec) < historyMinFields {
			return "", false
		}
		field = rec[4]
	}
	t, err := time.Parse(time.RFC3339, field)
	if err != nil {
		return "", false
	}
	return t.UTC().Format("2006-01"), true
}

// splitHistory moves the rows of history.csv that finished before month
// into a file per month. Every file is written aside first and none
// replaces an existing one, so a failure leaves history.csv whole; a line
// that cannot be read goes with the row before it.
func splitHistory(dir, month string) error {
	path := HistoryPath(dir)
	f, _, err := statefile.OpenThrough(path)
	if err != nil {
		return err
	}
	defer f.Close()
	type part struct {
		target, tmp string
		f           *os.File
		w           *bufio.Writer
	}
	var parts []*part
	byMonth := map[string]*part{}
	cleanup := func() {
		for _, p := range parts {
			p.f.Close()
			os.Remove(p.tmp)
		}
	}
	header := strings.Join(HistoryHeader, ",") + "\n"
	cur := ""
	err = eachLine(f, func(line []byte) error {
		if m, ok := rowMonth(line); ok {
			cur = m
		} else if cur == "" {
			return nil // the header, or what precedes the first row
		}
		key := cur
		if key >= month {
			key = "" // stays in history.csv
		}
		p := byMonth[key]
		if p == nil {
			p = &part{target: path}
			if key != "" {
				p.target = filepath.Join(dir, "history-"+key+".csv")
			}
			p.tmp = p.target + ".rotate"
			f, err := statefile.OpenNoLink(p.tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
			if err != nil {
				return err
			}
			p.f, p.w = f, bufio.NewWriter(f)
			p.w.WriteString(header)
			byMonth[key] = p
			parts = append(parts, p)
		}
		p.w.Write(line)
		return p.w.WriteByte('\n')
	})
	for _, p := range parts {
		if err == nil {
			err = p.w.Flush()
		}
		if err == nil {
			err = p.f.Sync()
		}
	}
	if err != nil {
		cleanup()
		return err
	}
	for _, p := range parts {
		p.f.Close()
	}
	// The months first, history.csv last: until it is replaced, it still
	// holds every row.
	for _, p := range parts {
		if p.target == path {
			continue
		}
		// A month file that holds exactly these rows is from a split that
		// stopped before history.csv was replaced: it is done already.
		if old, err := os.ReadFile(p.target); err == nil {
			mine, err := os.ReadFile(p.tmp)
			if err != nil || !bytes.Equal(old, mine) {
				cleanup()
				return errors.Join(err, fmt.Errorf("%s exists already with other rows; merge the two by hand", p.target))
			}
			os.Remove(p.tmp)
			continue
		}
		if err := os.Rename(p.tmp, p.target); err != nil {
			return err
		}
	}
	if p := byMonth[""]; p != nil {
		return os.Rename(p.tmp, path)
	}
	return os.Remove(path)
}

// HistoryCursor marks how far a reader has read the history: the file
// (its base name), the offset after the last row it read, and that row, by
// which the row is recognised after history.csv was rotated. The zero
// cursor is the start.
type HistoryCursor struct {
	File   string `json:"file,omitempty"`
	Offset int64  `json:"offset"`
	Last   string `json:"last,omitempty"`
}

// ReadHistoryAfter calls fn with every row added to the history of dir
// after c, in order, and returns the cursor after them. ok is false when
// c's row is no longer where c says (history.csv was edited by hand or
// replaced, or its rotated months removed); then nothing is read, and the
// caller starts again from the zero cursor.
func ReadHistoryAfter(dir string, c HistoryCursor, fn func(LoopRecord)) (next HistoryCursor, ok bool, errs []error) {
	files := HistoryFiles(dir)
	from, off := -1, c.Offset
	if c == (HistoryCursor{}) {
		from = 0
	}
	// Where c's file is now: under its name, or, after a rotation, the
	// newest rotated file holding its row.
	current := filepath.Base(HistoryPath(dir))
	for i := len(files) - 1; i >= 0 && from < 0; i-- {
		if base := filepath.Base(files[i]); (base == c.File || base != current) && hasLine(files[i], c.Offset, c.Last) {
			from = i
		}
	}
	if from < 0 {
		return c, false, nil
	}
	next = c
	for _, path := range files[from:] {
		var lastStart, lastEnd int64 = -1, 0
		_, e := ScanHistoryFile(path, off, func(r LoopRecord, start, end int64) {
			fn(r)
			lastStart, lastEnd = start, end
		})
		errs = append(errs, e...)
		off = 0
		if lastStart < 0 {
			continue
		}
		f, _, err := statefile.OpenThrough(path)
		if err != nil {
			return next, true, append(errs, err)
		}
		b := make([]byte, lastEnd-lastStart)
		_, err = f.ReadAt(b, lastStart)
		f.Close()
		if err != nil {
			return next, true, append(errs, err)
		}
		next = HistoryCursor{File: filepath.Base(path), Offset: lastEnd, Last: string(bytes.TrimSpace(b))}
	}
	return next, true, errs
}

// hasLine reports whether the file at path holds line last just before
// offset off.
func hasLine(path string, off int64, last string) bool {
	f, size, _ := openLog(path)
	if f == nil {
		return false
	}
	defer f.Close()
	return atLine(f, size, off, last)
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

// ScanHistoryFile reads a history file from offset off, calling fn with
// every readable row and the offsets its line starts and ends at. It reads
// only whole lines: a last line without its newline (being written, or torn
// by a crash) is left for a later read, and the offset after the last whole
// line is returned. A missing file is empty.
func ScanHistoryFile(path string, off int64, fn func(r LoopRecord, start, end int64)) (int64, []error) {
	name := filepath.Base(path)
	f, end, err := openLog(path)
	if err != nil {
		return off, []error{err}
	}
	if f == nil {
		return off, nil
	}
	defer f.Close()
	if end > off {
		if end, err = wholeLines(f, end); err != nil {
			return off, []error{err}
		}
	}
	if end <= off {
		return off, nil
	}
	cr := csv.NewReader(bufio.NewReader(io.NewSectionReader(f, off, end-off)))
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	var errs []error
	for {
		start := off + cr.InputOffset()
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			continue
		}
		if start == 0 && len(rec) > 0 && rec[0] == HistoryHeader[0] {
			continue
		}
		r, err := parseHistoryRow(rec)
		if err != nil {
			ln, _ := cr.FieldPos(0)
			errs = append(errs, fmt.Errorf("%s:%d: %w", name, ln, err))
			continue
		}
		fn(r, start, off+cr.InputOffset())
	}
	return end, errs
}

func parseHistoryRow(rec []string) (LoopRecord, error) {
	if len(rec) < historyMinFields {
		return LoopRecord{}, fmt.Errorf("%d fields, want %d", len(rec), len(HistoryHeader))
	}
	var r LoopRecord
	var err error
	atoi := func(s string) int {
		n, e := strconv.Atoi(s)
		if e != nil && err == nil {
			err = e
		}
		return n
	}
	tm := func(s string) time.Time {
		t, e := time.Parse(time.RFC3339, s)
		if e != nil && err == nil {
			err = e
		}
		return t
	}
	ids := func(s string) []string { return strings.Fields(s) }
	r.RunID, r.Loop, r.Kind = rec[0], atoi(rec[1]), rec[2]
	r.Started, r.Finished = tm(rec[3]), tm(rec[4])
	r.ExitCode, r.Result, r.TransientRetries = atoi(rec[6]), rec[7], atoi(rec[8])
	r.Issues, r.Resolved, r.Failed, r.Halted, r.Escalated = ids(rec[9]), ids(rec[10]), ids(rec[11]), ids(rec[12]), ids(rec[13])
	r.TotalAutoRetries, r.Breaker = atoi(rec[14]), rec[15]
	if len(rec) > 16 {
		r.Progress = rec[16]
	}
	if len(rec) > 17 {
		r.StoppedBy = Code(rec[17])
	}
	return r, err
}
