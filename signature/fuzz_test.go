package signature

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzNormalize checks, for any input: normalizing never panics; the
// normalized text is a fixed point (normalizing it again changes nothing,
// so placeholders never match a rule); writing the input in pieces of any
// size gives the same signature; and the normalized text has no
// escape sequence, carriage return or run of blanks left in it.
func FuzzNormalize(f *testing.F) {
	addSeeds(f,
		"goroutine  17 [running]:\n\tpid\t4242\n",
		"1234\x1b[0m5678 0x\x1b[1m1f /tm\x1b[0mp/x\n",
		"2026-01-02T15:04:05Z 2026/01/02\t15:04:05 15:04:05,123 1m30s 0.5 s\r\n",
		"x.go:1:2 a.ts(3,4): 127.0.0.1:80 [::1]:443 :8080 localhost:1\n",
		"node12345 abcdefab12345 deadbeef-dead-beef-dead-beefdeadbeef\n",
		"/home/ci/scratch/a/b.go:3 /tmp/tmp.abc /var/folders/x/T/y.txt.\n",
		"\x1b]0;title\x07\x1b[2K\r  50%\r100%\n\n\n",
	)
	r := compile(f, "/home/ci/scratch")
	f.Fuzz(func(t *testing.T, in []byte, seed uint64) {
		out := explainClean(t, r, in)
		for _, line := range strings.Split(string(out), "\n") {
			if strings.Trim(line, " \t") != line {
				t.Fatalf("normalized line %q has leading or trailing blanks", line)
			}
		}

		// Placeholders can make a line longer; past maxLine a second pass
		// would cut it again, so the fixed point holds for lines up to a
		// fraction of it.
		if longestLine(in) <= maxLine/8 {
			var again bytes.Buffer
			if err := r.Explain(&again, bytes.NewReader(out)); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again.Bytes(), out) {
				t.Fatalf("normalizing is not idempotent:\ninput  %q\nonce   %q\ntwice  %q", in, out, again.Bytes())
			}
		}

		want := r.SumBytes(in)
		d := r.NewDigest()
		writeChunks(t, d, in, seed, 1+int(seed%17))
		if got := d.Sum(); got != want {
			t.Fatalf("signature depends on the pieces written: %s, want %s, input %q", got, want, in)
		}
	})
}

func longestLine(b []byte) int {
	longest := 0
	for len(b) > 0 {
		n := bytes.IndexByte(b, '\n')
		if n < 0 {
			n = len(b)
		}
		longest = max(longest, n)
		b = b[min(n+1, len(b)):]
	}
	return longest
}

// FuzzNormalizeV2 checks the rules v2 and v3 on any input: they never panic; the
// signature is the SHA-256 of the explained text; writing the input in
// pieces of any size, or through Sum's pipeline, gives the same signature;
// and the explained text has
// no escape sequence, carriage return, blank line inside a block or run
// of blanks.
func FuzzNormalizeV2(f *testing.F) {
	addSeeds(f,
		"=== RUN   TestA\n    a.go:1: x\n=== CONT  TestB\n--- PASS: TestA (0.00s)\n--- FAIL: TestB\n",
		"goroutine 1 [running]:\n\t/w/a.go:3 +0x1\n\nWARNING: DATA RACE\nGoroutine 3 (running) created at:\n==========\n",
		"goroutine 1 [running]:\na.f()\n\t/w/a.go:3 +0x1\nb.g()\n\t/usr/b.go:1\na.h()\n\t/w/a_test.go:9\n\nWARNING: DATA RACE\nRead at 0x1 by goroutine 3:\n  a.f()\n      /w/a.go:3\n==========\n",
		"___ t ___\nx = '/w/a/b...c /w/d'\n",
		"___ t ___\nE x\n=== 1 failed ===\n---- a stdout ----\nfailures:\n FAIL  a > b\n⎯⎯\nFAIL: t\nRan 1 test\n",
		"/w/node_modules/x/node_modules/y.js /w/x /wx /root/go/pkg/mod/a@v1/b.go #12 23| x\n",
		`{"Time":"x","Action":"output","Test":"T","Output":"--- FAIL: T\n    a\tb\n"}`+"\n"+`{"Action":"pass"}`+"\n",
	)
	sets := []*Rules{compileSet(f, V2, "/w"), compileSet(f, V3, "/w")}
	f.Fuzz(func(t *testing.T, in []byte, seed uint64) {
		for _, r := range sets {
			fuzzRules(t, r, in, seed)
		}
	})
}

// fuzzRules checks one rule set of FuzzNormalizeV2 on in.
func fuzzRules(t *testing.T, r *Rules, in []byte, seed uint64) {
	out := explainClean(t, r, in)
	if bytes.Contains(out, []byte("\n\n\n")) {
		t.Fatalf("explained text keeps blank lines: %q", out)
	}
	sum := sha256.Sum256(out)
	want := r.SumBytes(in)
	if got := hex.EncodeToString(sum[:]); got != want {
		t.Fatalf("signature %s is not the SHA-256 of the explained text (%s)", want, got)
	}
	d := r.NewDigest()
	writeChunks(t, d, in, seed, 1+int(seed%17))
	if got := d.Sum(); got != want {
		t.Fatalf("%s: signature depends on the pieces written: %s, want %s, input %q", r.Name(), got, want, in)
	}
	if got, err := r.sum(bytes.NewReader(in), 1+int(seed%3)); err != nil || got != want {
		t.Fatalf("%s: Sum's pipeline gives %s (%v), line by line %s, input %q", r.Name(), got, err, want, in)
	}
}

// addSeeds gives the fuzzer the captured outputs of testdata and the
// inputs extra.
func addSeeds(f *testing.F, extra ...string) {
	paths, err := filepath.Glob("testdata/*/*.txtar")
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range paths {
		a, b := readPair(f, p)
		f.Add(a, uint64(len(a)))
		f.Add(b, uint64(len(b)))
	}
	for _, s := range extra {
		f.Add([]byte(s), uint64(len(s)))
	}
}

// explainClean returns the explained text of in, failing if it keeps an
// escape sequence, a carriage return, a tab or a run of spaces.
func explainClean(t *testing.T, r *Rules, in []byte) []byte {
	var norm bytes.Buffer
	if err := r.Explain(&norm, bytes.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	out := norm.Bytes()
	if bytes.IndexByte(out, 0x1b) >= 0 || bytes.IndexByte(out, '\r') >= 0 ||
		bytes.Contains(out, []byte("  ")) || bytes.IndexByte(out, '\t') >= 0 {
		t.Fatalf("normalized text keeps escapes, carriage returns or blank runs: %q", out)
	}
	return out
}
