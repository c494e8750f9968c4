// Package signature computes failure signatures: SHA-256 hashes of a
// command's output, normalized so that reruns of the same failure hash the
// same while different failures do not.
//
// A signature is 64 lowercase hexadecimal digits. Rules.Sum, Rules.SumBytes
// and a Digest compute it; Rules.Explain writes the normalized text itself,
// whose sha256sum is the signature. Raw, and the rule set Off, hash the exact
// bytes, as sha256sum does.
//
// # Rule sets
//
// The rules are versioned, and any change to them is a new version, so
// that an upgrade never silently regroups failures. V3, the current set,
// is V2 plus the rules for Go's race reports and stacks and pytest's cut
// reprs below; V2 is V1's line rules plus the workspace and report rules
// below. V2 and V1 stay selectable and unchanged.
//
// # Rule set v1
//
// The output is read as lines and each line is normalized on its own, in one
// pass of a hand-written scanner (no regular expression engine, except for
// configured extra patterns).
//
// Lines and layout:
//
//   - A line ends at "\n". Carriage returns at the end of a line are dropped
//     (CRLF becomes LF), and of a line that still holds carriage returns only
//     the text after the last one is kept, as a terminal shows a progress
//     bar: "10%\r50%\r100% done" becomes "100% done".
//   - Terminal escape sequences are removed: CSI (colours, cursor movement),
//     OSC (titles, hyperlinks), and the other ESC sequences.
//   - Extra patterns, if configured, replace their matches with
//     "<redacted>"; they see the line as above, before the rules below.
//   - Runs of spaces and tabs become one space; spaces and tabs at the start
//     and end of a line are dropped. A line left empty stays an empty line,
//     except at the end of the output, where empty lines are dropped.
//     Every line, the last one too, ends with "\n" in the normalized text.
//   - A line longer than 64 KiB (counted after the carriage return rule) is
//     cut to its first 64 KiB, so that memory stays bounded whatever the
//     input.
//
// Placeholders, applied left to right; a "word" is a run of ASCII letters,
// digits and '_':
//
//	<ts>    dates and times: 2026-01-02T15:04:05.123Z, 2026-01-02T15:04:05+01:00,
//	        2026/01/02 15:04:05 (package log), 2026-01-02 15:04:05,123 (Python),
//	        2026-01-02 15:04:05.9 +0000 UTC m=+0.0012 (time.Time.String),
//	        2026-01-02, and clock times 15:04:05 or 15:04:05.000 alone; not
//	        when they run into a word (2026-01-02x is kept)
//	<dur>   durations: 0.03s, (0.00s), 12ms, 1.5µs, 1m30s, 2h0m0.5s, 5sec, 10min,
//	        and after a space 12 ms, 0.5 s, 3 seconds, 2 minutes (not "5 h", "5 m")
//	<uuid>  UUIDs: 3f2a9c1b-1234-4abc-8def-0123456789ab, either case
//	<hex>   0x followed by hexadecimal digits, however short (0x3, +0x1d,
//	        (0xc000123456, 0x3)); and words of 8 or more hexadecimal digits
//	        (deadbeef, 3f2a9c1d8e7b6a5f, the hash in mycrate-1a2b3c4d5e6f7a8b)
//	<tmp>   temporary paths: under /tmp, /var/tmp, /dev/shm, /var/folders,
//	        /private/tmp, /private/var/folders (macOS) and $TMPDIR (its value
//	        when the rules are compiled), which covers Go's build directories
//	        (/tmp/go-build123/b001/…) and test directories (t.TempDir, pytest's
//	        tmp_path). The directories become <tmp>; the file name stays when
//	        it looks like one (name.ext with a short lower-case extension, not
//	        mktemp's or Python's random tmp… names) because it tells failures
//	        apart: /tmp/TestX123/001/config.json becomes <tmp>/config.json,
//	        /tmp/go-build123/b001/exe/main becomes <tmp>
//	<line>  line numbers after a file name (name.ext, the extension starting
//	        with a letter): x.go:42 and x.go:42:17 become x.go:<line>;
//	        x.ts(3,7): becomes x.ts(<line>): (TypeScript, MSBuild); Python's
//	        File "x.py", line 12 becomes line <line>
//	<n>     the number in "goroutine 17", "Goroutine 7", "pid 4242", "pid=4242",
//	        "pid: 4242" and Rust's "thread 'main' (4829) panicked"; words of 5
//	        or more decimal digits (1234567, the 30000000000000004 of
//	        0.30000000000000004); and 5 or more digits ending a word with no
//	        other digit (worker12345 becomes worker<n>)
//	<port>  the port after an IPv4 address, localhost or a bracketed IPv6
//	        address (127.0.0.1:38211, localhost:8080, [::1]:443), and a bare
//	        :8080 after a space, quote, bracket, '=' or ','
//
// Kept as they are, because they tell failures apart: exit statuses ("exit
// status 1" and "exit status 2" differ), HTTP status codes (404 and 500),
// numbers of up to 4 digits, test, file and function names, messages,
// error codes (TS2322, E0308), short hexadecimal words (a 7-digit git hash).
//
// For example,
//
//	2026/01/02 15:04:05 --- FAIL: TestDial (0.03s)
//	    dial_test.go:42: dial tcp 127.0.0.1:38211: connection refused (pid 4242)
//	goroutine 17 [running]:
//	main.dial(0xc000123456, 0x3)
//		/tmp/go-build123/b001/dial.go:17 +0x1d
//
// normalizes to
//
//	<ts> --- FAIL: TestDial (<dur>)
//	dial_test.go:<line>: dial tcp 127.0.0.1:<port>: connection refused (pid <n>)
//	goroutine <n> [running]:
//	main.dial(<hex>, <hex>)
//	<tmp>/dial.go:<line> +<hex>
//
// Normalizing normalized text changes nothing (for lines well under the
// length cap): no placeholder can be matched by a rule, and no rule's
// decision depends on text that another rule replaces. Extra patterns are
// the exception: a pattern that matches "<redacted>", or text around it, is
// applied again.
//
// # Rule set v2
//
// Workspace paths, before the line rules: the workspace root
// (Options.Root) becomes <root> wherever a path starts with it
// (/home/ci/app/x.go and /home/ci/app become <root>/x.go and <root>;
// /home/ci/apps is another directory and stays). Paths through package
// caches lose everything up to the package: Go's module cache
// (…/pkg/mod/github.com/x/y@v1.2.3/z.go becomes <gomod>/github.com/x/y@v1.2.3/z.go),
// Python's site-packages and dist-packages (<pkgs>/), cargo's registry
// (…/.cargo/registry/src/index…/serde-1.0.0/ becomes <cargo>/serde-1.0.0/)
// and node_modules (the last one in the path: <node_modules>/).
//
// A no-break space (U+00A0) is a blank: some tools print it or a space
// at random (go-cmp's diffs). unittest's elision "[803 chars]" becomes "[<n> chars]": it counts what it
// hides, such as paths. Python's "statement on line 398" becomes "on line
// <line>". An ordinal after a blank or "(" becomes #<n> ("failed at #2841" counts
// iterations, often of random input); in a name (case#02) it stays.
//
// Code excerpts lose their line numbers: "23| x", "23 | x" and "> 23 | x"
// become "| x" and "> | x"; the source text shown tells failures apart.
//
// Test reports: what tells which tests failed and how is kept; what passed,
// progress, totals and the order parallel tests finished in are not.
// Failure blocks are gathered and written after the other lines, sorted,
// each after a blank line:
//
//   - go test: "--- FAIL: name" with its indented lines, one block per
//     test or subtest; in -v output, the lines under "=== RUN/CONT/NAME
//     name" gathered by test ("=== name" and its lines), dropped when
//     "--- PASS" or "--- SKIP" follows; "FAIL\tpkg …" lines; "goroutine N
//     [...]:" stacks up to a blank line, keeping the line number of the
//     innermost frame in the workspace; race reports ("WARNING: DATA RACE"
//     up to its closing rule) without the goroutines' "(running)" and
//     "(finished)"; go build and vet's "# pkg" and its errors, which keep
//     their line numbers (not columns). Dropped: "ok  pkg" in any time or
//     (cached), "?  pkg [no test files]", "=== RUN" and the like, "PASS",
//     "coverage:". With -json, the output events are read as that output,
//     each line as output of the event's test; the other events go.
//   - cargo and rustc: "---- name stdout ----" up to the next or
//     "failures:"; "test name ... FAILED"; "warning…" and "error…"
//     diagnostics up to a blank line. Dropped: the progress lines
//     (Compiling, Finished, Downloaded, …), "running N tests", "test name
//     ... ok" and "... ignored", "generated N warnings (M duplicates)";
//     "test result: FAILED. 2 passed; …" keeps only "test result: FAILED.".
//   - pytest: "___ test ___" up to the next or a section; "FAILED …" and
//     "ERROR …" summary lines. Dropped: the session header (platform,
//     rootdir, plugins, collected), progress ("tests/x.py ..F. [ 40%]"),
//     section titles and the totals line, pytest-xdist's "[gw0] [ 50%] …"
//     lines, and the warnings summary, PASSES and slowest durations
//     sections.
//   - unittest: "FAIL: test" and "ERROR: test" with their tracebacks.
//     Dropped: the progress dots, "Ran N tests in …".
//   - vitest and jest: "FAIL file > test" up to the next or a rule;
//     "● test" with its indented lines; failed tests and files ("×", "✕",
//     "❯"), and jest's "FAIL file". Dropped: passed and skipped tests ("✓",
//     "↓"), "RUN v…", "PASS file", the totals (Test Files, Tests, Test
//     Suites, Snapshots, Time, Start at, Duration).
//   - TAP (node --test, tape): "not ok N - test" with its indented
//     diagnostics, whose duration_ms becomes <dur>. Dropped: "ok N - test"
//     with its diagnostics, "# Subtest:" titles, the totals ("# tests 5",
//     "# pass 4", "# duration_ms 12.5") and the plan ("1..5").
//   - JavaScript parsers: the position at the end of "SyntaxError: file:
//     message (1406:1)" becomes (<line>); the code frame after it shows
//     the source.
//   - tsc: "Found N errors" is dropped; eslint: a file's problems form a
//     block, "✖ N problems" is dropped; maven: "[INFO]" lines and gradle's
//     "> Task" lines are dropped.
//
// When a Go test binary panics, the "--- FAIL: name" blocks of one line
// go: which tests it reports as failed without a word depends on which
// parallel tests were running; the panic and its stack tell the failure.
// The end of an address in a repr that pytest cut in the middle
// ("…_si...42df80>") becomes <hex>.
//
// A one-line block, and a test's line in a list (jest's "✕ name (12 ms)"),
// loses the time at its end: runners print it only when it is long.
//
// Every other line stays where it is, under the line rules: output that
// no rule recognises is normalized as by V1, less its blank lines (which
// only end blocks here) and with the workspace paths replaced.
//
// Bounds: a block is cut to its first 16 KiB; the output of at most 1024
// unfinished go -v tests, 1 MiB, waits for their end (beyond that, a
// piece is a block of its own); at most 1024 blocks and 2 MiB of them are
// kept, those with the smallest values of a fixed hash, so
// that which are kept depends on the blocks, not on their order.
//
// # Rule set v3
//
// V2, and:
//
//   - Go race reports: every report ("WARNING: DATA RACE" up to its closing
//     rule) is reduced to the functions its accesses were made in (of each
//     "Read at …", "Previous write at …", the innermost frame in the
//     workspace, or without one the first frame outside the runtime and
//     sync, without its arguments and type arguments: "pkg.(*T[...]).m"),
//     and all of the output's reports become one block: "WARNING: DATA
//     RACE" and those functions, sorted, once each. The race detector
//     reports another set of races between the same functions, in another
//     order, in another instance of a generic type, from run to run.
//   - When the output holds a race report, a go test's block that says
//     "race detected during execution of test" goes: which of the tests
//     running at the time the race is caught in, and what else they
//     printed under it, change with the schedule.
//   - Go stacks ("goroutine N [...]:") keep their frames up to the
//     innermost one in the workspace and from the outermost one in the
//     workspace (usually the test) on; the frames between, the path the
//     program took (a random test's operations, another caller), go.
//   - Words of 5 or more decimal digits are kept (V1 and V2 make them
//     <n>): they are values, such as the hashes a test compares, and
//     tell failures apart. One that reads as a Unix time of the years 2017
//     to 2042 in seconds, milliseconds, microseconds or nanoseconds (10,
//     13, 16 or 19 digits) or as a date of this century without
//     separators (20261122, 202611221015, 20261122101500) becomes <ts>,
//     and one after the word "seed"
//     ("--randomly-seed=3423432", "Seed: -1803383003", "@seed(…)")
//     becomes <n>: a run chooses its seed anew.
//   - When a go test binary panics, go -v's blocks of parallel tests ("===
//     PAUSE name" was read for them or the test they are part of) go:
//     which of them finished before the panic is timing.
//   - A pytest failure that holds hypothesis's "Falsifying example:" loses
//     its captured output sections ("--- Captured stdout call ---" on):
//     they log the random search; the example found tells the failure.
//   - cargo test -q: its progress lines ("..F. 4/10", "." — where they
//     break depends on which tests finish first) are dropped; "name ---
//     FAILED" is a one-line block.
//   - A JavaScript stack frame that a reporter cut short, "at f
//     (node:int...", loses its place: "at f (...". Where the cut falls
//     depends on how long the paths before it are.
//   - Node's process ID in "(node:4242) Warning: …" and "(node:4242)
//     [DEP0005] DeprecationWarning: …" becomes <n>: each test process
//     prints its own.
//   - node --test's spec reporter: "✖ test (1.2ms)" starts a block of
//     the lines indented deeper (its error); the totals ("ℹ tests 98",
//     "ℹ pass 68", "ℹ duration_ms 253.4", …) are dropped.
//   - A repr that pytest cut in the middle ("head...tail") holding a
//     workspace path loses the head after the root's first place in it
//     (the head may end inside the root's path) and the tail before the
//     root's last place: "from '<root>...<root>/x/__init__.py'>". How much
//     text the cut keeps around the path depends on the checkout's path.
//
// # Speed and memory
//
// Output is streamed: complete lines are normalized where they lie in the
// read buffer, only an unfinished line is copied, and at most 64 KiB of it
// is kept. The scanner classifies each byte with one table lookup, looks
// closer only at words with digits and at a few punctuation marks, and
// copies the text between replacements in one piece. Rules.Sum hashes
// the normalized text on a second goroutine, in pieces of about 64 KiB, while
// it normalizes the next; a Digest hashes on the caller's.
package signature
