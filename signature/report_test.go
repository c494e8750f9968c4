package signature

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
)

// TestCapturedOutputsV2 runs the rules v2 on output captured from real
// runs of go test (parallel subtests, -v, -race, panics, build errors),
// cargo test, pytest and unittest. Each archive in testdata/v2same holds
// two runs of one failure (a rerun with parallel tests finishing in
// another order, a cached package, or a second checkout at another path,
// whose root is in a.root and b.root) that must get one signature; each in
// testdata/v2differ two failures that must not. The v1 archives must keep
// their verdicts under v2 too, and all of them under v3.
func TestCapturedOutputsV2(t *testing.T) {
	for _, dir := range []string{"v2same", "v2differ", "same", "differ"} {
		for _, path := range archives(t, dir) {
			for _, set := range []string{V2, V3} {
				t.Run(set+"/"+dir+"/"+strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
					files := readArchive(t, path)
					a, b := files["a"], files["b"]
					if a == nil || b == nil || bytes.Equal(a, b) {
						t.Fatal("want two different files a and b")
					}
					ra := compileSet(t, set, strings.TrimSpace(string(files["a.root"])))
					rb := compileSet(t, set, strings.TrimSpace(string(files["b.root"])))
					want := strings.HasSuffix(dir, "same")
					if same := ra.SumBytes(a) == rb.SumBytes(b); same != want {
						t.Errorf("signatures equal = %v, want %v\n--- a normalized:\n%s--- b normalized:\n%s",
							same, want, explain(t, ra, string(a)), explain(t, rb, string(b)))
					}
					for _, x := range []struct {
						r  *Rules
						in []byte
					}{{ra, a}, {rb, b}} {
						sum := sha256.Sum256([]byte(explain(t, x.r, string(x.in))))
						if got := hex.EncodeToString(sum[:]); got != x.r.SumBytes(x.in) {
							t.Errorf("the signature is not the SHA-256 of the explained text")
						}
					}
				})
			}
		}
	}
}

// TestReportRules pins what the rules v2 drop, keep in order, and gather
// into sorted blocks, runner by runner.
func TestReportRules(t *testing.T) {
	r := compileSet(t, V2, "/home/ci/src/app")
	for _, tc := range []struct{ name, in, want string }{
		{"go passing and cached packages go", "ok  \texample.com/a\t0.01s\nok  \texample.com/b\t(cached)\n?   \texample.com/c\t[no test files]\nFAIL\n",
			"FAIL\n"},
		{"go failed packages are sorted", "FAIL\texample.com/b\t0.1s\nFAIL\texample.com/a [build failed]\n",
			"FAIL example.com/a [build failed]\n\nFAIL example.com/b\n"},
		{"jest prints a file's time when it is long", "FAIL src/a.test.js (5.2 s)\nFAIL src/b.test.js\n", "FAIL src/a.test.js\n\nFAIL src/b.test.js\n"},
		{"go subtests in any order", "--- FAIL: TestX (0.00s)\n    --- FAIL: TestX/b (0.00s)\n        x_test.go:9: b\n    --- FAIL: TestX/a (0.00s)\n        x_test.go:9: a\n",
			"--- FAIL: TestX (<dur>)\n\n--- FAIL: TestX/a (<dur>)\nx_test.go:<line>: a\n\n--- FAIL: TestX/b (<dur>)\nx_test.go:<line>: b\n"},
		{"go -v output gathered by test, passing tests' dropped",
			"=== RUN   TestA\n=== PAUSE TestA\n=== RUN   TestB\n    b_test.go:3: fine\n--- PASS: TestB (0.00s)\n=== CONT  TestA\n    a_test.go:7: got 1\n=== NAME  TestA\n    a_test.go:8: want 2\n--- FAIL: TestA (0.00s)\n",
			"--- FAIL: TestA (<dur>)\n\n=== TestA\na_test.go:<line>: got 1\na_test.go:<line>: want 2\n"},
		{"go -v parallel tests interleaved one way",
			"=== RUN   TestA\n=== PAUSE TestA\n=== RUN   TestB\n=== PAUSE TestB\n=== CONT  TestA\n    a_test.go:7: a1\n=== CONT  TestB\n    b_test.go:7: b1\n=== NAME  TestA\n    a_test.go:8: a2\n--- FAIL: TestA (0.00s)\n=== NAME  TestB\n    b_test.go:8: b2\n--- FAIL: TestB (0.00s)\n",
			"--- FAIL: TestA (<dur>)\n\n--- FAIL: TestB (<dur>)\n\n=== TestA\na_test.go:<line>: a1\na_test.go:<line>: a2\n\n=== TestB\nb_test.go:<line>: b1\nb_test.go:<line>: b2\n"},
		{"go -v parallel tests interleaved the other way",
			"=== RUN   TestA\n=== PAUSE TestA\n=== RUN   TestB\n=== PAUSE TestB\n=== CONT  TestB\n    b_test.go:7: b1\n    b_test.go:8: b2\n--- FAIL: TestB (0.00s)\n=== CONT  TestA\n    a_test.go:7: a1\n    a_test.go:8: a2\n--- FAIL: TestA (0.00s)\n",
			"--- FAIL: TestA (<dur>)\n\n--- FAIL: TestB (<dur>)\n\n=== TestA\na_test.go:<line>: a1\na_test.go:<line>: a2\n\n=== TestB\nb_test.go:<line>: b1\nb_test.go:<line>: b2\n"},
		{"go -v output of a test that never ended is kept", "=== RUN   TestA\n    a_test.go:7: started\npanic: test timed out after 10m0s\n",
			"panic: test timed out after <dur>\n\n=== TestA\na_test.go:<line>: started\n"},
		{"go test -json", `{"Time":"2026-11-24T21:44:33.003973685Z","Action":"start","Package":"example.com/a"}
{"Time":"2026-11-24T21:44:33.04Z","Action":"output","Package":"example.com/a","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Time":"2026-11-24T21:44:33.04Z","Action":"output","Package":"example.com/a","Test":"TestA","Output":"    a_test.go:7: got \"x\"\n"}
{"Time":"2026-11-24T21:44:33.05Z","Action":"output","Package":"example.com/a","Test":"TestA","Output":"--- FAIL: TestA (0.00s)\n"}
{"Time":"2026-11-24T21:44:33.05Z","Action":"fail","Package":"example.com/a","Test":"TestA","Elapsed":0}
{"Time":"2026-11-24T21:44:33.05Z","Action":"output","Package":"example.com/a","Output":"FAIL\n"}
`, "FAIL\n\n--- FAIL: TestA (<dur>)\n\n=== TestA\na_test.go:<line>: got \"x\"\n"},
		{"go: after a panic, tests reported failed without a word go", "--- FAIL: TestDiff (0.04s)\n    --- FAIL: TestDiff/Project4/Equal (0.00s)\n--- FAIL: TestOther (0.00s)\n    x_test.go:3: bad\npanic: boom [recovered]\n",
			"panic: boom [recovered]\n\n--- FAIL: TestOther (<dur>)\nx_test.go:<line>: bad\n"},
		{"go panic keeps the innermost workspace frame's line",
			"goroutine 7 [running]:\nruntime.panic()\n\t/usr/local/go/src/runtime/panic.go:860 +0x13a\nexample.com/a.f(...)\n\t/home/ci/src/app/a.go:98\nexample.com/a.g()\n\t/home/ci/src/app/a.go:120 +0x10\n",
			"goroutine <n> [running]:\nruntime.panic()\n/usr/local/go/src/runtime/panic.go:<line> +<hex>\nexample.com/a.f(...)\n<root>/a.go:98\nexample.com/a.g()\n<root>/a.go:<line> +<hex>\n"},
		{"go build errors keep their lines", "# example.com/a\n./a.go:287:29: syntax error: unexpected newline\n\nFAIL\texample.com/a [build failed]\n",
			"# example.com/a\n./a.go:287: syntax error: unexpected newline\n\nFAIL example.com/a [build failed]\n"},
		{"race detector goroutine state", "WARNING: DATA RACE\nGoroutine 16 (running) created at:\n  f()\nGoroutine 15 (finished) created at:\n==================\n",
			"WARNING: DATA RACE\nGoroutine <n> created at:\nf()\nGoroutine <n> created at:\n"},
		{"cargo progress, passing tests and totals go",
			"   Compiling app v0.1.0 (/home/ci/src/app)\nwarning: `app` (lib) generated 27 warnings (23 duplicates)\n    Finished `test` profile in 2.75s\nrunning 3 tests\ntest b ... ok\ntest a ... FAILED\ntest result: FAILED. 2 passed; 1 failed; finished in 0.47s\n",
			"test result: FAILED.\n\ntest a ... FAILED\n"},
		{"code excerpt line numbers", "error[E0308]: mismatched types\n --> src/lib.rs:39:5\n   |\n39 |     x\n   |     ^ expected i32\n",
			"error[E0308]: mismatched types\n--> src/lib.rs:<line>\n|\n| x\n| ^ expected i32\n"},
		{"vitest", " RUN  v4.0.1 /home/ci/src/app\n ✓ src/a.test.ts (3 tests) 5ms\n ❯ src/b.test.ts (2 tests | 1 failed) 7ms\n   × adds 3ms\n Test Files  1 failed | 1 passed (2)\n      Tests  1 failed | 4 passed (5)\n   Start at  12:00:01\n   Duration  1.20s\n",
			"× adds\n\n❯ src/b.test.ts (2 tests | 1 failed)\n"},
		{"jest prints a test's time when it is long", "  ✕ slow (120 ms)\n  ✕ quick\n", "✕ quick\n\n✕ slow\n"},
		{"vitest excerpt", " FAIL  src/b.test.ts > adds\nAssertionError: expected 3 to be 4\n 23|   expect(add(1, 2)).toBe(4)\n   |                     ^\n ❯ src/b.test.ts:23:21\n⎯⎯⎯⎯[1/1]⎯\n",
			"FAIL src/b.test.ts > adds\nAssertionError: expected 3 to be 4\n| expect(add(1, 2)).toBe(4)\n| ^\n❯ src/b.test.ts:<line>\n"},
		{"pytest", "============================= test session starts ==============================\nplatform linux -- Python 3.11.2, pytest-7.2.1\nrootdir: /home/ci/src/app\ncollected 4 items\n\ntests/test_a.py F.F.                                                     [100%]\n=================== 2 failed, 2 passed in 0.06s ===================\n",
			""},
		{"pytest-xdist progress", "[gw1] [ 50%] FAILED tests/test_a.py::test_b\n[gw0] [100%] PASSED tests/test_a.py::test_a\nFAILED tests/test_a.py::test_b - assert 1 == 2\n",
			"FAILED tests/test_a.py::test_b - assert 1 == 2\n"},
		{"unittest", "F.E\n======================================================================\nFAIL: test_add (t.T.test_add)\n----------------------------------------------------------------------\nAssertionError: 4 != 3\n\n----------------------------------------------------------------------\nRan 3 tests in 0.003s\n",
			"FAIL: test_add (t.T.test_add)\nAssertionError: 4 != 3\n"},
		{"workspace root and caches", "/home/ci/src/app/x.go /home/ci/src/apps/y.go /root/go/pkg/mod/github.com/a/b@v1.2.3/c.go\n/usr/lib/python3/dist-packages/_pytest/x.py /home/ci/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/serde-1.0.2/src/de.rs /home/ci/src/app/node_modules/.pnpm/vitest@4/node_modules/vitest/dist/x.js\n",
			"<root>/x.go /home/ci/src/apps/y.go <gomod>/github.com/a/b@v1.2.3/c.go\n<pkgs>/_pytest/x.py <cargo>/serde-1.0.2/src/de.rs <node_modules>/vitest/dist/x.js\n"},
		{"ordinals in messages, not in names", "uuid_test.go:71: monotonicity failed at #2841: a < b (#12)\nTestX/case#02 failed\n",
			"uuid_test.go:<line>: monotonicity failed at #<n>: a < b (#<n>)\nTestX/case#02 failed\n"},
		{"TAP", "TAP version 13\n# Subtest: adds\nnot ok 1 - adds\n  ---\n  duration_ms: 3.893195\n  expected: 3\n  actual: 2\n  ...\n# Subtest: ok\nok 2 - ok\n  ---\n  duration_ms: 0.264052\n  ...\n1..2\n# tests 2\n# pass 1\n# fail 1\n# duration_ms 391.966\n",
			"TAP version 13\n\nnot ok 1 - adds\n---\nduration_ms: <dur>\nexpected: 3\nactual: 2\n"},
		{"go build titles, not other comments", "# example.com/a [example.com/a.test]\na.go:3:1: x\n\n# a comment with words\n",
			"# a comment with words\n\n# example.com/a [example.com/a.test]\na.go:3: x\n"},
		{"a JavaScript parser's position", "SyntaxError: /home/ci/src/app/p.js: Unexpected token, expected \",\" (1406:1)\n> 1406 | {\n",
			"SyntaxError: <root>/p.js: Unexpected token, expected \",\" (<line>)\n> | {\n"},
		{"no-break spaces are blanks", "-\u00a0\u00a0Name: \"a\",\n+ \u00a0Name: \"b\",\n", "- Name: \"a\",\n+ Name: \"b\",\n"},
		{"the end of an address in a repr cut by pytest", "dicts = ({'_signatures': <module 'toolz._signatures' from '/home/ci/src/app/toolz/_si...42df80>, 'x': 1})\n",
			"dicts = ({'_signatures': <module 'toolz._signatures' from '<root>/toolz/_si...<hex>>, 'x': 1})\n"},
		{"unittest's elision", "AssertionError: b'Traceback:\\n Fil[803 chars]te' != b''\n", "AssertionError: b'Traceback:\\n Fil[<n> chars]te' != b''\n"},
		{"python's on line", "E IndentationError: expected an indented block after 'if' statement on line 398\n", "E IndentationError: expected an indented block after 'if' statement on line <line>\n"},
		{"unrecognised output keeps the line rules", "step 1\n  building 2026-01-02T15:04:05Z\nstep 2 failed: exit status 3\n",
			"step 1\nbuilding <ts>\nstep 2 failed: exit status 3\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := explain(t, r, tc.in); got != tc.want {
				t.Errorf("explained\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// TestBlocksBounded feeds far more failure blocks than are kept, in two
// orders: what is kept stays within the bounds, and is the same.
func TestBlocksBounded(t *testing.T) {
	for _, set := range []string{V2, V3} {
		t.Run(set, func(t *testing.T) { testBlocksBounded(t, compileSet(t, set, "")) })
	}
}

func testBlocksBounded(t *testing.T, r *Rules) {
	var fwd, rev bytes.Buffer
	const n = 3 * maxBlocks
	line := func(w *bytes.Buffer, i int) {
		w.WriteString("--- FAIL: TestCase" + strings.Repeat("x", i%7) + hex.EncodeToString([]byte{byte(i >> 8), byte(i)}) + " (0.01s)\n    x_test.go:3: " + strings.Repeat("y", 2000) + "\n")
	}
	for i := range n {
		line(&fwd, i)
		line(&rev, n-1-i)
	}
	if a, b := r.SumBytes(fwd.Bytes()), r.SumBytes(rev.Bytes()); a != b {
		t.Errorf("the kept blocks depend on their order")
	}
	st := r.newStream(func([]byte) error { return nil })
	st.write(fwd.Bytes())
	st.rep.end()
	if len(st.rep.blocks) > maxBlocks || st.rep.size > maxBlockBytes {
		t.Errorf("kept %d blocks of %d bytes, want at most %d and %d", len(st.rep.blocks), st.rep.size, maxBlocks, maxBlockBytes)
	}

	// go -v output of many tests that never end, in pieces.
	var v bytes.Buffer
	for i := range 3 * maxTests {
		for k := range 3 {
			fmt.Fprintf(&v, "=== CONT  Test%d\n    x_test.go:%d: %s\n", (i*7+k)%(3*maxTests), k, strings.Repeat("z", 1500))
		}
	}
	st = r.newStream(func([]byte) error { return nil })
	st.write(v.Bytes())
	if len(st.rep.tests) > maxTests || st.rep.testBytes > maxTestBytes {
		t.Errorf("gathered the output of %d tests, %d bytes, want at most %d and %d", len(st.rep.tests), st.rep.testBytes, maxTests, maxTestBytes)
	}
	sum := 0
	for _, b := range st.rep.tests {
		sum += len(b)
	}
	if sum != st.rep.testBytes {
		t.Errorf("counted %d bytes of test output, hold %d", st.rep.testBytes, sum)
	}
	st.close()
}

// TestTestOutputBounded: a go -v test whose output comes in pieces between
// other tests' is gathered into one block of at most maxBlock bytes, as
// one piece is.
func TestTestOutputBounded(t *testing.T) {
	for _, set := range []string{V2, V3} {
		t.Run(set, func(t *testing.T) { testTestOutputBounded(t, compileSet(t, set, "")) })
	}
}

func testTestOutputBounded(t *testing.T, r *Rules) {
	var in bytes.Buffer
	piece := func(name string) {
		fmt.Fprintf(&in, "=== CONT  %s\n", name)
		for range 200 {
			fmt.Fprintf(&in, "    x_test.go:3: %s\n", strings.Repeat("y", 100))
		}
	}
	piece("TestA")
	piece("TestB")
	piece("TestA") // still being read when it fails
	in.WriteString("--- FAIL: TestA (0.01s)\n--- FAIL: TestB (0.01s)\nFAIL\n")
	st := r.newStream(func([]byte) error { return nil })
	st.write(in.Bytes())
	for _, b := range st.rep.finish() {
		if len(b) > maxBlock {
			t.Errorf("a block of %d bytes, more than %d: %.60q…", len(b), maxBlock, b)
		}
	}
}

// TestBlocksBoundedAnyOrder: past the bounds, the failure blocks kept are
// the same whatever order blocks of different sizes come in.
func TestBlocksBoundedAnyOrder(t *testing.T) {
	for _, set := range []string{V2, V3} {
		t.Run(set, func(t *testing.T) { testBlocksBoundedAnyOrder(t, compileSet(t, set, "")) })
	}
}

func testBlocksBoundedAnyOrder(t *testing.T, r *Rules) {
	rng := rand.New(rand.NewPCG(1, 2))
	var blocks []string
	for i := 0; len(blocks) < 600; i++ {
		blocks = append(blocks, fmt.Sprintf("--- FAIL: Test%d (0.01s)\n    x_test.go:3: %s\n", i, strings.Repeat("y", 500+rng.IntN(15000))))
	}
	var want string
	for try := range 5 {
		rng.Shuffle(len(blocks), func(i, j int) { blocks[i], blocks[j] = blocks[j], blocks[i] })
		got := r.SumBytes([]byte(strings.Join(blocks, "")))
		if try == 0 {
			want = got
		} else if got != want {
			t.Fatalf("order %d: signature %s, want %s: the blocks kept depend on their order", try, got, want)
		}
	}
}

// A race report of go test -race, with the functions of its two accesses,
// its goroutines and the rule around it.
func raceReport(read, write string, line int) string {
	return fmt.Sprintf(`==================
WARNING: DATA RACE
Read at 0x00c000090060 by goroutine 14:
  runtime.mapaccess2_faststr()
      /usr/local/go/src/internal/runtime/maps/runtime_faststr.go:161 +0x0
  example.com/c.(*Cache[go.shape.string]).%s()
      /home/ci/src/app/c.go:%d +0xe6
  example.com/c.TestConcurrent.func1()
      /home/ci/src/app/c_test.go:28 +0x139

Previous write at 0x00c000090060 by goroutine 20:
  example.com/c.(*Cache[go.shape.string]).%s()
      /home/ci/src/app/c.go:%d +0x815
  example.com/c.TestConcurrent.func1()
      /home/ci/src/app/c_test.go:28 +0x139

Goroutine 14 (running) created at:
  example.com/c.TestConcurrent()
      /home/ci/src/app/c_test.go:27 +0x97
  testing.tRunner()
      /usr/local/go/src/testing/testing.go:2036 +0x21c
==================
`, read, line, write, line+11)
}

// A panic's stack in a test, reached through the function via.
func panicStack(via, test string, line int) string {
	return fmt.Sprintf(`--- FAIL: %s (0.00s)
panic: runtime error: invalid memory address or nil pointer dereference [recovered, repanicked]
[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x53fd56]

goroutine 18 [running]:
testing.tRunner.func1.2({0x5774e0, 0x707f40})
	/usr/local/go/src/testing/testing.go:1974 +0x232
panic({0x5774e0?, 0x707f40?})
	/usr/local/go/src/runtime/panic.go:860 +0x13a
example.com/c/internal.(*List[...]).Remove(...)
	/home/ci/src/app/internal/list.go:%d
example.com/c.(*Cache[...]).removeElement(0x2aa52fa93290?, 0x1f9?)
	/home/ci/src/app/c.go:172 +0x16
example.com/c.(*Cache[...]).%s(0x2aa52faa4488, 0x1f9?)
	/home/ci/src/app/c.go:107 +0xc4
sort.Slice({0x5bfbc0, 0x1f9}, 0x2aa52faa4490)
	/usr/local/go/src/sort/slice.go:28 +0x45
example.com/c.%s(0x2aa52faa4488)
	/home/ci/src/app/c_test.go:84 +0x167
testing.tRunner(0x2aa52faa4488, 0x5b57c0)
	/usr/local/go/src/testing/testing.go:2036 +0xea
created by testing.(*T).Run in goroutine 1
	/usr/local/go/src/testing/testing.go:2101 +0x4c5
FAIL	example.com/c	0.007s
`, test, line, via, test)
}

// TestReportRulesV3 pins what the rules v3 add to v2: Go race reports
// reduced to the functions that race, a race-detected test's block to its
// title and that line, Go stacks to their ends in the workspace, and
// pytest's cut reprs of workspace paths.
func TestReportRulesV3(t *testing.T) {
	r := compileSet(t, V3, "/home/ci/src/app")
	for _, tc := range []struct{ name, in, want string }{
		{"race reports: the functions that race, once each",
			"--- FAIL: TestConcurrent (0.06s)\n    c_test.go:34: length differs from expected\n    testing.go:1712: race detected during execution of test\n" +
				raceReport("Add", "Add", 124) + raceReport("Get", "Add", 90) + raceReport("Add", "Add", 124) + "FAIL\n",
			"FAIL\n\nWARNING: DATA RACE\nexample.com/c.(*Cache[...]).Add\nexample.com/c.(*Cache[...]).Get\n"},
		{"a race outside the workspace names the first frame outside the runtime",
			"WARNING: DATA RACE\nWrite at 0x00c0000a0010 by goroutine 7:\n  runtime.mapassign()\n      /usr/local/go/src/runtime/map.go:1 +0x1\n  main.fill()\n      /srv/build/main.go:9 +0x3\n==================\n",
			"WARNING: DATA RACE\nmain.fill\n"},
		{"a stack keeps its ends in the workspace",
			panicStack("Get", "TestRandomOps", 97),
			"panic: runtime error: invalid memory address or nil pointer dereference [recovered, repanicked]\n[signal SIGSEGV: segmentation violation code=<hex> addr=<hex> pc=<hex>]\n\n" +
				"FAIL example.com/c\n\n" +
				"goroutine <n> [running]:\ntesting.tRunner.func1.2({<hex>, <hex>})\n/usr/local/go/src/testing/testing.go:<line> +<hex>\npanic({<hex>?, <hex>?})\n/usr/local/go/src/runtime/panic.go:<line> +<hex>\n" +
				"example.com/c/internal.(*List[...]).Remove(...)\n<root>/internal/list.go:97\n" +
				"example.com/c.TestRandomOps(<hex>)\n<root>/c_test.go:<line> +<hex>\ntesting.tRunner(<hex>, <hex>)\n/usr/local/go/src/testing/testing.go:<line> +<hex>\ncreated by testing.(*T).Run in goroutine <n>\n/usr/local/go/src/testing/testing.go:<line> +<hex>\n"},
		{"a repr pytest cut in a workspace path",
			"___ test_merge ___\ndicts = ({'_signatures': <module 'toolz._signatures' from '/home/ci/src/app/toolz/_si...42df80>, 'toolz': <module 'toolz' from '/home/ci/src/app/toolz/__init__.py'>})\n",
			"___ test_merge ___\ndicts = ({'_signatures': <module 'toolz._signatures' from '<root>...<root>/toolz/__init__.py'>})\n"},
		{"a repr pytest cut inside the root's path",
			"___ test_merge ___\ndicts = ({'_signatures': <module 'toolz._signatures' from '/home/ci/src/a... <module 'toolz' from '/home/ci/src/app/toolz/__init__.py'>})\n",
			"___ test_merge ___\ndicts = ({'_signatures': <module 'toolz._signatures' from '<root>...<root>/toolz/__init__.py'>})\n"},
		{"node --test's spec reporter", "▶ parse\n  ✔ parses (0.5ms)\n  ✖ throws on \"\" (2.925258ms)\n    AssertionError: Expected values to be strictly deep-equal\n✖ parse (26.98ms)\nℹ tests 98\nℹ suites 0\nℹ pass 68\nℹ fail 30\nℹ duration_ms 253.463757\n✖ 2 problems (2 errors, 0 warnings)\n",
			"▶ parse\n\n✖ parse\n\n✖ throws on \"\"\nAssertionError: Expected values to be strictly deep-equal\n"},
		{"hypothesis: what the test printed during its search goes",
			"___ test_roundtrip ___\n>       assert s == parsed\nE       AssertionError: assert 1 == 2\nE       Falsifying example: test_roundtrip(\nE           s=1,\nE       )\n----------------------------- Captured stdout call -----------------------------\ntried 17\ntried 1\n",
			"___ test_roundtrip ___\n> assert s == parsed\nE AssertionError: assert 1 == 2\nE Falsifying example: test_roundtrip(\nE s=1,\nE )\n"},
		{"a test's captured output stays without hypothesis",
			"___ test_x ___\nE       assert 1 == 2\n----------------------------- Captured stdout call -----------------------------\nconnecting to db\n",
			"___ test_x ___\nE assert 1 == 2\n----------------------------- Captured stdout call -----------------------------\nconnecting to db\n"},
		{"go -v: a panic drops the parallel tests that finished before it",
			"=== RUN   TestA\n=== PAUSE TestA\n=== RUN   TestB\n    b_test.go:3: serial\n--- FAIL: TestB (0.00s)\n=== CONT  TestA\n    a_test.go:3: parallel\n--- FAIL: TestA (0.00s)\n=== RUN   TestC\n--- FAIL: TestC (0.00s)\npanic: boom [recovered]\n",
			"panic: boom [recovered]\n\n=== TestB\nb_test.go:<line>: serial\n"},
		{"long numbers are values, Unix times are not",
			"left: 16388950234918537544\nright: 12638187200555641996\nstarted 1764012345 at 1764012345678901234\n0.30000000000000004\n" +
				"Using --randomly-seed=3423432\nSeed: -1803383003\n@seed(340282366920938463463374607431768211455)\nseeds 12345\n" +
				"app-20261122.log 20261122101500 20261340\n",
			"left: 16388950234918537544\nright: 12638187200555641996\nstarted <ts> at <ts>\n0.30000000000000004\n" +
				"Using --randomly-seed=<n>\nSeed: -<n>\n@seed(<n>)\nseeds 12345\n" +
				"app-<ts>.log <ts> 20261340\n"},
		{"cargo test -q: progress goes, failed tests in any order",
			"running 4 tests\n. 1/4\ntest_join --- FAILED\n. 3/4\ntest_quote --- FAILED\n.i\nF\n",
			"test_join --- FAILED\n\ntest_quote --- FAILED\n"},
		{"a JavaScript stack frame cut short",
			"    at async Test.processPendingSubtests (node:int...\n    at f (node:internal/test_runner/test:526:18)\n    at g ...\n",
			"at async Test.processPendingSubtests (...\nat f (node:internal/test_runner/test:526:18)\nat g ...\n"},
		{"a cut repr of no workspace path stays",
			"___ test_x ___\nx = 'aaaa...zzzz'\n", "___ test_x ___\nx = 'aaaa...zzzz'\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := explain(t, r, tc.in); got != tc.want {
				t.Errorf("explained\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// TestRulesV3Pairs: what the rules v3 take for one failure, and what they
// keep apart; the rules v2 must keep their verdicts (a rule set never
// changes).
func TestRulesV3Pairs(t *testing.T) {
	v3 := compileSet(t, V3, "/home/ci/src/app")
	v2 := compileSet(t, V2, "/home/ci/src/app")
	race := "--- FAIL: TestConcurrent (0.06s)\n    testing.go:1712: race detected during execution of test\n"
	for _, tc := range []struct {
		name     string
		a, b     string
		same, v2 bool // one signature under v3, and under v2
	}{
		{"other races found between the same functions, in another order, at other lines",
			race + raceReport("Add", "Add", 124) + raceReport("Get", "Add", 90) + "FAIL\n",
			race + "    c_test.go:34: length differs from expected\n" + raceReport("Get", "Add", 91) + raceReport("Add", "Get", 124) + raceReport("Add", "Add", 130) + "FAIL\n",
			true, false},
		{"races between other functions",
			race + raceReport("Add", "Add", 124) + "FAIL\n", race + raceReport("Get", "Get", 124) + "FAIL\n", false, false},
		{"the race caught in other tests, in another instance of a generic type",
			race + raceReport("Add", "Add", 124) + "FAIL\n",
			strings.ReplaceAll(race, "TestConcurrent", "TestConcurrentG") + strings.ReplaceAll(raceReport("Add", "Add", 124), "go.shape.string", "go.shape.int") + "FAIL\n",
			true, false},
		{"a race and a test's own failure",
			race + raceReport("Add", "Add", 124) + "FAIL\n", "--- FAIL: TestConcurrent (0.06s)\n    c_test.go:34: length differs from expected\nFAIL\n", false, false},
		{"a panic reached through another caller", panicStack("Get", "TestRandomOps", 97), panicStack("Add", "TestRandomOps", 97), true, false},
		{"a panic at another line", panicStack("Get", "TestRandomOps", 97), panicStack("Get", "TestRandomOps", 114), false, false},
		{"a panic in another test", panicStack("Get", "TestRandomOps", 97), panicStack("Get", "TestOps", 97), false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, x := range []struct {
				r    *Rules
				want bool
			}{{v3, tc.same}, {v2, tc.v2}} {
				if same := x.r.SumBytes([]byte(tc.a)) == x.r.SumBytes([]byte(tc.b)); same != x.want {
					t.Errorf("%s: signatures equal = %v, want %v\n--- a:\n%s--- b:\n%s", x.r.Name(), same, x.want,
						explain(t, x.r, tc.a), explain(t, x.r, tc.b))
				}
			}
		})
	}
	// Two checkouts: pytest cuts a repr holding the workspace path at
	// another place when the path is longer.
	long := compileSet(t, V3, "/home/ci/builds/second-checkout/src/app")
	a := "___ test_merge ___\ndicts = ({'_signatures': <module 'toolz._signatures' from '/home/ci/src/app/toolz/_si...42df80>, 'toolz': <module 'toolz' from '/home/ci/src/app/toolz/__init__.py'>})\n"
	b := "___ test_merge ___\ndicts = ({'_signatures': <module 'toolz._signatures' from '/home/ci/builds/second-checkout/sr... <module 'toolz' from '/home/ci/builds/second-checkout/src/app/toolz/__init__.py'>})\n"
	if v3.SumBytes([]byte(a)) != long.SumBytes([]byte(b)) {
		t.Errorf("a repr cut at another place in another checkout:\n%s%s", explain(t, v3, a), explain(t, long, b))
	}
}

// TestQuickTestsAsRules: go -v's lines that quick takes before the line
// rules are handled as the rules would handle them, under v2 and v3, on
// every output of the corpus and on generated test output.
func TestQuickTestsAsRules(t *testing.T) {
	var outs [][]byte
	for _, set := range corpusSets {
		for _, p := range readCorpus(t, set) {
			for _, b := range p.bugs {
				for _, run := range corpusRuns {
					if out, ok := b.out[run]; ok {
						outs = append(outs, out)
					}
				}
			}
		}
	}
	outs = append(outs, benchOutput()[:4<<20])
	taken := 0
	stride := shortStride()
	for _, set := range []string{V2, V3} {
		r := compileSet(t, set, "/home/ci/src/app")
		slowRules := *r
		slowRules.slowTests = true
		for i, out := range outs {
			if i%stride != 0 && i != len(outs)-1 {
				continue
			}
			fast := explain(t, r, string(out))
			slow := explain(t, &slowRules, string(out))
			if fast != slow {
				t.Fatalf("%s: output %d: quick's go -v lines change the explained text", set, i)
			}
			if bytes.Contains(out, []byte("=== RUN   Test")) {
				taken++
			}
		}
	}
	if taken == 0 {
		t.Fatal("no output with go -v lines to compare")
	}
}
