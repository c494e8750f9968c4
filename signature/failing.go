package signature

import (
	"bytes"
	"slices"
)

// FailingTests returns the names of the tests a test run's output reports
// as failed, sorted and without repeats, for the runners whose report lines
// it knows: go test ("--- FAIL: TestX"), pytest ("FAILED path::test",
// "ERROR path::test", and -v's "path::test FAILED"), cargo test ("test x
// ... FAILED"), and jest or vitest ("✕ name", "× name", "FAIL file >
// name"). Known is false when no such runner's report was recognised, or
// the run stopped before its tests could say anything (a Go package that
// did not build): then the output says nothing about which tests fail, and
// a caller should compare failures by their signature instead. Names are
// read from lines with their terminal escapes removed.
func FailingTests(out []byte) (names []string, known bool) {
	var line []byte
	buildFailed := false
	for len(out) > 0 {
		raw := out
		if i := bytes.IndexByte(out, '\n'); i >= 0 {
			raw, out = out[:i], out[i+1:]
		} else {
			out = nil
		}
		line = StripANSI(line[:0], raw)
		if i := bytes.LastIndexByte(line, '\r'); i >= 0 {
			line = line[i+1:]
		}
		name, ok, fail := failingLine(bytes.TrimSpace(line))
		if ok {
			known = true
		}
		if fail == failBuild {
			buildFailed = true
		}
		if name != "" {
			names = append(names, name)
		}
	}
	if buildFailed {
		return nil, false
	}
	slices.Sort(names)
	return slices.Compact(names), known
}

const (
	failNone = iota
	failBuild
)

// failingLine reads one line: the failing test it names, whether it is a
// line of a known runner's report, and whether it says the tests could not
// run at all.
func failingLine(l []byte) (name string, known bool, fail int) {
	switch {
	case len(l) == 0:
		return "", false, failNone
	// go test
	case bytes.HasPrefix(l, []byte("--- FAIL: ")):
		return firstField(l[len("--- FAIL: "):]), true, failNone
	case bytes.HasPrefix(l, []byte("--- PASS: ")), bytes.HasPrefix(l, []byte("--- SKIP: ")):
		return "", true, failNone
	case bytes.HasPrefix(l, []byte("ok ")), bytes.HasPrefix(l, []byte("ok\t")):
		return "", bytes.Contains(l, []byte("\t")), failNone
	case bytes.HasPrefix(l, []byte("FAIL\t")):
		if bytes.HasSuffix(l, []byte("[build failed]")) || bytes.HasSuffix(l, []byte("[setup failed]")) {
			return "", true, failBuild
		}
		return "", true, failNone
	// pytest
	case bytes.HasPrefix(l, []byte("FAILED ")), bytes.HasPrefix(l, []byte("ERROR ")) && bytes.Contains(l, []byte("::")):
		rest := l[bytes.IndexByte(l, ' ')+1:]
		if i := bytes.Index(rest, []byte(" - ")); i >= 0 {
			rest = rest[:i]
		}
		return string(bytes.TrimSpace(rest)), true, failNone
	case bytes.Contains(l, []byte("::")) && (bytes.Contains(l, []byte(" FAILED")) || bytes.Contains(l, []byte(" ERROR"))) && !bytes.HasPrefix(l, []byte("test ")):
		return firstField(l), true, failNone
	case bytes.HasPrefix(l, []byte("===")) && (bytes.Contains(l, []byte(" passed")) || bytes.Contains(l, []byte(" failed")) || bytes.Contains(l, []byte("short test summary"))):
		return "", true, failNone
	// cargo test
	case bytes.HasPrefix(l, []byte("test ")) && bytes.HasSuffix(l, []byte(" ... FAILED")):
		return string(bytes.TrimSuffix(l[len("test "):], []byte(" ... FAILED"))), true, failNone
	case bytes.HasPrefix(l, []byte("test result: ")):
		return "", true, failNone
	case bytes.HasPrefix(l, []byte("error: could not compile")):
		return "", true, failBuild
	// jest, vitest
	case bytes.HasPrefix(l, []byte("✕ ")), bytes.HasPrefix(l, []byte("× ")):
		rest := l[bytes.IndexByte(l, ' ')+1:]
		return string(trimDuration(rest)), true, failNone
	case bytes.HasPrefix(l, []byte("FAIL ")) && bytes.Contains(l, []byte(" > ")):
		return string(trimDuration(bytes.TrimSpace(l[len("FAIL "):]))), true, failNone
	case bytes.HasPrefix(l, []byte("Tests:")), bytes.HasPrefix(l, []byte("Tests ")) && bytes.Contains(l, []byte("(")):
		return "", true, failNone
	}
	return "", false, failNone
}

// firstField returns the text before the first blank.
func firstField(b []byte) string {
	if i := bytes.IndexAny(b, " \t"); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// trimDuration drops a trailing "(12 ms)" or "12ms" that jest and vitest
// print after a test's name.
func trimDuration(b []byte) []byte {
	b = bytes.TrimSpace(b)
	if bytes.HasSuffix(b, []byte(")")) {
		if i := bytes.LastIndexByte(b, '('); i > 0 {
			inner := b[i+1 : len(b)-1]
			if len(inner) > 0 && inner[0] >= '0' && inner[0] <= '9' {
				b = bytes.TrimSpace(b[:i])
			}
		}
	}
	if i := bytes.LastIndexByte(b, ' '); i > 0 {
		last := b[i+1:]
		if bytes.HasSuffix(last, []byte("ms")) && len(last) > 2 && last[0] >= '0' && last[0] <= '9' {
			b = bytes.TrimSpace(b[:i])
		}
	}
	return b
}
