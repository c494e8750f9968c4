// Package testoutput generates realistic, deterministic output of test runs
// for the signature benchmarks: go test, pytest and jest reports, log lines
// with timestamps, durations, temporary paths, ports, UUIDs, colour codes,
// progress bars and goroutine dumps.
package testoutput

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
)

// Generate writes test output to w, whole lines, until it has written at
// least size bytes. The same size always gives the same bytes.
func Generate(w io.Writer, size int64) error {
	g := &gen{rng: rand.New(rand.NewPCG(1, 2)), w: bufio.NewWriterSize(w, 1<<20)}
	for g.n < size {
		g.block()
	}
	if g.err != nil {
		return g.err
	}
	return g.w.Flush()
}

type gen struct {
	rng *rand.Rand
	w   *bufio.Writer
	n   int64
	buf []byte
	err error
	t   int64 // seconds since the start of the run
}

var (
	words = []string{"parse", "config", "cache", "queue", "retry", "worker", "client", "server",
		"handler", "session", "token", "lookup", "index", "record", "payload", "stream"}
	errs = []string{"connection refused", "context deadline exceeded", "unexpected EOF",
		"no such file or directory", "permission denied", "invalid character 'x' looking for beginning of value"}
	pkgs = []string{"example.com/app/api", "example.com/app/store", "example.com/app/queue", "example.com/app/auth"}
)

func (g *gen) pick(s []string) string { return s[g.rng.IntN(len(s))] }

func title(s string) string { return string(s[0]-'a'+'A') + s[1:] }

func (g *gen) line(format string, args ...any) {
	if g.err != nil {
		return
	}
	g.buf = fmt.Appendf(g.buf[:0], format, args...)
	g.buf = append(g.buf, '\n')
	n, err := g.w.Write(g.buf)
	g.n += int64(n)
	g.err = err
}

func (g *gen) clock() string {
	g.t += int64(g.rng.IntN(3))
	s := g.t
	return fmt.Sprintf("2026-11-%02d %02d:%02d:%02d", 1+s/86400%28, s/3600%24, s/60%60, s%60)
}

func (g *gen) dur() string {
	return fmt.Sprintf("%d.%02ds", g.rng.IntN(3), g.rng.IntN(100))
}

func (g *gen) tmp() string {
	return fmt.Sprintf("/tmp/Test%s%d/%03d", g.pick(words), g.rng.Uint32(), 1+g.rng.IntN(3))
}

func (g *gen) block() {
	switch g.rng.IntN(10) {
	case 0, 1, 2:
		g.goTest()
	case 3:
		g.goroutineDump()
	case 4, 5:
		g.pytest()
	case 6:
		g.jest()
	case 7:
		g.progress()
	default:
		g.logs()
	}
}

func (g *gen) goTest() {
	pkg := g.pick(pkgs)
	for range 1 + g.rng.IntN(6) {
		name := "Test" + title(g.pick(words)) + title(g.pick(words))
		g.line("=== RUN   %s", name)
		if g.rng.IntN(4) == 0 {
			g.line("    %s_test.go:%d: %s %s: got %d, want %d (scratch %s)", g.pick(words), 10+g.rng.IntN(400),
				g.pick(words), g.pick(errs), g.rng.IntN(10), g.rng.IntN(10), g.tmp())
			g.line("--- FAIL: %s (%s)", name, g.dur())
		} else {
			g.line("--- PASS: %s (%s)", name, g.dur())
		}
	}
	g.line("FAIL\t%s\t%s", pkg, g.dur())
}

func (g *gen) goroutineDump() {
	g.line("panic: runtime error: index out of range [%d] with length %d", 3+g.rng.IntN(5), g.rng.IntN(3))
	g.line("")
	for range 1 + g.rng.IntN(3) {
		g.line("goroutine %d [%s]:", 1+g.rng.IntN(200), []string{"running", "chan receive", "select", "IO wait"}[g.rng.IntN(4)])
		for range 2 + g.rng.IntN(4) {
			g.line("%s.(*%s).%s(0xc%09x, {0x%x, 0x%x}, 0x%x)", g.pick(pkgs), g.pick(words), g.pick(words),
				g.rng.Uint64N(1<<36), g.rng.Uint32(), g.rng.IntN(64), g.rng.IntN(16))
			g.line("\t/tmp/go-build%d/b%03d/%s.go:%d +0x%x", g.rng.Uint32(), g.rng.IntN(200), g.pick(words),
				g.rng.IntN(900), g.rng.IntN(1024))
		}
		g.line("created by %s.Start in goroutine %d", g.pick(pkgs), 1+g.rng.IntN(50))
		g.line("\t/home/ci/src/app/%s/%s.go:%d +0x%x", g.pick(words), g.pick(words), g.rng.IntN(900), g.rng.IntN(1024))
		g.line("")
	}
	g.line("exit status 2")
}

func (g *gen) pytest() {
	g.line("============================= test session starts ==============================")
	g.line("platform linux -- Python 3.11.2, pytest-7.2.1, pluggy-1.0.0")
	g.line("rootdir: /tmp/pytest-of-ci/pytest-%d/project%d", g.rng.IntN(100), g.rng.IntN(10))
	total := 1 + g.rng.IntN(20)
	failed := 0
	for i := range total {
		res := "PASSED"
		if g.rng.IntN(5) == 0 {
			res = "FAILED"
			failed++
		}
		g.line("tests/test_%s.py::test_%s_%s %s%*s[%3d%%]", g.pick(words), g.pick(words), g.pick(words), res,
			20-g.rng.IntN(10), " ", (i+1)*100/total)
	}
	if failed > 0 {
		g.line("E       AssertionError: %s at 0x7f%010x", g.pick(errs), g.rng.Uint64N(1<<40))
		g.line("E       assert %d == %d", g.rng.IntN(10), g.rng.IntN(10))
		g.line("tests/test_%s.py:%d: AssertionError", g.pick(words), g.rng.IntN(300))
	}
	g.line("========================= %d failed, %d passed in %s =========================", failed, total-failed, g.dur())
}

func (g *gen) jest() {
	g.line("\x1b[0m\x1b[7m\x1b[1m\x1b[31m FAIL \x1b[39m\x1b[22m\x1b[27m\x1b[0m \x1b[2msrc/\x1b[22m\x1b[1m%s.test.js\x1b[22m", g.pick(words))
	for range 1 + g.rng.IntN(5) {
		g.line("  \x1b[32m✓\x1b[39m \x1b[2m%s %s (%d ms)\x1b[22m", g.pick(words), g.pick(words), g.rng.IntN(200))
	}
	g.line("  \x1b[31m✕\x1b[39m \x1b[2m%s %s (%d ms)\x1b[22m", g.pick(words), g.pick(words), g.rng.IntN(200))
	g.line("    Expected: \x1b[32m%d\x1b[39m", g.rng.IntN(10))
	g.line("    Received: \x1b[31m%d\x1b[39m", g.rng.IntN(10))
	g.line("      \x1b[2mat Object.<anonymous> (\x1b[22msrc/%s.test.js\x1b[2m:%d:%d)\x1b[22m", g.pick(words), g.rng.IntN(99), g.rng.IntN(40))
	g.line("\x1b[1mTime:\x1b[22m        %d.%03d s", g.rng.IntN(9), g.rng.IntN(1000))
}

func (g *gen) progress() {
	if g.err != nil {
		return
	}
	g.buf = g.buf[:0]
	name := g.pick(words)
	for p := 0; p < 100; p += 5 + g.rng.IntN(20) {
		g.buf = fmt.Appendf(g.buf, "Downloading %s.tar.gz %3d%% %d KiB/s\r", name, p, g.rng.IntN(90000))
	}
	g.buf = fmt.Appendf(g.buf, "Downloading %s.tar.gz 100%%\n", name)
	n, err := g.w.Write(g.buf)
	g.n += int64(n)
	g.err = err
}

func (g *gen) logs() {
	for range 2 + g.rng.IntN(10) {
		switch g.rng.IntN(4) {
		case 0:
			g.line("%s INFO %s: request %08x-%04x-4%03x-8%03x-%012x handled in %dms", g.clock(), g.pick(words),
				g.rng.Uint32(), g.rng.IntN(1<<16), g.rng.IntN(1<<12), g.rng.IntN(1<<12), g.rng.Uint64N(1<<48), g.rng.IntN(900))
		case 1:
			g.line("%s WARN %s: dial tcp 127.0.0.1:%d: %s (pid %d, retry %d)", g.clock(), g.pick(words),
				30000+g.rng.IntN(30000), g.pick(errs), 1000+g.rng.IntN(60000), g.rng.IntN(5))
		case 2:
			g.line("%s ERROR %s: open %s/%s.json: %s", g.clock(), g.pick(words), g.tmp(), g.pick(words), g.pick(errs))
		default:
			g.line("%s DEBUG %s %s processed %d records from %s in %s, commit %016x", g.clock(), g.pick(words),
				g.pick(words), g.rng.IntN(2000000), g.pick(words), g.dur(), g.rng.Uint64())
		}
	}
}
