package issuequeue

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
)

// Edit is one change to a state file, applied as a splice of source bytes.
// Edits name what they change (an issue's field, a section), not where it
// is, so that they can be re-applied to a file a person saved meanwhile.
type Edit struct {
	kind   editKind
	key    string // issue ID, or session state section title
	name   string // field or subsection name
	value  string
	fenced bool
	cells  []string
	header []string
	rows   [][]string // AppendRow edits of one section, merged
}

type editKind int

const (
	editField editKind = iota
	editSection
	editRow
	editAppend
	editRemove
)

// SetField sets a field of an issue (or of a session state section). A
// missing row is added at the end of the table; value is escaped for the cell.
func SetField(key, field, value string) Edit {
	return Edit{kind: editField, key: key, name: field, value: value}
}

// SetSection replaces the body of a subsection, adding the subsection at the
// end of the issue if it is missing. Text that could be read as markdown
// structure is fenced; a plain line is written as it is.
func SetSection(key, section, text string) Edit {
	return Edit{kind: editSection, key: key, name: section, value: text, fenced: needsFence(text)}
}

// SetSectionMarkdown replaces the body of a subsection with markdown the
// caller has made safe (for example with Fence).
func SetSectionMarkdown(key, section, markdown string) Edit {
	return Edit{kind: editSection, key: key, name: section, value: markdown}
}

// Fence returns text inside a backtick fence longer than any backtick run in
// it, so that nothing in the text can end the fence or start a heading.
func Fence(text string) string { return fenceText(strings.TrimRight(normalizeNewlines(text), "\n")) }

// AppendRow appends a row to the table in a subsection, creating the
// subsection and the table (with header) if they are missing.
func AppendRow(key, section string, header, cells []string) Edit {
	return Edit{kind: editRow, key: key, name: section, header: header, cells: cells}
}

// AppendIssue appends the markdown of a new issue with the given ID at the
// end of the queue.
func AppendIssue(id, markdown string) Edit {
	return Edit{kind: editAppend, key: id, value: markdown}
}

// RemoveIssue removes an issue, heading to the start of the next one.
func RemoveIssue(id string) Edit { return Edit{kind: editRemove, key: id} }

// ConflictError reports that a person or another process changed, after the
// file was read, the same thing an edit changes. Nothing was written.
type ConflictError struct {
	File, Key, Name string
	Theirs          string
}

func (e *ConflictError) Error() string {
	what := e.Key
	if e.Name != "" {
		what += " " + e.Name
	}
	if e.Theirs != "" {
		return fmt.Sprintf("%s: %s was changed meanwhile (now %q); nothing was written", e.File, what, e.Theirs)
	}
	return fmt.Sprintf("%s: %s was changed meanwhile; nothing was written", e.File, what)
}

// NotFoundError reports an edit of an issue the file does not have.
type NotFoundError struct{ File, Key string }

func (e *NotFoundError) Error() string { return fmt.Sprintf("%s: no issue %s", e.File, e.Key) }

type splice struct {
	start, end int
	text       string
	seq        int
}

// apply returns the source with the edits spliced in. With newRecords, a
// field edit of a record the file lacks adds it at the end as a level-2
// heading with a field table (session state sections are created that way).
func (d *doc) apply(edits []Edit, newRecords bool) ([]byte, error) {
	var sp []splice
	add := func(start, end int, text string) {
		sp = append(sp, splice{start, end, strings.ReplaceAll(text, "\n", d.nl), len(sp)})
	}
	edits = mergeRows(edits)
	var appended strings.Builder
	newRecs := map[string]*strings.Builder{}
	var newOrder []string
	tailLead := map[*record]bool{}
	newTables := map[*record]*strings.Builder{}
	tables := map[*record]*table{} // field tables parsed again for edits, once each
	for _, e := range edits {
		if e.kind == editAppend {
			if _, dup := d.byKey[e.key]; dup && !d.history {
				return nil, &ConflictError{File: d.name, Key: e.key, Name: "ID", Theirs: "already used"}
			}
			if appended.Len() > 0 {
				appended.WriteString("\n")
			}
			appended.WriteString(strings.TrimRight(normalizeNewlines(e.value), "\n") + "\n")
			continue
		}
		r, ok := d.byKey[e.key]
		if ok && r.quarantined() {
			return nil, d.quarantinedError(r)
		}
		if !ok {
			if !newRecords || e.kind != editField {
				return nil, &NotFoundError{File: d.name, Key: e.key}
			}
			b := newRecs[e.key]
			if b == nil {
				b = &strings.Builder{}
				b.WriteString("## " + e.key + "\n\n| Field | Value |\n|-------|-------|\n")
				newRecs[e.key] = b
				newOrder = append(newOrder, e.key)
			}
			b.WriteString(formatRow("", true, []string{e.name, e.value}) + "\n")
			continue
		}
		switch e.kind {
		case editRemove:
			add(r.start, r.end, "")
		case editField:
			if f := findField(d, r, e.name); f != nil && f.list() {
				d.setListField(f, e.value, add)
				continue
			}
			if !r.hasTable {
				if at, prefix, sep, ok := d.listTemplate(r); ok {
					add(at, at, "\n"+prefix+listValue(e.name)+sep+listValue(e.value))
					continue
				}
				b := newTables[r]
				if b == nil {
					b = &strings.Builder{}
					b.WriteString(d.lineBreakBefore(r.h.end) + "\n| Field | Value |\n|-------|-------|\n")
					newTables[r] = b
				}
				b.WriteString(formatRow("", true, []string{e.name, e.value}) + "\n")
				continue
			}
			t, ok := tables[r]
			if !ok {
				t = d.table(r)
				tables[r] = t
			}
			d.setField(r, t, e, add)
		case editSection:
			body := sectionBody(e.value, e.fenced)
			if sb, ok := r.section(e.name); ok {
				start, end := d.contentSpan(sb.body, sb.endLine, sb.hEnd)
				if start == end {
					add(start, start, d.lineBreakBefore(start)+body+"\n")
				} else {
					add(start, end, body)
				}
				continue
			}
			at, lead := d.recordTail(r)
			if tailLead[r] {
				lead = ""
			}
			tailLead[r] = true
			add(at, at, lead+"\n"+strings.Repeat("#", r.h.level+1)+" "+e.name+"\n"+body+"\n")
		case editRow:
			rows := make([]string, len(e.rows))
			sb, ok := r.section(e.name)
			if !ok {
				for i, c := range e.rows {
					rows[i] = formatRow("", true, c)
				}
				at, lead := d.recordTail(r)
				if tailLead[r] {
					lead = ""
				}
				tailLead[r] = true
				add(at, at, lead+"\n"+strings.Repeat("#", r.h.level+1)+" "+e.name+"\n"+tableHead(e.header)+strings.Join(rows, "\n")+"\n")
				continue
			}
			if t := d.sectionTable(sb); t != nil {
				indent, outer := d.rowShape(t)
				for i, c := range e.rows {
					rows[i] = formatRow(indent, outer, c)
				}
				add(t.end, t.end, "\n"+strings.Join(rows, "\n"))
				continue
			}
			for i, c := range e.rows {
				rows[i] = formatRow("", true, c)
			}
			start, end := d.contentSpan(sb.body, sb.endLine, sb.hEnd)
			if start == end {
				add(start, start, d.lineBreakBefore(start)+tableHead(e.header)+strings.Join(rows, "\n")+"\n")
			} else {
				add(end, end, "\n\n"+tableHead(e.header)+strings.Join(rows, "\n"))
			}
		}
	}
	for r, b := range newTables {
		text := b.String()
		if next := r.h.endLine; next < d.s.nLines() && !isBlank(d.s.lineText(next)) {
			text += "\n"
		}
		add(r.h.end, r.h.end, text)
	}
	if appended.Len() > 0 || len(newOrder) > 0 {
		var b strings.Builder
		b.WriteString(d.appendLead())
		for i, k := range newOrder {
			if i > 0 {
				b.WriteString("\n")
			}
			b.WriteString(newRecs[k].String())
		}
		if appended.Len() > 0 {
			if len(newOrder) > 0 {
				b.WriteString("\n")
			}
			b.WriteString(appended.String())
		}
		add(len(d.src), len(d.src), b.String())
	}
	sort.SliceStable(sp, func(i, j int) bool {
		if sp[i].start != sp[j].start {
			return sp[i].start < sp[j].start
		}
		return sp[i].seq < sp[j].seq
	})
	size := len(d.src)
	for _, s := range sp {
		size += len(s.text) - (s.end - s.start)
	}
	var out bytes.Buffer
	out.Grow(max(size, 0))
	pos := 0
	for _, s := range sp {
		if s.start < pos {
			return nil, fmt.Errorf("%s: overlapping edits at byte %d", d.name, s.start)
		}
		out.Write(d.src[pos:s.start])
		out.WriteString(s.text)
		pos = s.end
	}
	out.Write(d.src[pos:])
	b := out.Bytes()
	// A file without a final newline keeps it that way when text is added
	// at its end.
	if n := len(d.src); n > 0 && d.src[n-1] != '\n' && len(sp) > 0 && sp[len(sp)-1].start == n {
		b = bytes.TrimSuffix(b, []byte(d.nl))
	}
	return b, nil
}

// mergeRows folds the AppendRow edits of one section into the first of them,
// so that they are written together in order.
func mergeRows(edits []Edit) []Edit {
	out := make([]Edit, 0, len(edits))
	first := map[string]int{}
	for _, e := range edits {
		if e.kind != editRow {
			out = append(out, e)
			continue
		}
		k := e.key + "\x00" + strings.ToLower(e.name)
		if i, ok := first[k]; ok {
			out[i].rows = append(out[i].rows, e.cells)
			continue
		}
		e.rows = [][]string{e.cells}
		first[k] = len(out)
		out = append(out, e)
	}
	return out
}

// setField sets field e.name of record r, whose field table is t.
func (d *doc) setField(r *record, t *table, e Edit, add func(int, int, string)) {
	v := EscapeCell(e.value)
	if i := fieldIndex(d, r, e.name); i >= 0 {
		rw := t.rows[i]
		if len(rw.cells) >= 2 && !rw.cells[1].missing {
			c := rw.cells[1]
			switch {
			case c.start != c.end:
				add(c.start, c.end, v)
			case v == "":
			case c.start < len(d.src) && d.src[c.start] == '|':
				add(c.start, c.start, v+" ")
			default:
				add(c.start, c.start, v)
			}
			return
		}
		indent, outer := d.rowShape(t)
		name := string(d.src[rw.cells[0].start:rw.cells[0].end])
		add(rw.start, rw.end, indent+formatRowRaw(outer, []string{name, v}))
		return
	}
	indent, outer := d.rowShape(t)
	add(t.end, t.end, "\n"+indent+formatRowRaw(outer, []string{EscapeCell(e.name), v}))
}

// rowShape returns the indentation and outer-pipe style of a table's rows,
// so that a new row looks like its neighbours.
func (d *doc) rowShape(t *table) (indent string, outer bool) {
	l := d.src[t.header.start:t.header.end]
	_, n := indentOf(l)
	return string(l[:n]), n < len(l) && l[n] == '|'
}

func formatRow(indent string, outer bool, cells []string) string {
	esc := make([]string, len(cells))
	for i, c := range cells {
		esc[i] = EscapeCell(c)
	}
	return indent + formatRowRaw(outer, esc)
}

func formatRowRaw(outer bool, cells []string) string {
	for i, c := range cells {
		if c == "" {
			cells[i] = " "
		}
	}
	s := strings.Join(cells, " | ")
	if outer {
		return "| " + s + " |"
	}
	return s
}

func tableHead(header []string) string {
	dashes := make([]string, len(header))
	for i := range dashes {
		dashes[i] = "---"
	}
	return formatRow("", true, header) + "\n|" + strings.Join(dashes, "|") + "|\n"
}

// contentSpan returns the span from the first to the last non-blank line
// among lines [from, to) starting at byte start; an all-blank range gives an
// empty span at start.
func (d *doc) contentSpan(start, to, from int) (int, int) {
	first, last := -1, -1
	for i := from; i < to; i++ {
		if !isBlank(d.s.lineText(i)) {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		return start, start
	}
	return d.s.lineStart(first), d.s.lineEnd(last)
}

// recordTail returns where to add a subsection to a record: after its last
// non-blank line, and the line break needed first if that line has none.
func (d *doc) recordTail(r *record) (int, string) {
	_, end := d.contentSpan(r.start, r.endLine, r.h.line)
	if end < len(d.src) && d.src[end] == '\r' {
		end++
	}
	if end < len(d.src) && d.src[end] == '\n' {
		return end + 1, ""
	}
	return end, "\n"
}

// lineBreakBefore returns "\n" if offset at does not start a line.
func (d *doc) lineBreakBefore(at int) string {
	if at == 0 || (at <= len(d.src) && d.src[at-1] == '\n') {
		return ""
	}
	return "\n"
}

// appendLead returns what must precede text appended at the end of the file
// so that it starts after a blank line.
func (d *doc) appendLead() string {
	switch {
	case len(d.src) == 0:
		return ""
	case !bytes.HasSuffix(d.src, []byte("\n")):
		return "\n\n"
	case bytes.HasSuffix(d.src, []byte("\n\n")) || bytes.HasSuffix(d.src, []byte("\n\r\n")):
		return ""
	}
	return "\n"
}

// sectionTable parses the first table in a subsection: the first paragraph
// that goldmark reads as a table, so that prose with a pipe before the
// table does not hide it.
func (d *doc) sectionTable(sb sub) *table {
	k := sort.Search(len(d.s.paras), func(k int) bool { return d.s.paras[k].line >= sb.hEnd })
	for ; k < len(d.s.paras) && d.s.paras[k].line < sb.endLine; k++ {
		if !d.s.paras[k].hasPipe {
			continue
		}
		if t := d.s.fastTable(d.s.paras[k], nil); t != nil {
			return t
		}
	}
	return nil
}

// sectionBody renders text for a subsection body, without a final newline.
func sectionBody(text string, fenced bool) string {
	text = normalizeNewlines(text)
	text = strings.TrimRight(text, "\n")
	if !fenced {
		return text
	}
	return fenceText(text)
}

// fenceText fences text with a backtick fence longer than any backtick run
// in it, so that nothing in the text can end the fence.
func fenceText(text string) string {
	run, longest := 0, 0
	for i := 0; i < len(text); i++ {
		if text[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", max(3, longest+1))
	if text == "" {
		return f + "\n" + f
	}
	return f + "\n" + text + "\n" + f
}

// normalizeNewlines turns CRLF and lone CR into LF and drops bytes that are
// not valid UTF-8 or are NUL, so that written text is plain lines.
func normalizeNewlines(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if strings.ContainsAny(s, "\r\x00") {
		s = strings.NewReplacer("\r\n", "\n", "\r", "\n", "\x00", "\uFFFD").Replace(s)
	}
	return s
}

// needsFence reports whether text written as plain markdown could be read as
// anything other than one paragraph of itself.
func needsFence(text string) bool {
	text = strings.TrimSpace(normalizeNewlines(text))
	if text == "" || strings.Contains(text, "\n") {
		return text != ""
	}
	if strings.ContainsAny(text, "<>`|\\&[]*_") {
		return true
	}
	if startsBlock([]byte(text), 0) {
		return true
	}
	return setextLevel([]byte(text)) > 0 || (text[0] >= '0' && text[0] <= '9')
}
