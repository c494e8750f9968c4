package issuequeue

import (
	"fmt"
	"github.com/autoretry/orchestrator/internal/suggest"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Status values.
const (
	StatusPending    = "pending"
	StatusInProgress = "in_progress"
	StatusResolved   = "resolved"
	StatusEscalated  = "escalated"
	StatusSkipped    = "skipped"
)

// Priorities, most urgent first.
var Priorities = []string{"critical", "high", "medium", "low"}

// Statuses lists every valid Status.
var Statuses = []string{StatusPending, StatusInProgress, StatusResolved, StatusEscalated, StatusSkipped}

// Field names as the tool writes them; reading ignores case.
const (
	FieldType                 = "Type"
	FieldPriority             = "Priority"
	FieldStatus               = "Status"
	FieldSource               = "Source"
	FieldCategory             = "Category"
	FieldCreated              = "Created"
	FieldAutoRetry            = "Auto-Retry"
	FieldRetryCount           = "Retry-Count"
	FieldMaxRetries           = "Max-Retries"
	FieldFailureSignature     = "Failure-Signature"
	FieldPreviousSignatures   = "Previous-Signatures"
	FieldSignatureRepeatCount = "Signature-Repeat-Count"
	FieldHalted               = "Halted"
	FieldBlocking             = "Blocking"
	FieldVerify               = "Verify"
)

// Section names the tool reads and writes.
const (
	SectionSummary        = "Summary"
	SectionFailureDetails = "Failure Details"
	SectionVerification   = "Verification Step"
	SectionSuggestedFix   = "Suggested Fix"
	SectionAttemptHistory = "Attempt History"
	SectionFixInstruction = "Fix Instruction"
)

// Queue is a parsed issue_queue.md.
type Queue struct {
	d      *doc
	Issues []*Issue // in the order of d.records
}

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

// validID reports whether id is ISSUE-YYYYMMDD-NNN (three or more digits).
func validID(id string) bool {
	const prefix = "ISSUE-"
	if len(id) < len(prefix)+8+1+3 || id[:len(prefix)] != prefix || id[len(prefix)+8] != '-' {
		return false
	}
	return allDigits(id[len(prefix):len(prefix)+8]) && allDigits(id[len(prefix)+9:])
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return len(s) > 0
}

// validSignature reports whether v is 64 lowercase hex digits.
func validSignature(v string) bool {
	if len(v) != 64 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// issueTitleish reports whether a heading's title starts like an issue's,
// in any case.
func issueTitleish(title string) bool {
	return len(title) >= 6 && strings.EqualFold(title[:6], "ISSUE-")
}

// ParseQueue parses an issue queue. name is the path used in findings. It
// never fails: problems are findings, see Findings and Err.
func ParseQueue(name string, src []byte) *Queue {
	d := newDoc(name, src)
	q := &Queue{d: d}
	for hi, h := range d.s.headings {
		if !issueTitleish(h.title) {
			continue
		}
		id := h.title
		if i := strings.IndexAny(id, " \t:"); i > 0 {
			id = id[:i]
		}
		switch {
		case h.setext:
			d.findings = append(d.findings, d.finding(h.line, 1, true,
				"%q is underlined, which makes it a heading but not an issue; write it as \"## %s\"", h.title, id))
			continue
		case h.level != 2 && h.level != 3:
			d.findings = append(d.findings, d.finding(h.line, 1, true,
				"%s is a level-%d heading; only ## and ### headings are issues", id, h.level))
			continue
		case !validID(id):
			d.findings = append(d.findings, d.finding(h.line, 1, false,
				"malformed issue ID %q: want ISSUE-YYYYMMDD-NNN, e.g. ISSUE-20261122-001", id))
			continue
		}
		if first, dup := d.byKey[id]; dup {
			d.findings = append(d.findings, d.finding(h.line, 1, false, "duplicate issue ID %s (first at line %d)", id, first.h.line+1))
			continue
		}
		r := d.buildRecord(id, hi)
		d.addRecord(r)
		q.Issues = append(q.Issues, &Issue{ID: id, Line: h.line + 1, q: q, r: r})
	}
	for _, hd := range d.s.hidden {
		if hd.where == "a fenced code block" && q.inSection(hd.line) {
			continue // text such as failure output, fenced on purpose
		}
		d.findings = append(d.findings, d.finding(hd.line, 1, true,
			"%q is inside %s, so it is not an issue", strings.TrimSpace(string(d.s.lineText(hd.line))), hd.where))
	}
	for _, hd := range d.s.ambiguous {
		d.findings = append(d.findings, d.finding(hd.line, 1, false,
			"cannot tell whether this line is inside %s or not; separate it with a blank line (and close any code fence)", hd.where))
	}
	d.parseTables(func(i int) { q.Issues[i].load() }) // records and issues are in the same order
	sortFindings(d.findings)
	return q
}

// inSection reports whether line lies in a subsection of an issue. Records
// are in file order, so this is a binary search: a queue may hold many
// fenced outputs that mention issue headings.
func (q *Queue) inSection(line int) bool {
	rs := q.d.records
	i := sort.Search(len(rs), func(i int) bool { return rs[i].h.line > line }) - 1
	if i < 0 || line >= rs[i].endLine {
		return false
	}
	return len(rs[i].subs) > 0 && line >= rs[i].subs[0].h.line
}

// Findings returns every problem found, errors and warnings, in file order.
func (q *Queue) Findings() []Finding { return q.d.findings }

// Err returns a *ValidationError if the queue has error-level findings.
func (q *Queue) Err() error { return q.d.validationError() }

// Source returns the bytes the queue was parsed from.
func (q *Queue) Source() []byte { return q.d.src }

// Name returns the file name used in findings.
func (q *Queue) Name() string { return q.d.name }

// Issue returns the issue with the given ID, or nil.
func (q *Queue) Issue(id string) *Issue {
	if r := q.d.byKey[id]; r != nil {
		return q.Issues[r.idx]
	}
	return nil
}

// Field returns the raw (unescaped) value of any field, known or not, and
// whether the issue's table has that row.
func (is *Issue) Field(name string) (string, bool) { return is.q.d.field(is.r, name) }

// PendingAutoRetry reports whether the end-of-loop check considers the
// issue for an auto-retry loop: Auto-Retry true, Status pending, not halted.
func (is *Issue) PendingAutoRetry() bool {
	return is.AutoRetry && is.Status == StatusPending && !is.Halted
}

// Section returns the text of a subsection (a fenced body comes back unfenced).
func (is *Issue) Section(name string) (string, bool) { return is.q.d.sectionText(is.r, name) }

// Summary returns the first line of the Summary section, or the heading's
// text after the ID.
func (is *Issue) Summary() string {
	if s, ok := is.Section(SectionSummary); ok {
		for _, l := range strings.Split(s, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				return UnescapeLine(l)
			}
		}
	}
	return strings.TrimLeft(strings.TrimPrefix(is.r.h.title, is.ID), " \t:")
}

// load reads the typed fields and reports invalid values.
func (is *Issue) load() {
	d, r := is.q.d, is.r
	bad := func(field, format string, args ...any) {
		line, col := d.fieldPos(r, field)
		r.findings = append(r.findings, d.finding(line, col, false, "%s: %s", field, fmt.Sprintf(format, args...)))
	}
	if !r.hasTable && r.tablePar < 0 {
		r.findings = append(r.findings, d.finding(r.h.line, 1, false,
			"%s has no field table; start it with | Field | Value | right under the heading", is.ID))
	}
	get := func(f string) string { v, _ := d.field(r, f); return strings.TrimSpace(v) }

	is.Type = strings.ToLower(get(FieldType))
	if is.Type == "" {
		is.Type = "bug"
	}
	is.Priority = enumField(get(FieldPriority), "medium", Priorities, func(v, hint string) {
		bad(FieldPriority, "%q is not a priority (critical, high, medium, low)%s", v, hint)
	})
	is.Status = enumField(get(FieldStatus), StatusPending, Statuses, func(v, hint string) {
		bad(FieldStatus, "%q is not a status (pending, in_progress, resolved, escalated, skipped)%s", v, hint)
	})
	is.Source, is.Category, is.Verify = get(FieldSource), get(FieldCategory), get(FieldVerify)
	if v := get(FieldCreated); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			bad(FieldCreated, "%q is not an RFC 3339 time such as 2026-11-22T10:00:00Z", v)
		}
		is.Created = t
	}
	for _, b := range []struct {
		f string
		p *bool
	}{{FieldAutoRetry, &is.AutoRetry}, {FieldHalted, &is.Halted}, {FieldBlocking, &is.Blocking}} {
		v, err := ParseBool(get(b.f))
		if err != nil {
			bad(b.f, "%v", err)
		}
		*b.p = v
	}
	for _, n := range []struct {
		f string
		p *int
	}{{FieldRetryCount, &is.RetryCount}, {FieldSignatureRepeatCount, &is.SignatureRepeatCount}, {FieldMaxRetries, &is.MaxRetries}} {
		v := get(n.f)
		if v == "" {
			continue
		}
		k, err := strconv.Atoi(v)
		if err != nil || k < 0 {
			bad(n.f, "%q is not a whole number", v)
			continue
		}
		*n.p = k
		if n.f == FieldMaxRetries {
			is.HasMaxRetries = true
		}
	}
	if v := get(FieldFailureSignature); v != "" {
		if !validSignature(v) {
			bad(FieldFailureSignature, "%q is not a signature (64 lowercase hex digits, or empty)", v)
		} else {
			is.FailureSignature = v
		}
	}
	if v := get(FieldPreviousSignatures); v != "" {
		sigs, err := ParseSignatureList(v)
		if err != nil {
			bad(FieldPreviousSignatures, "%v", err)
		}
		is.PreviousSignatures = sigs
	}
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
			return nil, fmt.Errorf("%q in the list is not a signature (64 lowercase hex digits)", p)
		}
		out = append(out, p)
	}
	return out, nil
}

// FormatSignatureList writes a Previous-Signatures value.
func FormatSignatureList(sigs []string) string { return "[" + strings.Join(sigs, ", ") + "]" }

func sortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		if fs[i].Line != fs[j].Line {
			return fs[i].Line < fs[j].Line
		}
		return fs[i].Col < fs[j].Col
	})
}

// NextID returns the ID for a new issue created at now: the UTC date and 1 +
// the highest number already used on that date, at least three digits.
func (q *Queue) NextID(now time.Time) string {
	date := now.UTC().Format("20060102")
	high := 0
	for _, is := range q.Issues {
		if validID(is.ID) && is.ID[6:14] == date {
			if n, err := strconv.Atoi(is.ID[15:]); err == nil && n > high {
				high = n
			}
		}
	}
	return fmt.Sprintf("ISSUE-%s-%03d", date, high+1)
}

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

// lineStarts are the characters that make a line's start markdown
// structure: a heading, a code fence, an HTML block.
const lineStarts = "#`~<"

// EscapeLine makes one line of text safe to write as a paragraph: a line
// that would start a heading, a code fence or an HTML block (and so could
// create, end or hide an issue) gets a backslash before its first
// character, which markdown reads as the character itself.
func EscapeLine(s string) string {
	if s != "" && strings.IndexByte(lineStarts, s[0]) >= 0 {
		return "\\" + s
	}
	return s
}

// UnescapeLine undoes EscapeLine.
func UnescapeLine(s string) string {
	if len(s) > 1 && s[0] == '\\' && strings.IndexByte(lineStarts, s[1]) >= 0 {
		return s[1:]
	}
	return s
}
