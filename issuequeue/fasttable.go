package issuequeue

import "bytes"

// fastTable parses the common shape of table — the header on the
// paragraph's first line, the delimiter row on its second, every line
// starting with a pipe, no tabs — exactly as goldmark's GFM table extension
// does (extension/table.go: parseDelimiter, parseRow), without building an
// AST. Anything else is left to goldmark: ok is false. A queue of 10,000
// issues has 10,000 such tables, and goldmark's allocations for them are
// most of the time a full parse takes; TestFastTableAgreesWithGoldmark and
// FuzzFastTable hold the two to the same result.
//
// With buf, the table is built in buf's memory, which the next call reuses:
// the parallel parse reads every field table once, keeps what it needs from
// it (see fieldRef), and so touches far less memory.
func (s *scan) fastTable(p para, buf *tableBuf) (t *table, ok bool) {
	if p.endLine-p.line < 2 || bytes.IndexByte(s.src[p.start:p.end], '\t') >= 0 {
		return nil, false
	}
	for i := p.line; i < p.endLine; i++ {
		l := bytes.TrimLeft(s.lineText(i), " ")
		if len(l) == 0 || l[0] != '|' {
			return nil, false
		}
	}
	cols, ok := delimiterColumns(s.lineText(p.line + 1))
	if !ok {
		return nil, false // the delimiter may be further down: goldmark decides
	}
	// One array holds the cells of every row: a row is a slice of it.
	nrows := p.endLine - p.line - 2
	if buf == nil {
		buf = &tableBuf{}
	}
	cells := buf.cells[:0]
	if need := (nrows + 1) * cols; cap(cells) < need {
		cells = make([]cell, 0, need)
	}
	header, cells := s.fastRow(p.line, -1, cells)
	if len(header.cells) > cols {
		return nil, true // goldmark leaves such a paragraph a paragraph
	}
	for len(header.cells) < cols {
		header.cells = append(header.cells, cell{missing: true}) // and pads a narrower header
	}
	rows := buf.t.rows[:0]
	if cap(rows) < nrows {
		rows = make([]row, 0, nrows)
	}
	t = &buf.t
	*t = table{header: header, line: p.line, start: header.start, rows: rows[:nrows]}
	for i := range t.rows {
		t.rows[i], cells = s.fastRow(p.line+2+i, cols, cells)
	}
	buf.cells = cells
	last := p.line + 1
	if len(t.rows) > 0 {
		last = t.rows[len(t.rows)-1].line
	}
	t.end, t.endLine = s.lineEnd(last), last+1
	return t, true
}

// delimiterColumns mirrors goldmark's parseDelimiter: the number of columns
// of a delimiter row, or false if the line is not one.
func delimiterColumns(line []byte) (int, bool) {
	if cols, _ := indentOf(line); cols > 3 {
		return 0, false
	}
	allDash := true
	for _, b := range line {
		if b != '-' {
			allDash = false
		}
		if !(isSpaceByte(b) || b == '-' || b == '|' || b == ':') {
			return 0, false
		}
	}
	if allDash {
		return 0, false
	}
	parts := bytes.Split(line, []byte{'|'})
	if len(bytes.Trim(parts[0], " \t\r\n")) == 0 {
		parts = parts[1:]
	}
	if len(parts) > 0 && len(bytes.Trim(parts[len(parts)-1], " \t\r\n")) == 0 {
		parts = parts[:len(parts)-1]
	}
	if len(parts) == 0 {
		return 0, false // goldmark finds no alignments: not a delimiter row
	}
	for _, c := range parts {
		c = bytes.Trim(c, " \t\r\n")
		c = bytes.TrimPrefix(c, []byte{':'})
		c = bytes.TrimSuffix(c, []byte{':'})
		if len(c) == 0 || len(bytes.Trim(c, "-")) != 0 {
			return 0, false
		}
	}
	return len(parts), true
}

// isSpaceByte is goldmark's util.IsSpace: space, tab, CR and LF only.
func isSpaceByte(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\r'
}

// fastRow mirrors goldmark's parseRow for line i: outer pipes stripped (the
// last one even if escaped), cells split at pipes not preceded by a
// backslash, each cell's span trimmed; a row keeps at most limit cells (all
// when limit < 0) and is padded with missing cells up to limit. The cells
// are appended to dst, which is returned; the row's cells are that part of
// it, with no room to grow into the next row's.
func (s *scan) fastRow(i, limit int, dst []cell) (row, []cell) {
	first := len(dst)
	base := s.lineStart(i) // after a byte-order mark on line 0, as lineText is
	raw := s.lineText(i)
	lo, hi := 0, len(raw)
	for lo < hi && isSpaceByte(raw[lo]) {
		lo++
	}
	for hi > lo && isSpaceByte(raw[hi-1]) {
		hi--
	}
	rw := row{line: i, start: base, end: base + len(raw)}
	pos, end := lo, hi
	if pos < end && raw[pos] == '|' {
		pos++
	}
	if pos < end && raw[end-1] == '|' {
		end--
	}
	for pos < end {
		if limit >= 0 && len(dst)-first >= limit {
			break
		}
		c := pos
		for c < end && !(raw[c] == '|' && (c == 0 || raw[c-1] != '\\')) {
			c++
		}
		a, b := pos, c
		for a < b && isSpaceByte(raw[a]) {
			a++
		}
		for b > a && isSpaceByte(raw[b-1]) {
			b--
		}
		dst = append(dst, cell{start: base + a, end: base + b})
		pos = c + 1
	}
	for limit >= 0 && len(dst)-first < limit {
		dst = append(dst, cell{missing: true})
	}
	rw.cells = dst[first:len(dst):len(dst)]
	rw.width = countCells(s.src[rw.start:rw.end])
	return rw, dst
}
