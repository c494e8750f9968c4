package issuequeue

import (
	"bytes"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// goldmark's block parser is linear on the markdown people write, but not
// on every input: on a line that opens a container inside a container, as
// "- - - … x" or "> > > … x" does, it rescans the rest of the line at every
// level, and an indented list nested a thousand deep costs it a scan of each
// line's indentation per level. So it never gets more than a fixed amount
// of work per byte of what it parses: the reader it reads through counts,
// for every call, the length of the line it is on (a bound on what the call
// or the work that follows it scans), and when the budget is spent it tells
// goldmark the input has ended. The caller then knows the parse is partial
// and says it cannot tell, as it does for any input it cannot settle.

// workPerByte is goldmark's allowance per byte parsed. Markdown as people
// write it, lists and quotes nested a few levels deep included, stays far
// below it (see TestWorkBudgetNormal).
const (
	workPerByte = 128
	workBase    = 1 << 10
)

// budgetReader is a text.Reader over lines [from, to) of a scan that stops
// reading when its work budget is spent.
type budgetReader struct {
	text.Reader
	s             *scan
	from, to      int
	left, charged int
	spent         bool
	spentLine     int // the line (of the scan) where the budget ran out
}

// charge counts one call on the current line; once the budget is spent, the
// reader is moved to the end of its input.
func (r *budgetReader) charge() {
	if !r.spent {
		cost := 1
		if line, _ := r.Reader.Position(); line >= 0 && r.from+line < r.to {
			cost += r.s.lines[r.from+line+1] - r.s.lines[r.from+line]
		}
		r.charged += cost
		if r.left -= cost; r.left < 0 {
			r.spent, r.spentLine = true, r.from
			if line, _ := r.Reader.Position(); line > 0 {
				r.spentLine = min(r.from+line, r.to-1)
			}
		}
	}
	if r.spent {
		end := len(r.Reader.Source())
		r.Reader.SetPosition(r.to-r.from, text.NewSegment(end, end))
	}
}

// SetPosition cannot take a spent reader back into its input.
func (r *budgetReader) SetPosition(line int, pos text.Segment) {
	r.charge()
	if !r.spent {
		r.Reader.SetPosition(line, pos)
	}
}

func (r *budgetReader) Peek() byte {
	r.charge()
	return r.Reader.Peek()
}

func (r *budgetReader) PeekLine() ([]byte, text.Segment) {
	r.charge()
	return r.Reader.PeekLine()
}

func (r *budgetReader) ReadRune() (rune, int, error) {
	r.charge()
	return r.Reader.ReadRune()
}

func (r *budgetReader) LineOffset() int {
	r.charge()
	return r.Reader.LineOffset()
}

func (r *budgetReader) Advance(n int) {
	r.charge()
	r.Reader.Advance(n)
}

func (r *budgetReader) AdvanceAndSetPadding(n, padding int) {
	r.charge()
	r.Reader.AdvanceAndSetPadding(n, padding)
}

func (r *budgetReader) AdvanceToEOL() {
	r.charge()
	r.Reader.AdvanceToEOL()
}

func (r *budgetReader) AdvanceLine() {
	r.charge()
	r.Reader.AdvanceLine()
}

func (r *budgetReader) SkipSpaces() (text.Segment, int, bool) {
	r.charge()
	return r.Reader.SkipSpaces()
}

func (r *budgetReader) SkipBlankLines() (text.Segment, int, bool) {
	r.charge()
	return r.Reader.SkipBlankLines()
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
		// The list's items are exact wherever its end is.
		if l, ok := c.(*ast.List); ok && (complete || c.NextSibling() != nil) {
			s.lists = append(s.lists, listBlock{line: a, endLine: end, items: s.listItems(l, a)})
		}
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
	base = s.src[s.lineStart(from):s.lines[to]]
	r := &budgetReader{Reader: text.NewReader(base), s: s, from: from, to: to, left: workBase + workPerByte*len(base)}
	if used != nil {
		r.left -= *used
		defer func() { *used += r.charged }()
	}
	doc = s.md.Parse(r)
	s.work += r.charged
	if r.spent {
		s.spentLine = r.spentLine
	}
	return doc, base, !r.spent
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
// paragraph transformers (link reference definitions, GFM tables, see
// tableTransformer) of goldmark with the table extension, and no inline
// parsers: the scanner
// needs only the block structure and source spans.
func newBlockParser() parser.Parser {
	return parser.NewParser(
		parser.WithBlockParsers(parser.DefaultBlockParsers()...),
		parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...),
		parser.WithParagraphTransformers(util.Prioritized(tableTransformer{}, 200)),
	)
}
