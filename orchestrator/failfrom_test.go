package orchestrator

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/autoretry/orchestrator/issuequeue"
	"github.com/autoretry/orchestrator/signature"
	"github.com/autoretry/orchestrator/templates"
)

// lineReader produces n lines of test output, numbered, without holding
// them (nor allocating): "=== RUN   TestCase<i>" then a last, failing line.
type lineReader struct {
	i, n int
	line []byte
	off  int // of line, sent already
}

func (r *lineReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if r.off == len(r.line) {
			if r.i > r.n {
				break
			}
			if r.i == r.n {
				r.line = append(r.line[:0], "--- FAIL: TestLast (0.01s)\n"...)
			} else {
				r.line = append(strconv.AppendInt(append(r.line[:0], "=== RUN   TestCase"...), int64(r.i), 10), '\n')
			}
			r.i, r.off = r.i+1, 0
		}
		k := copy(p[n:], r.line[r.off:])
		n += k
		r.off += k
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

func newTestOrchestrator(t *testing.T) *Orchestrator {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"issue_queue.md", "session_state.md"} {
		b, err := os.ReadFile(filepath.Join("..", ".orchestrator.example", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rules, err := signature.Compile(signature.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &Orchestrator{Dir: dir, Config: testConfig(), Templates: &templates.Set{Dir: filepath.Join(dir, "templates")},
		Stdout: io.Discard, NewSignature: func() (SignatureWriter, error) { return rules.NewDigest(), nil }}
}

// A huge output is never held in memory; the signature is of all
// of it; Failure Details keeps its end and says exactly how much was cut.
func TestFailFromHugeOutput(t *testing.T) {
	o := newTestOrchestrator(t)
	const lines = 3_000_000 // about 64 MiB
	size, _ := io.Copy(io.Discard, &lineReader{n: lines})
	want, err := func() (string, error) {
		d, _ := o.NewSignature()
		_, err := io.Copy(d, &lineReader{n: lines})
		return d.Sum(), err
	}()
	if err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(filepath.Join(o.Dir, "issue_queue.md"))
	if err != nil {
		t.Fatal(err)
	}

	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	rep, err := o.FailFrom(context.Background(), "ISSUE-20261122-001", &lineReader{n: lines}, FailVerification)
	runtime.ReadMemStats(&m1)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Signature != want {
		t.Errorf("signature %s, want %s (of the whole output)", rep.Signature, want)
	}
	if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc > uint64(size)/4 {
		t.Errorf("FailFrom allocated %d bytes for %d bytes of output: it must not hold the output", alloc, size)
	}
	after, err := os.Stat(filepath.Join(o.Dir, "issue_queue.md"))
	if err != nil {
		t.Fatal(err)
	}
	if grew := after.Size() - before.Size(); grew > DetailsMaxBytes+4096 {
		t.Errorf("the queue grew by %d bytes", grew)
	}

	src, err := os.ReadFile(filepath.Join(o.Dir, "issue_queue.md"))
	if err != nil {
		t.Fatal(err)
	}
	q := issuequeue.ParseQueue("issue_queue.md", src)
	if err := q.Err(); err != nil {
		t.Fatal(err)
	}
	details, _ := q.Issue("ISSUE-20261122-001").Section(issuequeue.SectionFailureDetails)
	// The last DetailsMaxLines lines are kept: TestCase<lines-199> … TestLast.
	keptFrom := lines - DetailsMaxLines + 1
	var cut int64
	for i := 0; i < keptFrom; i++ {
		cut += int64(len(fmt.Sprintf("=== RUN   TestCase%d\n", i)))
	}
	note := fmt.Sprintf("(the first %d line(s), %d byte(s), of the output were cut; the last %d line(s) follow)", keptFrom, cut, DetailsMaxLines)
	if !strings.HasPrefix(details, note) {
		t.Errorf("Failure Details starts %q, want %q", details[:min(len(details), 200)], note)
	}
	if !strings.Contains(details, fmt.Sprintf("=== RUN   TestCase%d\n", keptFrom)) || strings.Contains(details, fmt.Sprintf("TestCase%d\n", keptFrom-1)) ||
		!strings.HasSuffix(strings.TrimRight(details, "`\n"), "--- FAIL: TestLast (0.01s)") {
		t.Errorf("Failure Details does not hold exactly the last %d lines:\n%s", DetailsMaxLines, details)
	}
}

func TestTailBuffer(t *testing.T) {
	var in []byte // numbered lines: a piece out of place shows
	for i := 0; len(in) < 8000; i++ {
		in = fmt.Appendf(in, "line %d\n", i)
	}
	for _, chunk := range []int{1, 7, 100, 999, 1000, 1001, 3000, 8000} {
		tb := &TailBuffer{Max: 1000}
		for p := in; len(p) > 0; {
			k := min(chunk, len(p))
			tb.Write(p[:k])
			p = p[k:]
		}
		kept := tb.Bytes()
		if len(kept) < 1000 || len(kept) > 2000 || !bytes.HasSuffix(in, kept) {
			t.Errorf("chunk %d: kept %d bytes, not a suffix of at least 1000", chunk, len(kept))
		}
		if tb.cutBytes+int64(len(kept)) != int64(len(in)) || tb.cutLines != int64(bytes.Count(in[:tb.cutBytes], []byte{'\n'})) {
			t.Errorf("chunk %d: cut %d bytes %d lines, kept %d", chunk, tb.cutBytes, tb.cutLines, len(kept))
		}
	}
}

func TestErrorSummary(t *testing.T) {
	tests := []struct{ name, out, want string }{
		{"an error line beats a log line that mentions an error",
			"[2026-11-23T10:03:44Z] GET /health -> 500 Internal Server Error\nerror: dial tcp 127.0.0.1:5432: connect: connection refused\n",
			"error: dial tcp 127.0.0.1:5432: connect: connection refused"},
		{"a Go panic", "GET /health -> 500 Internal Server Error\npanic: runtime error: invalid memory address\ngoroutine 1 [running]:\n",
			"panic: runtime error: invalid memory address"},
		{"go test", "=== RUN   TestAdd\n--- FAIL: TestAdd (0.00s)\n    calc_test.go:7: Add(2, 2) = 0, want 4\nFAIL\n", "--- FAIL: TestAdd (0.00s)"},
		{"pytest", "tests/test_a.py F\nE   AssertionError: assert 1 == 2\nFAILED tests/test_a.py::test_a\n", "E   AssertionError: assert 1 == 2"},
		{"after a timestamp", "[10:03:44] compiling\n[10:03:45] Error: cannot find module 'x'\n", "[10:03:45] Error: cannot find module 'x'"},
		{"a mention when nothing starts with an error word", "building\nthe build has 1 error\ndone\n", "the build has 1 error"},
		{"else the last line, colours stripped", "one\n\x1b[31mtwo\x1b[0m\n\n", "two"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		if got := ErrorSummary([]byte(tt.out)); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
	long := "error: " + strings.Repeat("é", 500)
	if got := ErrorSummary([]byte(long)); utf8.RuneCountInString(got) != errorSummaryMax || !strings.HasSuffix(got, "…") {
		t.Errorf("a long line is cut to %d characters ending in …: got %d", errorSummaryMax, utf8.RuneCountInString(got))
	}
}
