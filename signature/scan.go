package signature

// The line rules: a scanner that classifies each byte with one table
// lookup and hands the few places a rule can start to the functions
// that read them, here and in scan_number.go (numbers, hexadecimal ids,
// UUIDs), scan_time.go (dates, clocks, durations) and scan_place.go
// (temporary paths, file positions, ports).

import (
	"bytes"
	"path/filepath"
	"strings"
)

// Byte classes of the scanner. Bytes of class 0 never start a rule and are
// copied as they are.
const (
	cDigit   = 1 << iota // 0-9
	cHex                 // a-f, A-F
	cAlpha               // other ASCII letters, and '_'
	cSpace               // ' ', '\t'
	cSpecial             // '/', ':', '(', '#', and '\r' and ESC

	cWord = cDigit | cHex | cAlpha
)

var class [256]uint8

// afterShortNumber marks the bytes after a number of up to 4 digits that
// can make it part of a rule: a date or clock ("-", "/", ":"), a duration
// (".", a blank, "µ"). beforeNumber marks the bytes before a number that can
// end a keyword ("pid 7", "pid=7", "pid: 7", "(7)").
var afterShortNumber, beforeNumber [256]bool

// pathChar marks the bytes a temporary path is made of.
var pathChar [256]bool

func init() {
	for c := '0'; c <= '9'; c++ {
		class[c] = cDigit
	}
	for c := 'a'; c <= 'z'; c++ {
		class[c] = cAlpha
		class[c-'a'+'A'] = cAlpha
	}
	for c := 'a'; c <= 'f'; c++ {
		class[c] = cHex
		class[c-'a'+'A'] = cHex
	}
	class['_'] = cAlpha
	class[' '], class['\t'] = cSpace, cSpace
	class['/'], class[':'], class['('], class['#'] = cSpecial, cSpecial, cSpecial, cSpecial
	class['\r'], class[0x1b] = cSpecial, cSpecial // resolved before the rules
	class[0xc2] = cSpecial                        // v2: U+00A0 no-break space

	for _, c := range []byte("-/:. \t") {
		afterShortNumber[c] = true
	}
	for c := 0x80; c < 256; c++ {
		afterShortNumber[c] = true
	}
	for _, c := range []byte(" \t=:(") {
		beforeNumber[c] = true
	}

	for c := range 256 {
		pathChar[c] = class[c]&cWord != 0 || c >= 0x80
	}
	for _, c := range []byte("._-+@%~/#") {
		pathChar[c] = true
	}
}

func isDigit(c byte) bool  { return c-'0' < 10 }
func isWord(c byte) bool   { return class[c]&cWord != 0 }
func isLetter(c byte) bool { return (c|0x20)-'a' < 26 }
func isHex(c byte) bool    { return class[c]&(cDigit|cHex) != 0 }
func isSpace(c byte) bool  { return c == ' ' || c == '\t' }

// scanner holds the line rules: the temporary directories, the extra
// patterns and, for V2, the workspace root. It is read-only once compiled.
type scanner struct {
	roots     [][]byte  // temporary directories, each ending in '/'
	rootStart [256]bool // second bytes of roots: a quick test at each '/'
	extra     []extraPattern

	v2      bool      // the rules V2 and later: workspace paths and test reports
	v3      bool      // the rules V3: long numbers kept, and V3's report rules
	root    []byte    // the workspace root, without a trailing slash
	wsStart [256]bool // second bytes of the root and the cache markers
}

// builtinRoots are temporary directories on Linux and macOS. Go's build
// directories (go-build…) and test directories (t.TempDir) live in them.
var builtinRoots = []string{
	"/tmp/",
	"/var/tmp/",
	"/dev/shm/",
	"/var/folders/",
	"/private/tmp/",
	"/private/var/folders/",
}

func (s *scanner) setTempRoots(tmpdir string) {
	roots := builtinRoots
	if t := cleanTempDir(tmpdir); t != "" {
		covered := false
		for _, r := range builtinRoots {
			if strings.HasPrefix(t, r) {
				covered = true
			}
		}
		if !covered {
			roots = append([]string{t}, roots...)
		}
	}
	s.roots = nil
	for _, r := range roots {
		s.roots = append(s.roots, []byte(r))
		s.rootStart[r[1]] = true
	}
}

// cleanTempDir returns the TMPDIR value as a path prefix ending in "/", or
// "" when it is unset, relative, or the root.
func cleanTempDir(dir string) string {
	if dir == "" || !filepath.IsAbs(dir) {
		return ""
	}
	dir = filepath.ToSlash(filepath.Clean(dir))
	if dir == "/" || strings.ContainsAny(dir, " \t") {
		return ""
	}
	return dir + "/"
}

// Placeholders. None of them can be matched by a rule again, which keeps
// normalization idempotent.
const (
	phTS   = "<ts>"
	phDur  = "<dur>"
	phUUID = "<uuid>"
	phHex  = "<hex>"
	phTmp  = "<tmp>"
	phLine = "<line>"
	phN    = "<n>"
	phPort = "<port>"
)

// appendLine appends the normalization of one line, given without its
// newline, to out. It returns false, with out as it was, if the line holds a
// carriage return or an escape sequence, or, if paths is set, the
// workspace root or a package cache: those are resolved first (see
// stream.line and stream.line2), which few lines need.
//
// The scan copies nothing while it walks over text that stays: b[mark:i] is
// what has been kept since the last replacement, and it is appended in one
// piece when a replacement (or the end) comes.
func (s *scanner) appendLine(out, b []byte, paths bool) ([]byte, bool) {
	// Blanks at both ends go first; rules see the line between them.
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	i := 0
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	b = b[i:]
	n := len(b)
	lineStart := len(out)
	mark := 0
	// Most lines hold single spaces only; there a space is plain text and
	// costs no more than a letter.
	i = 0
	for i < n {
		c := b[i]
		k := class[c]
		if k == 0 {
			i++
			continue
		}
		if k&cWord != 0 {
			j := i + 1
			f := k
			for j < n {
				k2 := class[b[j]]
				if k2&cWord == 0 {
					break
				}
				f |= k2
				j++
			}
			if f&cDigit == 0 {
				if f&cAlpha == 0 && j-i >= 8 { // hexadecimal letters only
					end, ph := j, phHex
					if j-i == 8 && j < n && b[j] == '-' {
						if e := uuid(b, i); e > 0 {
							end, ph = e, phUUID
						}
					}
					out = append(out, b[mark:i]...)
					out = append(out, ph...)
					mark, j = end, end
				}
				i = j
				continue
			}
			if f == cDigit && j-i < 5 && (j == n || !afterShortNumber[b[j]]) && (i == 0 || !beforeNumber[b[i-1]]) {
				i = j // a short number: no rule applies (the common case)
				continue
			}
			prev := byte(0)
			if i > mark {
				prev = b[i-1]
			} else if len(out) > lineStart {
				prev = out[len(out)-1]
			}
			if s.v2 && f&cAlpha == 0 && prev == '.' && i >= 3 && b[i-2] == '.' && b[i-3] == '.' && j < n && b[j] == '>' {
				// v2: the end of an address in a repr that pytest cut in
				// the middle, "<function f at 0x7f...42df80>".
				out = append(out, b[mark:i]...)
				out = append(out, phHex...)
				mark, i = j, j
				continue
			}
			if s.v2 && f == cDigit {
				// v2: unittest's elision "[803 chars]" counts text it
				// hides, such as paths; Python's "statement on line 398"
				// moves with every edit above, and the source is shown.
				ph := ""
				switch {
				case prev == '[' && bytes.HasPrefix(b[j:], []byte(" chars]")):
					ph = phN
				case prev == ' ' && bytes.HasSuffix(b[:i], []byte(" on line ")):
					ph = phLine
				}
				if ph != "" {
					out = append(out, b[mark:i]...)
					out = append(out, ph...)
					mark, i = j, j
					continue
				}
			}
			if start, end, ph := numeric(b, i, j, f, prev, s.v3); end > 0 {
				out = append(out, b[mark:start]...)
				out = append(out, ph...)
				mark, j = end, end
			}
			i = j
			continue
		}
		switch c {
		case ' ', '\t':
			j := i + 1
			for isSpace(b[j]) { // the line does not end in a blank
				j++
			}
			if j > i+1 || c == '\t' {
				out = append(out, b[mark:i]...)
				out = append(out, ' ')
				mark = j
			}
			i = j
		case '/':
			if paths && i+1 < n && s.wsStart[b[i+1]] && s.workspaceAt(b[i:]) {
				return out[:lineStart], false
			}
			if i+1 < n && s.rootStart[b[i+1]] {
				prev := byte(0)
				if i > mark {
					prev = b[i-1]
				} else if len(out) > lineStart {
					prev = out[len(out)-1]
				}
				if !isWord(prev) && prev != '.' && prev != '-' {
					if e, keep := s.tempPath(b, i); e > 0 {
						out = append(out, b[mark:i]...)
						if keep > 0 {
							out = append(out, phTmp+"/"...)
							mark, i = keep, keep
						} else {
							out = append(out, phTmp...)
							mark, i = e, e
						}
						continue
					}
				}
			}
			i++
		case ':':
			if i+1 < n && isDigit(b[i+1]) {
				if e, ph := colon(b, i); e > 0 {
					out = append(out, b[mark:i]...)
					out = append(out, ph...)
					mark, i = e, e
					continue
				}
			}
			i++
		case '(':
			if i+1 < n && isDigit(b[i+1]) {
				if e := parenPosition(b, i); e > 0 {
					out = append(out, b[mark:i]...)
					out = append(out, "("+phLine+")"...)
					mark, i = e, e
					continue
				}
			}
			i++
		case 0xc2:
			if paths && i+1 < n && b[i+1] == 0xa0 {
				return out[:lineStart], false // v2: a no-break space is a blank
			}
			i++
		case '#':
			// v2: an ordinal in a message ("failed at #2841") counts
			// iterations, often of random input; a name's (case#02) stays.
			if s.v2 && i > 0 && (b[i-1] == ' ' || b[i-1] == '(') && i+1 < n && isDigit(b[i+1]) {
				e := i + 1
				for e < n && isDigit(b[e]) {
					e++
				}
				if e == n || !isWord(b[e]) {
					out = append(out, b[mark:i]...)
					out = append(out, "#"+phN...)
					mark, i = e, e
					continue
				}
			}
			i++
		case '\r', 0x1b:
			return out[:lineStart], false
		default:
			i++
		}
	}
	return append(out, b[mark:]...), true
}
