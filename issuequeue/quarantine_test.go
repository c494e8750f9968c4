package issuequeue

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

// onlyIssue parses a queue of one issue with the given field rows and
// returns it, valid or quarantined, with the findings of the queue.
func onlyIssue(t *testing.T, rows ...string) (*Issue, []string) {
	t.Helper()
	q := ParseQueue("issue_queue.md", []byte(issueWith(rows...)))
	if err := q.Err(); err != nil {
		t.Fatalf("file-level error: %v", err)
	}
	if len(q.Issues)+len(q.Quarantined) != 1 {
		t.Fatalf("%d valid and %d quarantined issues, want one", len(q.Issues), len(q.Quarantined))
	}
	if len(q.Issues) == 1 {
		return q.Issues[0], findingStrings(q.Findings())
	}
	return q.Quarantined[0], findingStrings(q.Findings())
}

func TestStatusSynonyms(t *testing.T) {
	tests := []struct {
		written, want string
		finding       string // "" when the issue is valid
	}{
		{"completed", StatusResolved, ""},
		{"Completed", StatusResolved, ""},
		{"complete", StatusResolved, ""},
		{"wont_fix", StatusSkipped, ""},
		{"duplicate", StatusSkipped, ""},
		{"accepted", StatusPending, ""},
		{"in_progress", StatusInProgress, ""},
		{"wontfix", StatusPending, `did you mean "wont_fix"?`},
		{"completd", StatusPending, `did you mean "complete"?`},
		{"done", StatusPending, `"done" is not a status`},
		{"failed", StatusPending, `"failed" is not a status`},
	}
	for _, tt := range tests {
		t.Run(tt.written, func(t *testing.T) {
			is, fs := onlyIssue(t, "| Status | "+tt.written+" |", "| Auto-Retry | true |")
			if is.Status != tt.want {
				t.Errorf("Status = %q, want %q", is.Status, tt.want)
			}
			if raw, _ := is.Field(FieldStatus); raw != tt.written {
				t.Errorf("the cell reads %q, want it as written, %q", raw, tt.written)
			}
			if tt.finding == "" {
				if len(fs) > 0 || len(is.Findings()) > 0 {
					t.Errorf("findings %v, want none", fs)
				}
				return
			}
			if len(is.Findings()) != 1 || !strings.Contains(is.Findings()[0].Msg, tt.finding) {
				t.Errorf("issue findings %v, want one with %q", findingStrings(is.Findings()), tt.finding)
			}
			if is.PendingAutoRetry() && is.q.Issue(is.ID) != nil {
				t.Error("a quarantined issue is a candidate")
			}
		})
	}
}

func TestSignatureLengths(t *testing.T) {
	full := strings.Repeat("0123456789abcdef", 4)
	tests := []struct {
		row   string
		valid bool
	}{
		{"| Failure-Signature | " + full + " |", true},
		{"| Failure-Signature | " + full[:16] + " |", true},
		{"| Failure-Signature | " + full[:15] + " |", false},
		{"| Failure-Signature | " + full[:17] + " |", false},
		{"| Failure-Signature | " + strings.ToUpper(full[:16]) + " |", false},
		{"| Failure-Signature | " + full[:12] + "wxyz |", false},
		{"| Previous-Signatures | [" + full[:16] + ", " + full + "] |", true},
		{"| Previous-Signatures | [" + full[:8] + "] |", false},
	}
	for _, tt := range tests {
		is, fs := onlyIssue(t, tt.row)
		if valid := len(is.Findings()) == 0; valid != tt.valid {
			t.Errorf("%s: valid %t, want %t (%v)", tt.row, valid, tt.valid, fs)
		}
	}
	is, _ := onlyIssue(t, "| Failure-Signature | "+full[:16]+" |")
	if is.FailureSignature != full[:16] {
		t.Errorf("FailureSignature = %q, want the 16 digits as written", is.FailureSignature)
	}
}

func TestNearMissFieldNames(t *testing.T) {
	tests := []struct{ name, want string }{
		{"AutoRetry", FieldAutoRetry},
		{"auto_retry", FieldAutoRetry},
		{"Retry Count", FieldRetryCount},
		{"Max-Retry", FieldMaxRetries},
		{"Max Retries", FieldMaxRetries},
		{"Failure Signature", FieldFailureSignature},
		{"Previous Signatures", FieldPreviousSignatures},
		{"Sourse", FieldSource},
		{"Blockng", ""}, // one letter missing: a person's own field as far as anyone can tell
		// Fields of people and other tools are theirs.
		{"Owner", ""}, {"Loop", ""}, {"Complexity", ""}, {"Completed", ""}, {"Rejected", ""},
		{"Rejection Reason", ""}, {"Task Ref", ""}, {"Source Issue", ""}, {"Priority2", ""},
		{"Verified", ""}, {"Blocked", ""}, {"Halt", ""},
	}
	for _, tt := range tests {
		is, fs := onlyIssue(t, "| "+tt.name+" | true |")
		if tt.want == "" {
			if len(fs) > 0 {
				t.Errorf("%q: findings %v, want none", tt.name, fs)
			}
			continue
		}
		want := `issue_queue.md:7:3: unknown field "` + tt.name + `", which is ignored as written; did you mean "` + tt.want + `"?`
		if got := findingStrings(is.Findings()); len(got) != 1 || got[0] != want {
			t.Errorf("%q: findings %v, want %s", tt.name, got, want)
		}
	}
}

func TestBoldSummary(t *testing.T) {
	head := "## ISSUE-20261122-001 Title text\n\n| Field | Value |\n|---|---|\n| Status | pending |\n\n"
	tests := []struct{ name, src, want string }{
		{"bold paragraph", head + "**Summary:** Build fails\n\n**Details:** more\n", "Build fails"},
		{"colon outside", head + "**Summary**: Build fails\n", "Build fails"},
		{"any case", head + "**summary:**   Build fails  \n", "Build fails"},
		{"section wins", head + "**Summary:** bold\n\n### Summary\nfrom the section\n", "from the section"},
		{"only before subsections", head + "### Notes\n\n**Summary:** not this\n", "Title text"},
		{"empty bold summary", head + "**Summary:**\n", "Title text"},
		{"heading text", head, "Title text"},
	}
	for _, tt := range tests {
		q := ParseQueue("q.md", []byte(tt.src))
		is := q.Issue("ISSUE-20261122-001")
		if is == nil {
			t.Fatalf("%s: no issue (%v)", tt.name, findingStrings(q.Findings()))
		}
		if got := is.Summary(); got != tt.want {
			t.Errorf("%s: Summary() = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestProseHeadings(t *testing.T) {
	src := "# Issue Queue\n\n## Issue-tracking notes\n\nprose\n\n### Issue-to-Task Linkage\n\n1. step\n\n## Issues\n\n## Issue Entry Format\n"
	q := ParseQueue("q.md", []byte(src))
	if fs := q.Findings(); len(fs) > 0 || len(q.Issues)+len(q.Quarantined) > 0 {
		t.Errorf("findings %v, %d issues; want none", findingStrings(fs), len(q.Issues)+len(q.Quarantined))
	}
}

func TestForeignStateTables(t *testing.T) {
	const foreign = "# Session State\n\n## Current Context\n\n| Field | Value |\n|-------|-------|\n| Phase | [Planning | Implementation | Testing] |\n\n" +
		"## Waiting For\n\n| Item | Since |\n|---|---|\n| a | b | c |\n\n## Notes\n\n## Notes\n\n"
	st := ParseState("s.md", []byte(foreign+StateTemplate[len("# Session State\n\n"):]))
	if fs := st.Findings(); len(fs) > 0 {
		t.Errorf("findings %v, want none for tables the tool does not own", findingStrings(fs))
	}
	if !st.AutoRetryEnabled || st.Breaker != BreakerClosed {
		t.Errorf("state not read: %+v", st)
	}
	// The same cell in a table the tool owns is still a finding.
	own := strings.Replace(StateTemplate, "| last_retry_reason | null |", "| last_retry_reason | a | b |", 1)
	if fs := ParseState("s.md", []byte(own)).Findings(); len(fs) != 1 || !strings.Contains(fs[0].Msg, "row has 3 cells") {
		t.Errorf("findings %v, want the extra cell", findingStrings(fs))
	}
}

// TestNestedIssues: an issue heading ends the issue before it whatever the
// levels, so edits of the outer issue stay before the inner one's heading.
func TestNestedIssues(t *testing.T) {
	const outer, inner = "ISSUE-20261122-002", "ISSUE-20261122-003"
	src := "## " + outer + "\n\n| Field | Value |\n|---|---|\n| Status | pending |\n\n### Summary\nouter\n\n" +
		"### " + inner + "\n\n| Field | Value |\n|---|---|\n| Status | pending |\n\n#### Summary\ninner\n"
	q := ParseQueue("q.md", []byte(src))
	if len(q.Issues) != 2 {
		t.Fatalf("issues %d, findings %v", len(q.Issues), findingStrings(q.Findings()))
	}
	innerAt := strings.Index(src, "### "+inner)
	if got := string(q.IssueSource(outer)); got != src[:innerAt] {
		t.Errorf("outer issue is %q, want up to the inner heading", got)
	}
	if q.Issue(inner).Summary() != "inner" || q.Issue(outer).Summary() != "outer" {
		t.Errorf("summaries %q, %q", q.Issue(outer).Summary(), q.Issue(inner).Summary())
	}
	fs := findingStrings(q.Findings())
	if len(fs) != 1 || !strings.Contains(fs[0], "q.md:10:1: warning: "+inner+" (level 3) is under "+outer+" (level 2)") {
		t.Errorf("findings %v, want the nesting warning", fs)
	}
	out, err := q.Apply(SetSection(outer, SectionFailureDetails, "boom"))
	if err != nil {
		t.Fatal(err)
	}
	want := src[:innerAt] + "### Failure Details\nboom\n\n" + src[innerAt:]
	if string(out) != want {
		t.Errorf("Apply:\n%s\nwant:\n%s", out, want)
	}
}

// TestQuarantinedIssuesAreLeftAlone: edits of a quarantined issue are
// refused, edits of the others leave its bytes as they are.
func TestQuarantinedIssuesAreLeftAlone(t *testing.T) {
	const good, bad, dup = "ISSUE-20261122-001", "ISSUE-20261122-002", "ISSUE-20261122-003"
	block := func(id, status string) string {
		return "## " + id + "\n\n| Field | Value |\n|---|---|\n| Status | " + status + " |\n| Auto-Retry | true |\n"
	}
	badBlock := block(bad, "pendng")
	src := "# Q\n\n" + block(good, "pending") + "\n" + badBlock + "\n" + block(dup, "pending") + "\n" + block(dup, "pending")
	q := ParseQueue("q.md", []byte(src))
	if err := q.Err(); err != nil {
		t.Fatal(err)
	}
	if len(q.Issues) != 1 || q.Issues[0].ID != good || len(q.Quarantined) != 3 {
		t.Fatalf("valid %d, quarantined %d", len(q.Issues), len(q.Quarantined))
	}
	for _, id := range []string{bad, dup} {
		if q.Issue(id) != nil {
			t.Errorf("Issue(%s) is not nil", id)
		}
		_, err := q.Lookup(id)
		var qe *QuarantinedError
		if !errors.As(err, &qe) || qe.Key != id || len(qe.Findings) == 0 {
			t.Errorf("Lookup(%s) = %v, want a *QuarantinedError", id, err)
		}
		for _, e := range []Edit{SetField(id, FieldStatus, StatusResolved), SetSection(id, SectionSummary, "x"),
			AppendRow(id, SectionAttemptHistory, []string{"a"}, []string{"1"}), RemoveIssue(id)} {
			if _, err := q.Apply(e); !errors.As(err, &qe) {
				t.Errorf("Apply(%+v) = %v, want a *QuarantinedError", e, err)
			}
		}
	}
	var nf *NotFoundError
	if _, err := q.Lookup("ISSUE-20261122-009"); !errors.As(err, &nf) {
		t.Errorf("Lookup of a missing issue = %v, want a *NotFoundError", err)
	}
	if _, err := q.Apply(AppendIssue(dup, block(dup, "pending"))); err == nil {
		t.Error("a new issue took a quarantined issue's ID")
	}
	out, err := q.Apply(SetField(good, FieldStatus, StatusInProgress), SetSection(good, SectionFailureDetails, "boom"),
		AppendRow(good, SectionAttemptHistory, []string{"Attempt", "Time", "Type", "Signature", "Error"}, []string{"1", "t", "x", "s", "e"}))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "\n"+badBlock+"\n"+block(dup, "pending")+"\n"+block(dup, "pending")) {
		t.Errorf("the quarantined issues' bytes changed:\n%s", out)
	}
	if got := q.NextID(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)); got != "ISSUE-20261122-004" {
		t.Errorf("NextID = %s, want one after the quarantined IDs too", got)
	}
}

// TestInvalidEncoding: bytes that are not UTF-8 are a problem of the file,
// not of an issue: nothing may change it.
func TestInvalidEncoding(t *testing.T) {
	src := issueWith("| Status | pending |", "| Owner | Ren\xe9 |")
	q := ParseQueue("q.md", []byte(src))
	var ve *ValidationError
	if err := q.Err(); !errors.As(err, &ve) || len(ve.Findings) != 1 ||
		ve.Findings[0].String() != "q.md:8:14: the file is not valid UTF-8 (byte 0xe9 here); save it as UTF-8" {
		t.Errorf("Err() = %v", err)
	}
	st := ParseState("s.md", append([]byte(StateTemplate), "\n\xff\n"...))
	if err := st.Err(); err == nil || !strings.Contains(err.Error(), "s.md:29:1: the file is not valid UTF-8 (byte 0xff here)") {
		t.Errorf("state Err() = %v", err)
	}
	// What the tool writes is always UTF-8.
	out, err := ParseQueue("q.md", []byte(issueWith("| Status | pending |"))).Apply(SetField("ISSUE-20261122-001", "Owner", "Ren\xe9"))
	if err != nil {
		t.Fatal(err)
	}
	if err := ParseQueue("q.md", out).Err(); err != nil {
		t.Errorf("the tool wrote bytes that are not UTF-8: %v", err)
	}
}

// FuzzQuarantineUntouched: whatever the file, edits of its valid issues
// leave every quarantined issue byte for byte as it was, and quarantined
// still.
func FuzzQuarantineUntouched(f *testing.F) {
	for _, b := range goldenInputs(f) {
		f.Add(b)
	}
	f.Add([]byte("## ISSUE-20261122-001\n\n| Field | Value |\n|---|---|\n| Status | pendng |\n\n" +
		"## ISSUE-20261122-002\n| Field | Value |\n|---|---|\n| Status | pending |\n### Summary\nx\n" +
		"### ISSUE-20261122-003\n\n| AutoRetry | true |\n|---|---|\n\n## ISSUE-20261122-002\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		q := ParseQueue("q.md", src)
		if q.Err() != nil || len(q.Issues) == 0 {
			return
		}
		var edits []Edit
		for _, is := range q.Issues {
			edits = append(edits, SetField(is.ID, FieldStatus, StatusInProgress), SetField(is.ID, FieldRetryCount, "7"),
				SetSection(is.ID, SectionFailureDetails, "boom\n## ISSUE-20261122-009"),
				AppendRow(is.ID, SectionAttemptHistory, []string{"Attempt", "Error"}, []string{"1", "x | y"}))
		}
		out, err := q.Apply(edits...)
		if err != nil {
			t.Fatalf("Apply: %v", err)
		}
		q2 := ParseQueue("q.md", out)
		if len(q2.Quarantined) != len(q.Quarantined) {
			t.Fatalf("%d quarantined before, %d after:\n%s", len(q.Quarantined), len(q2.Quarantined), out)
		}
		for i, is := range q.Quarantined {
			before, after := src[is.r.start:is.r.end], out[q2.Quarantined[i].r.start:q2.Quarantined[i].r.end]
			if !bytes.Equal(before, after) {
				t.Fatalf("%s changed:\n%q\nto\n%q", is.ID, before, after)
			}
		}
	})
}
