package issuequeue

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// File names in the state directory.
const (
	QueueFile    = "issue_queue.md"
	StateFile    = "session_state.md"
	ArchiveFile  = "issue_archive.md"
	SentinelFile = "no_auto_retry"
)

// Paths names the files of a state directory.
type Paths struct{ Dir string }

// Queue returns the path of issue_queue.md.
func (p Paths) Queue() string { return filepath.Join(p.Dir, QueueFile) }

// State returns the path of session_state.md.
func (p Paths) State() string { return filepath.Join(p.Dir, StateFile) }

// Archive returns the path of issue_archive.md.
func (p Paths) Archive() string { return filepath.Join(p.Dir, ArchiveFile) }

// Sentinel returns the path of the no_auto_retry sentinel.
func (p Paths) Sentinel() string { return filepath.Join(p.Dir, SentinelFile) }

// SentinelPresent reports whether no_auto_retry exists.
func (p Paths) SentinelPresent() bool {
	_, err := os.Lstat(p.Sentinel())
	return err == nil
}

// NoStateDirError reports a state directory that does not exist.
type NoStateDirError struct{ Dir string }

func (e *NoStateDirError) Error() string {
	return fmt.Sprintf("state directory %s does not exist", e.Dir)
}

// readOptional reads a file that may be missing; missing reads as nil.
func readOptional(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// Load reads and parses both files without locking, for commands that only
// read. A missing file parses as empty; a missing directory is an error.
func (p Paths) Load() (*Queue, *State, error) {
	if fi, err := os.Stat(p.Dir); err != nil || !fi.IsDir() {
		return nil, nil, &NoStateDirError{Dir: p.Dir}
	}
	qb, err := readOptional(p.Queue())
	if err != nil {
		return nil, nil, err
	}
	sb, err := readOptional(p.State())
	if err != nil {
		return nil, nil, err
	}
	return ParseQueue(p.Queue(), qb), ParseState(p.State(), sb), nil
}
