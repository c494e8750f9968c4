package issuequeue

import "bytes"

// fastTable reads the paragraph p's table exactly as goldmark's GFM table
// extension does (extension/table.go: Transform, parseDelimiter, parseRow),
// without building an AST: goldmark's nodes for a table take a hundred
// times its size in memory, and a queue of 10,000 issues has 10,000 tables.
// TestFastTableAgreesWithGoldmark and FuzzFastTable hold the two to the
// same result. It returns nil if goldmark sees no table in p.
//
// With buf, the table is built in buf's memory, which the next call reuses:
// the parallel parse reads every field table once, keeps what it needs from
// it (see fieldRef), and so touches far less memory.
func (s *scan) fastTable(p para, buf *tableBuf) *table {
	hdr, cols, found := s.tableHeader(p, false)
	if !found {
		return nil
	}
	// One array holds the cells of every row: a row is a slice of it.
	nrows := p.endLine - hdr - 2
	if buf == nil {
		buf = &tableBuf{}
	}
	cells := buf.cells[:0]
	if need := (nrows + 1) * cols; cap(cells) < need {
		cells = make([]cell, 0, need)
	}
	header, cells := s.fastRow(hdr, -1, cells)
	for len(header.cells) < cols {
		header.cells = append(header.cells, cell{missing: true}) // goldmark pads a narrower header
	}
	rows := buf.t.rows[:0]
	if cap(rows) < nrows {
		rows = make([]row, 0, nrows)
	}
	t := &buf.t
	*t = table{header: header, line: hdr, start: header.start, rows: rows[:nrows]}
	for i := range t.rows {
		t.rows[i], cells = s.fastRow(hdr+2+i, cols, cells)
	}
	buf.cells = cells
	last := hdr + 1
	if len(t.rows) > 0 {
		last = t.rows[len(t.rows)-1].line
	}
	t.end, t.endLine = s.lineEnd(last), last+1
	return t
}

// tableHeader returns where goldmark's table extension sees a table in the
// paragraph p: at the first line after the paragraph's first that is a
// delimiter row, whose line before is the header, unless that header has
// more cells than the delimiter row (then there is no table at all). The
// lines before the header stay a paragraph; every line after the delimiter
// row is a row of the table.
//
// Before a setext underline (trimmed), goldmark reads the paragraph's lines
// with their indentation trimmed, and the last one with its line ending
// trimmed too.
func (s *scan) tableHeader(p para, trimmed bool) (hdr, cols int, found bool) {
	for i := p.line + 1; i < p.endLine; i++ {
		var c int
		var ok bool
		if l, last := s.lineText(i), i == p.endLine-1; trimmed {
			if last {
				l = bytes.TrimRight(l, " \t\r\n")
			}
			c, ok = delimiterCells(bytes.TrimLeft(l, " \t\r\n"), last)
		} else {
			c, ok = delimiterColumns(l, last)
		}
		if !ok {
			continue
		}
		if rowCells(s.lineText(i-1)) > c {
			return 0, 0, false
		}
		return i - 1, c, true
	}
	return 0, 0, false
}

// delimiterColumns mirrors goldmark's parseDelimiter on line i of the
// paragraph p: the number of columns of a delimiter row, or false if the
// line is not one. goldmark reads each line with its newline, except the
// last line of a paragraph, which is why a line of dashes alone can be a
// delimiter row only there.
func delimiterColumns(line []byte, last bool) (int, bool) {
	if cols, _ := indentOf(line); cols > 3 {
		return 0, false
	}
	return delimiterCells(line, last)
}

// delimiterCells is delimiterColumns after the indentation check.
func delimiterCells(line []byte, last bool) (int, bool) {
	allDash := true
	for _, b := range line {
		if b != '-' {
			allDash = false
		}
		if !(isSpaceByte(b) || b == '-' || b == '|' || b == ':') {
			return 0, false
		}
	}
	if allDash && last {
		return 0, false
	}
	// bytes.Split without its allocation: a delimiter row has a few cells.
	var buf [16][]byte
	parts := buf[:0]
	for rest := line; ; {
		i := bytes.IndexByte(rest, '|')
		if i < 0 {
			parts = append(parts, rest)
			break
		}
		parts = append(parts, rest[:i])
		rest = rest[i+1:]
	}
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

// rowCells returns the number of cells fastRow finds on a line, with no limit.
func rowCells(raw []byte) int {
	pos, end := rowBounds(raw)
	n := 0
	for pos < end {
		pos = cellEnd(raw, pos, end) + 1
		n++
	}
	return n
}

// rowBounds returns the part of a table line that holds its cells: the
// line trimmed, without its outer pipes (the last one even if escaped).
func rowBounds(raw []byte) (pos, end int) {
	lo, hi := 0, len(raw)
	for lo < hi && isSpaceByte(raw[lo]) {
		lo++
	}
	for hi > lo && isSpaceByte(raw[hi-1]) {
		hi--
	}
	pos, end = lo, hi
	if pos < end && raw[pos] == '|' {
		pos++
	}
	if pos < end && raw[end-1] == '|' {
		end--
	}
	return pos, end
}

// cellEnd returns the end of the cell that starts at pos: the next pipe not
// preceded by a backslash, or end.
func cellEnd(raw []byte, pos, end int) int {
	c := pos
	for c < end && !(raw[c] == '|' && (c == 0 || raw[c-1] != '\\')) {
		c++
	}
	return c
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
	rw := row{line: i, start: base, end: base + len(raw)}
	pos, end := rowBounds(raw)
	for pos < end {
		if limit >= 0 && len(dst)-first >= limit {
			break
		}
		c := cellEnd(raw, pos, end)
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
