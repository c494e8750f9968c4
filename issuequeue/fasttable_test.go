package issuequeue

import (
	"fmt"
	"strings"
	"testing"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

func tableString(t *table, src []byte) string {
	if t == nil {
		return "<nil>"
	}
	var b strings.Builder
	for _, r := range append([]row{t.header}, t.rows...) {
		fmt.Fprintf(&b, "line %d [%d,%d) w%d:", r.line, r.start, r.end, r.width)
		for _, c := range r.cells {
			if c.missing {
				b.WriteString(" <missing>")
			} else {
				fmt.Fprintf(&b, " [%d,%d)%q", c.start, c.end, src[c.start:c.end])
			}
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "end %d endLine %d\n", t.end, t.endLine)
	return b.String()
}

// checkFastTable compares the fast path with goldmark on every paragraph of src.
func checkFastTable(t *testing.T, src []byte) {
	t.Helper()
	s := scanBlocks(src)
	buf := &tableBuf{} // reused from paragraph to paragraph, as the parallel parse does
	for _, p := range s.paras {
		ft := s.fastTable(p, buf)
		fresh := s.fastTable(p, nil)
		if tableString(ft, src) != tableString(fresh, src) {
			t.Fatalf("fast path with a reused buffer and without differ on %q:\n%s\n%s", src[p.start:p.end], tableString(ft, src), tableString(fresh, src))
		}
		gt := s.goldmarkTable(referenceTableParser(), p)
		if got, want := tableString(ft, src), tableString(gt, src); got != want {
			t.Fatalf("fast path and goldmark differ on %q\nfast:\n%s\ngoldmark:\n%s", src[p.start:p.end], got, want)
		}
	}
}

var fastTableCases = []string{
	"| Field | Value |\n|-------|-------|\n| Status | pending |\n| Failure-Signature | |\n| Halted ||\n",
	"|a|b|\n|:-|-:|\n|1|2|3|\n|x|\n",
	"| a | b |\n|---|---|\n| `x\\|y` | \\| |\n| a \\|\n",
	"  | a | b |\n  |---|---|\n  | c | d |   \n",
	"| a |\n|---|---|\n| b |\n",
	"| a | b |\n| --- | :-: |\n| c | d |\r\n| e | f |\r\n",
	"| a | b |\n|-- -|---|\n",
	"| a | b |\n| - | - |\n|   |   |\n",
	"|a|\n|-|\n|\\\\|x|\n",
	"| a | b |\n|---|---|\n||\n| |\n|\n",
	"| a | b | c |\n|---|---|---|\n| 1 | 2 | 3 |\n| 4 | 5 | 6 |\n\n| x | y |\n|---|---|\n| z |\n\n| p | q | r | s |\n|-|-|-|-|\n| 1 |\n",
	"| Field\t| Value |\n|---|\t---|\n|\tStatus\t|\tpending\t|\n",
	"a | b\n--|--\nc | d\ne\n",
	"text\nmore text\n| a | b |\n|---|---|\n| c | d |\n",
	"| a | b |\n    |---|---|\n| c | d |\n",
	"| a | b |\n\t|---|---|\n| c | d |\n",
	"| a | b |\n   |---|---|\n  \t| c | d |\n",
	"| a | b | c |\nx\n|---|---|\n| c | d |\n",
	"x\n| a | b | c |\n|---|---|\n| c | d |\n|---|---|---|\n",
	"\\| a \\|\n|-|\n",
	"a\n-\n| b |\n",
	"| a |\r\n|:-:|\r\n|\tb\t|\r\n",
}

func TestFastTableAgreesWithGoldmark(t *testing.T) {
	for _, c := range fastTableCases {
		checkFastTable(t, []byte(c))
	}
}

func FuzzFastTable(f *testing.F) {
	for _, c := range fastTableCases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, src string) {
		checkFastTable(t, []byte(src))
	})
}

func TestFastTableAfterBOM(t *testing.T) {
	checkFastTable(t, []byte("\ufeff| a | b |\n|---|---|\n| c | d |\n"))
}

// referenceTableParser is goldmark with its own table extension, which
// both the fast path and the parser's tableTransformer are held to.
func referenceTableParser() parser.Parser {
	return parser.NewParser(
		parser.WithBlockParsers(parser.DefaultBlockParsers()...),
		parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...),
		parser.WithParagraphTransformers(util.Prioritized(extension.NewTableParagraphTransformer(), 200)),
	)
}

// goldmarkTable parses the paragraph p with goldmark's table extension:
// the reference fastTable is held to.
func (s *scan) goldmarkTable(md parser.Parser, p para) *table {
	sub := s.src[p.start:p.end]
	doc := md.Parse(text.NewReader(sub))
	var t *table
	for n := doc.FirstChild(); n != nil && t == nil; n = n.NextSibling() {
		tn, ok := n.(*extast.Table)
		if !ok {
			continue
		}
		t = &table{}
		first := true
		for r := tn.FirstChild(); r != nil; r = r.NextSibling() {
			rw := s.tableRow(r, p.start)
			if first {
				t.header = rw
				first = false
			} else {
				t.rows = append(t.rows, rw)
			}
		}
	}
	if t == nil {
		return nil
	}
	t.line = t.header.line
	t.start = t.header.start
	// The delimiter row has no node of its own; it is the header's next line.
	lastLine := t.header.line + 1
	if len(t.rows) > 0 {
		lastLine = t.rows[len(t.rows)-1].line
	}
	t.end = s.lineEnd(lastLine)
	t.endLine = lastLine + 1
	return t
}

func (s *scan) tableRow(r ast.Node, base int) row {
	// Row nodes carry the position of their line; cells carry trimmed spans.
	var rw row
	var pos int
	switch rr := r.(type) {
	case *extast.TableHeader:
		pos = rr.Pos()
	case *extast.TableRow:
		pos = rr.Pos()
	}
	if pos < 0 {
		pos = 0
	}
	rw.line = s.lineOf(base + pos)
	rw.start = s.lineStart(rw.line)
	rw.end = s.lineEnd(rw.line)
	for c := r.FirstChild(); c != nil; c = c.NextSibling() {
		segs := c.Lines()
		if segs.Len() == 0 {
			rw.cells = append(rw.cells, cell{missing: true})
			continue
		}
		sg := segs.At(0)
		rw.cells = append(rw.cells, cell{start: base + sg.Start, end: base + segs.At(segs.Len()-1).Stop})
	}
	rw.width = countCells(s.src[rw.start:rw.end])
	return rw
}
