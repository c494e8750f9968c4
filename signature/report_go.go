package signature

// The rules V2 and V3 for go test's output (-v and -json among them),
// go build's and go vet's errors, Go stacks and race reports.

import (
	"bytes"
	"strconv"
	"unicode/utf8"
)

// jsonTest makes the lines that follow output of test name (from a go test
// -json event), whatever their indentation, unless they start a report's
// line of their own.
func (r *report) jsonTest(name, line []byte) {
	t := line[skipSpace(line, 0):]
	if len(name) == 0 {
		if r.kind == kTest && r.indent < 0 {
			r.end() // the package's own output
		}
		return
	}
	if bytes.HasPrefix(t, []byte("=== ")) || bytes.HasPrefix(t, []byte("--- ")) {
		return
	}
	if r.kind != kTest || !bytes.Equal(name, r.testName) {
		r.end()
		if !bytes.Equal(name, r.testName) {
			r.testPiece()
			r.testName = append(r.testName[:0], name...)
		}
	}
	r.kind, r.indent = kTest, -1
}

// testJSON reads a go test -json (test2json) event: the text of an output
// event and the test it is of, or nothing for the others, which tell what
// the output says. ok is false if b is not such an event.
func testJSON(dst, b []byte) (out, test []byte, ok bool) {
	if !bytes.HasPrefix(b, []byte(`{"Time":"`)) && !bytes.HasPrefix(b, []byte(`{"ImportPath":"`)) &&
		!bytes.HasPrefix(b, []byte(`{"Action":"`)) || b[len(b)-1] != '}' {
		return nil, nil, false
	}
	a := bytes.Index(b, []byte(`"Action":"`))
	if a < 0 {
		return nil, nil, false
	}
	act := b[a+len(`"Action":"`):]
	if !bytes.HasPrefix(act, []byte(`output"`)) && !bytes.HasPrefix(act, []byte(`build-output"`)) {
		return dst, nil, true
	}
	o := bytes.Index(b, []byte(`"Output":"`))
	if o < 0 {
		return dst, nil, true
	}
	s := o + len(`"Output":`)
	e := s + 1
	for e < len(b) && b[e] != '"' {
		if b[e] == '\\' {
			e++
		}
		e++
	}
	if e >= len(b) {
		return nil, nil, false
	}
	out, ok = unquoteJSON(dst, b[s+1:e])
	if !ok {
		text, err := strconv.Unquote(string(b[s : e+1]))
		if err != nil {
			return nil, nil, false
		}
		out = append(dst, text...)
	}
	if t := bytes.Index(b, []byte(`"Test":"`)); t >= 0 {
		test = b[t+len(`"Test":"`):]
		if q := bytes.IndexByte(test, '"'); q >= 0 {
			test = test[:q]
		}
	}
	return out, test, true
}

// unquoteJSON appends to dst the text of a quoted string's contents q,
// valid UTF-8 whose escapes are only \n, \t, \" and \\, as
// strconv.Unquote reads it, in place of its copies: the output of a line
// ends in \n. It reports false, with nothing appended, for any other q.
func unquoteJSON(dst, q []byte) ([]byte, bool) {
	if !utf8.Valid(q) {
		return dst, false
	}
	n := len(dst)
	for len(q) > 0 {
		k := bytes.IndexByte(q, '\\')
		if k < 0 || k+1 == len(q) {
			if k >= 0 {
				return dst[:n], false
			}
			dst = append(dst, q...)
			break
		}
		dst = append(dst, q[:k]...)
		switch q[k+1] {
		case 'n':
			dst = append(dst, '\n')
		case 't':
			dst = append(dst, '\t')
		case '"', '\\':
			dst = append(dst, q[k+1])
		default:
			return dst[:n], false
		}
		q = q[k+2:]
	}
	return dst, true
}

// The output of go -v's tests. A test's output comes in pieces between
// other tests' ("=== CONT name" before each); gathered by name, it is the
// same whatever the interleaving. The piece being read is testBuf, of the
// test testName; pieces of tests that have not finished wait in tests.
// When a test passes its output goes; when it fails it becomes a block.

// testLine adds a line of the current test's output.
func (r *report) testLine(t []byte) {
	if len(r.testBuf) == 0 {
		r.testBuf = append(append(append(r.testBuf, "=== "...), r.testName...), '\n')
	}
	r.testBuf = appendCapped(r.testBuf, t)
}

// testPiece puts the piece read so far aside, to wait for its test's end.
func (r *report) testPiece() {
	if len(r.testBuf) == 0 {
		return
	}
	defer func() { r.testBuf = r.testBuf[:0] }()
	if r.testBytes+len(r.testBuf) > maxTestBytes || len(r.tests) >= maxTests {
		r.keep(r.testBuf) // too many tests at once: the piece alone
		return
	}
	if prev, ok := r.tests[string(r.testName)]; ok {
		now := r.joinPiece(prev)
		r.testBytes += len(now) - len(prev)
		r.tests[string(r.testName)] = now
		return
	}
	if r.tests == nil {
		r.tests = map[string][]byte{}
	}
	r.tests[string(r.testName)] = append([]byte(nil), r.testBuf...)
	r.testBytes += len(r.testBuf)
}

// joinPiece adds the lines of the piece being read (without its "=== name"
// line) to the earlier pieces of its test in prev, within maxBlock.
func (r *report) joinPiece(prev []byte) []byte {
	lines := bytes.TrimSuffix(r.testBuf[len(r.testName)+len("=== \n"):], []byte{'\n'})
	return appendCapped(prev, lines)
}

// testEnd ends test name: its output is dropped if it passed, or becomes
// a block.
func (r *report) testEnd(name []byte, failed bool) {
	if bytes.Equal(name, r.testName) {
		if failed && len(r.testBuf) > 0 {
			if prev, ok := r.tests[string(name)]; ok {
				r.testBuf = r.joinPiece(prev)
				r.testBytes -= len(prev)
				delete(r.tests, string(name))
			}
			r.keep(r.testBuf)
		}
		r.testBuf = r.testBuf[:0]
	} else {
		r.testPiece()
	}
	if len(r.tests) == 0 {
		return
	}
	if prev, ok := r.tests[string(name)]; ok {
		if failed {
			r.keep(prev)
		}
		r.testBytes -= len(prev)
		delete(r.tests, string(name))
	}
}

// goFirst are the first bytes of the lines classifyGo knows.
const goFirst = "=-o?FPcgW#"

// classifyGo classifies go test's, go build's and go vet's lines (see
// classify).
func classifyGo(t, raw []byte, indent int) (act, kind int, ok bool) {
	r := raw[skipSpace(raw, 0):]
	switch t[0] {
	case '=':
		for _, p := range []string{"=== RUN ", "=== CONT ", "=== NAME ", "=== PAUSE "} {
			if hasWord(t, p) {
				return aTest, 0, true
			}
		}
	case '-':
		switch {
		case hasWord(t, "--- FAIL: "):
			return aStart, kIndent, true
		case hasWord(t, "--- PASS: "), hasWord(t, "--- SKIP: "):
			return aPass, 0, true
		}
	case 'o':
		if bytes.HasPrefix(r, []byte("ok  \t")) || bytes.HasPrefix(r, []byte("ok \t")) {
			return aDrop, 0, true // a package passed, in some time or cached
		}
	case '?':
		if bytes.HasPrefix(r, []byte("?   \t")) {
			return aDrop, 0, true
		}
	case 'F':
		switch {
		case string(t) == "FAIL":
			return aSeq, 0, true
		case bytes.HasPrefix(r, []byte("FAIL\t")):
			return aBlock, 0, true // a package failed; packages finish in any order
		}
	case 'P':
		if string(t) == "PASS" {
			return aDrop, 0, true
		}
	case 'c':
		if hasWord(t, "coverage: ") {
			return aDrop, 0, true
		}
	case 'g':
		if hasWord(t, "goroutine "+phN+" [") {
			return aStart, kBlank, true
		}
	case 'W':
		if string(t) == "WARNING: DATA RACE" {
			return aStart, kRace, true
		}
	case '#':
		if indent == 0 && hasWord(t, "# ") && goBuildTitle(t) {
			return aStart, kBlank, true // go build: the package whose errors follow
		}
	}
	return 0, 0, false
}

// Which Go line numbers the rules keep. Go prints no source text, so
// without them the same error at two places in a file is one failure;
// with them, an edit above the error makes another failure.
const (
	keepFrameLines = true // of the innermost frame in the workspace, in a goroutine or race report
	keepBuildLines = true // of a compiler or vet error
)

// goLine puts back the line number (not the column) of a Go position
// "x.go:<line>" in t, read from the raw line; workspace requires the
// position to be in the workspace root. It reports whether it found one.
func goLine(t, raw []byte, workspace bool) ([]byte, bool) {
	if workspace && !bytes.HasPrefix(t, []byte(phRoot+"/")) {
		return t, false
	}
	ph := bytes.Index(t, []byte(".go:"+phLine))
	if ph < 0 {
		return t, false
	}
	k := skipSpace(raw, 0)
	if workspace && !bytes.HasPrefix(raw[k:], []byte(phRoot+"/")) {
		return t, false
	}
	g := bytes.Index(raw[k:], []byte(".go:"))
	if g < 0 {
		return t, false
	}
	d := k + g + 4
	e := d
	for e < len(raw) && isDigit(raw[e]) {
		e++
	}
	if e == d {
		return t, false
	}
	out := make([]byte, 0, len(t)+8)
	out = append(out, t[:ph+4]...)
	out = append(out, raw[d:e]...)
	return append(out, t[ph+4+len(phLine):]...), true
}

// goroutineState drops the race detector's "(running)" or "(finished)"
// after "Goroutine N": the state at the time of the report is a matter of
// timing.
func goroutineState(t []byte) []byte {
	for _, s := range []string{" (running)", " (finished)"} {
		if k := bytes.Index(t, []byte(s)); k > 0 {
			return append(append([]byte(nil), t[:k]...), t[k+len(s):]...)
		}
	}
	return t
}

// testName returns the third word of t: the name in go's "=== RUN name"
// or "--- PASS: name (<dur>)".
func testName(t []byte) []byte {
	for range 2 {
		k := bytes.IndexByte(t, ' ')
		if k < 0 {
			return nil
		}
		t = t[skipSpace(t, k):]
	}
	if k := bytes.IndexByte(t, ' '); k >= 0 {
		t = t[:k]
	}
	return t
}

// goBuildTitle reports whether t, which starts with "# ", is go build's
// title of a package's errors: "# example.com/pkg" or "# example.com/pkg
// [example.com/pkg.test]".
func goBuildTitle(t []byte) bool {
	rest := t[2:]
	k := bytes.IndexByte(rest, ' ')
	if k < 0 {
		return len(rest) > 0
	}
	return k > 0 && rest[k+1] == '[' && rest[len(rest)-1] == ']' && bytes.IndexByte(rest[k+1:], ' ') < 0
}

// stackTail handles a line of a Go stack after its innermost frame in the
// workspace (rules V3). The frames between that one and the outermost in
// the workspace (usually the test) go: they are the path the program took
// to the failure, which a test of random operations, or a second caller,
// changes from run to run. So tail holds the lines since the last frame in
// the workspace seen, that frame's function line first.
func (r *report) stackTail(t []byte, ws bool) {
	if ws {
		n := copy(r.tail, r.tail[r.last:])
		r.tail = r.tail[:n]
	}
	r.last = len(r.tail)
	r.tail = appendCapped(r.tail, t)
}

// Bounds of a race report's functions kept (rules V3).
const maxRaceFuncs = 256

// addRace notes the functions a race report (rules V3) names: for each of
// its accesses ("Read at <hex> by goroutine <n>:", "Previous write at
// ..."), the innermost frame in the workspace, or, with none there, the
// first frame outside the runtime. The race detector reports a different
// set of races, in another order, from run to run, with other goroutines
// and lines; which functions race is what stays.
func (r *report) addRace(b []byte) {
	var prev, first, fn []byte
	access := false
	note := func() {
		if fn == nil {
			fn = first
		}
		if access && fn != nil && len(r.races) < maxRaceFuncs {
			if r.races == nil {
				r.races = map[string]bool{}
			}
			r.races[string(funcName(fn))] = true
		}
		prev, first, fn, access = nil, nil, nil, false
	}
	for len(b) > 0 {
		line, rest, _ := bytes.Cut(b, []byte{'\n'})
		b = rest
		switch {
		case len(line) == 0:
		case line[len(line)-1] == ':':
			note()
			access = bytes.Contains(line, []byte(" at "+phHex+" by "))
		case !access:
		case line[0] == '/' || line[0] == '<':
			if fn == nil && prev != nil && bytes.HasPrefix(line, []byte(phRoot+"/")) {
				fn = prev
			}
		default:
			prev = line
			if first == nil && !runtimeFrame(line) {
				first = line
			}
		}
	}
	note()
}

// runtimeFrame reports whether a stack's function line is in the Go
// runtime or the race detector's own code.
func runtimeFrame(t []byte) bool {
	for _, p := range []string{"runtime.", "internal/", "sync/atomic.", "sync.", "__tsan"} {
		if bytes.HasPrefix(t, []byte(p)) {
			return true
		}
	}
	return false
}

// funcName drops the arguments from a stack's function line, and the type
// arguments of a generic function or method, which name the instance the
// race was caught in: "pkg.(*T[go.shape.int]).m(<hex>, <hex>)" is
// "pkg.(*T[...]).m".
func funcName(t []byte) []byte {
	if len(t) > 0 && t[len(t)-1] == ')' {
		if k := bytes.LastIndexByte(t, '('); k > 0 {
			t = t[:k]
		}
	}
	k := bytes.IndexByte(t, '[')
	if k < 0 {
		return t
	}
	out := append([]byte(nil), t[:k]...)
	depth := 0
	for _, c := range t[k:] {
		switch {
		case c == '[':
			if depth == 0 {
				out = append(out, "[..."...)
			}
			depth++
		case c == ']' && depth > 0:
			depth--
			if depth == 0 {
				out = append(out, ']')
			}
		case depth == 0:
			out = append(out, c)
		}
	}
	return out
}

// raceTest reports whether a block is a Go test's that says the race
// detector found a race during the test (rules V3). Such a block goes when
// the output holds the race reports: which of the tests running at the
// time the detector catches the race in, and whatever else they printed
// under it, change with the schedule; the reports' functions tell the
// failure.
func raceTest(b []byte) bool {
	const said = "\ntesting.go:" + phLine + ": race detected during execution of test\n"
	return (bytes.HasPrefix(b, []byte("--- FAIL: ")) || bytes.HasPrefix(b, []byte("=== "))) &&
		bytes.Contains(b, []byte(said))
}

// parallel reports whether a block is a go -v test's that ran in parallel
// ("=== PAUSE name" was read for it or the test it is part of), rules V3.
// When a test binary panics, which parallel tests finished before it, and
// what they printed, is timing; the panic and its stack tell the failure.
func (r *report) parallel(b []byte) bool {
	if len(r.paused) == 0 {
		return false
	}
	line := b[:bytes.IndexByte(b, '\n')]
	var name []byte
	switch {
	case bytes.HasPrefix(line, []byte("--- FAIL: ")):
		name = testName(line)
	case bytes.HasPrefix(line, []byte("=== ")):
		name = line[len("=== "):]
	default:
		return false
	}
	for {
		if r.paused[string(name)] {
			return true
		}
		k := bytes.LastIndexByte(name, '/')
		if k < 0 {
			return false
		}
		name = name[:k]
	}
}

// goRun reports whether t is go -v's "=== RUN   name" (or PAUSE, CONT,
// NAME) as go prints it, of a test with a plain name.
func goRun(t []byte) bool {
	for _, p := range []string{"=== RUN   ", "=== PAUSE ", "=== CONT  ", "=== NAME  "} {
		if hasWord(t, p) {
			return plainTest(t[len(p):])
		}
	}
	return false
}

// plainTest reports whether a Go test's name is one the line rules leave
// as it is: Test, Example, Benchmark or Fuzz and then letters and '_' only
// (no digit, separator or subtest).
func plainTest(name []byte) bool {
	rest, ok := bytes.CutPrefix(name, []byte("Test"))
	for _, p := range []string{"Example", "Benchmark", "Fuzz"} {
		if !ok {
			rest, ok = bytes.CutPrefix(name, []byte(p))
		}
	}
	if !ok {
		return false
	}
	for _, c := range rest {
		if !isLetter(c) && c != '_' {
			return false
		}
	}
	return true
}
