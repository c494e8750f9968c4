package signature

// The rules V2 and V3 for JavaScript's test runners and tools: vitest,
// jest, node --test and other TAP producers, eslint, tsc, and parsers'
// syntax errors.

import "bytes"

// jsFirst are the first bytes of the lines classifyJS knows.
const jsFirst = "o1nFPRTSD#<\xe2\xc3"

// classifyJS classifies the lines of vitest, jest, node --test and other
// TAP producers, eslint and tsc (see classify).
func classifyJS(t []byte, indent int) (act, kind int, ok bool) {
	switch t[0] {
	case 'o':
		if len(t) > 3 && hasWord(t, "ok ") && isDigit(t[3]) {
			return aSkip, 0, true // TAP: a test passed, with its diagnostics
		}
	case '1':
		if isPlan(t) {
			return aDrop, 0, true
		}
	case 'n':
		if len(t) > 7 && hasWord(t, "not ok ") && isDigit(t[7]) {
			return aStart, kIndent, true // TAP: a test failed, with its diagnostics
		}
	case 'F':
		switch {
		case vitestTitle(t):
			return aStart, kVitest, true
		case hasWord(t, "FAIL "):
			return aBlock, 0, true // jest's file
		case hasWord(t, "Found ") && bytes.Contains(t, []byte(" error")):
			return aDrop, 0, true // tsc's total
		}
	case 'P':
		if hasWord(t, "PASS ") {
			return aDrop, 0, true
		}
	case 'R':
		if hasWord(t, "RUN v") {
			return aDrop, 0, true
		}
	case 'T':
		for _, p := range []string{"Test Files ", "Tests ", "Tests: ", "Test Suites: ", "Time: "} {
			if hasWord(t, p) {
				return aDrop, 0, true
			}
		}
	case 'S':
		if hasWord(t, "Start at ") || hasWord(t, "Snapshots: ") {
			return aDrop, 0, true
		}
	case 'D':
		if hasWord(t, "Duration ") {
			return aDrop, 0, true
		}
	case '#':
		// An indented "# pkg [pkg.test]" is go build's, and no TAP comment.
		if hasWord(t, "# ") && !goBuildTitle(t) && tapComment(t[2:]) {
			return aDrop, 0, true
		}
	case '<':
		if indent == 0 && hasWord(t, phRoot+"/") && bytes.IndexByte(t, ' ') < 0 {
			return aStart, kIndent, true // eslint: the file whose problems follow
		}
	case 0xe2, 0xc3:
		switch {
		case hasWord(t, "✓"), hasWord(t, "✔"), hasWord(t, "√"), hasWord(t, "↓"):
			return aDrop, 0, true // passed and skipped tests
		case hasWord(t, "⎯"), hasWord(t, "✖ "):
			return aDrop, 0, true // vitest's rules, eslint's total
		case hasWord(t, "●"):
			return aStart, kIndent, true
		case hasWord(t, "×"), hasWord(t, "✕"), hasWord(t, "✗"), hasWord(t, "❯"):
			return aBlock, 0, true // failed tests and files, finished in any order
		}
	}
	return 0, 0, false
}

// classifyNodeV3 classifies the lines of node --test's spec reporter,
// which the rules V3 read otherwise than V2.
func classifyNodeV3(t []byte) (act, kind int, ok bool) {
	if t[0] != 0xe2 {
		return 0, 0, false
	}
	switch {
	case hasWord(t, "ℹ "):
		// The totals.
		for _, w := range []string{"tests ", "suites ", "pass ", "fail ", "cancelled ", "skipped ", "todo ", "duration_ms "} {
			if hasWord(t[len("ℹ "):], w) {
				return aDrop, 0, true
			}
		}
	case hasWord(t, "✖ ") && !eslintTotal(t):
		// A failed test or suite, and its error's lines indented deeper.
		return aStart, kIndent, true
	}
	return 0, 0, false
}

// vitestTitle reports whether t is vitest's "FAIL file > suite > test".
func vitestTitle(t []byte) bool {
	return bytes.HasPrefix(t, []byte("FAIL ")) && bytes.Contains(t, []byte(" > "))
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
