package signature

// The rules V2 and V3 for test reports: the failure block being read and
// the order lines are looked at in. The blocks kept, and their sorting,
// are in report_blocks.go; what each runner's lines are lives in
// report_<runner>.go: report_go.go,
// report_python.go (pytest, unittest), report_cargo.go (cargo, rustc),
// report_javascript.go (vitest, jest, node --test, TAP, eslint, tsc) and
// report_java.go (maven, gradle).

import (
	"bytes"
)

// Bounds of what the rules V2 keep to sort: each failure block is cut to
// its first maxBlock bytes, and of all blocks at most maxBlocks are kept,
// maxBlockBytes in all (see block). Which blocks those are depends on the
// blocks, not on the order they came in.
const (
	maxBlock      = 16 << 10
	maxBlocks     = 1024
	maxBlockBytes = 2 << 20
	maxTests      = 1024    // tests whose streamed output is being gathered
	maxTestBytes  = 1 << 20 // and their output
)

// Kinds of failure block, by what ends them.
const (
	kNone    = iota
	kIndent  // go's --- FAIL, jest's ●, eslint's file: lines indented deeper
	kPass    // go's --- PASS and --- SKIP: dropped with their indented lines
	kTest    // go -v's "=== RUN name": the test's indented output
	kBlank   // a goroutine, a compiler diagnostic, "# pkg": up to a blank line
	kRace    // the race detector's report: up to its closing rule
	kPytest  // pytest's "___ test ___": up to the next such line or section
	kPyDrop  // a pytest section of no failure (warnings summary): dropped
	kCargo   // cargo's "---- test stdout ----": up to the next, or "failures:"
	kVitest  // vitest's "FAIL file > test": up to the next, or its rule
	kUnittst // unittest's "FAIL: test": up to its closing rule or "Ran"
)

// report is the state of the rules V2 between lines: the failure block
// being read, the blocks kept to be sorted, and the output of go -v's
// tests by name.
type report struct {
	kind   int
	indent int    // the indentation of the block's first line
	frame  bool   // a line number of a frame in the workspace is kept already
	build  bool   // the block is go build's "# pkg": its errors keep their lines
	stack  bool   // the block is a goroutine's stack
	cur    []byte // the block being read; its buffer is reused

	blocks blockHeap
	cut    *block // the first in order of the blocks given up, if any
	size   int    // bytes in blocks

	tests     map[string][]byte // output of tests not finished, by name
	testBytes int               // in tests
	testName  []byte            // the test whose output follows
	jsonName  []byte            // buffer of a go test -json event's test name
	testBuf   []byte            // its output since its name was given

	inOrder bool // a line was kept in order: the blocks follow a blank line

	json   []byte // the output of a go test -json event
	inJSON bool   // its lines are being read

	panicked bool // a Go test binary panicked

	// The rules V3.
	v3    bool
	root  []byte          // the workspace root
	inner bool            // the stack being read has shown its innermost frame in the workspace
	tail  []byte          // the stack's lines since, from its last frame in the workspace
	last  int             // where the last line in tail starts
	races map[string]bool // the functions race reports name
	raced bool            // a race report was read
	// captured is where a pytest block's first captured-output section
	// starts, plus one; 0: none.
	captured int
	// paused holds go -v's parallel tests ("=== PAUSE name").
	paused map[string]bool

	// slowTests turns quick's way for go -v's lines of tests off, so that
	// a test can compare it with the rules' way.
	slowTests bool
}

// blanks returns line with its no-break spaces (U+00A0) as spaces: some
// tools print either at random (go-cmp's diffs, to keep tests from
// depending on their exact output).
func (lb *lineBufs) blanks(line []byte) []byte {
	if !bytes.Contains(line, []byte{0xc2, 0xa0}) {
		return line
	}
	out := lb.nbsp[:0]
	for i := 0; i < len(line); i++ {
		if line[i] == 0xc2 && i+1 < len(line) && line[i+1] == 0xa0 {
			out = append(out, ' ')
			i++
			continue
		}
		out = append(out, line[i])
	}
	lb.nbsp = out
	return out
}

// end finishes the block being read.
func (r *report) end() {
	switch {
	case r.v3 && r.kind == kRace:
		r.addRace(r.cur)
		r.raced = true
	case r.kind != kNone && r.kind != kPass && r.kind != kPyDrop && r.kind != kTest:
		if r.captured > 0 && bytes.Contains(r.cur[:r.captured-1], []byte("Falsifying example:")) {
			// A property-based test (hypothesis): what it printed is the
			// log of a random search; the example it found tells the
			// failure.
			r.cur = r.cur[:r.captured-1]
		}
		if len(r.tail) > 0 {
			r.cur = appendCapped(r.cur, bytes.TrimSuffix(r.tail, []byte{'\n'}))
		}
		r.keep(r.cur)
	}
	r.kind, r.cur, r.frame, r.build, r.stack = kNone, r.cur[:0], false, false, false
	r.inner, r.tail, r.captured = false, r.tail[:0], 0
}

// start begins a block whose first line is t.
func (r *report) start(kind, indent int, t []byte) {
	r.end()
	r.kind, r.indent = kind, indent
	r.build = kind == kBlank && t[0] == '#'
	r.stack = kind == kBlank && t[0] == 'g'
	if kind != kPass && kind != kPyDrop {
		r.cur = appendCapped(r.cur[:0], t)
	}
}

// Line actions.
const (
	aSeq   = iota // keep, in order
	aDrop         // drop
	aBlock        // a one-line block
	aStart        // start a block of the given kind
	aTest         // go -v: the following lines are this test's output
	aPass         // go: a test passed; drop it and its output
	aSkip         // drop a line and the lines indented deeper (TAP's "ok 1 - x")
)

// reportLine handles one normalized line t of the rules V2 (no newline;
// empty for a blank line), given the line before the line rules (raw,
// after the workspace paths) and its indentation. It returns true if t
// stays where it is, in order; otherwise it went into a block or was
// dropped. t is the caller's buffer, which the rules may change.
func (r *report) reportLine(t, raw []byte, indent int) (bool, []byte) {
	if len(t) == 0 {
		if r.kind == kBlank {
			r.end()
		}
		return false, t
	}
	switch c := t[0]; {
	case c == '>' || isDigit(c):
		t = excerpt(t)
	case c == 'd' && hasWord(t, "duration_ms: "):
		t = []byte("duration_ms: " + phDur) // TAP (node --test): a test's time
	case c >= 0xc3 && c <= 0xe2:
		t = trimDur(t)
	case c == 'S' && hasWord(t, "SyntaxError: "):
		t = syntaxPosition(t)
	case c == 'p' && indent == 0 && hasWord(t, "panic: "):
		r.panicked = true
	case c == 'a' && r.v3 && hasWord(t, "at ") && bytes.HasSuffix(t, []byte("...")):
		t = cutFrame(t)
	}

	// Blocks that end at a line of their own come first: what they hold
	// can look like anything.
	switch r.kind {
	case kRace, kPytest, kPyDrop, kCargo, kVitest, kUnittst:
		if r.kind == kUnittst && t[0] == '-' && isRule(t) {
			return false, t // between a test's title and its traceback
		}
		if !r.ends(t) {
			if r.v3 && r.kind == kPytest {
				t = r.cutRepr(t)
			}
			r.body(t, raw)
			return false, t
		}
		r.end()
	case kBlank:
		// A stack's frames name a function or a file; what ends it
		// without a blank line ("FAIL pkg") starts otherwise.
		if c := t[0]; r.stack && (c-'a' < 26 && c != 'o' || c == '/' || c == '<') {
			r.body(t, raw)
			return false, t
		}
	}

	if r.v3 {
		if act, kind, ok := classifyV3(t); ok {
			return r.act(act, kind, t, raw, indent)
		}
	}
	act, kind := classify(t, raw, indent)
	return r.act(act, kind, t, raw, indent)
}

// act does what classify decided for line t.
func (r *report) act(act, kind int, t, raw []byte, indent int) (bool, []byte) {
	switch act {
	case aSeq:
		switch r.kind {
		case kIndent, kPass, kTest:
			if indent > r.indent {
				r.body(t, raw)
				return false, t
			}
			r.end()
		case kBlank:
			r.body(t, raw)
			return false, t
		}
		return true, cargoResult(t)
	case aDrop:
		if r.kind == kBlank || r.kind == kIndent && indent > r.indent {
			return false, t // a line of no failure inside a block
		}
		r.end()
		return false, t
	case aBlock:
		r.end()
		r.cur = appendCapped(r.cur[:0], trimDur(t))
		r.keep(r.cur)
	case aStart:
		r.start(kind, indent, t)
		if kind == kIndent && t[0] == '-' {
			r.testEnd(testName(t), true)
		}
	case aTest:
		r.end()
		r.kind, r.indent = kTest, indent
		if r.v3 && hasWord(t, "=== PAUSE ") && len(r.paused) < maxTests {
			if r.paused == nil {
				r.paused = map[string]bool{}
			}
			r.paused[string(testName(t))] = true
		}
		if name := testName(t); !bytes.Equal(name, r.testName) {
			r.testPiece()
			r.testName = append(r.testName[:0], name...)
		}
	case aPass:
		r.start(kPass, indent, nil)
		r.testEnd(testName(t), false)
	case aSkip:
		r.start(kPass, indent, nil)
	}
	return false, t
}

// quick handles, before the line rules, the lines of passing tests and
// progress that most long reports are made of, whose fate the raw line
// tells (the line rules would change none of the text looked at). It
// reports whether it handled b.
func (r *report) quick(b []byte) bool {
	if !r.quickNow() {
		return false
	}
	act, t, indent := quickAct(b, r.slowTests)
	if act == aSeq {
		return false
	}
	r.act(act, 0, t, b, indent)
	return true
}

// quickNow reports whether quick's way is open: not inside a block that
// ends at a line of its own, where a line can look like anything.
func (r *report) quickNow() bool {
	switch r.kind {
	case kRace, kPytest, kPyDrop, kCargo, kVitest, kUnittst:
		return false
	}
	return true
}

// quickAct is what quick would do with b outside the blocks that end at a
// line of their own: aSeq if b takes the line rules' way, else the action
// and the line without its indentation. It reads nothing but b, so that
// it can be asked ahead of the report rules (see pipeline).
func quickAct(b []byte, slowTests bool) (act int, t []byte, indent int) {
	for indent < len(b) && b[indent] == ' ' {
		indent++
	}
	t = b[indent:]
	if len(t) < 6 {
		return aSeq, nil, 0
	}
	// go -v's "=== RUN name" and "--- PASS: name" lines are handled here
	// only when the line rules leave the name as it is (see plainTest): a
	// test's name is matched with its "--- FAIL: name" line, which the
	// line rules make, so a name they change takes the rules' way.
	act = aSeq
	switch t[0] {
	case 'o':
		if hasWord(t, "ok  \t") {
			act = aDrop
		}
	case '=':
		if !slowTests && goRun(t) {
			act = aTest
		}
	case '-':
		if !slowTests && (hasWord(t, "--- PASS: ") || hasWord(t, "--- SKIP: ")) && plainTest(testName(t)) {
			act = aPass
		}
	}
	if act == aSeq && t[len(t)-1] == ']' && isPercent(t) {
		act = aDrop
	}
	if act == aSeq || bytes.IndexByte(t, '\r') >= 0 || bytes.IndexByte(t, 0x1b) >= 0 {
		return aSeq, nil, 0
	}
	return act, t, indent
}

// body adds a line to the block being read.
func (r *report) body(t, raw []byte) {
	switch r.kind {
	case kPass, kPyDrop:
		return
	case kTest:
		r.testLine(t)
		return
	case kPytest:
		if r.v3 && r.captured == 0 && t[0] == '-' && bytes.Contains(t, []byte(" Captured ")) {
			r.captured = len(r.cur) + 1
		}
	case kBlank, kRace:
		if r.build {
			if keepBuildLines {
				t, _ = goLine(t, raw, false)
			}
			break
		}
		if r.v3 && r.kind == kRace {
			break // addRace reads its function names, not their lines or goroutines
		}
		ws := t[0] == '<' && bytes.HasPrefix(t, []byte(phRoot+"/"))
		if r.v3 && r.stack && r.inner {
			r.stackTail(t, ws)
			return
		}
		r.inner = r.inner || ws
		if !r.frame && keepFrameLines {
			t, r.frame = goLine(t, raw, true)
		}
		if t[0] == 'G' && bytes.HasPrefix(t, []byte("Goroutine ")) {
			t = goroutineState(t)
		}
	}
	r.cur = appendCapped(r.cur, t)
}

// ends reports whether t ends a block that ends at a line of its own.
func (r *report) ends(t []byte) bool {
	switch r.kind {
	case kRace:
		return isRule(t)
	case kUnittst:
		return t[0] == '=' && isRule(t) || bytes.HasPrefix(t, []byte("Ran "))
	case kPytest:
		return t[0] == '=' || pytestTitle(t)
	case kPyDrop:
		return t[0] == '='
	case kCargo:
		return cargoTitle(t) || string(t) == "failures:" || bytes.HasPrefix(t, []byte("test result: "))
	case kVitest:
		return bytes.HasPrefix(t, []byte("⎯")) || vitestTitle(t)
	}
	return false
}

// classify tells what a line outside a block that ends at a line of its
// own is: t normalized, raw before the line rules, indent its indentation.
// Each runner's rules look at the lines they know and report whether t is
// one; they are tried in a fixed order, which matters only where two
// runners' lines can look alike (go's "=== RUN x=" before pytest's
// sections, go's "FAIL\tpkg" before vitest's "FAIL file > test", go's
// "ok  \tpkg" before TAP's "ok 1"). Progress and status lines, which
// could end a line of any runner ("FAILED x [ 40%]"), come last.
func classify(t, raw []byte, indent int) (act, kind int) {
	m := knows[t[0]]
	if m&knowsRule != 0 && isRule(t) {
		return aDrop, 0 // the rules under and between titles and sections
	}
	if m&knowsGo != 0 {
		if act, kind, ok := classifyGo(t, raw, indent); ok {
			return act, kind
		}
	}
	if m&knowsPython != 0 {
		if act, kind, ok := classifyPython(t); ok {
			return act, kind
		}
	}
	if m&knowsCargo != 0 {
		if act, kind, ok := classifyCargo(t, indent); ok {
			return act, kind
		}
	}
	if m&knowsJS != 0 {
		if act, kind, ok := classifyJS(t, indent); ok {
			return act, kind
		}
	}
	if m&knowsJava != 0 {
		if act, kind, ok := classifyJava(t); ok {
			return act, kind
		}
	}
	if cargoStatusLine(t, indent) || isUnittestProgress(t) || isPercent(t) {
		return aDrop, 0
	}
	return aSeq, 0
}

// knows tells, by the first byte of a line, which runners' rules in
// classify can know it: each looks at lines that start with the bytes
// listed next to it (ruleFirst, goFirst, ...), so the others need not be
// asked. Most lines start with a byte none of them knows.
var knows [256]uint8

const (
	knowsRule = 1 << iota
	knowsGo
	knowsPython
	knowsCargo
	knowsJS
	knowsJava
)

// ruleFirst are the bytes isRule's rules start with.
const ruleFirst = "=-_~"

func init() {
	for _, r := range []struct {
		bit   uint8
		first string
	}{
		{knowsRule, ruleFirst}, {knowsGo, goFirst}, {knowsPython, pythonFirst},
		{knowsCargo, cargoFirst}, {knowsJS, jsFirst}, {knowsJava, javaFirst},
	} {
		for i := range len(r.first) {
			knows[r.first[i]] |= r.bit
		}
	}
}

// classifyV3 classifies the lines the rules V3 read otherwise than V2, and
// reports whether t is one. It comes before classify.
func classifyV3(t []byte) (act, kind int, ok bool) {
	if act, kind, ok := classifyNodeV3(t); ok {
		return act, kind, true
	}
	return classifyCargoV3(t)
}

// excerpt drops the line number of a line of a code excerpt: "23| x := 1"
// (vitest), "23 | x" (rustc), "> 23 | x" (jest, babel). The source text
// shown tells failures apart; its position moves with every edit above.
// It shortens t in place: a line is normalized in a buffer of its own.
func excerpt(t []byte) []byte {
	i := 0
	if t[0] == '>' {
		i = skipSpace(t, 1)
	}
	d := i
	for d < len(t) && isDigit(t[d]) {
		d++
	}
	if d == i || d-i > 6 {
		return t
	}
	e := d
	if e < len(t) && t[e] == ' ' {
		e++
	}
	if e < len(t) && t[e] == '|' {
		return t[:i+copy(t[i:], t[e:])]
	}
	return t
}

// isRule reports whether t is a horizontal rule: ten or more of one of
// "=-_~⎯" and nothing else.
func isRule(t []byte) bool {
	if len(t) < 10 {
		return false
	}
	c := t[0]
	if c != '=' && c != '-' && c != '_' && c != '~' {
		return false
	}
	for _, x := range t {
		if x != c {
			return false
		}
	}
	return true
}

func hasWord(t []byte, w string) bool {
	return bytes.HasPrefix(t, []byte(w))
}

// trimDur drops the time at the end of a test's or a file's line (jest's
// "✕ name (12 ms)" and "FAIL file (5.2 s)", vitest's "× name 3ms"): it is
// printed only when it is long enough.
func trimDur(t []byte) []byte {
	return bytes.TrimSuffix(bytes.TrimSuffix(t, []byte(" ("+phDur+")")), []byte(" "+phDur))
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if !isDigit(c) {
			return false
		}
	}
	return true
}
