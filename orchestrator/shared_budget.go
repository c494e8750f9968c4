package orchestrator

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/autoretry/orchestrator/internal/adapters/agentout"
	"github.com/autoretry/orchestrator/internal/foundations/config"
	"github.com/autoretry/orchestrator/internal/foundations/statefile"
)

// Shared budgets: [shared_budget] dir names a directory that several state
// directories share. Every execution of the loop command of each of them is
// appended to that directory's ledger, and a run checks the shared limits
// as well as its own before each loop. The ledger is append-only: each line
// is written with one write(2) on a file opened with O_APPEND, under the
// directory's write lock, so that concurrent runs never interleave or tear
// a line.

// SharedLedgerFile is the name of the shared ledger in a shared budget
// directory.
const SharedLedgerFile = "ledger.jsonl"

// SharedLockWait is how long a run waits for another to finish appending
// to the shared ledger.
const SharedLockWait = 10 * time.Second

// sharedKeep is how long the shared ledger keeps its lines once it has
// grown past sharedPruneSize.
const (
	sharedKeep      = 48 * time.Hour
	sharedPruneSize = 4 << 20
)

// SharedEntry is one line of the shared ledger: one execution of a loop
// command.
type SharedEntry struct {
	Time       time.Time `json:"timestamp"`
	Dir        string    `json:"dir"` // the state directory, absolute
	RunID      string    `json:"run_id"`
	Loop       int       `json:"loop"`
	Kind       string    `json:"kind"`
	Attempt    int       `json:"attempt,omitempty"` // 2, 3, … for re-runs after a transient failure
	DurationMS int64     `json:"duration_ms"`
	Cost       float64   `json:"cost,omitempty"`
	Tokens     int64     `json:"tokens,omitempty"`
}

// SharedUsage is what a shared ledger says about the last 24 hours.
type SharedUsage struct {
	Dir     string // the shared budget directory
	Since   time.Time
	Entries []SharedEntry // oldest first
}

// Loops counts the executions in the window, re-runs included.
func (u SharedUsage) Loops() int { return len(u.Entries) }

// AutoRetryLoops counts the auto-retry loops in the window (first tries).
func (u SharedUsage) AutoRetryLoops() int {
	n := 0
	for _, e := range u.Entries {
		if e.Kind == KindAutoRetry && e.Attempt <= 1 {
			n++
		}
	}
	return n
}

// AgentTime is the wall time of the loop commands in the window.
func (u SharedUsage) AgentTime() time.Duration {
	return sumOf(u.Entries, func(e SharedEntry) time.Duration { return time.Duration(e.DurationMS) * time.Millisecond })
}

// Cost is the cost the loops reported in the window.
func (u SharedUsage) Cost() float64 {
	return sumOf(u.Entries, func(e SharedEntry) float64 { return e.Cost })
}

// Tokens is the tokens the loops reported in the window.
func (u SharedUsage) Tokens() int64 {
	return sumOf(u.Entries, func(e SharedEntry) int64 { return e.Tokens })
}

// SharedSpender is what one state directory spent of a shared budget.
type SharedSpender struct {
	Dir       string        `json:"dir"`
	Loops     int           `json:"loops"`
	AutoRetry int           `json:"auto_retry_loops"`
	AgentTime time.Duration `json:"agent_time_ns"`
	Cost      float64       `json:"cost"`
	Tokens    int64         `json:"tokens"`
}

// Spenders returns what each state directory spent in the window, the
// largest number of loops first.
func (u SharedUsage) Spenders() []SharedSpender {
	by := map[string]*SharedSpender{}
	var out []*SharedSpender
	for _, e := range u.Entries {
		s := by[e.Dir]
		if s == nil {
			s = &SharedSpender{Dir: e.Dir}
			by[e.Dir] = s
			out = append(out, s)
		}
		s.Loops++
		if e.Kind == KindAutoRetry && e.Attempt <= 1 {
			s.AutoRetry++
		}
		s.AgentTime += time.Duration(e.DurationMS) * time.Millisecond
		s.Cost += e.Cost
		s.Tokens += e.Tokens
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Loops > out[j].Loops })
	res := make([]SharedSpender, len(out))
	for i, s := range out {
		res[i] = *s
	}
	return res
}

// nextAt returns when the sum of f over the window's entries falls below
// limit: when the oldest entries that keep it at or above leave the window.
func (u SharedUsage) nextAt(f func(SharedEntry) float64, limit float64) time.Time {
	total := 0.0
	for _, e := range u.Entries {
		total += f(e)
	}
	for _, e := range u.Entries {
		total -= f(e)
		if total < limit {
			return e.Time.Add(config.BudgetWindow)
		}
	}
	return time.Time{}
}

// ReadSharedUsage reads the last 24 hours (before now) of the ledger of the
// shared budget directory dir. A missing ledger is an empty one; a line
// without its newline (being written) and lines that cannot be read are
// skipped.
func ReadSharedUsage(dir string, now time.Time) (SharedUsage, error) {
	u := SharedUsage{Dir: dir, Since: now.Add(-config.BudgetWindow)}
	b, err := statefile.ReadThrough(filepath.Join(dir, SharedLedgerFile))
	if errors.Is(err, fs.ErrNotExist) {
		return u, nil
	}
	if err != nil {
		return u, fmt.Errorf("reading the shared budget: %w", err)
	}
	if i := bytes.LastIndexByte(b, '\n'); i < len(b)-1 {
		b = b[:i+1]
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e SharedEntry
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Time.IsZero() {
			continue
		}
		if e.Time.Before(u.Since) || e.Time.After(now) {
			continue
		}
		u.Entries = append(u.Entries, e)
	}
	sort.SliceStable(u.Entries, func(i, j int) bool { return u.Entries[i].Time.Before(u.Entries[j].Time) })
	return u, nil
}

// AppendShared appends entries to the ledger of the shared budget directory
// dir, creating both if needed: one write per line, on a file opened with
// O_APPEND, under the directory's write lock. A ledger grown past a few
// MiB is first cut to its last two days.
func AppendShared(ctx context.Context, dir string, entries []SharedEntry, now time.Time) error {
	if len(entries) == 0 {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("shared budget: %w", err)
	}
	lk, err := statefile.LockWrite(ctx, dir, SharedLockWait, statefile.Owner{Command: "shared budget"})
	if err != nil {
		return fmt.Errorf("shared budget %s: %w", dir, err)
	}
	defer lk.Unlock()
	path := filepath.Join(dir, SharedLedgerFile)
	if fi, err := os.Stat(path); err == nil && fi.Size() > sharedPruneSize {
		if err := pruneShared(path, now.Add(-sharedKeep)); err != nil {
			return err
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("shared budget: %w", err)
	}
	for _, e := range entries {
		line, err := json.Marshal(e)
		if err != nil {
			f.Close()
			return err
		}
		if _, err := f.Write(append(line, '\n')); err != nil {
			f.Close()
			return fmt.Errorf("shared budget: %w", err)
		}
	}
	return f.Close()
}

// pruneShared rewrites the ledger at path without the lines older than
// keep; the caller holds the write lock.
func pruneShared(path string, keep time.Time) error {
	b, err := statefile.ReadThrough(path)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	for line := range bytes.Lines(b) {
		var e SharedEntry
		if !bytes.HasSuffix(line, []byte{'\n'}) || json.Unmarshal(line, &e) != nil || e.Time.Before(keep) {
			continue
		}
		out.Write(line)
	}
	return writeFileAtomic(path, out.Bytes())
}

// sharedDir returns the shared budget directory of o's configuration,
// relative paths taken from the directory that holds the state directory;
// "" when there is none.
func (o *Orchestrator) sharedDir() (string, error) {
	d := o.Config.SharedBudget.Dir
	if d == "" || filepath.IsAbs(d) {
		return d, nil
	}
	abs, err := filepath.Abs(o.Dir)
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(abs), d), nil
}

// ReadShared reads the shared budget of o's configuration at now; nil when
// there is none.
func (o *Orchestrator) ReadShared(now time.Time) (*SharedUsage, error) {
	d, err := o.sharedDir()
	if err != nil || d == "" {
		return nil, err
	}
	u, err := ReadSharedUsage(d, now)
	if err != nil {
		return nil, err
	}
	return &u, nil
}

// shareExecs appends to the shared budget the executions of loop loop of
// run runID that the state directory's own event log recorded since since,
// so that the shared ledger counts exactly what the own logs do.
func (o *Orchestrator) shareExecs(runID string, loop int, since time.Time) error {
	d, err := o.sharedDir()
	if err != nil || d == "" {
		return err
	}
	evs, err := readLedgerSince(o.paths().Ledger(), since, map[string]bool{EvExec: true}, nil)
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(o.Dir)
	if err != nil {
		return err
	}
	var es []SharedEntry
	for _, ev := range evs {
		if ev.RunID != runID || ev.Loop != loop {
			continue
		}
		es = append(es, SharedEntry{Time: ev.Time, Dir: abs, RunID: runID, Loop: loop, Kind: ev.Kind, Attempt: ev.Attempt,
			DurationMS: ev.DurationMS, Cost: ev.Cost})
	}
	if len(es) > 0 {
		// The loop's output file holds its last execution's output.
		es[len(es)-1].Tokens = loopTokens(filepath.Join(PathsIn(abs).LoopLogs(), fmt.Sprintf("%s-%02d.log", runID, loop)))
	}
	return AppendShared(context.Background(), d, es, o.now())
}

// loopTokens returns the tokens (input and output) a coding agent's output
// in the file at path states it used; 0 when it states none.
func loopTokens(path string) int64 {
	f, _, err := statefile.OpenThrough(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	r := agentout.NewReader(agentout.KindAuto, time.Now(), nil)
	if _, err := io.Copy(r, f); err != nil {
		return 0
	}
	return budgetTokens(r.Report())
}
