package issuequeue

import (
	"bytes"
	"regexp"
	"strings"
)

// The scanner finds the block structure the store needs — top-level headings,
// paragraphs that may hold tables, and ISSUE headings hidden in code, HTML or
// containers — in one pass over lines, without building a full markdown tree.
// It follows CommonMark as goldmark implements it for leaf blocks (ATX and
// setext headings, fenced and indented code, HTML blocks, thematic breaks,
// paragraphs). Lists and block quotes are tracked only far enough to know that
// a line belongs to them; where that is not enough to be sure what a line is,
// the scanner reports an ambiguity instead of guessing. FuzzScanAgreesWithGoldmark
// holds it to that.

// heading is a top-level heading.
type heading struct {
	level      int
	line       int // first line (0-based); for setext headings, the first text line
	endLine    int // line after the heading
	start, end int // byte span of the heading's lines, including the final newline
	title      string
	setext     bool
}

// para is a top-level paragraph: the only kind of block that can hold a GFM table.
type para struct {
	line, endLine int
	start, end    int // byte span; end excludes the newline of the last line
	hasPipe       bool
}

// hidden is a line that looks like an ISSUE heading but is not a top-level heading.
type hidden struct {
	line  int
	where string
}

type scan struct {
	src      []byte
	lines    []int // start offset of every line, plus len(src) as a sentinel
	headings []heading
	paras    []para
	hidden   []hidden
	// ambiguous lists lines whose meaning depends on list or block quote
	// rules the scanner does not model.
	ambiguous []hidden
}

var issueHeadingLike = regexp.MustCompile(`^[ \t>*+\-0-9.)]*#{1,6}[ \t]+ISSUE-`)

func splitLines(src []byte) []int {
	n := bytes.Count(src, []byte{'\n'})
	lines := make([]int, 0, n+2)
	lines = append(lines, 0)
	for i := 0; i < len(src); {
		j := bytes.IndexByte(src[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
		if i < len(src) {
			lines = append(lines, i)
		}
	}
	if len(src) == 0 {
		return []int{0, 0}
	}
	return append(lines, len(src))
}

// lineText returns line i without its line ending.
func (s *scan) lineText(i int) []byte {
	l := s.src[s.lines[i]:s.lines[i+1]]
	l = bytes.TrimSuffix(l, []byte{'\n'})
	return bytes.TrimSuffix(l, []byte{'\r'})
}

func (s *scan) nLines() int { return len(s.lines) - 1 }

// lineEnd returns the offset just after line i's text (before its newline).
func (s *scan) lineEnd(i int) int {
	return s.lines[i] + len(s.lineText(i))
}

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

func isBlank(l []byte) bool {
	for _, c := range l {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != '\f' && c != '\v' {
			return false
		}
	}
	return true
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

// atxHeading parses an ATX heading from rest (after ≤3 columns of indentation).
func atxHeading(rest []byte) (level int, title string, ok bool) {
	for level < len(rest) && rest[level] == '#' {
		level++
	}
	if level == 0 || level > 6 {
		return 0, "", false
	}
	if level < len(rest) && rest[level] != ' ' && rest[level] != '\t' {
		return 0, "", false
	}
	t := bytes.Trim(rest[level:], " \t")
	// An optional closing sequence of #s, preceded by a space, is not part of the title.
	k := len(t)
	for k > 0 && t[k-1] == '#' {
		k--
	}
	if k == 0 {
		t = nil
	} else if k < len(t) && (t[k-1] == ' ' || t[k-1] == '\t') {
		t = bytes.TrimRight(t[:k], " \t")
	}
	return level, string(t), true
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
		case ' ', '\t':
		default:
			return false
		}
	}
	return n >= 3
}

// setextLevel returns 1 or 2 if rest is a setext underline.
func setextLevel(rest []byte) int {
	t := bytes.TrimRight(rest, " \t")
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

var (
	htmlType1Open  = regexp.MustCompile(`(?i)^<(script|pre|style|textarea)(?:\s.*|>.*|/>.*|)$`)
	htmlType1Close = regexp.MustCompile(`(?i)</(?:script|pre|style|textarea)>`)
	htmlType4Open  = regexp.MustCompile(`^<![A-Z]+`)
	htmlType6      = regexp.MustCompile(`^<(?:/[ ]*)?([a-zA-Z]+[a-zA-Z0-9\-]*)(?:[ ].*|>.*|/>.*|)$`)
	htmlType7      = regexp.MustCompile(`^<(/[ ]*)?([a-zA-Z]+[a-zA-Z0-9\-]*)(` + htmlAttr + `*)[ ]*(?:>|/>)[ ]*$`)
)

const htmlAttr = `(?:[\r\n \t]+[a-zA-Z_:][a-zA-Z0-9:._-]*(?:[\r\n \t]*=[\r\n \t]*(?:[^\"'=<>` + "`" + `\x00-\x20]+|'[^']*'|"[^"]*"))?)`

var blockTags = map[string]bool{}

func init() {
	for _, t := range strings.Fields(`address article aside base basefont blockquote body caption center col
		colgroup dd details dialog dir div dl dt fieldset figcaption figure footer form frame frameset
		h1 h2 h3 h4 h5 h6 head header hr html iframe legend li link main menu menuitem meta nav noframes
		ol optgroup option p param search section summary table tbody td tfoot th thead title tr track ul`) {
		blockTags[t] = true
	}
}

// htmlBlock reports the CommonMark HTML block type (1–7) that rest (after ≤3
// spaces) opens, or 0. Type 7 cannot interrupt a paragraph.
func htmlBlock(rest []byte, inPara bool) (typ int, closer string) {
	if len(rest) < 2 || rest[0] != '<' {
		return 0, ""
	}
	switch {
	case htmlType1Open.Match(rest):
		return 1, ""
	case bytes.HasPrefix(rest, []byte("<!--")):
		return 2, "-->"
	case bytes.HasPrefix(rest, []byte("<?")):
		return 3, "?>"
	case htmlType4Open.Match(rest):
		return 4, ">"
	case bytes.HasPrefix(rest, []byte("<![CDATA[")):
		return 5, "]]>"
	}
	if m := htmlType7.FindSubmatchIndex(rest); m != nil {
		isClose := m[2] > -1 && rest[m[2]] == '/'
		hasAttr := m[6] != m[7]
		tag := strings.ToLower(string(rest[m[4]:m[5]]))
		if blockTags[tag] {
			return 6, ""
		}
		if tag != "script" && tag != "style" && tag != "pre" && !inPara && !(isClose && hasAttr) {
			return 7, ""
		}
	}
	if m := htmlType6.FindSubmatchIndex(rest); m != nil && blockTags[strings.ToLower(string(rest[m[2]:m[3]]))] {
		return 6, ""
	}
	return 0, ""
}

func htmlClosed(typ int, closer string, l []byte) bool {
	if typ == 1 {
		return htmlType1Close.Match(l)
	}
	return bytes.Contains(l, []byte(closer))
}

// listMarker reports whether rest (after ≤3 columns) starts a list item, and
// the column width of marker plus following spaces.
func listMarker(rest []byte, inPara bool) (width int, ok bool) {
	n := 0
	switch {
	case len(rest) > 0 && (rest[0] == '-' || rest[0] == '*' || rest[0] == '+'):
		n = 1
	default:
		for n < len(rest) && n < 9 && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		if n == 0 || n >= len(rest) || (rest[n] != '.' && rest[n] != ')') {
			return 0, false
		}
		if inPara && !(n == 1 && rest[0] == '1') {
			return 0, false // only "1." may interrupt a paragraph
		}
		n++
	}
	if n < len(rest) && rest[n] != ' ' && rest[n] != '\t' {
		return 0, false
	}
	if inPara && isBlank(rest[n:]) {
		return 0, false // an empty item cannot interrupt a paragraph
	}
	sp, _ := indentOf(rest[n:])
	if sp == 0 || sp > 4 {
		sp = 1
	}
	return n + sp, true
}

// scanBlocks runs the scanner over src.
func scanBlocks(src []byte) *scan {
	s := &scan{src: src, lines: splitLines(src)}
	const (
		stNone = iota
		stPara
		stFence
		stHTML
		stIndented
		stQuote
		stList
	)
	state := stNone
	var (
		f         fence
		htmlTyp   int
		htmlClose string
		cur       para
		listCol   int  // content column of the current list item
		listFence bool // a fence is open inside the current list item
		quoteLazy bool // the quote's last line was paragraph text, so lazy lines continue it
	)
	endPara := func(i int) {
		if state == stPara {
			cur.endLine = i
			cur.end = s.lineEnd(i - 1)
			s.paras = append(s.paras, cur)
		}
		state = stNone
	}
	n := s.nLines()
	for i := 0; i < n; i++ {
		l := s.lineText(i)
		switch state {
		case stFence:
			if f.closedBy(l) {
				state = stNone
			} else if issueHeadingLike.Match(l) {
				s.hidden = append(s.hidden, hidden{i, "a fenced code block"})
			}
			continue
		case stHTML:
			if htmlTyp >= 6 && isBlank(l) {
				state = stNone
				continue
			}
			if issueHeadingLike.Match(l) {
				s.hidden = append(s.hidden, hidden{i, htmlWhere(htmlTyp)})
			}
			if htmlTyp < 6 && htmlClosed(htmlTyp, htmlClose, l) {
				state = stNone
			}
			continue
		}
		blank := isBlank(l)
		cols, ni := indentOf(l)
		rest := l[ni:]
		switch state {
		case stIndented:
			if blank || cols >= 4 {
				if issueHeadingLike.Match(l) {
					s.hidden = append(s.hidden, hidden{i, "an indented code block"})
				}
				continue
			}
			state = stNone
		case stList:
			if blank {
				continue
			}
			if cols >= listCol {
				// Inside the item: track its fences so a fence line is not mistaken
				// for one at the top level once the item ends.
				inner := l[ni:]
				if listFence {
					if f.closedBy(inner) {
						listFence = false
					}
				} else if ff, ok := openFence(inner, 0); ok && cols-listCol <= 3 {
					f, listFence = ff, true
				}
				if issueHeadingLike.Match(l) {
					s.ambiguous = append(s.ambiguous, hidden{i, "a list item"})
				}
				continue
			}
			if cols <= 3 {
				if w, ok := listMarker(rest, false); ok && !thematicBreak(rest) {
					listCol, listFence = cols+w, false
					if issueHeadingLike.Match(l) {
						s.ambiguous = append(s.ambiguous, hidden{i, "a list item"})
					}
					continue
				}
			}
			if listFence {
				// The item ended with its fence open; where that leaves the
				// following lines depends on list rules the scanner does not model.
				s.ambiguous = append(s.ambiguous, hidden{i, "text after an unclosed code fence in a list"})
			}
			if !startsBlock(rest, cols) && !s.prevBlank(i) {
				if issueHeadingLike.Match(l) {
					s.ambiguous = append(s.ambiguous, hidden{i, "a list item"})
				}
				continue // lazy continuation of the item's paragraph
			}
			state = stNone
		case stQuote:
			if blank {
				state = stNone
				continue
			}
			if cols <= 3 && len(rest) > 0 && rest[0] == '>' {
				inner := bytes.TrimLeft(rest[1:], " \t")
				quoteLazy = !startsBlock(inner, 0) && !isBlank(inner)
				if issueHeadingLike.Match(l) {
					s.hidden = append(s.hidden, hidden{i, "a block quote"})
				}
				continue
			}
			if quoteLazy && !startsBlock(rest, cols) {
				if issueHeadingLike.Match(l) {
					s.ambiguous = append(s.ambiguous, hidden{i, "a block quote"})
				}
				continue
			}
			state = stNone
		}

		if blank {
			endPara(i)
			continue
		}
		inPara := state == stPara
		if cols >= 4 {
			if inPara {
				continue // lazy continuation of the paragraph
			}
			state = stIndented
			if issueHeadingLike.Match(l) {
				s.hidden = append(s.hidden, hidden{i, "an indented code block"})
			}
			continue
		}
		if inPara {
			if lvl := setextLevel(rest); lvl > 0 {
				h := heading{level: lvl, line: cur.line, endLine: i + 1, start: cur.start, end: s.lines[i+1], setext: true,
					title: string(bytes.TrimSpace(s.src[cur.start:s.lineEnd(i-1)]))}
				s.headings = append(s.headings, h)
				state = stNone
				continue
			}
		}
		if ff, ok := openFence(rest, cols); ok {
			endPara(i)
			f, state = ff, stFence
			continue
		}
		if lvl, title, ok := atxHeading(rest); ok {
			endPara(i)
			s.headings = append(s.headings, heading{level: lvl, line: i, endLine: i + 1, start: s.lines[i], end: s.lines[i+1], title: title})
			continue
		}
		if typ, closer := htmlBlock(rest, inPara); typ > 0 {
			endPara(i)
			if issueHeadingLike.Match(l) {
				s.hidden = append(s.hidden, hidden{i, htmlWhere(typ)})
			}
			if typ >= 6 || !htmlClosed(typ, closer, rest) || (typ == 1 && !htmlType1Close.Match(rest)) {
				state, htmlTyp, htmlClose = stHTML, typ, closer
			}
			continue
		}
		if thematicBreak(rest) {
			endPara(i)
			continue
		}
		if rest[0] == '>' {
			endPara(i)
			state = stQuote
			inner := bytes.TrimLeft(rest[1:], " \t")
			quoteLazy = !startsBlock(inner, 0) && !isBlank(inner)
			if issueHeadingLike.Match(l) {
				s.hidden = append(s.hidden, hidden{i, "a block quote"})
			}
			continue
		}
		if w, ok := listMarker(rest, inPara); ok {
			endPara(i)
			state, listCol, listFence = stList, cols+w, false
			if issueHeadingLike.Match(l) {
				s.ambiguous = append(s.ambiguous, hidden{i, "a list item"})
			}
			continue
		}
		if inPara {
			if bytes.IndexByte(l, '|') >= 0 {
				cur.hasPipe = true
			}
			continue
		}
		state = stPara
		cur = para{line: i, start: s.lines[i], hasPipe: bytes.IndexByte(l, '|') >= 0}
	}
	if state == stPara {
		endPara(n)
	}
	return s
}

func (s *scan) prevBlank(i int) bool { return i > 0 && isBlank(s.lineText(i-1)) }

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
	_, ok := listMarker(rest, true)
	return ok
}

func htmlWhere(typ int) string {
	if typ == 2 {
		return "an HTML comment"
	}
	return "an HTML block"
}
