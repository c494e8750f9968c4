package issuequeue

import (
	"bytes"
	"strings"

	"github.com/yuin/goldmark/ast"
)

// An issue's fields may also be written as a list before its first
// subsection, one field to an item, as other tools and people write them:
//
//	- **Status**: skipped
//	- **Auto-Retry:** true
//	* Max-Retries: 2
//
// Such an item is read exactly like a table row of the same name: same
// names (case ignored), same values, same errors. Only items that name a
// field the tool reads are fields; "- Note: call Ann" is prose. A bold
// name close to a known one ("**Max-Retry**") is an error, as it is in a
// table, and so is a field written twice, in the table and the list alike.
// The tool edits such a field in place, in the item, and adds a field the
// issue lacks as a new item like the last one when the issue has no table.

// listBlock is a top-level list, lines [line, endLine), with its items.
type listBlock struct {
	line, endLine int
	items         []listItem
}

// listItem is one item of a top-level list: the line and byte span of the
// text of its first line (after the marker). single says the item is that
// one line of text and nothing else.
type listItem struct {
	line       int
	start, end int
	single     bool
}

// listItems returns the items of l, which goldmark parsed from the lines
// starting at line a.
func (s *scan) listItems(l *ast.List, a int) []listItem {
	base := s.lineStart(a)
	var out []listItem
	for it := l.FirstChild(); it != nil; it = it.NextSibling() {
		c := it.FirstChild()
		if c == nil {
			continue
		}
		if _, ok := c.(*ast.TextBlock); !ok {
			if _, ok := c.(*ast.Paragraph); !ok {
				continue
			}
		}
		lines := c.Lines()
		if lines.Len() == 0 {
			continue
		}
		seg := lines.At(0)
		start := base + seg.Start
		line := s.lineOf(start)
		out = append(out, listItem{line: line, start: start, end: s.lineEnd(line),
			single: lines.Len() == 1 && c.NextSibling() == nil && seg.Padding == 0})
	}
	return out
}

// listField reads an item's text as "**Name**: value", "**Name:** value"
// or "Name: value" (or with __ for **): the offsets in text of the name and
// of the value (trimmed), and whether the name is bold. A bold name
// without a colon ("**Status** skipped") is no field: ns and ne are the
// name's offsets all the same, with bold true.
func listField(text []byte) (ns, ne, vs, ve int, bold, ok bool) {
	i := 0
	for i < len(text) && (text[i] == ' ' || text[i] == '\t') {
		i++
	}
	var after int // where the value starts, before trimming
	if mark := text[i:min(i+2, len(text))]; string(mark) == "**" || string(mark) == "__" {
		bold = true
		ns = i + 2
		k := bytes.Index(text[ns:], mark)
		if k < 0 {
			return 0, 0, 0, 0, false, false
		}
		ne = ns + k
		after = ne + 2
		switch {
		case ne > ns && text[ne-1] == ':': // **Name:** value
			ne--
		default: // **Name**: value
			for after < len(text) && (text[after] == ' ' || text[after] == '\t') {
				after++
			}
			if after >= len(text) || text[after] != ':' {
				return ns, ne, 0, 0, true, false
			}
			after++
		}
	} else {
		ns = i
		k := bytes.IndexByte(text[ns:], ':')
		if k < 0 {
			return 0, 0, 0, 0, false, false
		}
		ne = ns + k
		after = ne + 1
	}
	for ne > ns && (text[ne-1] == ' ' || text[ne-1] == '\t') {
		ne--
	}
	if ne == ns {
		return 0, 0, 0, 0, false, false
	}
	vs, ve = after, len(text)
	for vs < ve && (text[vs] == ' ' || text[vs] == '\t') {
		vs++
	}
	for ve > vs && (text[ve-1] == ' ' || text[ve-1] == '\t') {
		ve--
	}
	return ns, ne, vs, ve, bold, true
}

// indexListFields adds to r.fields the fields written as list items in the
// record's intro, lists [from, to) of the scan, and reports the problems
// with them. It runs after indexFields, so that a field written both in the
// table and in a list is found.
func (d *doc) indexListFields(r *record, from, to int) {
	for li := from; li < to; li++ {
		lb := &d.s.lists[li]
		for _, it := range lb.items {
			text := d.src[it.start:it.end]
			ns, ne, vs, ve, bold, ok := listField(text)
			if !ok {
				if name := text[ns:ne]; bold && knownFieldIndex(name, !hasNonASCII(name)) >= 0 {
					r.findings = append(r.findings, d.finding(it.line, d.s.col(it.start+ns), false,
						"%s: a field item needs a colon after the name, as in - **%s**: value", name, name))
				}
				continue
			}
			name := text[ns:ne]
			k := knownFieldIndex(name, !hasNonASCII(name))
			if k < 0 {
				if near := nearField(string(name)); bold && near != "" {
					r.findings = append(r.findings, d.finding(it.line, d.s.col(it.start+ns), false,
						"unknown field %q, which is ignored as written; did you mean %q?", name, near))
				}
				continue
			}
			col := d.s.col(it.start + ns)
			if !it.single {
				r.findings = append(r.findings, d.finding(it.line, col, false,
					"%s: a field written as a list item must be alone on one line (- **%s**: value); this item goes on", knownFields[k], knownFields[k]))
				continue
			}
			if prev := findField(d, r, name); prev != nil {
				where := "in the table"
				if prev.list() {
					where = "in the list"
				}
				r.findings = append(r.findings, d.finding(it.line, col, false,
					"field %q appears twice in %s (first %s at line %d); keep one", name, r.key, where, prev.line+1))
				continue
			}
			r.fields = append(r.fields, fieldRef{row: -1, line: int32(it.line),
				name:  span32{int32(it.start + ns), int32(it.start + ne)},
				value: span32{int32(it.start + vs), int32(it.start + ve)}, hasValue: true,
				plain: !hasNonASCII(name), known: int8(k)})
		}
	}
}

// listValue makes v safe to write as the value of a list item: one line of
// valid UTF-8.
func listValue(v string) string {
	v = strings.ToValidUTF8(v, "\uFFFD")
	if strings.ContainsAny(v, "\r\n") {
		v = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(v)
	}
	return v
}

// setListField sets the value of the list field f in place.
func (d *doc) setListField(f *fieldRef, value string, add func(int, int, string)) {
	v := listValue(value)
	start, end := int(f.value.start), int(f.value.end)
	if start != end {
		add(start, end, v)
		return
	}
	if v == "" {
		return
	}
	if c := d.src[start-1]; c != ' ' && c != '\t' {
		v = " " + v
	}
	add(start, start, v)
}

// listTemplate returns where a new list field goes in r — after the last
// field written as a list item — and what comes before and after its name,
// copied from that item; ok is false if r has no list field that starts
// with a list marker on its line.
func (d *doc) listTemplate(r *record) (at int, prefix, sep string, ok bool) {
	var last *fieldRef
	for i := range r.fields {
		f := &r.fields[i]
		if !f.list() {
			continue
		}
		line := d.s.lineStart(int(f.line))
		if !startsWithMarker(d.src[line:f.name.start]) {
			continue
		}
		last = f
	}
	if last == nil {
		return 0, "", "", false
	}
	l := int(last.line)
	prefix = string(d.src[d.s.lineStart(l):last.name.start])
	sep = string(d.src[last.name.end:last.value.start])
	if !strings.HasSuffix(sep, " ") && !strings.HasSuffix(sep, "\t") {
		sep += " "
	}
	return d.s.lineEnd(l), prefix, sep, true
}

// startsWithMarker reports whether b, the start of a line, is indentation
// and a list marker.
func startsWithMarker(b []byte) bool {
	b = bytes.TrimLeft(b, " \t")
	switch {
	case len(b) == 0:
		return false
	case b[0] == '-' || b[0] == '*' || b[0] == '+':
		return true
	}
	n := 0
	for n < len(b) && b[n] >= '0' && b[n] <= '9' {
		n++
	}
	return n > 0 && n < len(b) && (b[n] == '.' || b[n] == ')')
}
