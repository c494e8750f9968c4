package procgroup

import (
	"fmt"
	"os"

	"github.com/autoretry/orchestrator/internal/foundations/statefile"
)

// logFile keeps the last limit bytes of a stream in a file while holding
// only a fixed copy buffer in memory. Output is written through to the file
// as it arrives, so a crash of the calling process still leaves the latest
// output on disk; whenever the file grows past 2×limit, its last limit bytes
// are moved to the front and the file is truncated, which costs one extra
// copy of each byte at most. Close leaves exactly the last limit bytes,
// preceded, when anything was cut, by one line saying how much.
type logFile struct {
	f     *os.File
	limit int64
	size  int64  // bytes now in the file
	total int64  // bytes written through Write
	buf   []byte // copy buffer for moving the kept tail
}

// createLogFile creates or truncates the file at path; a symbolic link or
// a hard-linked file there is refused, never written through.
func createLogFile(path string, limit int64) (*logFile, error) {
	if limit <= 0 {
		limit = DefaultLogLimit
	}
	f, err := statefile.OpenNoLink(path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, err
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, err
	}
	return &logFile{f: f, limit: limit, buf: make([]byte, min(limit, 64<<10))}, nil
}

func (l *logFile) Write(p []byte) (int, error) {
	n := len(p)
	l.total += int64(n)
	if int64(len(p)) >= l.limit {
		p = p[int64(len(p))-l.limit:]
		if err := l.f.Truncate(0); err != nil {
			return 0, err
		}
		l.size = 0
	}
	if _, err := l.f.WriteAt(p, l.size); err != nil {
		return 0, err
	}
	l.size += int64(len(p))
	if l.size > 2*l.limit {
		if err := l.keepTail(0); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// keepTail moves the last min(size, limit) bytes of the file to offset dst
// and truncates the file after them.
func (l *logFile) keepTail(dst int64) error {
	kept := min(l.size, l.limit)
	if err := l.move(dst, l.size-kept, kept); err != nil {
		return err
	}
	if err := l.f.Truncate(dst + kept); err != nil {
		return err
	}
	l.size = dst + kept
	return nil
}

// move copies n bytes of the file from offset src to offset dst; the ranges
// may overlap.
func (l *logFile) move(dst, src, n int64) error {
	if dst == src || n == 0 {
		return nil
	}
	chunk := int64(len(l.buf))
	if dst < src {
		for off := int64(0); off < n; off += chunk {
			c := min(chunk, n-off)
			if err := l.copyChunk(dst+off, src+off, c); err != nil {
				return err
			}
		}
		return nil
	}
	for end := n; end > 0; end -= chunk {
		c := min(chunk, end)
		if err := l.copyChunk(dst+end-c, src+end-c, c); err != nil {
			return err
		}
	}
	return nil
}

func (l *logFile) copyChunk(dst, src, n int64) error {
	b := l.buf[:n]
	if _, err := l.f.ReadAt(b, src); err != nil {
		return err
	}
	_, err := l.f.WriteAt(b, dst)
	return err
}

// Cut reports how many bytes written so far are no longer kept.
func (l *logFile) Cut() int64 {
	return l.total - min(l.size, l.limit)
}

// Close leaves the last limit bytes in the file, after a note line when
// anything was cut, and closes it.
func (l *logFile) Close() error {
	if cut := l.Cut(); cut > 0 {
		kept := min(l.size, l.limit)
		note := fmt.Sprintf("[%d bytes of earlier output cut; the last %d bytes follow]\n", cut, kept)
		err := l.keepTail(int64(len(note)))
		if err == nil {
			_, err = l.f.WriteAt([]byte(note), 0)
		}
		if err != nil {
			l.f.Close()
			return err
		}
	}
	return l.f.Close()
}
