//go:build unix && !linux

package statefile

import (
	"os"
	"time"
)

// changeTime is the file's modification time: here the inode's change time
// is not read.
func changeTime(fi os.FileInfo) time.Time { return fi.ModTime() }
