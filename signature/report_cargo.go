package signature

// The rules V2 and V3 for cargo's and rustc's output (cargo test,
// libtest, compiler diagnostics).

import "bytes"

// cargoFirst are the first bytes of the lines classifyCargo knows.
const cargoFirst = "-rwet"

// classifyCargo classifies cargo's and rustc's lines (see classify).
func classifyCargo(t []byte, indent int) (act, kind int, ok bool) {
	switch t[0] {
	case '-':
		if cargoTitle(t) {
			return aStart, kCargo, true
		}
	case 'r':
		if hasWord(t, "running ") && bytes.HasSuffix(t, []byte(" tests")) || hasWord(t, "running 1 test") {
			return aDrop, 0, true
		}
	case 'w':
		if hasWord(t, "warning: ") && bytes.Contains(t, []byte(" generated ")) && bytes.Contains(t, []byte(" warning")) {
			return aDrop, 0, true // a total, which depends on what was compiled before
		}
		if indent == 0 && (hasWord(t, "warning: ") || hasWord(t, "warning[")) {
			return aStart, kBlank, true
		}
	case 'e':
		if indent == 0 && (hasWord(t, "error: ") || hasWord(t, "error[")) {
			return aStart, kBlank, true
		}
	case 't':
		if hasWord(t, "test ") {
			switch {
			case bytes.HasSuffix(t, []byte(" ... ok")), bytes.HasSuffix(t, []byte(" ... ignored")):
				return aDrop, 0, true
			case bytes.HasSuffix(t, []byte(" ... FAILED")):
				return aBlock, 0, true
			}
		}
	}
	return 0, 0, false
}

// cargoStatusLine reports whether t, indented by indent, is one of cargo's
// progress lines: "   Compiling x v0.1.0 (/path)".
func cargoStatusLine(t []byte, indent int) bool {
	if w := 12 - indent; indent > 0 && w > 0 && len(t) > w && t[w] == ' ' && isLetter(t[0]) {
		for _, s := range cargoStatus {
			if len(s) == w && string(t[:w]) == s {
				return true
			}
		}
	}
	return false
}

// cargoResult cuts libtest's "test result: FAILED. 2 passed; …" after
// its verdict: the counts and the time go.
func cargoResult(t []byte) []byte {
	if t[0] == 't' && bytes.HasPrefix(t, []byte("test result: ")) {
		if k := bytes.IndexByte(t, '.'); k > 0 {
			return t[:k+1]
		}
	}
	return t
}

// classifyCargoV3 classifies the lines of cargo test -q that the rules V3
// read otherwise than V2.
func classifyCargoV3(t []byte) (act, kind int, ok bool) {
	switch t[0] {
	case '.', 'F', 'i':
		if libtestProgress(t) {
			return aDrop, 0, true
		}
	}
	if t[len(t)-1] == 'D' && bytes.HasSuffix(t, []byte(" --- FAILED")) && bytes.IndexByte(t, ' ') == len(t)-len(" --- FAILED") {
		// A failed test, in the order tests finished.
		return aBlock, 0, true
	}
	return 0, 0, false
}

// cargoTitle reports whether t is cargo's "---- name stdout ----".
func cargoTitle(t []byte) bool {
	return bytes.HasPrefix(t, []byte("---- ")) && bytes.HasSuffix(t, []byte(" ----"))
}

// cargoStatus lists cargo's progress words, printed right-aligned in
// twelve columns: "   Compiling x v0.1.0 (/path)".
var cargoStatus = []string{"Compiling", "Checking", "Downloaded", "Downloading", "Updating",
	"Locking", "Adding", "Blocking", "Finished", "Fresh", "Documenting", "Packaging", "Removing", "Unpacking"}

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
