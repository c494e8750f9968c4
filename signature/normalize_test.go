package signature

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

// compile returns the v1 rules with TMPDIR set to tmpdir.
func compile(t testing.TB, tmpdir string, extra ...string) *Rules {
	t.Helper()
	r, err := Compile(Options{Rules: V1, Extra: extra, Getenv: func(k string) string {
		if k == "TMPDIR" {
			return tmpdir
		}
		return ""
	}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// compileSet compiles the rule set name with the workspace root.
func compileSet(t testing.TB, name, root string) *Rules {
	t.Helper()
	r, err := Compile(Options{Rules: name, Root: root, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func explain(t testing.TB, r *Rules, in string) string {
	t.Helper()
	var b strings.Builder
	if err := r.Explain(&b, strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestRulesV1 pins every normalization rule, one line of real-looking output
// each, and what the rules must keep.
func TestRulesV1(t *testing.T) {
	r := compile(t, "/home/ci/scratch")
	for _, tc := range []struct{ name, in, want string }{
		// Timestamps.
		{"rfc3339", "at 2026-01-02T15:04:05Z done", "at <ts> done"},
		{"rfc3339 nano offset", "2026-01-02T15:04:05.123456789+01:00 start", "<ts> start"},
		{"rfc3339 short offset", "t=2026-01-02T15:04:05-0700", "t=<ts>"},
		{"log package", "2026/01/02 15:04:05 server started", "<ts> server started"},
		{"log package micro", "2026/01/02 15:04:05.123456 x", "<ts> x"},
		{"date and clock spaced", "2026-01-02  15:04:05 x", "<ts> x"},
		{"go time string", "started 2026-11-22 07:24:09.463892447 +0000 UTC m=+0.000218897 ok", "started <ts> ok"},
		{"python logging", "2026-01-02 15:04:05,123 - app - ERROR - boom", "<ts> - app - ERROR - boom"},
		{"date alone", "built on 2026-01-02.", "built on <ts>."},
		{"clock", "[15:04:05] step 3", "[<ts>] step 3"},
		{"clock fraction", "15:04:05.000123 tick", "<ts> tick"},
		{"short clock kept", "ratio 3:04 and 12:30", "ratio 3:04 and 12:30"},
		{"inside a word kept", "2026-01-02x 15:04:05Zulu 15:04:051", "2026-01-02x 15:04:05Zulu 15:04:051"},
		{"shorter form when a word follows", "15:04:05.0x1f 15:04:05+07:00abc", "<ts>.<hex> <ts>+07:00abc"},

		// Durations.
		{"go test", "--- FAIL: TestAdd (0.03s)", "--- FAIL: TestAdd (<dur>)"},
		{"go test package", "FAIL\texample.com/m\t0.412s", "FAIL example.com/m <dur>"},
		{"ms", "took 12ms", "took <dur>"},
		{"micro", "took 1.5µs and 3μs and 7us and 9ns", "took <dur> and <dur> and <dur> and <dur>"},
		{"compound", "retry in 1m30s, then 2h0m0.5s", "retry in <dur>, then <dur>"},
		{"spaced jest", "✓ adds (5 ms)", "✓ adds (<dur>)"},
		{"spaced seconds", "Time: 0.512 s, estimated 1 s", "Time: <dur>, estimated <dur>"},
		{"words", "waited 3 seconds, 2 minutes, 1 hour, 5sec, 10min", "waited <dur>, <dur>, <dur>, <dur>, <dur>"},
		{"goroutine wait", "goroutine 7 [chan receive, 2 minutes]:", "goroutine <n> [chan receive, <dur>]:"},
		{"not after dot", "v1.2s", "v1.2s"},
		{"not a unit", "3 items, 4 tests, 5 h, 6 m, 7sx", "3 items, 4 tests, 5 h, 6 m, 7sx"},
		{"unfinished compound", "1m30 left", "1m30 left"},

		// UUIDs and hex.
		{"uuid", "request 3f2a9c1b-1234-4abc-8def-0123456789ab failed", "request <uuid> failed"},
		{"uuid upper letters first", "id=DEADBEEF-0000-4ABC-8DEF-0123456789AB.", "id=<uuid>."},
		{"0x", "main.f(0xc000123456, 0x3)", "main.f(<hex>, <hex>)"},
		{"offset", "\t/src/x.go:42 +0x1d", "/src/x.go:<line> +<hex>"},
		{"0x upper", "code=0XFF", "code=<hex>"},
		{"bare hex", "commit 3f2a9c1d8e7b6a5f, blob deadbeef, sha256:0123456789abcdef0123", "commit <hex>, blob <hex>, sha256:<hex>"},
		{"short hex kept", "commit 3f2a9c1 face cafe123", "commit 3f2a9c1 face cafe123"},
		{"long hex word", "cafe1234567 ab1c23456", "<hex> <hex>"},
		{"hex in name", "target/debug/deps/mycrate-1a2b3c4d5e6f7a8b", "target/debug/deps/mycrate-<hex>"},
		{"not hex word", "deadbeefs abcdefgh", "deadbeefs abcdefgh"},

		// Temporary paths.
		{"tmp dir", "cd /tmp/tmp.Xy12AbCdEf && make", "cd <tmp> && make"},
		{"tmp file kept", "open /tmp/TestWrite123456/001/config.json: no such file", "open <tmp>/config.json: no such file"},
		{"go build dir", "/tmp/go-build3409781/b001/failing.test", "<tmp>/failing.test"},
		{"go build dir only", "WORK=/tmp/go-build3409781", "WORK=<tmp>"},
		{"python tmp name", "/tmp/tmpk2j3h4ab.py", "<tmp>"},
		{"file with line", "\t/tmp/TestX1/001/gomod/add_test.go:36 +0x11f", "<tmp>/add_test.go:<line> +<hex>"},
		{"quoted", `File "/tmp/pytest-of-ci/pytest-7/test_a0/test_a.py", line 12, in test_a`, `File "<tmp>/test_a.py", line <line>, in test_a`},
		{"sentence end", "wrote /tmp/x/out.txt.", "wrote <tmp>/out.txt."},
		{"TMPDIR", "saved to /home/ci/scratch/run-1/report.html", "saved to <tmp>/report.html"},
		{"macos", "/var/folders/xy/abc123_def/T/TestX987/001", "<tmp>"},
		{"macos private", "/private/var/folders/xy/abc/T/go-build1/b001/x.test", "<tmp>/x.test"},
		{"var tmp", "/var/tmp/cache-12", "<tmp>"},
		{"not inside a path", "/home/u/tmp/x /usr/tmp/y", "/home/u/tmp/x /usr/tmp/y"},
		{"tmp itself kept", "cd /tmp && ls /tmp/", "cd /tmp && ls /tmp/"},
		{"file url", "file:///tmp/x/y.html", "file://<tmp>/y.html"},
		{"random file number", "/tmp/x/upload-1234567.json", "<tmp>/upload-<n>.json"},

		// Line numbers.
		{"go", "    add_test.go:29: Add(1, 2) = 3, want 4", "add_test.go:<line>: Add(1, 2) = 3, want 4"},
		{"column", "src/lib.rs:18:9: error", "src/lib.rs:<line>: error"},
		{"jest frame", "at Object.<anonymous> (src/sum.test.js:4:21)", "at Object.<anonymous> (src/sum.test.js:<line>)"},
		{"tsc", "src/index.ts(3,7): error TS2322: Type 'string'", "src/index.ts(<line>): error TS2322: Type 'string'"},
		{"call kept", "expect(sum(1, 2)).toBe(4); f.x(3,4) f.y(3,4)z", "expect(sum(1, 2)).toBe(4); f.x(3,4) f.y(3,4)z"},
		{"python", `  File "app/main.py", line 42, in main`, `File "app/main.py", line <line>, in main`},
		{"python other line kept", "error on line 42", "error on line 42"},
		{"java", "at com.x.Foo.bar(Foo.java:42)", "at com.x.Foo.bar(Foo.java:<line>)"},
		{"not a file", "key:42 a.1:2 x. go:3 x.go:12abc", "key:42 a.1:2 x. go:3 x.go:12abc"},
		{"column inside a word", "x.go:12:3abc", "x.go:<line>:3abc"},

		// Goroutines, pids, threads.
		{"goroutine", "goroutine 17 [running]:", "goroutine <n> [running]:"},
		{"created by", "created by main.main in goroutine 1", "created by main.main in goroutine <n>"},
		{"race", "Goroutine 7 (running) created at:", "Goroutine <n> (running) created at:"},
		{"pid", "pid 4242 exited; PID=17; pid: 3", "pid <n> exited; PID=<n>; pid: <n>"},
		{"rust thread", "thread 'tests::adds' (4829) panicked at src/lib.rs:18:9:", "thread 'tests::adds' (<n>) panicked at src/lib.rs:<line>:"},
		{"pid word kept", "pidfile x pid", "pidfile x pid"},

		// Ports.
		{"ipv4", "dial tcp 127.0.0.1:38211: connection refused", "dial tcp 127.0.0.1:<port>: connection refused"},
		{"localhost", "GET http://localhost:8080/x", "GET http://localhost:<port>/x"},
		{"ipv6", "listen [::1]:443 and [2001:db8::1]:8443", "listen [::1]:<port> and [2001:db8::1]:<port>"},
		{"bare", "listening on :38211", "listening on :<port>"},
		{"not a host", "redis:6379 a1:22 10.0.0.1234:80", "redis:6379 a1:22 10.0.0.1234:80"},

		// Long numbers.
		{"decimal", "read 1234567 bytes, seed 12345, 1234 kept", "read <n> bytes, seed <n>, 1234 kept"},
		{"unix time", "ts=1767366245123", "ts=<n>"},
		{"fraction", "0.30000000000000004", "0.<n>"},
		{"name suffix", "worker12345 TestFoo123456 xy1z23456", "worker<n> TestFoo<n> xy1z23456"},

		// Kept: what tells failures apart.
		{"exit status", "exit status 1", "exit status 1"},
		{"exit status 2", "exit status 2", "exit status 2"},
		{"http", "GET /api: 404 Not Found; HTTP/1.1 500", "GET /api: 404 Not Found; HTTP/1.1 500"},
		{"small numbers", "expected 3, got 4 [5] with length 3", "expected 3, got 4 [5] with length 3"},
		{"percent", "[ 50%] test_x.py::test_a PASSED", "[ 50%] test_x.py::test_a PASSED"},
		{"error codes", "error TS2322 E0308 ECONNREFUSED", "error TS2322 E0308 ECONNREFUSED"},

		// Layout.
		{"spaces", "=== RUN   TestAdd\t\tx  y", "=== RUN TestAdd x y"},
		{"leading and trailing", " \t  indented line  \t", "indented line"},
		{"crlf", "one\r\ntwo\r\n", "one\ntwo\n"},
		{"progress", "  10%\r  50%\r100% done\n", "100% done\n"},
		{"progress crlf", "10%\r100%\r\n", "100%\n"},
		{"crcr lf", "done\r\r\n", "done\n"},
		{"ansi", "\x1b[31m--- FAIL\x1b[0m: \x1b[1mTestX\x1b[22m", "--- FAIL: TestX"},
		{"ansi splits a number", "\x1b[2m1234\x1b[0m5678", "<n>"},
		{"osc hyperlink", "\x1b]8;;http://x/y\x1b\\link\x1b]8;;\x1b\\ and title\x1b]0;t\x07", "link and title"},
		{"cursor", "\x1b[2K\x1b[1Gok \x1b(B\x1b7x", "ok x"},
		{"lone esc", "a\x1b\x01b \x1bé \x1b", "a\x01b é"},
		{"blank lines inside kept", "a\n\n \nb\n", "a\n\n\nb\n"},
		{"blank lines at end dropped", "a\n\n\n  \n", "a\n"},
		{"final newline added", "a\nb", "a\nb\n"},
		{"package doc example",
			"2026/01/02 15:04:05 --- FAIL: TestDial (0.03s)\n" +
				"    dial_test.go:42: dial tcp 127.0.0.1:38211: connection refused (pid 4242)\n" +
				"goroutine 17 [running]:\n" +
				"main.dial(0xc000123456, 0x3)\n" +
				"\t/tmp/go-build123/b001/dial.go:17 +0x1d\n",
			"<ts> --- FAIL: TestDial (<dur>)\n" +
				"dial_test.go:<line>: dial tcp 127.0.0.1:<port>: connection refused (pid <n>)\n" +
				"goroutine <n> [running]:\n" +
				"main.dial(<hex>, <hex>)\n" +
				"<tmp>/dial.go:<line> +<hex>\n"},
		{"empty", "", ""},
		{"only blank", "\n\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.want
			if !strings.Contains(tc.in, "\n") && want != "" {
				want += "\n"
			}
			if got := explain(t, r, tc.in); got != want {
				t.Errorf("normalize(%q)\n got %q\nwant %q", tc.in, got, want)
			}
		})
	}
}

// TestSignatureIsHashOfExplain proves the promise of --explain: its output's
// sha256sum is the signature.
func TestSignatureIsHashOfExplain(t *testing.T) {
	r := compile(t, "")
	in := "2026/01/02 15:04:05 \x1b[31mFAIL\x1b[0m TestX (0.03s)\r\nat /tmp/x/a.go:12\n"
	sum := sha256.Sum256([]byte(explain(t, r, in)))
	if got, want := r.SumBytes([]byte(in)), hex.EncodeToString(sum[:]); got != want {
		t.Errorf("SumBytes = %s, sha256 of Explain = %s", got, want)
	}
	got, err := r.Sum(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if want := hex.EncodeToString(sum[:]); got != want {
		t.Errorf("Sum = %s, sha256 of Explain = %s", got, want)
	}
}

func TestExtraPatterns(t *testing.T) {
	r := compile(t, "", `token=[A-Za-z0-9]+`, `(?i)session [a-z]+`, `^WARN .*$`)
	for _, tc := range []struct{ in, want string }{
		{"auth token=abc123XYZ failed", "auth <redacted> failed\n"},
		{"no match here", "no match here\n"},
		{"Session alpha and SESSION beta", "<redacted> and <redacted>\n"},
		{"WARN anything at all", "<redacted>\n"},
		{"not WARN at start", "not WARN at start\n"},
		// Patterns see the line as printed, before the built-in rules: the
		// number is still there for them to match.
		{"token=12345 at 2026-01-02T15:04:05Z", "<redacted> at <ts>\n"},
		// Colour codes are gone before patterns run.
		{"token=\x1b[1mabc\x1b[0m", "<redacted>\n"},
	} {
		if got := explain(t, r, tc.in); got != tc.want {
			t.Errorf("normalize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRequiredLiteral(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{`token=[A-Za-z0-9]+`, "token="},
		{`(?:session|request) id \d+`, " id "},
		{`(abc)+x`, "abc"},
		{`a{2,}`, "a"},
		{`(?i)token`, ""},
		{`a|b`, ""},
		{`x*`, ""},
		{`[0-9]+`, ""},
	} {
		if got := string(requiredLiteral(tc.expr)); got != tc.want {
			t.Errorf("requiredLiteral(%q) = %q, want %q", tc.expr, got, tc.want)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Rules: "v4"}, `unknown signature rule set "v4" (known: "v3", "v2", "v1", "off")`},
		{Options{Extra: []string{`ok`, `(unclosed`}}, "extra pattern \"(unclosed\": error parsing regexp: missing closing ): `(unclosed`"},
		{Options{Extra: []string{`x*`}}, `extra pattern "x*" matches empty text`},
		{Options{Rules: Off, Extra: []string{`(`}}, "extra pattern \"(\": error parsing regexp: missing closing ): `(`"},
	} {
		_, err := Compile(tc.o)
		if err == nil {
			t.Errorf("Compile(%+v) succeeded, want error %q", tc.o, tc.want)
			continue
		}
		if got := err.Error(); got != tc.want {
			t.Errorf("Compile(%+v) error\n got %s\nwant %s", tc.o, got, tc.want)
		}
	}
}

// Node prints its process ID before every process warning, and each test
// file runs in a process of its own: V3 masks it, long or short, and only
// there; V2 masked long numbers anyway and is left as it was.
func TestNodeProcessID(t *testing.T) {
	v3, v2 := compileSet(t, V3, ""), compileSet(t, V2, "")
	for _, tc := range []struct{ in, v3, v2 string }{
		{"# (node:16148) [CODE] TestDeprecation: Hello world", "# (node:<n>) [CODE] TestDeprecation: Hello world", "# (node:<n>) [CODE] TestDeprecation: Hello world"},
		{"(node:912) Warning: a", "(node:<n>) Warning: a", "(node:912) Warning: a"},
		{"(nodes:912) x node:912) (node:912x)", "(nodes:912) x node:912) (node:912x)", "(nodes:912) x node:912) (node:912x)"},
	} {
		if got := strings.TrimSpace(explain(t, v3, tc.in+"\n")); got != tc.v3 {
			t.Errorf("V3 %q: %q; want %q", tc.in, got, tc.v3)
		}
		if got := strings.TrimSpace(explain(t, v2, tc.in+"\n")); got != tc.v2 {
			t.Errorf("V2 %q: %q; want %q", tc.in, got, tc.v2)
		}
	}
}
