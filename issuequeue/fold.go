package issuequeue

import (
	"unicode"
	"unicode/utf8"
)

// foldKey returns a key for s under which every string that
// strings.EqualFold holds equal to s has the same key: each rune is
// replaced by the smallest rune of its case-folding orbit.
func foldKey(s string) string {
	b := make([]byte, 0, len(s))
	for _, c := range s {
		switch {
		case c < utf8.RuneSelf:
			// The smallest of an ASCII letter's orbit is its upper case
			// (ſ and the Kelvin sign, in the orbits of s and k, are larger).
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
		default:
			m := c
			for f := unicode.SimpleFold(c); f != c; f = unicode.SimpleFold(f) {
				m = min(m, f)
			}
			c = m
		}
		b = utf8.AppendRune(b, c)
	}
	return string(b)
}

// equalFoldASCII compares two ASCII strings of the same length ignoring case.
func equalFoldASCII[T string | []byte](a []byte, b T) bool {
	for i := range len(a) {
		if x, y := a[i], b[i]; x != y && lowerASCII(x) != lowerASCII(y) {
			return false
		}
	}
	return true
}

func lowerASCII(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

func hasNonASCII[T string | []byte](b T) bool {
	for i := 0; i < len(b); i++ {
		if b[i] >= 0x80 {
			return true
		}
	}
	return false
}
