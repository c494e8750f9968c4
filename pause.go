package orchestrator

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/autoretry/orchestrator/issuequeue"
)

// ReadPause reads the pause file of a state directory: absent means not
// paused; empty means paused until resumed; otherwise its first line is the
// RFC 3339 time the pause ends.
func ReadPause(dir string) (Pause, error) {
	path := issuequeue.Paths{Dir: dir}.Pause()
	b, err := os.ReadFile(path)
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
