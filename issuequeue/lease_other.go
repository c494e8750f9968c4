//go:build !linux

package issuequeue

import (
	"errors"
	"io"
	"os"
)

// leased is a read lease on a state file; only Linux has them (see
// lease_linux.go), so elsewhere the tool waits for quiet instead.
type leased struct{}

var errWriting = errors.New("open for writing")

func lease(string) (*leased, error) { return nil, nil }

// readLeased reads the file f, open for reading, from its start.
func readLeased(f *os.File) ([]byte, error) {
	return io.ReadAll(f) // never nil: an empty file is not a missing one
}

func (*leased) broken() bool               { return false }
func (*leased) release()                   {}
func (*leased) close()                     {}
func (*leased) read() ([]byte, error)      { return nil, nil }
func (*leased) holds([]byte) (bool, error) { return false, nil }
func (*leased) again() bool                { return true }
func (*leased) vouches(os.FileInfo) bool   { return false }
func (*leased) at(string) bool             { return false }
