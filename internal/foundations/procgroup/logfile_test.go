package procgroup

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// wantLog is what a log of limit bytes must hold after data went through it.
func wantLog(data []byte, limit int) []byte {
	if len(data) <= limit {
		return data
	}
	note := fmt.Sprintf("[%d bytes of earlier output cut; the last %d bytes follow]\n", len(data)-limit, limit)
	return append([]byte(note), lastN(data, limit)...)
}

func writeLog(t *testing.T, limit int64, parts [][]byte) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "loop.log")
	l, err := createLogFile(path, limit)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range parts {
		if n, err := l.Write(p); n != len(p) || err != nil {
			t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(p))
		}
		if l.size > 2*limit {
			t.Fatalf("file holds %d bytes, more than 2×%d", l.size, limit)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestLogFileKeepsLastBytesWithNote(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdefghijklmnopqrstuvwxyz\n"), 40) // 1480 bytes
	tests := []struct {
		name  string
		limit int64
		sizes []byte
	}{
		{"nothing cut", 2000, []byte{99}},
		{"exactly the limit", int64(len(data)), []byte{99}},
		{"cut by fewer bytes than the note is long", int64(len(data)) - 3, []byte{99}},
		{"many compactions", 100, []byte{6, 30}},
		{"writes larger than the limit", 100, []byte{200}},
		{"one byte limit", 1, []byte{0, 4}},
		{"a limit above one copy buffer", 70 << 10, []byte{255}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := writeLog(t, tt.limit, chunks(data, tt.sizes))
			if want := wantLog(data, int(tt.limit)); !bytes.Equal(got, want) {
				t.Errorf("log holds\n%q\nwant\n%q", got, want)
			}
		})
	}
}

func TestLogFileMovesTailLargerThanCopyBuffer(t *testing.T) {
	// 3 MiB through a 1 MiB log in 32 KiB writes, as Run does: the kept tail
	// spans many copy buffers and is moved forwards by compaction and
	// backwards by the note.
	data := make([]byte, 3<<20)
	for i := range data {
		data[i] = byte(i*7 + i>>13)
	}
	var parts [][]byte
	for rest := data; len(rest) > 0; {
		n := min(32<<10, len(rest))
		parts = append(parts, rest[:n])
		rest = rest[n:]
	}
	got := writeLog(t, 1<<20, parts)
	if want := wantLog(data, 1<<20); !bytes.Equal(got, want) {
		t.Errorf("log holds %d bytes, not the %d-byte note and last 1 MiB", len(got), len(want))
	}
}

func TestLogFileWriteDoesNotAllocate(t *testing.T) {
	l, err := createLogFile(filepath.Join(t.TempDir(), "loop.log"), 64<<10)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	chunk := bytes.Repeat([]byte("y"), 32<<10)
	// Every fourth write compacts the file.
	if got := testing.AllocsPerRun(200, func() { l.Write(chunk) }); got != 0 {
		t.Errorf("allocations per Write = %v, want 0", got)
	}
}

func FuzzLogFile(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte, limit uint8, sizes []byte) {
		lim := int64(limit) + 1
		got := writeLog(t, lim, chunks(data, sizes))
		if want := wantLog(data, int(lim)); !bytes.Equal(got, want) {
			t.Errorf("log holds\n%q\nwant\n%q", got, want)
		}
	})
}
