package issuequeue

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/autoretry/orchestrator/internal/testkit/hostile"
)

// parseWork parses src as a queue and as a session state and returns the
// work goldmark was charged for both (see budgetReader).
func parseWork(src []byte) (*Queue, int) {
	q := ParseQueue("issue_queue.md", src)
	st := ParseState("session_state.md", src)
	return q, q.d.s.work + st.d.s.work
}

// TestHostileInputsLinear: on every kind of hostile input, the work of a
// parse of four times the bytes is at most about four times the work, and
// never more than the budget allows per byte; the issue after the hostile
// part is read, unless the file says it cannot tell.
func TestHostileInputsLinear(t *testing.T) {
	const small = 64 << 10
	for _, k := range hostile.Kinds() {
		var work [2]int
		for i, size := range []int{small, 4 * small} {
			src, err := hostile.Generate(k.Name, size)
			if err != nil {
				t.Fatal(err)
			}
			q, w := parseWork(src)
			work[i] = w
			if limit := 4 * (workBase + workPerByte*len(src)); w > limit {
				t.Errorf("%s, %d bytes: goldmark was charged %d, more than %d", k.Name, len(src), w, limit)
			}
			if q.Issue("ISSUE-20261122-002") == nil && q.Err() == nil {
				t.Errorf("%s, %d bytes: the issue after the hostile part is lost and nothing says so", k.Name, len(src))
			}
			if out, err := q.Apply(); err != nil || string(out) != string(src) {
				t.Errorf("%s, %d bytes: Apply() did not give back the input: %v", k.Name, len(src), err)
			}
		}
		if work[1] > 5*work[0]+4*workBase {
			t.Errorf("%s: work grew from %d to %d with four times the bytes", k.Name, work[0], work[1])
		}
	}
}

// TestTooDeepReported: a list nested too deeply for goldmark to follow
// within its budget is an error at a line of it, the issue before it keeps
// its fields, and the issue after it is still found.
func TestTooDeepReported(t *testing.T) {
	src, err := hostile.Generate("dash-line", 256<<10)
	if err != nil {
		t.Fatal(err)
	}
	q := ParseQueue("issue_queue.md", src)
	var deep []string
	for _, f := range q.Findings() {
		if strings.Contains(f.Msg, "nest too deeply") && !f.Warning {
			deep = append(deep, f.String())
		}
	}
	if len(deep) != 1 || !strings.HasPrefix(deep[0], "issue_queue.md:12:1:") {
		t.Fatalf("findings about nesting: %q; want one error at line 12", deep)
	}
	if is := q.Issue("ISSUE-20261122-001"); is == nil || is.Status != "pending" {
		t.Fatalf("ISSUE-20261122-001 = %+v", is)
	}
	if q.Issue("ISSUE-20261122-002") == nil {
		t.Fatal("ISSUE-20261122-002 is lost")
	}
}

// TestDeepButOrdinaryLists: lists and block quotes nested as deeply as
// people nest them, with long lines, stay within the budget.
func TestDeepButOrdinaryLists(t *testing.T) {
	var b strings.Builder
	b.WriteString("## ISSUE-20261122-001\n\n| Field | Value |\n|---|---|\n| Status | pending |\n\n### Summary\n\n")
	for range 20 {
		for d := range 12 {
			b.WriteString(strings.Repeat("  ", d) + "- " + strings.Repeat("lorem ipsum ", 20) + "\n")
			b.WriteString(strings.Repeat("  ", d+1) + strings.Repeat("dolor sit ", 20) + "\n")
		}
		for d := range 12 {
			b.WriteString(strings.Repeat("> ", d) + strings.Repeat("lorem ipsum ", 20) + "\n")
		}
		b.WriteString("\n")
	}
	b.WriteString("## ISSUE-20261122-002\n\n| Field | Value |\n|---|---|\n| Status | pending |\n")
	q := ParseQueue("issue_queue.md", []byte(b.String()))
	if err := q.Err(); err != nil {
		t.Fatal(err)
	}
	if len(q.Issues) != 2 {
		t.Fatalf("%d issues, want 2", len(q.Issues))
	}
}

// TestSetextAfterLongDefinitions: a setext underline under a paragraph of
// link reference definitions longer than the scanner reads is an error,
// not a guess.
func TestSetextAfterLongDefinitions(t *testing.T) {
	const issue = "## ISSUE-20261122-001\n\n| Field | Value |\n|---|---|\n| Status | pending |\n\n"
	src := issue + strings.Repeat("[a]: /u\n", maxDefsParagraph/8+1) + "text\n---\n"
	q := ParseQueue("issue_queue.md", []byte(src))
	want := fmt.Sprintf("issue_queue.md:%d:1:", strings.Count(src, "\n"))
	if err := q.Err(); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "too many link definitions") {
		t.Fatalf("Err() = %v; want an error at %s", err, want)
	}
	short := issue + strings.Repeat("[a]: /u\n", 10) + "text\n---\n"
	q = ParseQueue("issue_queue.md", []byte(short))
	if err := q.Err(); err != nil {
		t.Fatal(err)
	}
	// Many such paragraphs: the first are read, those past what the
	// scanner reads in a file are reported.
	para := strings.Repeat("[a]: /u\n", 400) + "text\n---\n\n"
	many := issue + strings.Repeat(para, 2*maxDefsFile/len(para))
	q = ParseQueue("issue_queue.md", []byte(many))
	var lines []int
	for _, f := range q.Findings() {
		if strings.Contains(f.Msg, "too many link definitions") {
			lines = append(lines, f.Line)
		}
	}
	if n := 2 * maxDefsFile / len(para); len(lines) == 0 || len(lines) > n/2+1 || lines[len(lines)-1] != strings.Count(many, "\n")-1 {
		t.Errorf("findings at lines %v of %d paragraphs; want the last half or so", lines, n)
	}
}

// TestFoldKeyAgreesWithEqualFold: two names have the same key exactly when
// strings.EqualFold holds them equal, Unicode folding and invalid UTF-8
// included.
func TestFoldKeyAgreesWithEqualFold(t *testing.T) {
	names := []string{"\xff", "\xfe", "\xffa", "Status", "STATUS", "status", "StatuS", "ſtatus", "Retry-Count", "retry-count"}
	for _, r := range []rune{'a', 'A', 'k', 'K', 0x212a, 's', 'S', 0x17f, 'é', 'É', 'ß', 0x1e9e, 'Σ', 'σ', 'ς', 0xfffd, 'i', 'İ', 'ı', 'µ', 'Μ', 'μ', '1', '-', ' '} {
		names = append(names, string(r))
	}
	for _, a := range names {
		for _, b := range names {
			if got, want := foldKey(a) == foldKey(b), strings.EqualFold(a, b); got != want {
				t.Errorf("%q, %q: same key %t, EqualFold %t", a, b, got, want)
			}
		}
	}
}

// TestLongTableDuplicateField: in a field table of thousands of rows, a
// field written twice in another case is reported at its second row, as
// in a short one.
func TestLongTableDuplicateField(t *testing.T) {
	for _, rows := range []int{10, 1000} {
		var b strings.Builder
		b.WriteString("## ISSUE-20261122-001\n\n| Field | Value |\n|---|---|\n| Status | pending |\n")
		for i := range rows {
			fmt.Fprintf(&b, "| Note-%d | x |\n", i)
		}
		b.WriteString("| STATUS | resolved |\n| note-3 | y |\n")
		q := ParseQueue("issue_queue.md", []byte(b.String()))
		var got []string
		for _, f := range q.Findings() {
			got = append(got, fmt.Sprintf("%d:%d %s", f.Line, f.Col, f.Msg))
		}
		want := []string{
			fmt.Sprintf("%d:3 field \"STATUS\" appears twice in ISSUE-20261122-001 (first at line 5)", rows+6),
			fmt.Sprintf("%d:3 field \"note-3\" appears twice in ISSUE-20261122-001 (first at line 9)", rows+7),
		}
		if !slices.Equal(got, want) {
			t.Errorf("%d rows: findings %q\nwant %q", rows, got, want)
		}
		// A field written twice is the issue's own problem: it is
		// quarantined, not taken with either value.
		if is := q.Issue("ISSUE-20261122-001"); is != nil || len(q.Quarantined) != 1 {
			t.Errorf("%d rows: issue %v, %d quarantined; want it quarantined", rows, is, len(q.Quarantined))
		}
	}
}

// FuzzParseLinear fuzzes for time: the input repeated to twice the bytes
// must not cost goldmark much more than twice the work, and no input may
// cost it more than its budget per byte.
func FuzzParseLinear(f *testing.F) {
	for _, k := range hostile.Kinds() {
		src, _ := hostile.Generate(k.Name, 512)
		f.Add(src)
	}
	for _, s := range scanSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, x []byte) {
		if len(x) == 0 {
			return
		}
		const n = 16 << 10
		one := repeatTo(x, n)
		two := repeatTo(x, 2*len(one))
		_, w1 := parseWork(one)
		_, w2 := parseWork(two)
		if limit := 4 * (workBase + workPerByte*len(two)); w2 > limit {
			t.Fatalf("%d bytes cost %d, more than %d; unit %q", len(two), w2, limit, x)
		}
		if w2 > 3*w1+4*workBase {
			t.Fatalf("work %d for %d bytes, %d for %d; unit %q", w1, len(one), w2, len(two), x)
		}
	})
}

// repeatTo returns x repeated to at least n bytes.
func repeatTo(x []byte, n int) []byte {
	return []byte(strings.Repeat(string(x), (n+len(x)-1)/len(x)))
}

// BenchmarkHostile parses every kind of hostile input at 1 MiB and 4 MiB:
// ns/op should grow four times, and B/op too.
func BenchmarkHostile(b *testing.B) {
	for _, k := range hostile.Kinds() {
		for _, size := range []int{1 << 20, 4 << 20} {
			src, err := hostile.Generate(k.Name, size)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%s/%dMiB", k.Name, size>>20), func(b *testing.B) {
				b.SetBytes(int64(len(src)))
				b.ReportAllocs()
				work := 0
				for b.Loop() {
					_, work = parseWork(src)
				}
				b.ReportMetric(float64(work)/float64(len(src)), "work/byte")
			})
		}
	}
}

// TestRowFindingsCapped: a field table whose every row is a problem lists
// the first maxRowFindings of them and then how many more, so that lint's
// output and memory stay small however many rows there are.
func TestRowFindingsCapped(t *testing.T) {
	const rows = 5000
	var b strings.Builder
	b.WriteString("## ISSUE-20261122-001\n\n| Field | Value |\n|---|---|\n| Status | pending |\n")
	for range rows {
		b.WriteString("| Status | pending |\n")
	}
	q := ParseQueue("issue_queue.md", []byte(b.String()))
	fs := q.Findings()
	if got, want := len(fs), maxRowFindings+1; got != want {
		t.Fatalf("%d findings, want %d", got, want)
	}
	last := fs[len(fs)-1]
	wantMsg := fmt.Sprintf("%d more problems with rows of ISSUE-20261122-001's field table from here on are not listed", rows-maxRowFindings)
	if last.Msg != wantMsg || last.Line != 6+maxRowFindings {
		t.Errorf("last finding %d: %q, want %d: %q", last.Line, last.Msg, 6+maxRowFindings, wantMsg)
	}
	if len(q.Quarantined) != 1 {
		t.Errorf("%d issues quarantined, want 1", len(q.Quarantined))
	}
}
