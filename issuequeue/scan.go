package issuequeue

import (
	"bytes"
	"strings"

	"github.com/autoretry/orchestrator/internal/foundations/lazyre"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
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
	lists    []listBlock // top-level lists, as goldmark reads them
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

// issueHeadingRe is compiled when first needed: most lines never need it.
var issueHeadingRe = lazyre.New(`^[ \t>*+\-0-9.)]*#{1,6}[ \t]+ISSUE-`)

// issueHeadingLike reports whether l looks like an ISSUE heading written
// where it is not one (in code, HTML or a container). Most lines there do
// not mention ISSUE- at all, and the check for that is much cheaper.
func issueHeadingLike(l []byte) bool {
	return bytes.Contains(l, []byte("ISSUE-")) && issueHeadingRe().Match(l)
}

func splitLines(src []byte) []int {
	n := lineCount(src)
	lines := make([]int, n+1)
	fillLineStarts(lines[:n], src, 0)
	lines[n] = len(src)
	return lines
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

// scanBlocks runs the scanner over src. A file of splitFrom bytes or more
// is scanned in two halves at once (see scanSplit).
func scanBlocks(src []byte) *scan {
	if len(src) >= splitFrom {
		s, _ := scanSplit(src, len(src)/2)
		return s
	}
	return scanOnePass(src, splitLines(src))
}

// scanOnePass scans src, split into lines, in one pass.
func scanOnePass(src []byte, lines []int) *scan {
	s := newScan(src, lines)
	s.blocks(0, s.nLines())
	s.atxTitles()
	return s
}

// splitFrom is the size from which a file is scanned in two halves at
// once (BenchmarkScanQueue10k): 10,000 issues are about 7 MiB.
const splitFrom = 1 << 20

func newScan(src []byte, lines []int) *scan {
	s := &scan{src: src, lines: lines}
	if bytes.HasPrefix(src, []byte(utf8BOM)) {
		s.bom = len(utf8BOM)
	}
	return s
}

// scanSplit scans src in two halves at once, split at the first line at
// or after offset mid that is an ATX heading starting in the first column
// (the seam). Such a line ends any paragraph, list or block quote, so the
// scan from it on, started afresh, is the scan of the whole file from it
// on, unless the first half leaves a code fence or HTML block open at the
// seam, or goldmark reads a list or block quote as reaching over it, or
// the halves read more link definitions than one file may: then the file
// is scanned again in one pass. The result is the one-pass scan's, exactly;
// split reports whether it came from the two halves.
func scanSplit(src []byte, mid int) (s *scan, split bool) {
	cut := seamAfter(src, mid)
	if cut < 0 {
		return scanOnePass(src, splitLines(src)), false
	}
	// The line starts of the two halves are found at once, into one
	// array: counted first, then filled.
	var (
		nHead, nTail               int
		hashesA, emptyA            int
		hashesB, emptyB            int
		lines                      []int
		counted, allocated, filled = make(chan struct{}), make(chan struct{}), make(chan struct{})
	)
	go func() {
		defer close(filled)
		nTail = lineCount(src[cut:])
		close(counted)
		<-allocated
		fillLineStarts(lines[nHead:nHead+nTail], src[cut:], cut)
		hashesB, emptyB = blockCounts(src, lines[nHead:nHead+nTail], len(src))
	}()
	nHead = lineCount(src[:cut])
	<-counted
	lines = make([]int, nHead+nTail+1)
	close(allocated)
	fillLineStarts(lines[:nHead], src[:cut], 0)
	hashesA, emptyA = blockCounts(src, lines[:nHead], cut)
	lines[nHead+nTail] = len(src)
	<-filled

	seam := nHead
	a, b := newScan(src, lines), newScan(src, lines)
	// The halves' lists are adjacent parts of one array each, joined
	// after (see joinHalves).
	headings, paras := make([]heading, hashesA+hashesB), make([]para, emptyA+emptyB)
	a.headings, b.headings = headings[:0:hashesA], headings[hashesA:hashesA]
	a.paras, b.paras = paras[:0:emptyA], paras[emptyA:emptyA]
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		b.blocks(seam, b.nLines())
	}()
	ok := a.blocks(0, seam)
	<-scanned
	if !ok || a.defsRead+b.defsRead > maxDefsFile {
		return scanOnePass(src, lines), false
	}
	a.headings = joinHalves(headings, a.headings, b.headings)
	a.paras = joinHalves(paras, a.paras, b.paras)
	a.lists = append(a.lists, b.lists...)
	a.hidden = append(a.hidden, b.hidden...)
	a.ambiguous = append(a.ambiguous, b.ambiguous...)
	a.tooDeep = append(a.tooDeep, b.tooDeep...)
	a.tooLong = append(a.tooLong, b.tooLong...)
	a.unclosed = b.unclosed
	a.work += b.work
	if b.spentLine > 0 { // the second half's lines are all after line 0
		a.spentLine = b.spentLine
	}
	a.defsRead += b.defsRead
	if a.md == nil {
		a.md = b.md
	}
	a.atxTitles()
	return a, true
}

// seamAfter returns the offset of the first line starting at or after off
// that is an ATX heading beginning in the first column, or -1.
func seamAfter(src []byte, off int) int {
	for off < len(src) {
		i := bytes.Index(src[off:], []byte("\n#"))
		if i < 0 {
			return -1
		}
		start := off + i + 1
		line := src[start:]
		if j := bytes.IndexByte(line, '\n'); j >= 0 {
			line = line[:j]
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if _, _, ok := atxHeading(line); ok {
			return start
		}
		off = start
	}
	return -1
}

// lineCount returns how many lines of src start in it: one, and one
// after each newline but a last one at its end.
func lineCount(src []byte) int {
	n := 1 + bytes.Count(src, []byte{'\n'})
	if len(src) > 0 && src[len(src)-1] == '\n' {
		n--
	}
	return n
}

// fillLineStarts sets starts to the offsets, plus base, at which the lines
// of src start; it holds lineCount(src) of them.
func fillLineStarts(starts []int, src []byte, base int) {
	starts[0] = base
	k := 1
	for i := 0; i < len(src); {
		j := bytes.IndexByte(src[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
		if i < len(src) {
			starts[k] = base + i
			k++
		}
	}
}

// joinHalves returns a followed by b, which were made as adjacent parts of
// arr (a from its start, b after a's capacity, together all of arr) and
// filled by appending: b is moved down to follow a, in place, unless either
// outgrew its part (an append that outgrows a slice gives it more
// capacity, so the two no longer add up to arr).
func joinHalves[T any](arr, a, b []T) []T {
	na := cap(a)
	if na+cap(b) != len(arr) {
		return append(a, b...)
	}
	return append(arr[:len(a)], arr[na:na+len(b)]...)
}

// blockCounts returns how many headings and paragraphs the lines of src
// starting at lines, the last ending at end, may hold, to size their lists
// in one go: headings mostly start a line with #, and paragraphs mostly end
// at an empty line.
func blockCounts(src []byte, lines []int, end int) (hashes, empty int) {
	hashes, empty = 1, 1
	for i, a := range lines {
		next := end
		if i+1 < len(lines) {
			next = lines[i+1]
		}
		switch {
		case next-a <= 2:
			empty++
		case src[a] == '#':
			hashes++
		}
	}
	return hashes, empty
}

// blocks scans lines [from, to). At the end of the file (to is the number
// of lines), what is left open is closed as the end of the file closes it,
// and blocks reports true. Otherwise line to must be an ATX heading that
// starts in the first column, which the one-pass scan would read next, and
// blocks reports whether it reached that line in a state the heading ends:
// not inside a code fence or HTML block, nor inside a list or block quote
// that goldmark reads as reaching over it.
func (s *scan) blocks(from, to int) bool {
	if s.headings == nil { // else sized by the caller
		hashes, empty := blockCounts(s.src, s.lines[from:to], s.lines[to])
		s.headings = make([]heading, 0, hashes)
		s.paras = make([]para, 0, empty)
	}
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
	i := from
	for ; i < to; i++ {
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
		if lvl, _, ok := atxHeading(rest); ok {
			endPara(i)
			s.headings = append(s.headings, heading{level: lvl, line: i, endLine: i + 1, start: s.lineStart(i), end: s.lines[i+1]})
			continue
		}
		if typ, closer := htmlBlock(rest, inPara); typ > 0 {
			endPara(i)
			if issueHeadingLike(l) {
				s.hidden = append(s.hidden, hidden{i, htmlWhere(typ)})
			}
			if typ >= 6 || !htmlClosed(typ, closer, rest) || (typ == 1 && !htmlRes().type1Close.Match(rest)) {
				state, htmlTyp, htmlClose, htmlLine = stHTML, typ, closer, i
				if typ == 1 {
					htmlClose = "</" + strings.ToLower(htmlRes().type1Open.FindStringSubmatch(string(rest))[1]) + ">"
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
	if to < n {
		if i != to || state == stFence || state == stHTML {
			return false
		}
		endPara(to)
		return true
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
	return true
}

// atxTitles sets the titles of the ATX headings, all held in one string:
// a queue has tens of thousands of headings, and a string each would be
// as many allocations.
func (s *scan) atxTitles() {
	size := 0 // a title is a part of its line
	for i := range s.headings {
		if h := &s.headings[i]; !h.setext {
			size += h.end - h.start
		}
	}
	var b strings.Builder
	b.Grow(size)
	for i := range s.headings {
		h := &s.headings[i]
		if h.setext {
			continue
		}
		l := s.lineText(h.line)
		_, n := indentOf(l)
		_, t, _ := atxHeading(l[n:])
		off := b.Len()
		b.Write(t)
		// A Builder never changes the bytes it holds: the title stays
		// valid as more are written.
		h.title = b.String()[off:]
	}
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
