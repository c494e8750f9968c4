package issuequeue

import (
	"bytes"
	"regexp"
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/util"
)

// The scanner finds the block structure the store needs — top-level headings,
// paragraphs that may hold tables, and ISSUE headings hidden in code, HTML or
// containers — in one pass over lines, without building a full markdown tree.
// It follows CommonMark as goldmark implements it for leaf blocks (ATX and
// setext headings, fenced and indented code, HTML blocks, thematic breaks,
// paragraphs). The few places where goldmark's answer depends on more than
// the scanner models — how far a list or block quote reaches, and whether a
// setext underline follows a table or link reference definitions — are
// handed to goldmark's block parser for just those lines. Where the two
// would still disagree, the scanner reports an ambiguity instead of
// guessing. FuzzScanAgreesWithGoldmark holds it to that.

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
	mayTable      bool // a line after the first could be a table's delimiter row
}

type unclosedBlock struct {
	line   int
	fence  bool
	closer string // what would close it
}

// hidden is a line that looks like an ISSUE heading but is not a top-level heading.
type hidden struct {
	line  int
	where string
}

type scan struct {
	src      []byte
	bom      int   // length of a byte-order mark at the start of src
	lines    []int // start offset of every line, plus len(src) as a sentinel
	headings []heading
	paras    []para
	hidden   []hidden
	// ambiguous lists lines whose meaning the scanner could not settle.
	ambiguous []hidden
	// unclosed is a fenced code block or an HTML block of types 1–5 that is
	// still open at the end of the file: it swallows every heading after
	// it, and anything appended to the file.
	unclosed *unclosedBlock
	md       parser.Parser // for the blocks handed to goldmark; made when first needed
	// work is what goldmark was charged for the blocks handed to it (see
	// budgetReader); spentLine is where it last ran out of budget.
	work      int
	spentLine int
	// tooDeep lists lines inside lists and block quotes nested too deeply
	// to follow, and tooLong setext underlines under a paragraph too long
	// to read: where they end, or whether there is a heading, is unknown.
	tooDeep, tooLong []int
	defsRead         int // bytes of paragraphs read for link definitions
}

var issueHeadingRe = regexp.MustCompile(`^[ \t>*+\-0-9.)]*#{1,6}[ \t]+ISSUE-`)

// issueHeadingLike reports whether l looks like an ISSUE heading written
// where it is not one (in code, HTML or a container). Most lines there do
// not mention ISSUE- at all, and the check for that is much cheaper.
func issueHeadingLike(l []byte) bool {
	return bytes.Contains(l, []byte("ISSUE-")) && issueHeadingRe.Match(l)
}

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

// utf8BOM is the byte-order mark some editors put at the start of a file.
// It is not text: the scanner reads the first line without it, and spans
// start after it, so that edits keep it.
const utf8BOM = "\xef\xbb\xbf"

// lineStart returns the offset of line i's text: the line's start, or after
// the byte-order mark on the first line.
func (s *scan) lineStart(i int) int {
	if i == 0 {
		return s.bom
	}
	return s.lines[i]
}

// rawLine returns line i without its newline (and without a byte-order
// mark) but with any carriage return before it.
func (s *scan) rawLine(i int) []byte {
	l := s.src[s.lineStart(i):s.lines[i+1]]
	if n := len(l); n > 0 && l[n-1] == '\n' {
		l = l[:n-1]
	}
	return l
}

// lineText returns line i without its line ending (and without a byte-order mark).
func (s *scan) lineText(i int) []byte {
	l := s.rawLine(i)
	if n := len(l); n > 0 && l[n-1] == '\r' {
		l = l[:n-1]
	}
	return l
}

func (s *scan) nLines() int { return len(s.lines) - 1 }

// lineEnd returns the offset just after line i's text (before its newline).
func (s *scan) lineEnd(i int) int {
	return s.lineStart(i) + len(s.lineText(i))
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

// atxHeading parses an ATX heading from rest (after ≤3 columns of indentation).
func atxHeading(rest []byte) (level int, title string, ok bool) {
	for level < len(rest) && rest[level] == '#' {
		level++
	}
	if level == 0 || level > 6 {
		return 0, "", false
	}
	// goldmark counts a carriage return as space here.
	if level < len(rest) && rest[level] != ' ' && rest[level] != '\t' && rest[level] != '\r' {
		return 0, "", false
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
		case ' ', '\t', '\r':
		default:
			return false
		}
	}
	return n >= 3
}

// setextLevel returns 1 or 2 if rest is a setext underline.
func setextLevel(rest []byte) int {
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

// scanBlocks runs the scanner over src.
func scanBlocks(src []byte) *scan {
	s := &scan{src: src, lines: splitLines(src)}
	if bytes.HasPrefix(src, []byte(utf8BOM)) {
		s.bom = len(utf8BOM)
	}
	// Size the lists in one go: headings mostly start a line with #, and
	// paragraphs mostly end at an empty line.
	hashes, empty := 1, 1
	for i := 0; i+1 < len(s.lines); i++ {
		switch a := s.lines[i]; {
		case s.lines[i+1]-a <= 2:
			empty++
		case src[a] == '#':
			hashes++
		}
	}
	s.headings = make([]heading, 0, hashes)
	s.paras = make([]para, 0, empty)
	const (
		stNone = iota
		stPara
		stFence
		stHTML
		stIndented
	)
	state := stNone
	var (
		f         fence
		htmlTyp   int
		htmlClose string
		cur       para
		fenceLine int // where the open fence started
		htmlLine  int // where the open HTML block started
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
			} else if issueHeadingLike(l) {
				s.hidden = append(s.hidden, hidden{i, "a fenced code block"})
			}
			continue
		case stHTML:
			if htmlTyp >= 6 && isBlank(l) {
				state = stNone
				continue
			}
			if issueHeadingLike(l) {
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
		if state == stIndented {
			if blank || cols >= 4 {
				if issueHeadingLike(l) {
					s.hidden = append(s.hidden, hidden{i, "an indented code block"})
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
				cur.mayTable = cur.mayTable || delimLike(l)
				continue // lazy continuation of the paragraph
			}
			state = stIndented
			if issueHeadingLike(l) {
				s.hidden = append(s.hidden, hidden{i, "an indented code block"})
			}
			continue
		}
		if inPara {
			if lvl := setextLevel(rest); lvl > 0 {
				if h, ok := s.setextHeading(cur, i, lvl); ok {
					s.headings = append(s.headings, h)
					state = stNone
					continue
				}
				// The paragraph was a table or link reference definitions,
				// so the underline is read again as a line of its own.
				endPara(i)
				inPara = false
			}
		}
		if ff, ok := openFence(rest, cols); ok {
			endPara(i)
			f, state, fenceLine = ff, stFence, i
			continue
		}
		if lvl, title, ok := atxHeading(rest); ok {
			endPara(i)
			s.headings = append(s.headings, heading{level: lvl, line: i, endLine: i + 1, start: s.lineStart(i), end: s.lines[i+1], title: title})
			continue
		}
		if typ, closer := htmlBlock(rest, inPara); typ > 0 {
			endPara(i)
			if issueHeadingLike(l) {
				s.hidden = append(s.hidden, hidden{i, htmlWhere(typ)})
			}
			if typ >= 6 || !htmlClosed(typ, closer, rest) || (typ == 1 && !htmlType1Close.Match(rest)) {
				state, htmlTyp, htmlClose, htmlLine = stHTML, typ, closer, i
				if typ == 1 {
					htmlClose = "</" + strings.ToLower(htmlType1Open.FindStringSubmatch(string(rest))[1]) + ">"
				}
			}
			continue
		}
		if thematicBreak(rest) {
			endPara(i)
			continue
		}
		// goldmark reads a list marker on the line with its carriage return:
		// "-\r\n" is not an empty item.
		isItem := listMarker(s.rawLine(i)[ni:], inPara)
		if rest[0] == '>' || isItem {
			endPara(i)
			i = s.container(i) - 1
			continue
		}
		if inPara {
			if bytes.IndexByte(l, '|') >= 0 {
				cur.hasPipe = true
			}
			cur.mayTable = cur.mayTable || delimLike(l)
			continue
		}
		state = stPara
		cur = para{line: i, start: s.lineStart(i), hasPipe: bytes.IndexByte(l, '|') >= 0}
	}
	switch state {
	case stPara:
		endPara(n)
	case stFence:
		s.unclosed = &unclosedBlock{line: fenceLine, fence: true, closer: strings.Repeat(string(f.char), f.length)}
	case stHTML:
		if htmlTyp < 6 {
			s.unclosed = &unclosedBlock{line: htmlLine, closer: htmlClose}
		}
	}
	return s
}

// setextHeading returns the heading that underline line i (of level lvl)
// makes of the paragraph p. goldmark first runs its paragraph transformers:
// link reference definitions at the start of the paragraph are not part of
// the heading, and a paragraph that is a table, or only definitions, is no
// heading at all. A table is found as goldmark finds it (see tableHeader);
// paragraphs that may start with definitions are handed to goldmark, which
// takes time growing with the square of their length to read them, so only
// up to maxDefsParagraph bytes, and maxDefsFile in all: beyond, the
// underline is reported.
func (s *scan) setextHeading(p para, i, lvl int) (heading, bool) {
	first := s.lineText(p.line)
	_, k := indentOf(first)
	h := heading{level: lvl, line: p.line, endLine: i + 1, start: p.start, end: s.lines[i+1], setext: true}
	switch {
	case k < len(first) && first[k] == '[':
		size := s.lines[i] - p.start
		if size > maxDefsParagraph || s.defsRead+size > maxDefsFile {
			s.tooLong = append(s.tooLong, i)
			return heading{}, false
		}
		s.defsRead += size
		doc, base, _ := s.blockParse(p.line, i+1, nil)
		found := false
		for c := doc.FirstChild(); c != nil; c = c.NextSibling() {
			if hd, ok := c.(*ast.Heading); ok {
				h.line = p.line + bytes.Count(base[:hd.Pos()], []byte{'\n'})
				h.start = s.lineStart(h.line)
				found = true
			}
		}
		if !found {
			return heading{}, false
		}
	case p.mayTable:
		// The lines from a table's header on are the table; those before
		// it, if any, stay a paragraph, which the underline makes a heading.
		p.endLine = i // p is still open
		if hdr, _, ok := s.tableHeader(p, true); ok && hdr == p.line {
			return heading{}, false
		}
	}
	h.title = string(bytes.TrimSpace(s.src[h.start:s.lineEnd(i-1)]))
	return h, true
}

// maxDefsParagraph is the longest paragraph starting with "[" that the
// scanner reads for link reference definitions before a setext underline,
// and maxDefsFile how much of such paragraphs it reads in a file: goldmark
// allocates tens of times the size of what it reads there.
const (
	maxDefsParagraph = 4 << 10
	maxDefsFile      = 256 << 10
)

// container finds the end of the list or block quote that starts at line
// a and returns the line after it. Where a container ends depends on
// everything inside it (lazy continuation lines, fences and blank lines in
// list items), so goldmark parses it; the scanner only looks inside for
// lines that look like ISSUE headings. goldmark's block structure up to a
// line depends only on the lines before it, so parsing from a up to the
// start of the next top-level block is exact.
func (s *scan) container(a int) int {
	n := s.nLines()
	// The first window is small and each next one four times larger: a
	// window reaches at most about four times past the container's end,
	// so lines after it are not parsed again and again by the windows of
	// the containers before them.
	used := 0 // the windows share one budget, that of the largest
	for k := 4; ; k *= 4 {
		to := min(a+k, n)
		doc, base, complete := s.blockParse(a, to, &used)
		c := doc.FirstChild()
		where := "a list item"
		switch c.(type) {
		case *ast.Blockquote:
			where = "a block quote"
		case *ast.List:
		default:
			// The scanner's idea of where a list starts disagrees with
			// goldmark's; say so rather than guess.
			s.ambiguous = append(s.ambiguous, hidden{a, "a list or block quote"})
			return a + 1
		}
		end := to
		if next := c.NextSibling(); next != nil {
			// Exact even when goldmark stopped early: the container
			// ended before the point where it stopped.
			end = a + bytes.Count(base[:next.Pos()], []byte{'\n'})
		} else if !complete {
			s.tooDeep = append(s.tooDeep, s.spentLine)
			end = s.surelyOutside(a)
		} else if to < n {
			continue
		}
		end = max(end, a+1)
		for j := a; j < end; j++ {
			if issueHeadingLike(s.lineText(j)) {
				s.hidden = append(s.hidden, hidden{j, where})
			}
		}
		return end
	}
}

// blockParse parses lines [from, to) with goldmark's block parsers and
// returns the tree and the bytes parsed, which node positions index. With
// complete false, goldmark ran out of its work budget (see budgetReader) and
// the tree is of a part of the lines only.
//
// used, if not nil, is work already charged against the same budget by
// earlier parses; the work of this one is added to it.
func (s *scan) blockParse(from, to int, used *int) (doc ast.Node, base []byte, complete bool) {
	if s.md == nil {
		s.md = newBlockParser()
	}
	r := s.newBudgetReader(from, to)
	if used != nil {
		r.left -= *used
		defer func() { *used += r.used() }()
	}
	doc = s.md.Parse(r)
	s.work += r.used()
	if r.spent {
		s.spentLine = r.spentLine
	}
	return doc, r.Source(), !r.spent
}

// surelyOutside returns the first line after a that no list or block quote
// starting at line a can reach: an ATX heading at the start of a line,
// which neither continues a list item nor a block quote, nor continues a
// paragraph lazily; or the end of the file. Where goldmark could not
// follow a container, the scan resumes there.
func (s *scan) surelyOutside(a int) int {
	n := s.nLines()
	for j := a + 1; j < n; j++ {
		if l := s.lineText(j); len(l) > 0 && l[0] == '#' {
			if _, _, ok := atxHeading(l); ok {
				return j
			}
		}
	}
	return n
}

// newBlockParser returns a goldmark parser with the block parsers and
// paragraph transformers (link reference definitions, GFM tables) of
// goldmark with the table extension, and no inline parsers: the scanner
// needs only the block structure and source spans.
func newBlockParser() parser.Parser {
	return parser.NewParser(
		parser.WithBlockParsers(parser.DefaultBlockParsers()...),
		parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...),
		parser.WithParagraphTransformers(util.Prioritized(extension.NewTableParagraphTransformer(), 200)),
	)
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
