package issuequeue

import (
	"fmt"
	"maps"
	"slices"
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

// StatusSynonyms maps the statuses other tools and people write to the
// tool's own. A synonym reads as its status and stays in the file as
// written until the tool sets the Status.
var StatusSynonyms = map[string]string{
	"completed": StatusResolved, // fixed and verified
	"complete":  StatusResolved,
	"wont_fix":  StatusSkipped, // rejected
	"duplicate": StatusSkipped, // merged into another issue
	"accepted":  StatusPending, // acknowledged, ready for work
}

// statusWords are the words a Status may hold: the statuses and their
// synonyms.
var statusWords = append(slices.Clone(Statuses), slices.Sorted(maps.Keys(StatusSynonyms))...)

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

// Fields the tool writes when an open issue is filed again ("orchestrator
// add" with the same summary or failure): how many times it was filed, the
// first filing included, and when it last was. They are added at the end of
// the field table the first time the issue is filed again.
const (
	FieldSeen     = "Seen"
	FieldLastSeen = "Last-Seen"
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
	d *doc
	// Issues are the valid issues, Quarantined the others, each in file
	// order.
	Issues      []*Issue
	Quarantined []*Issue
	all         []*Issue  // both, in the order of d.records
	fileErrs    []Finding // the errors that are no issue's own
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

// validSignature reports whether v is a signature: 64 lowercase hex
// digits, or their first 16, which some tools record instead (a short one
// matches the full signature it starts).
func validSignature[T string | []byte](v T) bool {
	if len(v) != 64 && len(v) != 16 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// issueTitleish reports whether a heading's title starts like an issue's:
// "ISSUE-" in any case followed by a digit. Other titles that start with
// the word ("Issue-tracking notes", "Issue-to-Task Linkage") are prose.
func issueTitleish(title string) bool {
	return len(title) >= 7 && strings.EqualFold(title[:6], "ISSUE-") && '0' <= title[6] && title[6] <= '9'
}

// issueHeadingID returns the ID part of an issue heading's title.
func issueHeadingID(title string) string {
	if i := strings.IndexAny(title, " \t:"); i > 0 {
		return title[:i]
	}
	return title
}

// ParseQueue parses an issue queue. name is the path used in findings. It
// never fails: problems are findings, see Findings and Err. An issue with
// an error of its own (a bad value, a malformed table, an ID used twice) is
// quarantined: it is in Quarantined, not in Issues, and edits refuse it.
func ParseQueue(name string, src []byte) *Queue { return parseIssues(name, src, false) }

// ParseArchive parses an issue archive: the queue's format, read as a
// history. An ID may be there more than once (archived again after it was
// reopened, or a copy a person edited kept beside the newer one): each
// copy is an issue of its own, in Issues in file order, and no copy is
// quarantined for it. Issue, Lookup and IssueSource give the newest copy,
// the last in the file; AppendIssue adds a copy after the others.
func ParseArchive(name string, src []byte) *Queue { return parseIssues(name, src, true) }

func parseIssues(name string, src []byte, history bool) *Queue {
	d := newDoc(name, src)
	d.history, d.fieldLists = history, true
	q := &Queue{d: d}
	// An issue heading ends the issue before it, whatever the levels: an
	// issue nested under another is an issue of its own, not a part of it.
	isIssue := make([]bool, len(d.s.headings))
	n := 0
	for hi, h := range d.s.headings {
		if !issueTitleish(h.title) {
			continue
		}
		id := issueHeadingID(h.title)
		switch {
		case h.setext:
			d.findings = append(d.findings, d.finding(h.line, 1, true,
				"%q is underlined, which makes it a heading but not an issue; write it as \"## %s\"", h.title, id))
		case h.level != 2 && h.level != 3:
			d.findings = append(d.findings, d.finding(h.line, 1, true,
				"%s is a level-%d heading; only ## and ### headings are issues", id, h.level))
		default:
			isIssue[hi] = true
			n++
		}
	}
	// One array each holds the records, the issues and the subsections: a
	// queue has tens of thousands, and an allocation each costs more than
	// reading them. The headings that are no issue bound the subsections.
	q.all = make([]*Issue, 0, n)
	recs, issues := make([]record, n), make([]Issue, n)
	subs := make([]sub, 0, len(d.s.headings)-n)
	d.records = make([]*record, 0, n)
	var outer *record // the last issue, for nesting
	for hi, h := range d.s.headings {
		if !isIssue[hi] {
			if outer != nil && h.level <= outer.h.level {
				outer = nil
			}
			continue
		}
		id := issueHeadingID(h.title)
		r := &recs[len(q.all)]
		subs = d.fillRecord(r, id, hi, isIssue, subs)
		if !validID(id) {
			hint := ""
			if up := strings.ToUpper(id); up != id && validID(up) {
				hint = fmt.Sprintf("; did you mean %q?", up)
			}
			r.findings = append(r.findings, d.finding(h.line, 1, false,
				"malformed issue ID %q: want ISSUE-YYYYMMDD-NNN, e.g. ISSUE-20261122-001%s", id, hint))
		}
		if first, dup := d.byKey[id]; dup && !history {
			r.findings = append(r.findings, d.finding(h.line, 1, false,
				"duplicate issue ID %s (first at line %d); rename one of them", id, first.h.line+1))
			if !first.dup {
				first.findings = append(first.findings, d.finding(first.h.line, 1, false,
					"duplicate issue ID %s (again at line %d); rename one of them", id, h.line+1))
			}
			first.dup, r.dup = true, true
		}
		if outer != nil && h.level > outer.h.level && validID(id) {
			r.findings = append(r.findings, d.finding(h.line, 1, true,
				"%s (level %d) is under %s (level %d): it is an issue of its own, and %s ends here; give both the same heading level",
				id, h.level, outer.key, outer.h.level, outer.key))
		} else {
			outer = r
		}
		d.addRecord(r)
		if history {
			d.byKey[id] = r // the newest copy
		}
		is := &issues[len(q.all)]
		*is = Issue{ID: id, Line: h.line + 1, q: q, r: r}
		q.all = append(q.all, is)
	}
	oneFence := map[int]bool{}
	for _, hd := range d.s.hidden {
		if hd.where == "a fenced code block" && q.fencedByTool(hd.line, oneFence) {
			continue // text the tool fenced on purpose
		}
		d.findings = append(d.findings, d.finding(hd.line, 1, true,
			"%q is inside %s, so it is not an issue", strings.TrimSpace(string(d.s.lineText(hd.line))), hd.where))
	}
	for _, hd := range d.s.ambiguous {
		d.findings = append(d.findings, d.finding(hd.line, 1, false,
			"cannot tell whether this line is inside %s or not; separate it with a blank line (and close any code fence)", hd.where))
	}
	// Every error found so far is the file's; the records' own come next.
	q.fileErrs = d.errs()
	d.parseTables(func(i int, buf *tableBuf) { q.all[i].load(buf) }) // records and issues are in the same order
	q.Issues = make([]*Issue, 0, len(q.all))
	for _, is := range q.all {
		r := is.r
		for _, f := range r.findings {
			if !f.Warning {
				r.errs = append(r.errs, f)
			}
		}
		if r.quarantined() {
			sortFindings(r.errs)
			q.Quarantined = append(q.Quarantined, is)
		} else {
			q.Issues = append(q.Issues, is)
		}
	}
	sortFindings(d.findings)
	return q
}

// fencedByTool reports whether line lies in a subsection of an issue whose
// body the tool writes fenced: command output in Failure Details, or a
// body that is one fenced block. A person's fence elsewhere, between or
// after issues, is not. Records are in file order, so this is a binary
// search: a queue may hold many fenced outputs that mention issue headings.
func (q *Queue) fencedByTool(line int, oneFence map[int]bool) bool {
	rs := q.d.records
	i := sort.Search(len(rs), func(i int) bool { return rs[i].h.line > line }) - 1
	if i < 0 || line >= rs[i].endLine {
		return false
	}
	for _, sb := range rs[i].subs {
		if line < sb.line || line >= sb.endLine {
			continue
		}
		if strings.EqualFold(sb.name, SectionFailureDetails) {
			return true
		}
		one, ok := oneFence[sb.start]
		if !ok {
			body := strings.Trim(strings.ReplaceAll(string(q.d.src[sb.body:sb.end]), "\r\n", "\n"), "\n \t")
			one = Unfence(body) != body
			oneFence[sb.start] = one
		}
		return one
	}
	return false
}

// Findings returns every problem found, errors and warnings, in file order.
func (q *Queue) Findings() []Finding { return q.d.findings }

// Err returns a *ValidationError if the file as a whole has error-level
// findings (its structure cannot be read safely), which no command may
// change. The errors of a single issue quarantine that issue instead.
func (q *Queue) Err() error { return validationError(q.d.name, q.fileErrs) }

// Source returns the bytes the queue was parsed from.
func (q *Queue) Source() []byte { return q.d.src }

// Name returns the file name used in findings.
func (q *Queue) Name() string { return q.d.name }

// Issue returns the valid issue with the given ID, or nil. In an archive
// it is the newest copy, or nil if that copy is not valid.
func (q *Queue) Issue(id string) *Issue {
	if r := q.d.byKey[id]; r != nil && !r.quarantined() {
		return q.all[r.idx]
	}
	return nil
}

// Lookup returns the issue with the given ID for a command that acts on
// it: a *NotFoundError if there is none, a *QuarantinedError if it is not
// valid.
func (q *Queue) Lookup(id string) (*Issue, error) {
	r := q.d.byKey[id]
	switch {
	case r == nil:
		return nil, &NotFoundError{File: q.d.name, Key: id}
	case r.quarantined():
		return nil, q.d.quarantinedError(r)
	}
	return q.all[r.idx], nil
}

// QuarantineFindings returns the errors of every quarantined issue, in file
// order: what each command that reads the queue warns about.
func (q *Queue) QuarantineFindings() []Finding {
	var out []Finding
	for _, is := range q.Quarantined {
		out = append(out, is.r.errs...)
	}
	return out
}

// NextID returns the ID for a new issue created at now: the UTC date and 1 +
// the highest number already used on that date, at least three digits.
func (q *Queue) NextID(now time.Time) string {
	date := now.UTC().Format("20060102")
	high := 0
	for _, is := range q.all {
		if validID(is.ID) && is.ID[6:14] == date {
			if n, err := strconv.Atoi(is.ID[15:]); err == nil && n > high {
				high = n
			}
		}
	}
	return fmt.Sprintf("ISSUE-%s-%03d", date, high+1)
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
