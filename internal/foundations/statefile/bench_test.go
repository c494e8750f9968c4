package statefile

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// benchContents returns two 7 MiB contents, the size of a 10,000-issue queue.
func benchContents() (a, b []byte) {
	line := []byte("| Status | pending | retry 1 of 3 | some text to fill the table row |\n")
	a = bytes.Repeat(line, 7<<20/len(line))
	b = bytes.Clone(a)
	b[len(b)/2] = 'X'
	return a, b
}

// benchQueue writes the first of benchContents to a new queue file, whose
// path it returns with both contents, and counts the size of one per
// operation.
func benchQueue(b *testing.B) (path string, x, y []byte) {
	path = filepath.Join(b.TempDir(), "issue_queue.md")
	x, y = benchContents()
	if err := WriteNew(path, x); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(x)))
	return path, x, y
}

// BenchmarkReplace7MiB is the cost of one safe write of the queue: temp file,
// fsync, re-read, swap, check of the displaced file, directory fsync.
func BenchmarkReplace7MiB(b *testing.B) {
	path, x, y := benchQueue(b)
	cur, next := x, y
	for b.Loop() {
		if _, err := Replace(context.Background(), path, cur, next, nil); err != nil {
			b.Fatal(err)
		}
		cur, next = next, cur
	}
}

// BenchmarkWriteFile7MiB is the baseline: a plain write without fsync, about
// what cp costs.
func BenchmarkWriteFile7MiB(b *testing.B) {
	path := filepath.Join(b.TempDir(), "issue_queue.md")
	x, _ := benchContents()
	b.SetBytes(int64(len(x)))
	for b.Loop() {
		if err := os.WriteFile(path, x, 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteFileSync7MiB is a plain write with one fsync: the part of
// Replace's cost the disk imposes.
func BenchmarkWriteFileSync7MiB(b *testing.B) {
	path := filepath.Join(b.TempDir(), "issue_queue.md")
	x, _ := benchContents()
	b.SetBytes(int64(len(x)))
	for b.Loop() {
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.Write(x); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}

func BenchmarkReadFile7MiB(b *testing.B) {
	path, _, _ := benchQueue(b)
	for b.Loop() {
		if _, err := ReadFile(path); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLockWrite is the cost of taking and releasing the write lock.
func BenchmarkLockWrite(b *testing.B) {
	dir := b.TempDir()
	for b.Loop() {
		l, err := LockWrite(context.Background(), dir, 10*time.Second, Owner{Command: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		l.Unlock()
	}
}
