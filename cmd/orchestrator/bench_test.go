package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/internal/testkit/queuegen"
)

// The benchmarks below run the commands that load the queue in-process, on
// generated state directories, for the speed bars. bench/queue.sh
// measures the same commands as whole processes side by side with cp; these
// say where the time goes:
//
//	go test ./cmd/orchestrator -run '^$' -bench Check10k -cpuprofile cpu.prof
//	go tool pprof -top cpu.prof

// benchGetenv is the environment of every benchmarked command: no colour, a
// fixed clock.
func benchGetenv(key string) string {
	switch key {
	case "NO_COLOR":
		return "1"
	case "ORCHESTRATOR_NOW":
		return "2027-06-01T10:15:00Z"
	}
	return ""
}

// runMain runs the command line in-process and returns its standard output;
// any exit code but want ends the benchmark.
func runMain(b *testing.B, want int, args ...string) string {
	var stdout, stderr bytes.Buffer
	if got := Main(args, strings.NewReader(""), &stdout, &stderr, benchGetenv); got != want {
		b.Fatalf("orchestrator %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s",
			strings.Join(args, " "), got, want, lastLines(stdout.String(), 20), stderr.String())
	}
	return stdout.String()
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// generatedDir returns a state directory made by init (so it has the
// example's config.toml) holding a generated n-issue queue and its session
// state.
func generatedDir(b *testing.B, n int) (string, queuegen.Result) {
	dir := filepath.Join(b.TempDir(), ".orchestrator")
	runMain(b, exitOK, "init", "--dir", dir)
	r := generated(n)
	resetDir(b, dir, r)
	return dir, r
}

var (
	generatedMu    sync.Mutex
	generatedCache = map[int]queuegen.Result{}
)

// generated returns the n-issue queue, generated once per test binary, so
// that a CPU profile of the benchmarks shows the commands, not the generator.
func generated(n int) queuegen.Result {
	generatedMu.Lock()
	defer generatedMu.Unlock()
	r, ok := generatedCache[n]
	if !ok {
		r = queuegen.Generate(queuegen.Options{Issues: n, Seed: 1})
		generatedCache[n] = r
	}
	return r
}

// resetDir puts the generated files back, undoing what a check wrote. They
// are dated a minute ago, as bench/queue.sh dates them: files saved a
// while before the command runs, which it takes as they are instead of
// waiting for a save that may still be going on.
func resetDir(b *testing.B, dir string, r queuegen.Result) {
	saved := time.Now().Add(-time.Minute)
	for name, data := range map[string][]byte{"issue_queue.md": r.Queue, "session_state.md": r.State} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			b.Fatal(err)
		}
		if err := os.Chtimes(path, saved, saved); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.RemoveAll(filepath.Join(dir, "logs")); err != nil {
		b.Fatal(err)
	}
}

// benchmarkCheck times the end-of-loop check, which must retry the few
// issues the generator made retryable; every run starts from the same files.
func benchmarkCheck(b *testing.B, n int) {
	dir, r := generatedDir(b, n)
	want := fmt.Sprintf("Auto-retry triggered for %d critical issue(s)", len(r.Retried))
	b.SetBytes(int64(len(r.Queue)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		resetDir(b, dir, r)
		b.StartTimer()
		if out := runMain(b, exitOK, "--dir", dir, "check"); !strings.Contains(out, want) {
			b.Fatalf("check did not say %q:\n%s", want, lastLines(out, 10))
		}
	}
}

func BenchmarkCheck10k(b *testing.B) { benchmarkCheck(b, 10000) }
func BenchmarkCheck20k(b *testing.B) { benchmarkCheck(b, 20000) }

// benchmarkLint times lint, which reads and validates every issue; the
// generated queue is clean.
func benchmarkLint(b *testing.B, n int) {
	dir, r := generatedDir(b, n)
	want := fmt.Sprintf("%d issue(s), %d pending auto-retry", n, len(r.Retried)+len(r.Exhausted))
	b.SetBytes(int64(len(r.Queue)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if out := runMain(b, exitOK, "--dir", dir, "lint"); !strings.Contains(out, want) {
			b.Fatalf("lint did not say %q:\n%s", want, lastLines(out, 10))
		}
	}
}

func BenchmarkLint10k(b *testing.B) { benchmarkLint(b, 10000) }
func BenchmarkLint20k(b *testing.B) { benchmarkLint(b, 20000) }

// BenchmarkStatus10k times status on a big queue; it inherits check's bar.
func BenchmarkStatus10k(b *testing.B) {
	dir, r := generatedDir(b, 10000)
	b.SetBytes(int64(len(r.Queue)))
	benchStatus(b, dir, "Queue: 10000 issue(s)")
}

// benchStatus times status in dir, whose output must begin with want.
func benchStatus(b *testing.B, dir, want string) {
	b.Helper()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if out := runMain(b, exitOK, "--dir", dir, "status"); !strings.HasPrefix(out, want) {
			b.Fatalf("status printed:\n%s", lastLines(out, 10))
		}
	}
}

// BenchmarkStatusExample times status on the example queue (init --example); as
// a process it must finish within 10 ms.
func BenchmarkStatusExample(b *testing.B) {
	dir := filepath.Join(b.TempDir(), ".orchestrator")
	runMain(b, exitOK, "init", "--example", "--dir", dir)
	benchStatus(b, dir, "Queue: 2 issue(s)")
}

// BenchmarkCopy10k is the yardstick of the 25x bar in-process: what cp does
// with the 10,000-issue queue, read it and write a new file.
func BenchmarkCopy10k(b *testing.B) {
	dir, r := generatedDir(b, 10000)
	src, dst := filepath.Join(dir, "issue_queue.md"), filepath.Join(dir, "copy.md")
	b.SetBytes(int64(len(r.Queue)))
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		if err := os.Remove(dst); err != nil && !os.IsNotExist(err) {
			b.Fatal(err)
		}
		b.StartTimer()
		data, err := os.ReadFile(src)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
}
