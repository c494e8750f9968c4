package issuequeue

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
)

// indentOf returns the column width of the leading whitespace and its byte length.
func indentOf(l []byte) (cols, n int) {
	for n < len(l) {
		switch l[n] {
		case ' ':
			cols++
		case '\t':
			cols += 4 - cols%4
		default:
			return cols, n
		}
		n++
	}
	return cols, n
}

// isBlank reports whether l has only the characters goldmark counts as
// space (not \f or \v).
func isBlank(l []byte) bool {
	for _, c := range l {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}

// delimLike reports whether l could be a GFM table delimiter row: only
// dashes, colons, pipes and spaces.
func delimLike(l []byte) bool {
	dash := false
	for _, c := range l {
		switch c {
		case '-', ':', '|':
			dash = true
		case ' ', '\t', '\r':
		default:
			return false
		}
	}
	return dash
}

type fence struct {
	char   byte
	length int
	indent int
}

// openFence reports whether rest (the line after ≤3 columns of indentation)
// opens a fenced code block.
func openFence(rest []byte, indent int) (fence, bool) {
	if len(rest) < 3 || (rest[0] != '`' && rest[0] != '~') {
		return fence{}, false
	}
	c := rest[0]
	n := 0
	for n < len(rest) && rest[n] == c {
		n++
	}
	if n < 3 {
		return fence{}, false
	}
	if c == '`' && bytes.IndexByte(rest[n:], '`') >= 0 {
		return fence{}, false
	}
	return fence{char: c, length: n, indent: indent}, true
}

func (f fence) closedBy(l []byte) bool {
	cols, n := indentOf(l)
	if cols > 3 {
		return false
	}
	rest := l[n:]
	k := 0
	for k < len(rest) && rest[k] == f.char {
		k++
	}
	return k >= f.length && isBlank(rest[k:])
}

// atxHeading parses an ATX heading from rest (after ≤3 columns of
// indentation). The title is a part of rest, nil if empty.
func atxHeading(rest []byte) (level int, title []byte, ok bool) {
	for level < len(rest) && rest[level] == '#' {
		level++
	}
	if level == 0 || level > 6 {
		return 0, nil, false
	}
	// goldmark counts a carriage return as space here.
	if level < len(rest) && rest[level] != ' ' && rest[level] != '\t' && rest[level] != '\r' {
		return 0, nil, false
	}
	t := bytes.Trim(rest[level:], " \t\r")
	// An optional closing sequence of #s, preceded by a space, is not part of the title.
	k := len(t)
	for k > 0 && t[k-1] == '#' {
		k--
	}
	if k == 0 {
		t = nil
	} else if k < len(t) && (t[k-1] == ' ' || t[k-1] == '\t' || t[k-1] == '\r') {
		t = bytes.TrimRight(t[:k], " \t\r")
	}
	return level, t, true
}

func thematicBreak(rest []byte) bool {
	if len(rest) == 0 || (rest[0] != '-' && rest[0] != '*' && rest[0] != '_') {
		return false
	}
	c, n := rest[0], 0
	for _, b := range rest {
		switch b {
		case c:
			n++
		case ' ', '\t', '\r':
		default:
			return false
		}
	}
	return n >= 3
}

// setextLevel returns 1 or 2 if rest is a setext underline.
func setextLevel(rest []byte) int {
	if len(rest) == 0 || (rest[0] != '=' && rest[0] != '-') {
		return 0 // most lines: trimming would not change the first byte
	}
	t := bytes.TrimRight(rest, " \t\r")
	if len(t) == 0 || (t[0] != '=' && t[0] != '-') {
		return 0
	}
	for _, b := range t {
		if b != t[0] {
			return 0
		}
	}
	if t[0] == '=' {
		return 1
	}
	return 2
}

// htmlPatterns are what the HTML blocks of CommonMark start and end with.
type htmlPatterns struct {
	type1Open, type1Close, type4Open, type6, type7 *regexp.Regexp
	blockTags                                      map[string]bool
}

// htmlRes returns the HTML block patterns, compiled when a line first
// starts with '<': most files have none, and every command would pay for
// compiling them at start-up.
var htmlRes = sync.OnceValue(func() *htmlPatterns {
	p := &htmlPatterns{
		type1Open:  regexp.MustCompile(`(?i)^<(script|pre|style|textarea)(?:\s.*|>.*|/>.*|)$`),
		type1Close: regexp.MustCompile(`(?i)</(?:script|pre|style|textarea)>`),
		type4Open:  regexp.MustCompile(`^<![A-Z]+`),
		type6:      regexp.MustCompile(`^<(?:/[ ]*)?([a-zA-Z]+[a-zA-Z0-9\-]*)(?:[ ].*|>.*|/>.*|)$`),
		type7:      regexp.MustCompile(`^<(/[ ]*)?([a-zA-Z]+[a-zA-Z0-9\-]*)(` + htmlAttr + `*)[ ]*(?:>|/>)[ ]*$`),
		blockTags:  map[string]bool{},
	}
	for _, t := range strings.Fields(`address article aside base basefont blockquote body caption center col
		colgroup dd details dialog dir div dl dt fieldset figcaption figure footer form frame frameset
		h1 h2 h3 h4 h5 h6 head header hr html iframe legend li link main menu menuitem meta nav noframes
		ol optgroup option p param search section summary table tbody td tfoot th thead title tr track ul`) {
		p.blockTags[t] = true
	}
	return p
})

const htmlAttr = `(?:[\r\n \t]+[a-zA-Z_:][a-zA-Z0-9:._-]*(?:[\r\n \t]*=[\r\n \t]*(?:[^\"'=<>` + "`" + `\x00-\x20]+|'[^']*'|"[^"]*"))?)`

// htmlBlock reports the CommonMark HTML block type (1–7) that rest (after ≤3
// spaces) opens, or 0. Type 7 cannot interrupt a paragraph.
func htmlBlock(rest []byte, inPara bool) (typ int, closer string) {
	if len(rest) < 2 || rest[0] != '<' {
		return 0, ""
	}
	re := htmlRes()
	switch {
	case re.type1Open.Match(rest):
		return 1, ""
	case bytes.HasPrefix(rest, []byte("<!--")):
		return 2, "-->"
	case bytes.HasPrefix(rest, []byte("<?")):
		return 3, "?>"
	case re.type4Open.Match(rest):
		return 4, ">"
	case bytes.HasPrefix(rest, []byte("<![CDATA[")):
		return 5, "]]>"
	}
	if m := re.type7.FindSubmatchIndex(rest); m != nil {
		isClose := m[2] > -1 && rest[m[2]] == '/'
		hasAttr := m[6] != m[7]
		tag := strings.ToLower(string(rest[m[4]:m[5]]))
		if re.blockTags[tag] {
			return 6, ""
		}
		if tag != "script" && tag != "style" && tag != "pre" && !inPara && !(isClose && hasAttr) {
			return 7, ""
		}
	}
	if m := re.type6.FindSubmatchIndex(rest); m != nil && re.blockTags[strings.ToLower(string(rest[m[2]:m[3]]))] {
		return 6, ""
	}
	return 0, ""
}

func htmlClosed(typ int, closer string, l []byte) bool {
	if typ == 1 {
		return htmlRes().type1Close.Match(l)
	}
	return bytes.Contains(l, []byte(closer))
}

// listMarker reports whether rest (after ≤3 columns, with any carriage
// return still on it) starts a list item.
func listMarker(rest []byte, inPara bool) bool {
	n := 0
	switch {
	case len(rest) > 0 && (rest[0] == '-' || rest[0] == '*' || rest[0] == '+'):
		n = 1
	default:
		for n < len(rest) && n < 9 && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		if n == 0 || n >= len(rest) || (rest[n] != '.' && rest[n] != ')') {
			return false
		}
		if inPara && strings.TrimLeft(string(rest[:n]), "0") != "1" {
			return false // only "1." (or "01.") may interrupt a paragraph
		}
		n++
	}
	if n < len(rest) && rest[n] != ' ' && rest[n] != '\t' {
		return false
	}
	// An empty item cannot interrupt a paragraph.
	return !inPara || !isBlank(rest[n:])
}

// startsBlock reports whether rest begins a block that interrupts a paragraph.
func startsBlock(rest []byte, cols int) bool {
	if cols >= 4 || len(rest) == 0 {
		return false
	}
	if _, ok := openFence(rest, cols); ok {
		return true
	}
	if _, _, ok := atxHeading(rest); ok {
		return true
	}
	if typ, _ := htmlBlock(rest, true); typ > 0 {
		return true
	}
	if thematicBreak(rest) || rest[0] == '>' {
		return true
	}
	return listMarker(rest, true)
}

func htmlWhere(typ int) string {
	if typ == 2 {
		return "an HTML comment"
	}
	return "an HTML block"
}
