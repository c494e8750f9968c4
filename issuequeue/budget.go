package issuequeue

import (
	"github.com/yuin/goldmark/text"
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

func (s *scan) newBudgetReader(from, to int) *budgetReader {
	base := s.src[s.lineStart(from):s.lines[to]]
	return &budgetReader{Reader: text.NewReader(base), s: s, from: from, to: to, left: workBase + workPerByte*len(base)}
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

// used returns the work charged to this reader.
func (r *budgetReader) used() int { return r.charged }
