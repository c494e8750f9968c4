package statefile_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/statefile"
)

// A command changes one field of a state file: lock, read, change, replace.
func ExampleReplace() {
	dir, err := os.MkdirTemp("", "state")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "session_state.md")
	if err := statefile.WriteNew(path, []byte("| Loops | 1 |\n")); err != nil {
		log.Fatal(err)
	}

	lock, err := statefile.LockWrite(context.Background(), dir, 10*time.Second, statefile.Owner{Command: "check"})
	if err != nil {
		log.Fatal(err) // a *BusyError after 10 s: exit 4
	}
	defer lock.Unlock()
	orig, err := statefile.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	change := func(b []byte) ([]byte, error) {
		if !bytes.Contains(b, []byte("| Loops | 1 |")) {
			return nil, errors.New("Loops was changed by hand meanwhile")
		}
		return bytes.Replace(b, []byte("| Loops | 1 |"), []byte("| Loops | 2 |"), 1), nil
	}
	next, _ := change(orig)
	// If someone saves the file meanwhile, change is applied to their save.
	if _, err := statefile.Replace(context.Background(), path, orig, next, change); err != nil {
		log.Fatal(err)
	}

	data, _ := statefile.ReadFile(path)
	fmt.Print(string(data))
	// Output: | Loops | 2 |
}

func ExampleBusyError() {
	err := &statefile.BusyError{
		Lock:  "run",
		Path:  ".orchestrator/.lock",
		Owner: statefile.Owner{PID: 4242, Since: time.Date(2026, 11, 22, 10, 15, 0, 0, time.UTC)},
	}
	fmt.Println(err)
	// Output: another run (pid 4242, started 2026-11-22T10:15:00Z) holds .orchestrator/.lock
}
