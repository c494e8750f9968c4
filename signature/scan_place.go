package signature

// The line rules for places: temporary paths, line numbers after file
// names, ports after hosts.

import "bytes"

// tempPath returns the end of the temporary path starting at b[i] (a '/'),
// or 0, and where its file name starts if that is kept (0 if not).
func (s *scanner) tempPath(b []byte, i int) (end, keep int) {
	n := len(b)
	for _, r := range s.roots {
		if !bytes.HasPrefix(b[i:], r) {
			continue
		}
		k := i + len(r)
		if k >= n || !pathChar[b[k]] {
			continue
		}
		e := k
		for e < n && pathChar[b[e]] {
			e++
		}
		for e > k && b[e-1] == '.' { // the end of a sentence
			e--
		}
		if e == k {
			continue
		}
		slash := i + bytes.LastIndexByte(b[i:e], '/')
		if slash > i && fileName(b[slash+1:e]) {
			return e, slash + 1
		}
		return e, 0
	}
	return 0, 0
}

// fileName reports whether the last part of a temporary path names a file
// worth keeping: name.ext with a short lower-case extension, and not one of
// the random names of mktemp (tmp.XXXXXXXXXX) or Python (tmpXXXXXXXX.ext).
func fileName(b []byte) bool {
	dot := bytes.LastIndexByte(b, '.')
	if dot <= 0 || bytes.HasPrefix(b, []byte("tmp")) {
		return false
	}
	ext := b[dot+1:]
	if len(ext) == 0 || len(ext) > 5 || ext[0]-'a' >= 26 {
		return false
	}
	for _, c := range ext {
		if c-'a' >= 26 && !isDigit(c) {
			return false
		}
	}
	return true
}

// colon handles b[c] == ':' followed by a digit: a line number after a file
// name (x.go:42, x.go:42:17) or a port after a host (127.0.0.1:8080,
// localhost:8080, [::1]:443, or a bare :8080). It returns the end of the
// replaced span and its placeholder, or 0.
func colon(b []byte, c int) (int, string) {
	n := len(b)
	d := c + 1
	e := d
	for e < n && isDigit(b[e]) {
		e++
	}
	if e < n && isWord(b[e]) {
		return 0, ""
	}
	if fileBefore(b, c) {
		if e+1 < n && b[e] == ':' && isDigit(b[e+1]) {
			col := e + 2
			for col < n && isDigit(b[col]) {
				col++
			}
			if col == n || !isWord(b[col]) {
				e = col
			}
		}
		return e, ":" + phLine
	}
	switch hostBefore(b, c) {
	case hostNamed:
		if e-d <= 5 {
			return e, ":" + phPort
		}
	case hostBare:
		if e-d >= 2 && e-d <= 5 {
			return e, ":" + phPort
		}
	}
	return 0, ""
}

// fileBefore reports whether b[:c] ends with a file name: name.ext, the
// extension starting with a letter.
func fileBefore(b []byte, c int) bool {
	k := c
	for k > 0 && isWord(b[k-1]) {
		k--
	}
	if k == c || c-k > 16 || !isLetter(b[k]) || k < 2 || b[k-1] != '.' {
		return false
	}
	p := b[k-2]
	return !isSpace(p) && p != '.'
}

const (
	hostNone = iota
	hostNamed
	hostBare
)

// hostBefore tells what b[:c] ends with: an IPv4 address, localhost or a
// bracketed IPv6 address (hostNamed), nothing that could be a host
// (hostBare), or something else.
func hostBefore(b []byte, c int) int {
	if c == 0 {
		return hostBare
	}
	switch p := b[c-1]; {
	case p == ']':
		k := c - 2
		for k >= 0 && c-k < 64 && (isHex(b[k]) || b[k] == ':' || b[k] == '.') {
			k--
		}
		if k >= 0 && k < c-2 && b[k] == '[' {
			return hostNamed
		}
	case isDigit(p):
		k := c
		for group := 1; ; group++ {
			s := k
			for k > 0 && s-k < 3 && isDigit(b[k-1]) {
				k--
			}
			if k == s {
				return hostNone
			}
			if group == 4 {
				break
			}
			if k == 0 || b[k-1] != '.' {
				return hostNone
			}
			k--
		}
		if k > 0 && (isWord(b[k-1]) || b[k-1] == '.') {
			return hostNone
		}
		return hostNamed
	case isLetter(p):
		k := c
		for k > 0 && isWord(b[k-1]) {
			k--
		}
		if bytes.EqualFold(b[k:c], []byte("localhost")) && (k == 0 || b[k-1] != '.') {
			return hostNamed
		}
	case isSpace(p), p == '"', p == '\'', p == '(', p == '[', p == '=', p == ',':
		return hostBare
	}
	return hostNone
}

// parenPosition handles b[c] == '(' followed by a digit after a file name,
// as TypeScript and MSBuild report positions: "x.ts(3,7): error". It
// returns the end of the span, or 0. The comma and the colon after it are
// required, so that a call such as expect(x).toBe(4) is left alone.
func parenPosition(b []byte, c int) int {
	if !fileBefore(b, c) {
		return 0
	}
	n := len(b)
	e := c + 1
	for e < n && isDigit(b[e]) {
		e++
	}
	if e+1 >= n || b[e] != ',' || !isDigit(b[e+1]) {
		return 0
	}
	e += 2
	for e < n && isDigit(b[e]) {
		e++
	}
	if e+1 < n && b[e] == ')' && b[e+1] == ':' {
		return e + 1
	}
	return 0
}
