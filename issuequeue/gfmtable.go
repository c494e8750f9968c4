package issuequeue

import (
	"bytes"

	gast "github.com/yuin/goldmark/ast"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// tableTransformer turns a paragraph into a GFM table exactly where
// goldmark's table extension does, building the same table, row and cell
// nodes at the same positions. It is the extension's paragraph transformer
// (goldmark, MIT licence, Copyright (c) 2019 Yusuke Inuzuka) without what
// this package never uses: the bookkeeping of escaped pipes in code spans,
// which only the renderer needs, and the extension's other features. The
// extension package compiles a dozen regular expressions (its autolinker's
// among them) when the program starts: about 0.6 ms that every command
// paid, and allocations that left the heap laid out so that the huge pages
// cmd/orchestrator prepares for a big queue were missed in about half the
// runs (TestPreparedHeapFaultsHugePages). Here the delimiter row is read
// byte by byte instead.
//
// The scanner's tests hold this to goldmark with the real extension.
type tableTransformer struct{}

func (tableTransformer) Transform(node *gast.Paragraph, reader text.Reader, pc parser.Context) {
	ppos := node.Pos()
	lines := node.Lines()
	if lines.Len() < 2 {
		return
	}
	for i := 1; i < lines.Len(); i++ {
		delim := lines.At(i)
		alignments := tableDelimiter(delim.Value(reader.Source()))
		if alignments == nil {
			continue
		}
		header := tableRow(lines.At(i-1), alignments, true, reader)
		if header == nil || len(alignments) != header.ChildCount() {
			return
		}
		table := extast.NewTable()
		table.Alignments = alignments
		table.SetPos(ppos)
		table.AppendChild(table, extast.NewTableHeader(header))
		for j := i + 1; j < lines.Len(); j++ {
			table.AppendChild(table, tableRow(lines.At(j), alignments, false, reader))
		}
		node.Lines().SetSliced(0, i-1)
		node.Parent().InsertAfter(node.Parent(), node, table)
		if node.Lines().Len() == 0 {
			node.Parent().RemoveChild(node.Parent(), node)
		} else {
			last := node.Lines().At(i - 2)
			last.Stop = last.Stop - 1 // trim the last newline
			node.Lines().Set(i-2, last)
		}
	}
}

// tableRow reads one row's cells: split at pipes not preceded by a
// backslash, an outer pipe on either side dropped. A body row's cells
// beyond the delimiter row's count are dropped; a narrower row is padded
// with empty cells.
func tableRow(segment text.Segment, alignments []extast.Alignment, isHeader bool, reader text.Reader) *extast.TableRow {
	npos := segment
	source := reader.Source()
	segment = segment.TrimLeftSpace(source)
	segment = segment.TrimRightSpace(source)
	line := segment.Value(source)
	pos := 0
	limit := len(line)
	row := extast.NewTableRow(alignments)
	row.SetPos(npos.Start)
	if len(line) > 0 && line[pos] == '|' {
		pos++
	}
	if len(line) > 0 && line[limit-1] == '|' {
		limit--
	}
	i := 0
	for ; pos < limit; i++ {
		alignment := extast.AlignNone
		if i >= len(alignments) {
			if !isHeader {
				return row
			}
		} else {
			alignment = alignments[i]
		}
		node := extast.NewTableCell()
		node.SetPos(npos.Start + pos - npos.Padding)
		node.Alignment = alignment
		closure := pos
		for ; closure < limit; closure++ {
			if line[closure] == '|' && (closure == 0 || line[closure-1] != '\\') {
				break
			}
		}
		seg := text.NewSegment(segment.Start+pos, segment.Start+closure)
		seg = seg.TrimLeftSpace(source)
		seg = seg.TrimRightSpace(source)
		node.Lines().Append(seg)
		row.AppendChild(row, node)
		pos = closure + 1
	}
	for ; i < len(alignments); i++ {
		row.AppendChild(row, extast.NewTableCell())
	}
	return row
}

// tableDelimiter reads a delimiter row (|:--|--:|:-:|---|) into the
// columns' alignments; nil if line is not one. Which lines are, it asks
// delimiterColumns, which reads them as goldmark does: line is read with
// its newline, if any, so a line of dashes alone is one only before
// another line (hence last is true).
func tableDelimiter(line []byte) []extast.Alignment {
	n, ok := delimiterColumns(line, true)
	if !ok {
		return nil
	}
	alignments := make([]extast.Alignment, 0, n)
	for col := range bytes.SplitSeq(line, []byte{'|'}) {
		// A cell is space, an optional colon, dashes, an optional colon,
		// space; the blank cells outside the outer pipes are none.
		if col = bytes.Trim(col, " \t\r\n"); len(col) == 0 {
			continue
		}
		switch left, right := col[0] == ':', col[len(col)-1] == ':'; {
		case left && right:
			alignments = append(alignments, extast.AlignCenter)
		case left:
			alignments = append(alignments, extast.AlignLeft)
		case right:
			alignments = append(alignments, extast.AlignRight)
		default:
			alignments = append(alignments, extast.AlignNone)
		}
	}
	return alignments
}
