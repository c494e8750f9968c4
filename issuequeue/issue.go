package issuequeue

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/suggest"
)

// Issue is one issue with its fields read and defaults applied.
type Issue struct {
	ID   string
	Line int // 1-based line of the heading

	Type, Priority, Status string
	Source, Category       string
	Created                time.Time // zero when missing
	AutoRetry, Halted      bool
	Blocking               bool
	RetryCount             int
	MaxRetries             int  // 0 with HasMaxRetries false when missing: the caller's default applies
	HasMaxRetries          bool // Max-Retries was given
	FailureSignature       string
	PreviousSignatures     []string
	SignatureRepeatCount   int
	Verify                 string

	q *Queue
	r *record
}

// Findings returns the errors that quarantine the issue; none for a valid one.
func (is *Issue) Findings() []Finding { return is.r.errs }

// Field returns the raw (unescaped) value of any field, known or not, and
// whether the issue's table has that row.
func (is *Issue) Field(name string) (string, bool) { return is.q.d.field(is.r, name) }

// FieldPos returns the 1-based line and column of a field's name, as
// findings about the field give them, and whether the issue has the field.
func (is *Issue) FieldPos(name string) (line, col int, ok bool) {
	f := findField(is.q.d, is.r, name)
	if f == nil {
		return 0, 0, false
	}
	return int(f.line) + 1, is.q.d.s.col(int(f.name.start)), true
}

// PendingAutoRetry reports whether the end-of-loop check considers the
// issue for an auto-retry loop: Auto-Retry true, Status pending, not halted.
func (is *Issue) PendingAutoRetry() bool {
	return is.AutoRetry && is.Status == StatusPending && !is.Halted
}

// Section returns the text of a subsection (a fenced body comes back unfenced).
func (is *Issue) Section(name string) (string, bool) { return is.q.d.sectionText(is.r, name) }

// SectionNames returns the names of the issue's subsections, in order.
func (is *Issue) SectionNames() []string {
	names := make([]string, len(is.r.subs))
	for i, s := range is.r.subs {
		names[i] = s.name
	}
	return names
}

// Summary returns the first line of the Summary section, or of a
// "**Summary:** text" paragraph before the issue's first subsection, or
// the heading's text after the ID.
func (is *Issue) Summary() string {
	if s, ok := is.Section(SectionSummary); ok {
		for _, l := range strings.Split(s, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				return UnescapeLine(l)
			}
		}
	}
	d := is.q.d
	for k := is.r.paras[0]; k < is.r.paras[1]; k++ {
		p := d.s.paras[k]
		for i := p.line; i < p.endLine; i++ {
			if s, ok := boldSummary(string(d.s.lineText(i))); ok {
				return s
			}
		}
	}
	return strings.TrimLeft(strings.TrimPrefix(is.r.h.title, is.ID), " \t:")
}

// boldSummary reads a "**Summary:** text" (or "**Summary**: text") line.
func boldSummary(l string) (string, bool) {
	l = strings.TrimSpace(l)
	for _, p := range []string{"**" + SectionSummary + ":**", "**" + SectionSummary + "**:"} {
		if len(l) > len(p) && strings.EqualFold(l[:len(p)], p) {
			if s := strings.TrimSpace(l[len(p):]); s != "" {
				return s, true
			}
		}
	}
	return "", false
}

// load reads the typed fields and reports invalid values. Values many
// issues share are made strings through buf (nil: one string each).
func (is *Issue) load(buf *tableBuf) {
	d, r := is.q.d, is.r
	bad := func(field, format string, args ...any) {
		line, col := d.fieldPos(r, field)
		r.findings = append(r.findings, d.finding(line, col, false, "%s: %s", field, fmt.Sprintf(format, args...)))
	}
	if !r.hasTable && r.tablePar < 0 && len(r.fields) == 0 && validID(is.ID) && !r.dup {
		r.findings = append(r.findings, d.finding(r.h.line, 1, true,
			"%s has no field table, so every field has its default; start it with | Field | Value | right under the heading", is.ID))
	}
	// One pass over the rows finds the known fields (a lookup per field
	// would scan the rows again for each); values are read as trimmed
	// bytes and made strings only where the Issue keeps them.
	var vals [len(knownFields)][]byte
	var found, asItem [len(knownFields)]bool
	known := 0 // rows of known fields: when all are, no name needs checking
	for i := range r.fields {
		f := &r.fields[i]
		k := int(f.known)
		if k < 0 || found[k] {
			continue
		}
		known++
		found[k], asItem[k] = true, f.list()
		if f.hasValue {
			vals[k] = bytes.TrimSpace(d.src[f.value.start:f.value.end])
		}
	}
	get := func(field int) []byte { return vals[field] }
	plain := func(field int) bool { return asItem[field] || !bytes.Contains(vals[field], []byte(`\|`)) }
	str := func(field int) string {
		if plain(field) {
			return buf.string(vals[field])
		}
		return unescapeCell(string(vals[field]))
	}
	word := func(field int) string { // str, for the values issues share
		if plain(field) {
			return buf.intern(vals[field])
		}
		return str(field)
	}

	is.Type = strings.ToLower(word(kType))
	if is.Type == "" {
		is.Type = "bug"
	}
	is.Priority = enumWord(get(kPriority), "medium", Priorities, func(v, hint string) {
		bad(FieldPriority, "%q is not a priority (critical, high, medium, low)%s", v, hint)
	})
	is.Status = enumWord(get(kStatus), StatusPending, statusWords, func(v, hint string) {
		bad(FieldStatus, "%q is not a status (pending, in_progress, resolved, escalated, skipped, or a synonym such as completed or wont_fix)%s", v, hint)
	})
	if s, ok := StatusSynonyms[is.Status]; ok {
		is.Status = s
	}
	is.Source, is.Category, is.Verify = word(kSource), word(kCategory), word(kVerify)
	if t, ok := utcTime(get(kCreated)); ok {
		is.Created = t
	} else if v := str(kCreated); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			bad(FieldCreated, "%q is not an RFC 3339 time such as 2026-11-22T10:00:00Z", v)
		}
		is.Created = t
	}
	for _, b := range []struct {
		k int
		p *bool
	}{{kAutoRetry, &is.AutoRetry}, {kHalted, &is.Halted}, {kBlocking, &is.Blocking}} {
		v, ok := boolWord(get(b.k))
		if !ok {
			var err error
			if v, err = ParseBool(str(b.k)); err != nil {
				bad(knownFields[b.k], "%v", err)
			}
		}
		*b.p = v
	}
	for _, n := range []struct {
		k int
		p *int
	}{{kRetryCount, &is.RetryCount}, {kSignatureRepeatCount, &is.SignatureRepeatCount}, {kMaxRetries, &is.MaxRetries}} {
		if len(get(n.k)) == 0 {
			continue
		}
		k, ok := smallNumber(get(n.k))
		if !ok {
			v := str(n.k)
			var err error
			if k, err = strconv.Atoi(v); err != nil || k < 0 {
				bad(knownFields[n.k], "%q is not a whole number", v)
				continue
			}
		}
		*n.p = k
		if n.k == kMaxRetries {
			is.HasMaxRetries = true
		}
	}
	if v := str(kFailureSignature); v != "" {
		if !validSignature(v) {
			bad(FieldFailureSignature, "%q is not a signature (64 lowercase hex digits, or their first 16, or empty)", v)
		} else {
			is.FailureSignature = v
		}
	}
	if v := get(kPreviousSignatures); len(v) > 0 {
		var sigs []string
		var err error
		if !emptyList(v) {
			var ok bool
			if sigs, ok = signatureList(v, buf); !ok || !plain(kPreviousSignatures) {
				sigs, err = ParseSignatureList(str(kPreviousSignatures))
			}
		}
		if err != nil {
			bad(FieldPreviousSignatures, "%v", err)
		}
		is.PreviousSignatures = sigs
	}
	if known == len(r.fields) {
		return // every row is a known field
	}
	for i := range r.fields {
		f := &r.fields[i]
		name := unescapeCell(string(d.src[f.name.start:f.name.end]))
		if near := nearField(name); near != "" {
			r.findings = append(r.findings, d.finding(int(f.line), d.s.col(int(f.name.start)), false,
				"unknown field %q, which is ignored as written; did you mean %q?", name, near))
		}
	}
}

// knownFields are the fields the tool reads, indexed by the k constants.
var knownFields = [...]string{FieldType, FieldPriority, FieldStatus, FieldSource, FieldCategory, FieldCreated,
	FieldAutoRetry, FieldRetryCount, FieldMaxRetries, FieldFailureSignature, FieldPreviousSignatures,
	FieldSignatureRepeatCount, FieldHalted, FieldBlocking, FieldVerify}

const (
	kType = iota
	kPriority
	kStatus
	kSource
	kCategory
	kCreated
	kAutoRetry
	kRetryCount
	kMaxRetries
	kFailureSignature
	kPreviousSignatures
	kSignatureRepeatCount
	kHalted
	kBlocking
	kVerify
)

// knownFieldIndex returns the index in knownFields of the field a row's
// name cell (raw bytes) names, case ignored as findField ignores it, or -1.
// plain is the row's fieldRef.plain.
func knownFieldIndex(raw []byte, plain bool) int {
	for k, name := range knownFields {
		if plain {
			if len(raw) == len(name) && equalFoldASCII(raw, name) {
				return k
			}
		} else if strings.EqualFold(unescapeCell(string(raw)), name) {
			return k
		}
	}
	return -1
}

// utcTime reads the form of RFC 3339 the tool writes, 2026-11-22T10:00:00Z,
// from bytes, as time.Parse(time.RFC3339, …) reads it; ok is false for
// anything else (an offset, fractions of a second, a value out of range),
// which time.Parse then reads or refuses.
func utcTime(v []byte) (t time.Time, ok bool) {
	if len(v) != len("2006-01-02T15:04:05Z") || v[4] != '-' || v[7] != '-' || v[10] != 'T' ||
		v[13] != ':' || v[16] != ':' || v[19] != 'Z' {
		return time.Time{}, false
	}
	num := func(i, n int) int {
		x := 0
		for _, c := range v[i : i+n] {
			if c < '0' || c > '9' {
				return -1
			}
			x = x*10 + int(c-'0')
		}
		return x
	}
	year, month, day := num(0, 4), num(5, 2), num(8, 2)
	hour, minute, sec := num(11, 2), num(14, 2), num(17, 2)
	if year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 ||
		minute < 0 || minute > 59 || sec < 0 || sec > 59 {
		return time.Time{}, false
	}
	// The last day of the month: day 0 of the next.
	if day > time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day() {
		return time.Time{}, false
	}
	return time.Date(year, time.Month(month), day, hour, minute, sec, 0, time.UTC), true
}

// enumWord is enumField for a value read as bytes: a value that is one of
// the allowed words, as it nearly always is, needs no string of its own.
func enumWord(v []byte, def string, allowed []string, report func(v, hint string)) string {
	if !hasNonASCII(v) && !bytes.Contains(v, []byte(`\|`)) {
		for _, a := range allowed {
			if len(a) == len(v) && equalFoldASCII(v, a) {
				return a
			}
		}
	}
	return enumField(unescapeCell(string(v)), def, allowed, report)
}

// boolWord reads the words ParseBool reads, as bytes; ok is false for any
// other value, which ParseBool then reports.
func boolWord(v []byte) (value, ok bool) {
	switch {
	case len(v) == 0:
		return false, true
	case len(v) == 4 && equalFoldASCII(v, "true"), len(v) == 3 && equalFoldASCII(v, "yes"):
		return true, true
	case len(v) == 5 && equalFoldASCII(v, "false"), len(v) == 2 && equalFoldASCII(v, "no"):
		return false, true
	}
	return false, false
}

// smallNumber reads a whole number of at most nine ASCII digits; ok is
// false for anything else, which strconv.Atoi then reads or refuses.
func smallNumber(v []byte) (int, bool) {
	if len(v) == 0 || len(v) > 9 {
		return 0, false
	}
	n := 0
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// emptyList reports whether v is "[]" with only spaces inside, which
// ParseSignatureList reads as no signatures.
func emptyList(v []byte) bool {
	return len(v) >= 2 && v[0] == '[' && v[len(v)-1] == ']' && len(bytes.TrimSpace(v[1:len(v)-1])) == 0
}

// nearField returns the known field that name, which is not one, was
// meant to be: the same words spelt another way ("AutoRetry", "Retry
// Count", "Max-Retry") or a long name with one letter changed. Other names
// are a person's own fields, and "" is returned.
func nearField(name string) string {
	stem := fieldStem(name)
	if stem == "" {
		return ""
	}
	for _, k := range knownFields {
		if strings.EqualFold(name, k) {
			return ""
		}
	}
	for _, k := range knownFields {
		ks := fieldStem(k)
		if stem == ks || (len(ks) >= 6 && len(stem) == len(ks) && suggest.Distance(stem, ks) == 1) {
			return k
		}
	}
	return ""
}

// fieldStem is a field name's letters and digits in lower case, singular.
func fieldStem(name string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(name) {
		if 'a' <= c && c <= 'z' || '0' <= c && c <= '9' {
			b.WriteRune(c)
		}
	}
	s := strings.TrimSuffix(b.String(), "s")
	if t, ok := strings.CutSuffix(s, "ie"); ok {
		s = t + "y"
	}
	return s
}

// enumField validates v against allowed (case-insensitively), returning the
// canonical value, or def when v is empty.
func enumField(v, def string, allowed []string, report func(v, hint string)) string {
	if v == "" {
		return def
	}
	for _, a := range allowed {
		if strings.EqualFold(v, a) {
			return a
		}
	}
	hint := ""
	if near := suggest.Nearest(v, allowed); near != "" {
		hint = fmt.Sprintf("; did you mean %q?", near)
	}
	report(v, hint)
	return def
}

// ParseBool reads true/false/yes/no in any case; empty is false.
func ParseBool(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "yes":
		return true, nil
	case "false", "no", "":
		return false, nil
	}
	return false, fmt.Errorf("%q is not true or false (yes and no work too)", v)
}

// ParseSignatureList reads "[]" or "[h1, h2, …]".
func ParseSignatureList(v string) ([]string, error) {
	v = strings.TrimSpace(v)
	if !strings.HasPrefix(v, "[") || !strings.HasSuffix(v, "]") {
		return nil, fmt.Errorf("%q is not a list such as [] or [h1, h2]", v)
	}
	inner := strings.TrimSpace(v[1 : len(v)-1])
	if inner == "" {
		return nil, nil
	}
	var out []string
	for _, p := range strings.Split(inner, ",") {
		p = strings.TrimSpace(p)
		if !validSignature(p) {
			return nil, fmt.Errorf("%q in the list is not a signature (64 lowercase hex digits, or their first 16)", p)
		}
		out = append(out, p)
	}
	return out, nil
}

// signatureList is ParseSignatureList for a list as the tool writes it,
// read from bytes, with the strings made through buf; ok is false for
// anything else (a list with an invalid signature, or no list), which
// ParseSignatureList then reads or refuses.
func signatureList(v []byte, buf *tableBuf) (sigs []string, ok bool) {
	v = bytes.TrimSpace(v)
	if len(v) < 2 || v[0] != '[' || v[len(v)-1] != ']' {
		return nil, false
	}
	inner := bytes.TrimSpace(v[1 : len(v)-1])
	if len(inner) == 0 {
		return nil, true
	}
	sigs = make([]string, 0, bytes.Count(inner, []byte{','})+1)
	for {
		p, rest, more := bytes.Cut(inner, []byte{','})
		if p = bytes.TrimSpace(p); !validSignature(p) {
			return nil, false
		}
		sigs = append(sigs, buf.string(p))
		if !more {
			return sigs, true
		}
		inner = rest
	}
}

// FormatSignatureList writes a Previous-Signatures value.
func FormatSignatureList(sigs []string) string { return "[" + strings.Join(sigs, ", ") + "]" }

// Table returns the header and rows of the first table in a subsection,
// unescaped; ok is false if the subsection or its table is missing.
func (is *Issue) Table(section string) (header []string, rows [][]string, ok bool) {
	d := is.q.d
	sb, found := is.r.section(section)
	if !found {
		return nil, nil, false
	}
	t := d.sectionTable(sb)
	if t == nil {
		return nil, nil, false
	}
	cells := func(rw row) []string {
		out := make([]string, len(rw.cells))
		for i, c := range rw.cells {
			out[i] = d.s.cellText(c)
		}
		return out
	}
	for _, rw := range t.rows {
		rows = append(rows, cells(rw))
	}
	return cells(t.header), rows, true
}
