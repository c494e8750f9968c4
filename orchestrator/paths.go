package orchestrator

import (
	"io"
	"path/filepath"

	"github.com/autoretry/orchestrator/internal/foundations/statefile"
	"github.com/autoretry/orchestrator/issuequeue"
)

// Paths names the files of a state directory: the queue's, session state's,
// archive's and sentinel's, which the store reads and writes
// (issuequeue.Paths), and the engine's own, which only this package and the
// command write.
type Paths struct {
	issuequeue.Paths
}

// PathsIn returns the paths of the files of the state directory dir.
func PathsIn(dir string) Paths { return Paths{issuequeue.Paths{Dir: dir}} }

// PauseFile is the name of the file whose presence pauses every loop; its
// first line may hold the RFC 3339 time the pause ends.
const PauseFile = "paused"

// Pause returns the path of the pause file.
func (p Paths) Pause() string { return filepath.Join(p.Dir, PauseFile) }

// Logs returns the directory of the event logs.
func (p Paths) Logs() string { return filepath.Join(p.Dir, "logs") }

// Ledger returns the path of the event log programs read (JSON lines):
// the ledger the daily budgets count from.
func (p Paths) Ledger() string { return filepath.Join(p.Dir, "logs", "retry.jsonl") }

// TextLog returns the path of the event log for people.
func (p Paths) TextLog() string { return filepath.Join(p.Dir, "logs", "retry.log") }

// History returns the path of the per-loop history.
func (p Paths) History() string { return filepath.Join(p.Dir, "history.csv") }

// MetricsState returns the path of the metrics' running totals: what the
// textfile's counters have counted, and how far into the history and the
// event log.
func (p Paths) MetricsState() string { return filepath.Join(p.Dir, "logs", "metrics-state.json") }

// LoopLogs returns the directory of the captured loop output.
func (p Paths) LoopLogs() string { return filepath.Join(p.Dir, "logs", "loops") }

// writeFileAtomic replaces the small file at path with b: readers see the
// old file or the new, never a part (statefile.WriteAtomic).
func writeFileAtomic(path string, b []byte) error {
	return statefile.WriteAtomic(path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}
