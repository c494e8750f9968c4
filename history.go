package orchestrator

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/autoretry/orchestrator/issuequeue"
	"github.com/autoretry/orchestrator/statefile"
)

// HistoryHeader is the header row of history.csv: one row per loop,
// append-only.
var HistoryHeader = []string{
	"run_id", "loop", "kind", "started_at", "finished_at", "duration_ms", "exit_code", "result",
	"transient_retries", "issues", "resolved", "failed", "halted", "escalated", "total_auto_retries", "breaker",
}

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
}

func (r LoopRecord) row() []string {
	j := func(ids []string) string { return strings.Join(ids, " ") }
	return []string{
		r.RunID, strconv.Itoa(r.Loop), r.Kind, r.Started.UTC().Format(time.RFC3339), r.Finished.UTC().Format(time.RFC3339),
		strconv.FormatInt(r.Finished.Sub(r.Started).Milliseconds(), 10), strconv.Itoa(r.ExitCode), r.Result,
		strconv.Itoa(r.TransientRetries), j(r.Issues), j(r.Resolved), j(r.Failed), j(r.Halted), j(r.Escalated),
		strconv.Itoa(r.TotalAutoRetries), r.Breaker,
	}
}

// HistoryPath returns the path of history.csv in a state directory.
func HistoryPath(dir string) string { return issuequeue.Paths{Dir: dir}.History() }

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
	var errs []error
	for _, path := range append(rotatedHistory(dir), HistoryPath(dir)) {
		rows, e := readHistoryFile(path)
		out, errs = append(out, rows...), append(errs, e...)
	}
	return out, errs
}

// rotatedHistory lists the rotated history files of dir, oldest first.
func rotatedHistory(dir string) []string {
	paths, _ := filepath.Glob(filepath.Join(dir, "history-[0-9][0-9][0-9][0-9]-[0-9][0-9].csv"))
	sort.Strings(paths)
	return paths
}

// RotateHistory moves history.csv aside as history-YYYY-MM.csv (the month
// of its last row) at the first run of a later month, and removes rotated
// months beyond the newest keep (keep ≤ 0 keeps them all), so the history
// people open stays small. The caller holds the write lock.
func RotateHistory(dir string, now time.Time, keep int) error {
	path := HistoryPath(dir)
	rows, _ := readHistoryFile(path)
	if len(rows) > 0 {
		last := rows[len(rows)-1].Finished.UTC()
		if month := last.Format("2006-01"); month < now.UTC().Format("2006-01") {
			target := filepath.Join(dir, "history-"+month+".csv")
			if _, err := os.Lstat(target); err == nil {
				return fmt.Errorf("rotating %s: %s exists already; merge the two by hand", path, target)
			}
			if err := os.Rename(path, target); err != nil {
				return fmt.Errorf("rotating %s: %w", path, err)
			}
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

func readHistoryFile(path string) ([]LoopRecord, []error) {
	name := filepath.Base(path)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []error{err}
	}
	defer f.Close()
	cr := csv.NewReader(f)
	cr.FieldsPerRecord = -1
	var out []LoopRecord
	var errs []error
	line := 0
	for {
		rec, err := cr.Read()
		line++
		if err == io.EOF {
			break
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			continue
		}
		if line == 1 && len(rec) > 0 && rec[0] == HistoryHeader[0] {
			continue
		}
		r, err := parseHistoryRow(rec)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: %w", name, line, err))
			continue
		}
		out = append(out, r)
	}
	return out, errs
}

func parseHistoryRow(rec []string) (LoopRecord, error) {
	if len(rec) < len(HistoryHeader) {
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
	return r, err
}
