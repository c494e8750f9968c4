package signature

// The rules V2 and V3 for pytest's and unittest's output.

import (
	"bytes"
	"slices"
)

// pythonFirst are the first bytes of the lines classifyPython knows.
const pythonFirst = "=_FERrpc["

// classifyPython classifies pytest's and unittest's lines (see classify).
func classifyPython(t []byte) (act, kind int, ok bool) {
	switch t[0] {
	case '=':
		if k := bytes.IndexByte(t, ' '); k > 0 && t[len(t)-1] == '=' {
			// A pytest section: "==== FAILURES ====".
			switch c := t[min(k+1, len(t)-1)]; {
			case c != 'w' && c != 'P' && c != 's' && c != 'C':
			case bytes.Contains(t, []byte(" warnings summary ")), bytes.Contains(t, []byte(" PASSES ")),
				bytes.Contains(t, []byte(" slowest ")), bytes.Contains(t, []byte(" Captured ")):
				return aStart, kPyDrop, true
			}
			return aDrop, 0, true // titles and totals ("1 failed, 3 passed in <dur>")
		}
	case '_':
		if pytestTitle(t) {
			return aStart, kPytest, true
		}
	case 'F':
		switch {
		case hasWord(t, "FAIL: "):
			return aStart, kUnittst, true
		case hasWord(t, "FAILED "):
			return aBlock, 0, true // pytest's summary
		}
	case 'E':
		switch {
		case hasWord(t, "ERROR: "):
			return aStart, kUnittst, true
		case hasWord(t, "ERROR "):
			return aBlock, 0, true
		}
	case 'R':
		if hasWord(t, "Ran ") && bytes.Contains(t, []byte(" test")) {
			return aDrop, 0, true
		}
	case 'r':
		if hasWord(t, "rootdir: ") {
			return aDrop, 0, true
		}
	case 'p':
		if hasWord(t, "platform ") || hasWord(t, "plugins: ") {
			return aDrop, 0, true
		}
	case 'c':
		if hasWord(t, "collected ") || hasWord(t, "collecting ") || hasWord(t, "cachedir: ") ||
			hasWord(t, "configfile: ") {
			return aDrop, 0, true
		}
	case '[':
		if hasWord(t, "[gw") && len(t) > 3 && isDigit(t[3]) {
			return aDrop, 0, true // pytest-xdist's progress, in the order workers finish
		}
	}
	return 0, 0, false
}

// pytestTitle reports whether t is pytest's title of a failure, "___ name ___".
func pytestTitle(t []byte) bool {
	return len(t) > 8 && bytes.HasPrefix(t, []byte("___")) && bytes.HasSuffix(t, []byte("___")) &&
		bytes.IndexByte(t, ' ') > 0
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
