package issuequeue

import (
	"bytes"
	"sort"
	"strings"
)

// cell is one table cell: the byte span of its trimmed text in the source.
// A cell the row does not have (the row is shorter than the header) is
// missing; it has no span, and setting it rewrites the row.
type cell struct {
	start, end int
	missing    bool
}

type row struct {
	line       int
	start, end int // the line's text, without its line ending
	cells      []cell
	width      int // cells written on the line, which may exceed the header's
}

// table is a GFM table, as goldmark reads it, in a top-level paragraph.
type table struct {
	line, endLine int // header line and the line after the last row
	start, end    int // byte span from the header line to the end of the last row's text
	header        row
	rows          []row
}

// tableBuf is memory for fastTable to build tables in, reused call after
// call, and the field values already made strings (see intern).
type tableBuf struct {
	t     table
	cells []cell
	strs  map[string]string
	refs  []fieldRef      // the unused part of the last array fieldRefs took
	text  strings.Builder // the last string intern made values in
}

// fieldRefs returns an empty slice with room for n fields: a part of an
// array shared by the records a worker reads (a queue has ten thousand
// field tables), with no room to grow into the next record's part.
func (buf *tableBuf) fieldRefs(n int) []fieldRef {
	const chunk = 4096
	if n > chunk/8 {
		return make([]fieldRef, 0, n)
	}
	if cap(buf.refs)-len(buf.refs) < n {
		buf.refs = make([]fieldRef, 0, chunk)
	}
	k := len(buf.refs)
	buf.refs = buf.refs[:k+n]
	return buf.refs[k : k : k+n]
}

// maxInterned is how many values a tableBuf keeps: enough for the words
// a queue's issues share (types, sources, categories), few enough that
// values met once do not fill memory.
const maxInterned = 256

// string returns v as a string, made in a larger one that the values
// after it share while it has room: one allocation for many values.
func (buf *tableBuf) string(v []byte) string {
	const chunk = 16 << 10
	if buf == nil || len(v) > chunk/16 {
		return string(v)
	}
	if buf.text.Cap()-buf.text.Len() < len(v) {
		buf.text = strings.Builder{}
		buf.text.Grow(chunk)
	}
	off := buf.text.Len()
	buf.text.Write(v)
	// A Builder never changes the bytes it holds: the string stays valid
	// as more are written.
	return buf.text.String()[off:]
}

// intern returns v as a string, the same string for the same bytes while
// there is room: most values of a field are a few words shared by many
// issues, and a string each would be an allocation each. buf may be nil.
func (buf *tableBuf) intern(v []byte) string {
	if buf == nil {
		return string(v)
	}
	if s, ok := buf.strs[string(v)]; ok {
		return s
	}
	s := buf.string(v)
	if buf.strs == nil {
		buf.strs = make(map[string]string)
	}
	if len(buf.strs) < maxInterned {
		buf.strs[s] = s
	}
	return s
}

// countCells counts the cells written on a table line the way GFM splits
// them: outer pipes are optional, and `\|` does not separate.
func countCells(line []byte) int {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return 0
	}
	if line[0] == '|' {
		line = line[1:]
	}
	if len(line) > 0 && line[len(line)-1] == '|' && (len(line) < 2 || line[len(line)-2] != '\\') {
		line = line[:len(line)-1]
	}
	n := 1
	for i := 0; i < len(line); i++ {
		if line[i] == '|' && (i == 0 || line[i-1] != '\\') {
			n++
		}
	}
	return n
}

// lineOf returns the 0-based line containing byte offset off.
func (s *scan) lineOf(off int) int {
	i := sort.Search(len(s.lines)-1, func(i int) bool { return s.lines[i+1] > off })
	if i >= s.nLines() {
		i = s.nLines() - 1
	}
	return i
}

// col returns the 1-based column (in bytes) of offset off on its line.
func (s *scan) col(off int) int { return off - s.lineStart(s.lineOf(off)) + 1 }

// cellText returns the unescaped text of a cell.
func (s *scan) cellText(c cell) string {
	if c.missing {
		return ""
	}
	return unescapeCell(string(s.src[c.start:c.end]))
}

func unescapeCell(v string) string {
	if !strings.Contains(v, `\|`) {
		return v
	}
	return strings.ReplaceAll(v, `\|`, `|`)
}

// EscapeCell makes v safe to write into a table cell: pipes are escaped,
// line breaks, which would end the row, become spaces, and bytes that are
// not UTF-8, which would make the file unreadable, become U+FFFD.
func EscapeCell(v string) string { return strings.ReplaceAll(listValue(v), "|", `\|`) }
