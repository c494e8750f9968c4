package signature

import "bytes"

// The line rules for words that hold digits, and for long hexadecimal
// words: numbers by what stands before and after them (pids, ports,
// seeds, long numbers), hexadecimal ids and UUIDs.

// numeric decides what becomes of the word b[i:j], which holds a digit and
// whose byte classes are f. It returns the span to replace and its
// placeholder, or end 0 to keep the word. prev is the byte written before
// the word. v3 selects the rules V3's long numbers: kept, but for Unix
// times, dates without separators and random seeds.
func numeric(b []byte, i, j int, f uint8, prev byte, v3 bool) (start, end int, ph string) {
	n := len(b)
	w := j - i
	if isDigit(b[i]) {
		next := byte(0)
		if j < n {
			next = b[j]
		}
		if f == cDigit && i > 0 {
			if v3 && next == ')' && nodePID(b, i) {
				return i, j, phN
			}
			if p := b[i-1]; isSpace(p) || p == '=' || p == ':' || p == '(' {
				if ph := keywordBefore(b, i); ph != "" {
					return i, j, ph
				}
			}
		}
		if (w == 4 && (next == '-' || next == '/')) || (w <= 2 && next == ':') {
			if e := timestamp(b, i); e > 0 {
				return i, e, phTS
			}
		}
		if w == 8 && f&cAlpha == 0 && next == '-' {
			if e := uuid(b, i); e > 0 {
				return i, e, phUUID
			}
		}
		if w > 2 && b[i] == '0' && (b[i+1] == 'x' || b[i+1] == 'X') && allHex(b[i+2:j]) {
			return i, j, phHex
		}
		// A duration's number is followed by its unit, a space, a fraction
		// or µ; the word then holds letters, or ends there.
		if prev != '.' && (f != cDigit || next == '.' || next == ' ' || next == '\t' || next >= 0x80) {
			if e := duration(b, i); e > 0 {
				return i, e, phDur
			}
		}
		if f&(cHex|cAlpha) == 0 {
			switch {
			case w < 5:
			case !v3:
				return i, j, phN
			case seedBefore(b[:i]):
				return i, j, phN
			case unixTime(b[i:j]) || compactDate(b[i:j]):
				return i, j, phTS
			}
			return 0, 0, ""
		}
		if f&cAlpha == 0 && w >= 8 {
			return i, j, phHex
		}
		return 0, 0, ""
	}
	if f&cAlpha == 0 {
		if w == 8 && j < n && b[j] == '-' {
			if e := uuid(b, i); e > 0 {
				return i, e, phUUID
			}
		}
		if w >= 8 {
			return i, j, phHex
		}
		return 0, 0, ""
	}
	// A name with a number at its end (worker12345): the number goes if it
	// is long and the name holds no other digit.
	d := j
	for d > i && isDigit(b[d-1]) {
		d--
	}
	if j-d >= 5 {
		for _, c := range b[i:d] {
			if isDigit(c) {
				return 0, 0, ""
			}
		}
		return d, j, phN
	}
	return 0, 0, ""
}

func allHex(b []byte) bool {
	for _, c := range b {
		if !isHex(c) {
			return false
		}
	}
	return len(b) > 0
}

// digitsAt reports whether b[i:i+k] are k digits.
func digitsAt(b []byte, i, k int) bool {
	if i < 0 || i+k > len(b) {
		return false
	}
	for _, c := range b[i : i+k] {
		if !isDigit(c) {
			return false
		}
	}
	return true
}

// skipSpace returns the end of the run of spaces and tabs at b[i:].
func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// uuid returns the end of a UUID (8-4-4-4-12 hexadecimal digits) starting at
// b[i], or 0.
func uuid(b []byte, i int) int {
	const size = 36
	if i+size > len(b) {
		return 0
	}
	for k, c := range b[i : i+size] {
		switch k {
		case 8, 13, 18, 23:
			if c != '-' {
				return 0
			}
		default:
			if !isHex(c) {
				return 0
			}
		}
	}
	if e := i + size; e < len(b) && (isWord(b[e]) || b[e] == '-') {
		return 0
	}
	return i + size
}

// keywordBefore checks what precedes the number b[i:...] for "goroutine
// N", "pid N" (also pid=N, pid: N, PID, Pid), Rust's "thread 'name' (N)"
// and Python's `File "x.py", line N`. It returns the placeholder of the
// number, or "".
func keywordBefore(b []byte, i int) string {
	k := i
	for k > 0 && isSpace(b[k-1]) {
		k--
	}
	spaced := k < i
	if k == 0 {
		return ""
	}
	switch b[k-1] {
	case 'e', 'd', 'D', '=', ':', '(': // the last bytes of the keywords
	default:
		return ""
	}
	switch b[k-1] {
	case '=', ':':
		if w := wordBefore(b, k-1); string(w) == "pid" || string(w) == "PID" || string(w) == "Pid" {
			return phN
		}
		return ""
	case '(':
		if spaced {
			return ""
		}
		k--
		for k > 0 && isSpace(b[k-1]) {
			k--
		}
		if k == 0 || b[k-1] != '\'' {
			return ""
		}
		q := bytes.LastIndexByte(b[:k-1], '\'')
		if q < 0 {
			return ""
		}
		k = q
		for k > 0 && isSpace(b[k-1]) {
			k--
		}
		if k < q && string(wordBefore(b, k)) == "thread" {
			return phN
		}
		return ""
	}
	if !spaced {
		return ""
	}
	w := wordBefore(b, k)
	switch string(w) {
	case "goroutine", "Goroutine", "pid", "PID", "Pid":
		return phN
	case "line":
		k -= len(w)
		if k == 0 || !isSpace(b[k-1]) {
			return ""
		}
		for k > 0 && isSpace(b[k-1]) {
			k--
		}
		if k >= 2 && b[k-1] == ',' && b[k-2] == '"' {
			return phLine
		}
	}
	return ""
}

// nodePID reports whether the number at b[i:] follows "(node:", as the
// process ID in Node's "(node:4242) Warning: …" lines does (rules V3).
func nodePID(b []byte, i int) bool {
	return i >= 6 && string(b[i-6:i]) == "(node:"
}

// wordBefore returns the word that ends at b[k].
func wordBefore(b []byte, k int) []byte {
	s := k
	for s > 0 && isWord(b[s-1]) {
		s--
	}
	return b[s:k]
}

// seedBefore reports whether b ends in the word "seed" and what separates
// a value from it ("seed 123456", "--randomly-seed=123456", "Seed:
// -123456", "@seed(123456"), in any case (rules V3): the seed of a random
// order or random inputs, which a run chooses anew.
func seedBefore(b []byte) bool {
	k := len(b)
	for k > 0 && (b[k-1] == ' ' || b[k-1] == '=' || b[k-1] == ':' || b[k-1] == '(' || b[k-1] == '-') {
		k--
	}
	if k == len(b) || k < 4 {
		return false
	}
	return bytes.EqualFold(b[k-4:k], []byte("seed"))
}
