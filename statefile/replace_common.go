package statefile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"time"
)

// ErrChanged reports that a file changed after it was read and the change
// could not be re-applied: no rebase function was given, the file was
// deleted, or it kept changing.
var ErrChanged = errors.New("changed since it was read")

// UnsafeFileError reports a state file that cannot be replaced safely:
// a symbolic link, a hard-linked file or not a regular file.
type UnsafeFileError struct {
	Path   string
	Reason string // why, and what to do, e.g. "is a symbolic link: …"
}

func (e *UnsafeFileError) Error() string { return e.Path + " " + e.Reason }

const (
	maxRebases = 5
	tempMarker = ".tmp-"
	staleAge   = time.Minute
	newMode    = 0o644
)

// tempTarget reports whether name is one of Replace's temporary files,
// ".<target>.tmp-<16 hex digits>", and for which target.
func tempTarget(name string) (string, bool) {
	i := strings.LastIndex(name, tempMarker)
	if i < 2 || name[0] != '.' {
		return "", false
	}
	suffix := name[i+len(tempMarker):]
	if len(suffix) != 16 {
		return "", false
	}
	for _, c := range []byte(suffix) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return "", false
		}
	}
	return name[1:i], true
}

func randomHex() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}
