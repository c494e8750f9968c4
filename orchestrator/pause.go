package orchestrator

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/statefile"
	"github.com/autoretry/orchestrator/issuequeue"
)

// ReadPause reads the pause file of a state directory: absent means not
// paused; empty means paused until resumed; otherwise its first line is the
// RFC 3339 time the pause ends.
func ReadPause(dir string) (Pause, error) {
	path := PathsIn(dir).Pause()
	b, err := statefile.ReadThrough(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Pause{}, nil
	}
	if err != nil {
		return Pause{}, err
	}
	line, _, _ := bytes.Cut(b, []byte{'\n'})
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return Pause{Paused: true}, nil
	}
	t, err := time.Parse(time.RFC3339, string(line))
	if err != nil {
		// A pause a person wrote by hand stays a pause.
		return Pause{Paused: true}, fmt.Errorf("%s:1:1: %q is not an RFC 3339 time; paused until resumed", path, line)
	}
	return Pause{Paused: true, Until: t}, nil
}

// Pause stops every loop, regular and auto-retry, until Resume, or until
// the given time if it is not zero. A run in progress finishes the loop it
// is running.
func (o *Orchestrator) Pause(until time.Time) error {
	if _, err := os.Stat(o.Dir); err != nil {
		return &issuequeue.NoStateDirError{Dir: o.Dir}
	}
	var b []byte
	if !until.IsZero() {
		b = []byte(until.UTC().Format(time.RFC3339) + "\n")
	}
	return writeFileAtomic(o.paths().Pause(), b)
}

// Resume lifts a pause; it is not an error if there is none.
func (o *Orchestrator) Resume() (bool, error) {
	err := os.Remove(o.paths().Pause())
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}
