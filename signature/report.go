package signature

import (
	"bytes"
	"container/heap"
	"encoding/binary"
	"slices"
	"strconv"
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

	paths [2][]byte // buffers of workspacePaths

	inOrder bool // a line was kept in order: the blocks follow a blank line

	json   []byte // the output of a go test -json event
	inJSON bool   // its lines are being read

	nbsp []byte // a line whose no-break spaces became spaces

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
}

// blanks returns line with its no-break spaces (U+00A0) as spaces: some
// tools print either at random (go-cmp's diffs, to keep tests from
// depending on their exact output).
func (r *report) blanks(line []byte) []byte {
	if bytes.Index(line, []byte{0xc2, 0xa0}) < 0 {
		return line
	}
	out := r.nbsp[:0]
	for i := 0; i < len(line); i++ {
		if line[i] == 0xc2 && i+1 < len(line) && line[i+1] == 0xa0 {
			out = append(out, ' ')
			i++
			continue
		}
		out = append(out, line[i])
	}
	r.nbsp = out
	return out
}

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
func testJSON(b []byte) (out, test []byte, ok bool) {
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
		return nil, nil, true
	}
	o := bytes.Index(b, []byte(`"Output":"`))
	if o < 0 {
		return nil, nil, true
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
	text, err := strconv.Unquote(string(b[s : e+1]))
	if err != nil {
		return nil, nil, false
	}
	if t := bytes.Index(b, []byte(`"Test":"`)); t >= 0 {
		test = b[t+len(`"Test":"`):]
		if q := bytes.IndexByte(test, '"'); q >= 0 {
			test = test[:q]
		}
	}
	return []byte(text), test, true
}

// A block is kept with a hash of its text. When there are more blocks
// than the bounds allow, those with the smallest hashes stay: a choice
// that depends on the blocks alone, not on their order, and costs one
// comparison of numbers where comparing texts would cost a scan of their
// long common beginnings ("--- FAIL: Test").
type block struct {
	h uint64
	b []byte
}

// less orders blocks by hash, then text.
func (x block) less(y block) bool {
	if x.h != y.h {
		return x.h < y.h
	}
	return bytes.Compare(x.b, y.b) < 0
}

// blockHeap holds the kept blocks, the last in order on top, so that the
// one to give up when over the bounds is at hand (a container/heap).
type blockHeap []block

func (h blockHeap) Len() int           { return len(h) }
func (h blockHeap) Less(i, j int) bool { return h[j].less(h[i]) }
func (h blockHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *blockHeap) Push(x any)        { *h = append(*h, x.(block)) }
func (h *blockHeap) Pop() any {
	s := *h
	top := s[len(s)-1]
	*h = s[:len(s)-1]
	return top
}

// hash is the hash that orders blocks for the bounds. Under the rules V3 it
// reads at most the first and the last 32 bytes of a block and its length
// (blocks with equal hashes are ordered by their bytes, so the order stays
// fixed): hashing whole blocks cost a twentieth of the time.
func (r *report) hash(b []byte) uint64 {
	if !r.v3 || len(b) <= 64 {
		return hash64(b)
	}
	return hash64(b[:32]) ^ (hash64(b[len(b)-32:])+uint64(len(b)))*0x9e3779b97f4a7c15
}

// hash64 is a fixed hash (the same in every process, so that the kept
// blocks are), eight bytes at a time.
func hash64(b []byte) uint64 {
	h := uint64(len(b)) * 0x9e3779b97f4a7c15
	for len(b) >= 8 {
		h = (h ^ binary.LittleEndian.Uint64(b)) * 0xff51afd7ed558ccd
		h ^= h >> 32
		b = b[8:]
	}
	for _, c := range b {
		h = (h ^ uint64(c)) * 0x100000001b3
	}
	h *= 0xc4ceb9fe1a85ec53
	return h ^ h>>29
}

// keep adds a copy of a finished block to the blocks to sort, within the
// bounds.
func (r *report) keep(b []byte) {
	if len(b) == 0 {
		return
	}
	k := block{r.hash(b), b}
	if r.cut != nil && !k.less(*r.cut) {
		return // at or after a block given up: it would have gone too
	}
	if len(r.blocks) > 0 && (len(r.blocks) >= maxBlocks || r.size+len(b) > maxBlockBytes) &&
		!k.less(r.blocks[0]) {
		r.giveUp(k) // it would be the first to go
		return
	}
	if len(r.blocks) >= maxBlocks {
		// The last in order gives way, and its buffer takes the copy.
		top := r.blocks[0]
		r.giveUp(top)
		r.size += len(b) - len(top.b)
		r.blocks[0] = block{k.h, append(top.b[:0], b...)}
		heap.Fix(&r.blocks, 0)
	} else {
		heap.Push(&r.blocks, block{k.h, append([]byte(nil), b...)})
		r.size += len(b)
	}
	for len(r.blocks) > maxBlocks || r.size > maxBlockBytes {
		top := heap.Pop(&r.blocks).(block)
		r.giveUp(top)
		r.size -= len(top.b)
	}
}

// giveUp notes a block given up for the bounds. Every block at or after
// it in order goes too, whenever it comes: so the blocks kept are the
// first in order that fit, whatever order they came in.
func (r *report) giveUp(k block) {
	if r.cut == nil || k.less(*r.cut) {
		r.cut = &block{k.h, append([]byte(nil), k.b...)}
	}
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

// appendCapped adds a line to a block, up to maxBlock bytes.
func appendCapped(b, line []byte) []byte {
	if room := maxBlock - len(b); room < len(line)+1 {
		if room > 0 {
			b = append(b, line[:room]...)
		}
		return b
	}
	b = append(b, line...)
	return append(b, '\n')
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

// finish ends the last block and returns the kept blocks in sorted order.
func (r *report) finish() [][]byte {
	r.end()
	r.testPiece()
	raced := r.raced
	if len(r.races) > 0 {
		fs := make([]string, 0, len(r.races))
		for f := range r.races {
			fs = append(fs, f)
		}
		slices.Sort(fs)
		b := []byte("WARNING: DATA RACE\n")
		for _, f := range fs {
			b = appendCapped(b, []byte(f))
		}
		r.keep(b)
	}
	r.races = nil
	for _, b := range r.tests {
		r.keep(b) // the order does not matter: keep's choice does not depend on it
	}
	r.tests, r.testBytes = nil, 0
	bs := make([][]byte, 0, len(r.blocks))
	for _, k := range r.blocks {
		// When a test binary panics, which other tests it reports as
		// failed, without a word, is a matter of timing (parallel tests
		// running at the time); the panic and its stack tell the failure.
		if r.panicked && bytes.HasPrefix(k.b, []byte("--- FAIL: ")) && bytes.IndexByte(k.b, '\n') == len(k.b)-1 {
			continue
		}
		if r.panicked && r.parallel(k.b) {
			continue
		}
		if raced && raceTest(k.b) {
			continue
		}
		bs = append(bs, k.b)
	}
	slices.SortFunc(bs, bytes.Compare)
	r.blocks, r.size, r.cut = nil, 0, nil
	r.raced, r.paused = false, nil
	return bs
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
// dropped.
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
		if t[0] == 't' && bytes.HasPrefix(t, []byte("test result: ")) {
			if k := bytes.IndexByte(t, '.'); k > 0 {
				t = t[:k+1] // the counts and the time go
			}
		}
		return true, t
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
	switch r.kind {
	case kRace, kPytest, kPyDrop, kCargo, kVitest, kUnittst:
		return false
	}
	indent := 0
	for indent < len(b) && b[indent] == ' ' {
		indent++
	}
	t := b[indent:]
	if len(t) < 6 {
		return false
	}
	// go -v's "=== RUN name" and "--- PASS: name" lines are handled here
	// only when the line rules leave the name as it is (see plainTest): a
	// test's name is matched with its "--- FAIL: name" line, which the
	// line rules make, so a name they change takes the rules' way.
	act := aSeq
	switch t[0] {
	case 'o':
		if hasWord(t, "ok  \t") {
			act = aDrop
		}
	case '=':
		if quickTests && goRun(t) {
			act = aTest
		}
	case '-':
		if quickTests && (hasWord(t, "--- PASS: ") || hasWord(t, "--- SKIP: ")) && plainTest(testName(t)) {
			act = aPass
		}
	}
	if act == aSeq && t[len(t)-1] == ']' && isPercent(t) {
		act = aDrop
	}
	if act == aSeq || bytes.IndexByte(t, '\r') >= 0 || bytes.IndexByte(t, 0x1b) >= 0 {
		return false
	}
	r.act(act, 0, t, b, indent)
	return true
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

// Which Go line numbers the rules keep. Go prints no source text, so
// without them the same error at two places in a file is one failure;
// with them, an edit above the error makes another failure. (Variables
// so that a test can measure the rules without them.)
var (
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

// excerpt drops the line number of a line of a code excerpt: "23| x := 1"
// (vitest), "23 | x" (rustc), "> 23 | x" (jest, babel). The source text
// shown tells failures apart; its position moves with every edit above.
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
		out := make([]byte, 0, len(t))
		out = append(out, t[:i]...)
		return append(out, t[e:]...)
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

// pytestTitle reports whether t is pytest's title of a failure, "___ name ___".
func pytestTitle(t []byte) bool {
	return len(t) > 8 && bytes.HasPrefix(t, []byte("___")) && bytes.HasSuffix(t, []byte("___")) &&
		bytes.IndexByte(t, ' ') > 0
}

// cargoTitle reports whether t is cargo's "---- name stdout ----".
func cargoTitle(t []byte) bool {
	return bytes.HasPrefix(t, []byte("---- ")) && bytes.HasSuffix(t, []byte(" ----"))
}

// vitestTitle reports whether t is vitest's "FAIL file > suite > test".
func vitestTitle(t []byte) bool {
	return bytes.HasPrefix(t, []byte("FAIL ")) && bytes.Contains(t, []byte(" > "))
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

func hasWord(t []byte, w string) bool {
	return bytes.HasPrefix(t, []byte(w))
}

// cargoStatus lists cargo's progress words, printed right-aligned in
// twelve columns: "   Compiling x v0.1.0 (/path)".
var cargoStatus = []string{"Compiling", "Checking", "Downloaded", "Downloading", "Updating",
	"Locking", "Adding", "Blocking", "Finished", "Fresh", "Documenting", "Packaging", "Removing", "Unpacking"}

// classify tells what a line outside a block that ends at a line of its
// own is: t normalized, raw before the line rules, indent its indentation.
func classify(t, raw []byte, indent int) (act, kind int) {
	r := raw[skipSpace(raw, 0):]
	switch t[0] {
	case '=':
		if isRule(t) {
			return aDrop, 0
		}
		for _, p := range []string{"=== RUN ", "=== CONT ", "=== NAME ", "=== PAUSE "} {
			if hasWord(t, p) {
				return aTest, 0
			}
		}
		if k := bytes.IndexByte(t, ' '); k > 0 && t[len(t)-1] == '=' {
			// A pytest section: "==== FAILURES ====".
			switch c := t[min(k+1, len(t)-1)]; {
			case c != 'w' && c != 'P' && c != 's' && c != 'C':
			case bytes.Contains(t, []byte(" warnings summary ")), bytes.Contains(t, []byte(" PASSES ")),
				bytes.Contains(t, []byte(" slowest ")), bytes.Contains(t, []byte(" Captured ")):
				return aStart, kPyDrop
			}
			return aDrop, 0 // titles and totals ("1 failed, 3 passed in <dur>")
		}
	case '-':
		switch {
		case isRule(t):
			return aDrop, 0
		case hasWord(t, "--- FAIL: "):
			return aStart, kIndent
		case hasWord(t, "--- PASS: "), hasWord(t, "--- SKIP: "):
			return aPass, 0
		case cargoTitle(t):
			return aStart, kCargo
		}
	case '_':
		if isRule(t) {
			return aDrop, 0
		}
		if pytestTitle(t) {
			return aStart, kPytest
		}
	case '~':
		if isRule(t) {
			return aDrop, 0
		}
	case 'o':
		if bytes.HasPrefix(r, []byte("ok  \t")) || bytes.HasPrefix(r, []byte("ok \t")) {
			return aDrop, 0 // go: a package passed, in some time or cached
		}
		if len(t) > 3 && hasWord(t, "ok ") && isDigit(t[3]) {
			return aSkip, 0 // TAP: a test passed, with its diagnostics
		}
	case '1':
		if isPlan(t) {
			return aDrop, 0
		}
	case 'n':
		if len(t) > 7 && hasWord(t, "not ok ") && isDigit(t[7]) {
			return aStart, kIndent // TAP: a test failed, with its diagnostics
		}
	case '?':
		if bytes.HasPrefix(r, []byte("?   \t")) {
			return aDrop, 0
		}
	case 'F':
		switch {
		case string(t) == "FAIL":
			return aSeq, 0
		case bytes.HasPrefix(r, []byte("FAIL\t")):
			return aBlock, 0 // go: a package failed; packages finish in any order
		case vitestTitle(t):
			return aStart, kVitest
		case hasWord(t, "FAIL: "):
			return aStart, kUnittst
		case hasWord(t, "FAILED ") || hasWord(t, "FAIL "):
			return aBlock, 0 // pytest's summary, jest's file
		case hasWord(t, "Found ") && bytes.Contains(t, []byte(" error")):
			return aDrop, 0 // tsc's total
		}
	case 'E':
		switch {
		case hasWord(t, "ERROR: "):
			return aStart, kUnittst
		case hasWord(t, "ERROR "):
			return aBlock, 0
		}
	case 'P':
		if string(t) == "PASS" || hasWord(t, "PASS ") {
			return aDrop, 0
		}
	case 'R':
		if hasWord(t, "Ran ") && bytes.Contains(t, []byte(" test")) || hasWord(t, "RUN v") {
			return aDrop, 0
		}
	case 'T':
		for _, p := range []string{"Test Files ", "Tests ", "Tests: ", "Test Suites: ", "Time: "} {
			if hasWord(t, p) {
				return aDrop, 0
			}
		}
	case 'S':
		if hasWord(t, "Start at ") || hasWord(t, "Snapshots: ") {
			return aDrop, 0
		}
	case 'D':
		if hasWord(t, "Duration ") {
			return aDrop, 0
		}
	case 'r':
		if hasWord(t, "running ") && bytes.HasSuffix(t, []byte(" tests")) || hasWord(t, "running 1 test") ||
			hasWord(t, "rootdir: ") {
			return aDrop, 0
		}
	case 'p':
		if hasWord(t, "platform ") || hasWord(t, "plugins: ") {
			return aDrop, 0
		}
	case 'c':
		if hasWord(t, "collected ") || hasWord(t, "collecting ") || hasWord(t, "cachedir: ") ||
			hasWord(t, "configfile: ") || hasWord(t, "coverage: ") {
			return aDrop, 0
		}
	case 'g':
		if hasWord(t, "goroutine "+phN+" [") {
			return aStart, kBlank
		}
	case 'W':
		if string(t) == "WARNING: DATA RACE" {
			return aStart, kRace
		}
	case 'w':
		if hasWord(t, "warning: ") && bytes.Contains(t, []byte(" generated ")) && bytes.Contains(t, []byte(" warning")) {
			return aDrop, 0 // a total, which depends on what was compiled before
		}
		if indent == 0 && (hasWord(t, "warning: ") || hasWord(t, "warning[")) {
			return aStart, kBlank
		}
	case 'e':
		if indent == 0 && (hasWord(t, "error: ") || hasWord(t, "error[")) {
			return aStart, kBlank
		}
	case 't':
		if hasWord(t, "test ") {
			switch {
			case bytes.HasSuffix(t, []byte(" ... ok")), bytes.HasSuffix(t, []byte(" ... ignored")):
				return aDrop, 0
			case bytes.HasSuffix(t, []byte(" ... FAILED")):
				return aBlock, 0
			}
		}
	case '#':
		if !hasWord(t, "# ") {
			break
		}
		if goBuildTitle(t) {
			if indent == 0 {
				return aStart, kBlank // go build: the package whose errors follow
			}
			break
		}
		if tapComment(t[2:]) {
			return aDrop, 0
		}
	case '[':
		if hasWord(t, "[INFO]") || hasWord(t, "[gw") && len(t) > 3 && isDigit(t[3]) {
			return aDrop, 0 // maven's progress; pytest-xdist's, in the order workers finish
		}
	case '>':
		if hasWord(t, "> Task :") {
			return aDrop, 0
		}
	case '<':
		if indent == 0 && hasWord(t, phRoot+"/") && bytes.IndexByte(t, ' ') < 0 {
			return aStart, kIndent // eslint: the file whose problems follow
		}
	case 0xe2, 0xc3:
		switch {
		case hasWord(t, "✓"), hasWord(t, "✔"), hasWord(t, "√"), hasWord(t, "↓"):
			return aDrop, 0 // passed and skipped tests
		case hasWord(t, "⎯"), hasWord(t, "✖ "):
			return aDrop, 0 // vitest's rules, eslint's total
		case hasWord(t, "●"):
			return aStart, kIndent
		case hasWord(t, "×"), hasWord(t, "✕"), hasWord(t, "✗"), hasWord(t, "❯"):
			return aBlock, 0 // failed tests and files, finished in any order
		}
	}
	if w := 12 - indent; indent > 0 && w > 0 && len(t) > w && t[w] == ' ' && isLetter(t[0]) {
		for _, s := range cargoStatus {
			if len(s) == w && string(t[:w]) == s {
				return aDrop, 0
			}
		}
	}
	if isUnittestProgress(t) || isPercent(t) {
		return aDrop, 0
	}
	return aSeq, 0
}

// trimDur drops the time at the end of a test's or a file's line (jest's
// "✕ name (12 ms)" and "FAIL file (5.2 s)", vitest's "× name 3ms"): it is
// printed only when it is long enough.
func trimDur(t []byte) []byte {
	return bytes.TrimSuffix(bytes.TrimSuffix(t, []byte(" ("+phDur+")")), []byte(" "+phDur))
}

// syntaxPosition drops the position at the end of a JavaScript parser's
// "SyntaxError: file: message (1406:1)", whose code frame follows and
// shows the source.
func syntaxPosition(t []byte) []byte {
	if len(t) < 5 || t[len(t)-1] != ')' {
		return t
	}
	o := bytes.LastIndexByte(t, '(')
	c := bytes.IndexByte(t[o+1:], ':')
	if o < 0 || c < 1 || !allDigits(t[o+1:o+1+c]) || !allDigits(t[o+2+c:len(t)-1]) || o+2+c == len(t)-1 {
		return t
	}
	return append(append([]byte(nil), t[:o+1]...), phLine+")"...)
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

// tapComment reports whether c, a TAP comment without its "# ", is one
// that goes: a total ("tests 5", "pass 4", "duration_ms 12.5") or a
// subtest's title, which its result line repeats.
func tapComment(c []byte) bool {
	if hasWord(c, "Subtest: ") {
		return true
	}
	k := bytes.IndexByte(c, ' ')
	if k < 0 {
		return false
	}
	switch string(c[:k]) {
	case "tests", "suites", "pass", "fail", "cancelled", "skipped", "todo", "duration_ms":
		return true
	}
	return false
}

// isPlan reports whether t is a TAP plan, "1..12": a count.
func isPlan(t []byte) bool {
	k := bytes.Index(t, []byte(".."))
	return k > 0 && k+2 < len(t) && allDigits(t[:k]) && allDigits(t[k+2:])
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if !isDigit(c) {
			return false
		}
	}
	return true
}

// isPercent reports whether t ends in pytest's progress, "[ 42%]": a line
// of passed tests' dots, or of one test in verbose mode.
func isPercent(t []byte) bool {
	n := len(t)
	if n < 4 || t[n-1] != ']' || t[n-2] != '%' {
		return false
	}
	k := bytes.LastIndexByte(t, '[')
	if k < 0 {
		return false
	}
	for _, c := range t[k+1 : n-2] {
		if !isDigit(c) && c != ' ' {
			return false
		}
	}
	return true
}

// isUnittestProgress reports whether t is a line of unittest's progress
// dots: ".", "F", "E", "s", "x", "u" and nothing else, two or more.
func isUnittestProgress(t []byte) bool {
	if len(t) < 2 {
		return false
	}
	for _, c := range t {
		switch c {
		case '.', 'F', 'E', 's', 'x', 'u':
		default:
			return false
		}
	}
	return true
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

// classifyV3 classifies the lines the rules V3 read otherwise than V2, and
// reports whether t is one.
func classifyV3(t []byte) (act, kind int, ok bool) {
	switch t[0] {
	case '.', 'F', 'i':
		if libtestProgress(t) {
			return aDrop, 0, true
		}
	case 0xe2:
		switch {
		case hasWord(t, "ℹ "):
			// node --test's spec reporter: its totals.
			for _, w := range []string{"tests ", "suites ", "pass ", "fail ", "cancelled ", "skipped ", "todo ", "duration_ms "} {
				if hasWord(t[len("ℹ "):], w) {
					return aDrop, 0, true
				}
			}
		case hasWord(t, "✖ ") && !eslintTotal(t):
			// node --test's spec reporter: a failed test or suite, and
			// its error's lines indented deeper.
			return aStart, kIndent, true
		}
	}
	if t[len(t)-1] == 'D' && bytes.HasSuffix(t, []byte(" --- FAILED")) && bytes.IndexByte(t, ' ') == len(t)-len(" --- FAILED") {
		// cargo test -q: a failed test, in the order tests finished.
		return aBlock, 0, true
	}
	return 0, 0, false
}

// libtestProgress reports whether t is a line of cargo test -q's progress
// (rules V3): a test's mark each ('.' passed, 'F' failed, 'i' ignored),
// and after each run of them how many tests have finished, "..F. 4/10".
// Where the lines break depends on which tests finish first.
func libtestProgress(t []byte) bool {
	marks, rest, _ := bytes.Cut(t, []byte{' '})
	if len(marks) == 0 {
		return false
	}
	for _, c := range marks {
		if c != '.' && c != 'F' && c != 'i' {
			return false
		}
	}
	if len(rest) == 0 {
		return true
	}
	done, total, ok := bytes.Cut(rest, []byte{'/'})
	return ok && len(done) > 0 && len(total) > 0 && allDigits(done) && allDigits(total)
}

// eslintTotal reports whether t is eslint's "✖ 3 problems (3 errors, 0
// warnings)".
func eslintTotal(t []byte) bool {
	t = t[len("✖ "):]
	i := 0
	for i < len(t) && isDigit(t[i]) {
		i++
	}
	return i > 0 && bytes.HasPrefix(t[i:], []byte(" problem"))
}

// cutRepr handles a repr that pytest cut in the middle to its first and
// last 120 characters or so, "head...tail" (rules V3). When a path in the
// workspace is in it, how much text the cut kept around the path depends
// on how long the checkout's path is: the head loses what follows the
// root's first place in it (the head may end inside the root's path), and
// the tail what comes before the root's last place in it.
func (r *report) cutRepr(t []byte) []byte {
	k := bytes.Index(t, []byte("..."))
	if k <= 0 || t[k-1] == ' ' || t[k-1] == '.' || len(r.root) == 0 {
		return t
	}
	head, tail := t[:k], t[k+3:]
	p := bytes.Index(head, []byte(phRoot))
	if p < 0 {
		q := bytes.LastIndexAny(head, " '\"(") + 1
		if tok := head[q:]; len(tok) < 2 || tok[0] != '/' || !bytes.HasPrefix(r.root, tok) {
			return t
		}
		p = q
	}
	if e := bytes.LastIndex(tail, []byte(phRoot)); e >= 0 {
		tail = tail[e:]
	}
	return slices.Concat(head[:p], []byte(phRoot+"..."), tail)
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

// cutFrame handles a JavaScript stack frame that a test reporter cut short
// to fit a length, "at f (node:int..." (rules V3): where the cut falls
// depends on how long the paths before it are, the checkout's among them,
// so the frame's place goes: "at f (...".
func cutFrame(t []byte) []byte {
	k := bytes.LastIndex(t, []byte(" ("))
	if k < 0 || bytes.IndexByte(t[k+2:], ')') >= 0 {
		return t
	}
	return append(t[:k:k], " (..."...)
}

// quickTests lets quick take go -v's lines of tests with plain names (a
// variable so that a test can compare with the rules' way).
var quickTests = true

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
