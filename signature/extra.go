package signature

import (
	"bytes"
	"regexp"
	"regexp/syntax"
)

// An extraPattern is a configured regular expression and a literal that
// every match contains, if one could be found: lines without it are not
// given to the regular expression engine.
type extraPattern struct {
	re  *regexp.Regexp
	lit []byte
}

var redacted = []byte("<redacted>")

// redact replaces the matches of the extra patterns in line. It returns
// line itself when nothing matched, and never changes line's bytes.
func (s *scanner) redact(line []byte) []byte {
	for _, p := range s.extra {
		if p.lit != nil && !bytes.Contains(line, p.lit) {
			continue
		}
		line = p.re.ReplaceAllLiteral(line, redacted)
	}
	return line
}

// requiredLiteral returns a literal that every match of the regular
// expression contains (the longest it finds), or nil. It looks only at
// what must match in sequence, which covers patterns such as
// `token=[A-Za-z0-9]+` and `(?:session|request) id \d+`'s " id ".
func requiredLiteral(expr string) []byte {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	lit := required(re.Simplify())
	if lit == "" {
		return nil
	}
	return []byte(lit)
}

func required(re *syntax.Regexp) string {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return ""
		}
		return string(re.Rune)
	case syntax.OpCapture:
		return required(re.Sub[0])
	case syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpConcat:
		best := ""
		for _, sub := range re.Sub {
			if l := required(sub); len(l) > len(best) {
				best = l
			}
		}
		return best
	}
	return ""
}
