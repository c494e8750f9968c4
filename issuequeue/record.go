package issuequeue

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// record is a heading with its field table and its subsections: an issue in
// the queue, a section of the session state.
type record struct {
	key      string
	idx      int // in doc.records
	h        heading
	start    int // heading start
	end      int // start of the next heading of the same or a higher level
	endLine  int
	paras    [2]int     // range of scan.paras before the first subsection
	tablePar int        // index in scan.paras of the paragraph holding the field table (or the malformed one), or -1
	hasTable bool       // paras[tablePar] is the field table (not a malformed one); see doc.table
	fields   []fieldRef // the field rows, first of each name
	subs     []sub
	findings []Finding
	// dup: another record has the same key.
	dup bool
	// errs are the errors of the record's own, sorted, that quarantine it
	// (see quarantined).
	errs []Finding
	// foreign: a section of the session state the tool does not own; its
	// tables are someone else's to validate.
	foreign bool
}

// sub is a subsection of a record: a heading one level below the record's.
type sub struct {
	name    string
	line    int // the heading's first line
	hEnd    int // the line after the heading
	start   int // heading start
	body    int // first byte after the heading
	end     int
	endLine int
}

// doc is what both files share: source, scan, records and findings.
type doc struct {
	name     string
	src      []byte
	s        *scan
	nl       string // the file's line ending, for new lines
	records  []*record
	byKey    map[string]*record
	findings []Finding
	// history: a key may have several records, the newest last and in
	// byKey, and a record appended under a key in use is one more.
	history bool
	// fieldLists: fields may be written as list items too (see
	// listfield.go), as they may in issues.
	fieldLists bool
}

func newDoc(name string, src []byte) *doc {
	s := scanBlocks(src)
	// An issue has its heading and a few subsections.
	d := &doc{name: name, src: src, s: s, nl: "\n", byKey: make(map[string]*record, len(s.headings)/4)}
	if i := bytes.IndexByte(src, '\n'); i > 0 && src[i-1] == '\r' {
		d.nl = "\r\n"
	}
	if len(src) > maxFileSize {
		d.findings = append(d.findings, d.finding(0, 1, false, "the file is larger than 2 GiB; archive old issues ('orchestrator archive') to make it smaller"))
	}
	if off := invalidUTF8(src); off >= 0 {
		line := s.lineOf(off)
		d.findings = append(d.findings, d.finding(line, s.col(off), false,
			"the file is not valid UTF-8 (byte 0x%02x here); save it as UTF-8", src[off]))
	}
	// A block left open at the end hides every heading after it, and would
	// swallow whatever the tool appends, so the file cannot be changed.
	if u := d.s.unclosed; u != nil && u.fence {
		d.findings = append(d.findings, d.finding(u.line, 1, false,
			"this code fence is never closed, so everything after it is code; close it with a line of %s", u.closer))
	} else if u != nil {
		d.findings = append(d.findings, d.finding(u.line, 1, false,
			"this HTML block is never closed, so everything after it is part of it; close it with %s", u.closer))
	}
	for _, l := range s.tooDeep {
		d.findings = append(d.findings, d.finding(l, 1, false,
			"lists and block quotes nest too deeply here to tell where they end; nest them less, or put the text in a code fence"))
	}
	for _, l := range s.tooLong {
		d.findings = append(d.findings, d.finding(l, 1, false,
			"cannot tell whether this line underlines the paragraph above as a heading without reading too many link definitions; put a blank line before this line"))
	}
	return d
}

// invalidUTF8 returns the offset of the first byte of src that is not
// valid UTF-8, or -1.
func invalidUTF8(src []byte) int {
	if utf8.Valid(src) {
		return -1
	}
	for i := 0; i < len(src); {
		r, n := utf8.DecodeRune(src[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}

func (d *doc) finding(line, col int, warning bool, format string, args ...any) Finding {
	return Finding{File: d.name, Line: line + 1, Col: col, Msg: fmt.Sprintf(format, args...), Warning: warning}
}

// fillRecord fills in r, the record of headings[hi] under key, its extent
// and subsections from the headings after it. A heading marked in stops
// (if not nil) ends the record whatever its level. The subsections are
// appended to subs (the record's are a part of it, with no room to grow
// into the next record's), which is returned: a queue's records share one
// array.
func (d *doc) fillRecord(r *record, key string, hi int, stops []bool, subs []sub) []sub {
	hs := d.s.headings
	h := hs[hi]
	*r = record{key: key, h: h, start: h.start, end: len(d.src), endLine: d.s.nLines()}
	j := hi + 1
	for ; j < len(hs); j++ {
		if hs[j].level <= h.level || (stops != nil && stops[j]) {
			r.end, r.endLine = hs[j].start, hs[j].line
			break
		}
	}
	first := len(subs)
	for k := hi + 1; k < j; k++ {
		if hs[k].level != h.level+1 {
			continue
		}
		sb := sub{name: hs[k].title, line: hs[k].line, hEnd: hs[k].endLine, start: hs[k].start, body: hs[k].end, end: r.end, endLine: r.endLine}
		for m := k + 1; m < j; m++ {
			if hs[m].level <= hs[k].level {
				sb.end, sb.endLine = hs[m].start, hs[m].line
				break
			}
		}
		subs = append(subs, sb)
	}
	r.subs = subs[first:len(subs):len(subs)]
	return subs
}

// addRecord adds r, found under its key, to the records. A key seen before
// keeps its first record.
func (d *doc) addRecord(r *record) {
	r.idx = len(d.records)
	d.records = append(d.records, r)
	if _, seen := d.byKey[r.key]; !seen {
		d.byKey[r.key] = r
	}
}

// parseTables finds each record's field table, in parallel:
// the tables are what must be parsed, and the rest of the file is not.
func (d *doc) parseTables(check func(i int, buf *tableBuf)) {
	paras, lists := d.s.paras, d.s.lists
	pi, li := 0, 0
	// listRanges[i] is the range of lists before record i's first
	// subsection, where its fields may be written as list items; most
	// files have no list at all, and need no ranges.
	var listRanges [][2]int32
	if d.fieldLists && len(lists) > 0 {
		listRanges = make([][2]int32, len(d.records))
	}
	for ri, r := range d.records {
		for pi < len(paras) && paras[pi].line < r.h.endLine {
			pi++
		}
		r.paras = [2]int{pi, pi}
		intro := r.endLine // where the field table must have started: the first subsection, or the end
		if len(r.subs) > 0 {
			intro = r.subs[0].line
		}
		for r.paras[1] < len(paras) && paras[r.paras[1]].line < intro {
			r.paras[1]++
		}
		if listRanges == nil {
			continue
		}
		for li < len(lists) && lists[li].line < r.h.endLine {
			li++
		}
		end := li
		for end < len(lists) && lists[end].line < intro {
			end++
		}
		listRanges[ri] = [2]int32{int32(li), int32(end)}
	}
	run := func(buf *tableBuf, ri int) {
		r := d.records[ri]
		// The field table is the first paragraph that goldmark reads as a
		// table: prose with a pipe in it before the table must not hide it.
		r.tablePar = -1
		malformed := -1
		var t *table
		for k := r.paras[0]; k < r.paras[1] && t == nil; k++ {
			p := paras[k]
			if !p.hasPipe {
				continue
			}
			if t = d.s.fastTable(p, buf); t != nil {
				r.tablePar, r.hasTable = k, true
			} else if first := bytes.TrimSpace(d.s.lineText(p.line)); malformed < 0 && len(first) > 0 && first[0] == '|' {
				malformed = k
			}
		}
		if t == nil && malformed >= 0 {
			r.tablePar = malformed
			r.findings = append(r.findings, d.finding(paras[malformed].line, 1, false,
				"malformed table: the line after the header must be a delimiter row such as |---|---| with as many cells as the header"))
		}
		d.indexFields(r, t, buf)
		if listRanges != nil && listRanges[ri][0] < listRanges[ri][1] {
			d.indexListFields(r, int(listRanges[ri][0]), int(listRanges[ri][1]))
		}
		check(ri, buf)
	}
	workers := runtime.GOMAXPROCS(0)
	if len(d.records) < 64 || workers < 2 {
		buf := &tableBuf{}
		for ri := range d.records {
			run(buf, ri)
		}
	} else {
		// Workers take the records in batches: a hand-over per record
		// costs about what reading its table does.
		const batch = 128
		var next atomic.Int64
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				buf := &tableBuf{}
				for {
					lo := int(next.Add(batch)) - batch
					if lo >= len(d.records) {
						return
					}
					for ri := lo; ri < min(lo+batch, len(d.records)); ri++ {
						run(buf, ri)
					}
				}
			}()
		}
		wg.Wait()
	}
	for _, r := range d.records {
		if !r.foreign {
			d.findings = append(d.findings, r.findings...)
		}
	}
}

// maxRowFindings is how many problems with the rows of one field table
// are listed.
const maxRowFindings = 100

// indexFields records the field rows of the record's table t (nil: it has
// none) and reports the table's shape problems. t may live in a reused
// buffer: what later reads need of it is copied into r.fields, which is
// taken from buf (see fieldRefs).
func (d *doc) indexFields(r *record, t *table, buf *tableBuf) {
	if t == nil {
		return
	}
	r.fields = buf.fieldRefs(len(t.rows))
	hw := len(t.header.cells)
	if hw < 2 {
		r.findings = append(r.findings, d.finding(t.line, 1, false, "the field table needs two columns, | Field | Value |"))
	}
	// A table has a dozen or two rows, and findField scans them; for a
	// table with thousands, a scan per row would take time growing with the
	// square of its length, so names are looked up in a map instead.
	var seen map[string]int
	if len(t.rows) > 64 {
		seen = make(map[string]int, len(t.rows))
	}
	// A table's rows can each be a problem (a field written a hundred
	// thousand times): the first maxRowFindings are reported, then how
	// many more, so that what a file costs to lint stays small.
	var knownRow [len(knownFields)]int32 // 1 + the row of each known field met
	rowFindings, more, moreLine := 0, 0, 0
	report := func(line, col int, format string, args ...any) {
		if rowFindings == maxRowFindings {
			if more == 0 {
				moreLine = line
			}
			more++
			return
		}
		rowFindings++
		r.findings = append(r.findings, d.finding(line, col, false, format, args...))
	}
	for i, rw := range t.rows {
		if !bytes.Contains(d.src[rw.start:rw.end], []byte{'|'}) {
			report(rw.line, 1,
				"text directly under a table is read as a table row; put a blank line between the table and the text")
			continue
		}
		if rw.width > hw {
			report(rw.line, 1,
				"row has %d cells but the table header has %d; the extra cells would be ignored", rw.width, hw)
		}
		if len(rw.cells) == 0 || rw.cells[0].missing {
			continue
		}
		name := rw.cells[0]
		if name.start == name.end {
			continue
		}
		raw := d.src[name.start:name.end]
		plain := !hasNonASCII(raw) && bytes.IndexByte(raw, '\\') < 0
		k := knownFieldIndex(raw, plain)
		prev := -1
		switch {
		case seen != nil:
			key := foldKey(d.s.cellText(name))
			if p, ok := seen[key]; ok {
				prev = p
			} else {
				seen[key] = i
			}
		case k >= 0:
			// Two rows naming the same known field are the same name;
			// a known and an unknown one never are.
			if knownRow[k] > 0 {
				prev = int(knownRow[k]) - 1
			} else {
				knownRow[k] = int32(i) + 1
			}
		case bytes.IndexByte(raw, '\\') >= 0:
			prev = fieldIndex(d, r, d.s.cellText(name))
		default:
			prev = fieldIndex(d, r, raw)
		}
		if prev >= 0 {
			report(rw.line, d.s.col(name.start),
				"field %q appears twice in %s (first at line %d)", d.s.cellText(name), r.key, t.rows[prev].line+1)
			continue
		}
		f := fieldRef{row: int32(i), line: int32(rw.line), name: span32{int32(name.start), int32(name.end)},
			plain: plain, known: int8(k)}
		if len(rw.cells) >= 2 && !rw.cells[1].missing {
			f.value, f.hasValue = span32{int32(rw.cells[1].start), int32(rw.cells[1].end)}, true
		}
		r.fields = append(r.fields, f)
	}
	if more > 0 {
		r.findings = append(r.findings, d.finding(moreLine, 1, false,
			"%d more problems with rows of %s's field table from here on are not listed", more, r.key))
	}
}

// fieldRef is what reading needs of a row of a field table, compactly (a
// queue has tens of thousands): the row's index in the table (for edits,
// which parse the table again, see doc.table), its line, the spans of its
// name and value cells. plain says the name is ASCII with no escapes, so
// that comparing it needs no unescaping nor Unicode; known which of the
// fields the tool reads it names. A field written as a list item (list)
// has no row; its value is the item's text after the name, as written.
type fieldRef struct {
	row, line       int32
	name, value     span32
	hasValue, plain bool
	known           int8 // index in knownFields, or -1
}

// list reports whether the field is written as a list item (row -1)
// rather than as a row of the field table.
func (f *fieldRef) list() bool { return f.row < 0 }

// span32 is a byte span of a state file, which is smaller than 2 GiB.
type span32 struct{ start, end int32 }

// maxFileSize is the largest state file spans can address.
const maxFileSize = 1<<31 - 1

// fieldIndex returns the index in the table's rows of the field named name
// (raw cell bytes or a string; case is ignored), or -1.
func fieldIndex[T string | []byte](d *doc, r *record, name T) int {
	if f := findField(d, r, name); f != nil {
		return int(f.row)
	}
	return -1
}

// findField returns the field named name (case is ignored), or nil. A
// field table has a dozen or two rows: a scan beats a map, which would cost
// an allocation per issue.
func findField[T string | []byte](d *doc, r *record, name T) *fieldRef {
	simple := !hasNonASCII(name)
	for i := range r.fields {
		f := &r.fields[i]
		raw := d.src[f.name.start:f.name.end]
		if f.plain && simple {
			if len(raw) == len(name) && equalFoldASCII(raw, name) {
				return f
			}
		} else if strings.EqualFold(unescapeCell(string(raw)), string(name)) {
			return f
		}
	}
	return nil
}

// table parses the record's field table again, for an edit; nil if it has none.
func (d *doc) table(r *record) *table {
	if !r.hasTable {
		return nil
	}
	return d.s.fastTable(d.s.paras[r.tablePar], nil)
}

// field returns the unescaped value of a field and whether the row exists.
func (d *doc) field(r *record, name string) (string, bool) {
	f := findField(d, r, name)
	if f == nil {
		return "", false
	}
	if !f.hasValue {
		return "", true
	}
	if f.list() {
		return string(d.src[f.value.start:f.value.end]), true
	}
	return unescapeCell(string(d.src[f.value.start:f.value.end])), true
}

// fieldPos returns the line and column to report a problem with a field at.
func (d *doc) fieldPos(r *record, name string) (int, int) {
	f := findField(d, r, name)
	if f == nil {
		return r.h.line, 1
	}
	return int(f.line), d.s.col(int(f.name.start))
}

// section returns a subsection by name (case-insensitive).
func (r *record) section(name string) (sub, bool) {
	for _, s := range r.subs {
		if strings.EqualFold(s.name, name) {
			return s, true
		}
	}
	return sub{}, false
}

// sectionText returns the body of a subsection with surrounding blank lines
// removed; a body that is a single fenced code block is returned unfenced.
func (d *doc) sectionText(r *record, name string) (string, bool) {
	sb, ok := r.section(name)
	if !ok {
		return "", false
	}
	body := d.src[sb.body:sb.end]
	return Unfence(strings.Trim(strings.ReplaceAll(string(body), "\r\n", "\n"), "\n \t")), true
}

// Unfence returns the content of text if it is exactly one fenced code
// block, else text unchanged.
func Unfence(text string) string {
	lines := strings.Split(text, "\n")
	if len(lines) < 2 {
		return text
	}
	cols, n := indentOf([]byte(lines[0]))
	f, ok := openFence([]byte(lines[0][n:]), cols)
	if !ok || cols > 3 || !f.closedBy([]byte(lines[len(lines)-1])) {
		return text
	}
	for _, l := range lines[1 : len(lines)-1] {
		if f.closedBy([]byte(l)) {
			return text
		}
	}
	return strings.Join(lines[1:len(lines)-1], "\n")
}

// quarantined reports whether the record has errors of its own, so that
// edits leave its bytes alone.
func (r *record) quarantined() bool { return len(r.errs) > 0 }
