package orchestrator

import (
	"io"

	"github.com/autoretry/orchestrator/internal/statefile"
)

// writeFileAtomic replaces the small file at path with b: readers see the
// old file or the new, never a part (statefile.WriteAtomic).
func writeFileAtomic(path string, b []byte) error {
	return statefile.WriteAtomic(path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}
