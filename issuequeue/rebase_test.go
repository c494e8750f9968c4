package issuequeue

import (
	"errors"
	"strings"
	"testing"
)

// TestRebase: edits computed against the file as it was read are re-applied
// to the file as a person saved it meanwhile.
func TestRebase(t *testing.T) {
	orig := string(readExample(t, "issue_queue.md"))
	const id1, id2 = "ISSUE-20261122-001", "ISSUE-20261122-002"
	// edit changes the first occurrence of old after the heading of issue id.
	edit := func(s, id, old, new string) string {
		at := strings.Index(s, "## "+id)
		i := strings.Index(s[at:], old)
		if at < 0 || i < 0 {
			t.Fatalf("%q not found in %s", old, id)
		}
		return s[:at+i] + new + s[at+i+len(old):]
	}
	newIssue := "## ISSUE-20261122-003\n\n| Field | Value |\n|---|---|\n| Status | pending |\n"
	tests := []struct {
		name     string
		theirs   string // the file now
		edits    []Edit
		want     string // the result; "" when an error is expected
		conflict *ConflictError
		invalid  bool
	}{
		{
			name:   "other field of the same issue kept, ours applied",
			theirs: edit(orig, id1, "| Priority | critical |", "| Priority | high |"),
			edits:  []Edit{SetField(id1, FieldStatus, StatusInProgress), SetField(id1, FieldRetryCount, "1")},
			want: edit(edit(edit(orig, id1, "| Priority | critical |", "| Priority | high |"),
				id1, "| Status | pending |", "| Status | in_progress |"), id1, "| Retry-Count | 0 |", "| Retry-Count | 1 |"),
		},
		{
			name:   "lines added above shift nothing",
			theirs: strings.Replace(orig, "# Issue Queue\n", "# Issue Queue\n\nA note a person added.\n", 1),
			edits:  []Edit{SetField(id2, FieldStatus, StatusSkipped), setSectionFenced(id1, SectionFailureDetails, "new output")},
			want: edit(edit(strings.Replace(orig, "# Issue Queue\n", "# Issue Queue\n\nA note a person added.\n", 1),
				id2, "| Status | pending |", "| Status | skipped |"),
				id1, "src/index.ts:42:17 - error TS2339: Property 'listen' does not exist on type 'Config'.", "new output"),
		},
		{
			name:     "same field changed to another value",
			theirs:   edit(orig, id1, "| Status | pending |", "| Status | skipped |"),
			edits:    []Edit{SetField(id1, FieldSignatureRepeatCount, "1"), SetField(id1, FieldStatus, StatusInProgress)},
			conflict: &ConflictError{File: "issue_queue.md", Key: id1, Name: FieldStatus, Theirs: "skipped"},
		},
		{
			name:   "same field changed to the same value",
			theirs: edit(orig, id1, "| Status | pending |", "| Status | in_progress |"),
			edits:  []Edit{SetField(id1, FieldStatus, StatusInProgress)},
			want:   edit(orig, id1, "| Status | pending |", "| Status | in_progress |"),
		},
		{
			name:     "field row added by them with another value",
			theirs:   edit(orig, id2, "| Blocking | false |", "| Blocking | false |\n| Verify | docs |"),
			edits:    []Edit{SetField(id2, FieldVerify, "build")},
			conflict: &ConflictError{File: "issue_queue.md", Key: id2, Name: FieldVerify, Theirs: "docs"},
		},
		{
			name:     "section changed by them",
			theirs:   edit(orig, id1, "Property 'listen'", "Property 'close'"),
			edits:    []Edit{setSectionFenced(id1, SectionFailureDetails, "our output")},
			conflict: &ConflictError{File: "issue_queue.md", Key: id1, Name: SectionFailureDetails},
		},
		{
			name:   "rows appended by both",
			theirs: edit(orig, id1, "|---|---|---|---|---|\n", "|---|---|---|---|---|\n| 1 | t1 | timeout | | |\n"),
			edits:  []Edit{AppendRow(id1, SectionAttemptHistory, []string{"Attempt", "Time", "Type", "Signature", "Error"}, []string{"2", "t2", "timeout", "", ""})},
			want:   edit(orig, id1, "|---|---|---|---|---|\n", "|---|---|---|---|---|\n| 1 | t1 | timeout | | |\n| 2 | t2 | timeout |   |   |\n"),
		},
		{
			name:     "issue removed meanwhile",
			theirs:   orig[:strings.Index(orig, "## "+id2)],
			edits:    []Edit{SetField(id2, FieldStatus, StatusResolved)},
			conflict: &ConflictError{File: "issue_queue.md", Key: id2, Theirs: "removed"},
		},
		{
			name:     "issue removed meanwhile, section edit",
			theirs:   orig[:strings.Index(orig, "## "+id2)],
			edits:    []Edit{SetSection(id2, SectionSummary, "x")},
			conflict: &ConflictError{File: "issue_queue.md", Key: id2, Theirs: "removed"},
		},
		{
			name:     "issue removed meanwhile, row edit",
			theirs:   orig[:strings.Index(orig, "## "+id2)],
			edits:    []Edit{AppendRow(id2, SectionAttemptHistory, []string{"Attempt"}, []string{"1"})},
			conflict: &ConflictError{File: "issue_queue.md", Key: id2, Theirs: "removed"},
		},
		{
			name:   "removal of an issue already removed",
			theirs: orig[:strings.Index(orig, "## "+id2)],
			edits:  []Edit{RemoveIssue(id2)},
			want:   orig[:strings.Index(orig, "## "+id2)],
		},
		{
			name:     "removal of an issue they changed",
			theirs:   edit(orig, id2, "| Status | pending |", "| Status | in_progress |"),
			edits:    []Edit{RemoveIssue(id2)},
			conflict: &ConflictError{File: "issue_queue.md", Key: id2},
		},
		{
			name:     "ID appended by them too",
			theirs:   orig + "\n" + newIssue,
			edits:    []Edit{AppendIssue("ISSUE-20261122-003", newIssue)},
			conflict: &ConflictError{File: "issue_queue.md", Key: "ISSUE-20261122-003", Name: "ID", Theirs: "already used"},
		},
		{
			name:   "their new issue kept, ours appended after it",
			theirs: orig + "\n" + newIssue,
			edits:  []Edit{AppendIssue("ISSUE-20261122-004", strings.ReplaceAll(newIssue, "003", "004"))},
			want:   orig + "\n" + newIssue + "\n" + strings.ReplaceAll(newIssue, "003", "004"),
		},
		{
			name:    "current file invalid",
			theirs:  edit(orig, id1, "| Retry-Count | 0 |", "| Retry-Count | zero |"),
			edits:   []Edit{SetField(id1, FieldStatus, StatusInProgress)},
			invalid: true,
		},
	}
	q := ParseQueue("issue_queue.md", []byte(orig))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := q.Rebase([]byte(tt.theirs), tt.edits...)
			switch {
			case tt.invalid:
				var qe *QuarantinedError
				if !errors.As(err, &qe) || qe.Key != id1 || !strings.Contains(err.Error(), `Retry-Count: "zero" is not a whole number`) {
					t.Fatalf("Rebase error = %v, want a *QuarantinedError", err)
				}
			case tt.conflict != nil:
				var ce *ConflictError
				if !errors.As(err, &ce) {
					t.Fatalf("Rebase = %v; want a *ConflictError", err)
				}
				if *ce != *tt.conflict {
					t.Errorf("conflict = %+v, want %+v", *ce, *tt.conflict)
				}
			default:
				if err != nil {
					t.Fatalf("Rebase: %v", err)
				}
				if string(got) != tt.want {
					t.Errorf("Rebase result differs:\n%s", lineDiff(tt.want, string(got)))
				}
			}
			if err != nil && got != nil {
				t.Errorf("Rebase returned content with an error")
			}
		})
	}
}

func TestStateRebase(t *testing.T) {
	orig := string(readExample(t, "session_state.md"))
	st := ParseState("session_state.md", []byte(orig))
	theirs := strings.Replace(orig, "| auto_retry_enabled | true |", "| auto_retry_enabled | false |", 1)
	got, err := st.Rebase([]byte(theirs), SetField(SectionRun, StateLoops, "1"), SetField(SectionAutoRetry, StateTotalAutoRetries, "1"))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(strings.Replace(theirs, "| loops | 0 |", "| loops | 1 |", 1), "| total_auto_retries | 0 |", "| total_auto_retries | 1 |", 1)
	if string(got) != want {
		t.Errorf("Rebase:\n%s", lineDiff(want, string(got)))
	}

	_, err = st.Rebase([]byte(strings.Replace(orig, "| loops | 0 |", "| loops | 5 |", 1)), SetField(SectionRun, StateLoops, "1"))
	var ce *ConflictError
	if !errors.As(err, &ce) || ce.Key != SectionRun || ce.Name != StateLoops || ce.Theirs != "5" {
		t.Errorf("Rebase with loops changed by both = %v, want a conflict on Run loops", err)
	}

	// A section they removed is a conflict too: they removed what we change.
	noBreaker := orig[:strings.Index(orig, "## Circuit Breaker")]
	_, err = st.Rebase([]byte(noBreaker), SetField(SectionBreaker, StateBreaker, BreakerOpen))
	if !errors.As(err, &ce) || ce.Key != SectionBreaker || ce.Theirs != "removed" {
		t.Errorf("Rebase onto a file without the section = %v, want a conflict", err)
	}
	// A section missing on both sides is added.
	st = ParseState("session_state.md", []byte(noBreaker))
	got, err = st.Rebase([]byte(noBreaker+"\nA line they added.\n"), SetField(SectionBreaker, StateBreaker, BreakerOpen))
	if err != nil {
		t.Fatal(err)
	}
	if want := noBreaker + "\nA line they added.\n\n## Circuit Breaker\n\n| Field | Value |\n|-------|-------|\n| state | open |\n"; string(got) != want {
		t.Errorf("Rebase adding a missing section:\n%s", lineDiff(want, string(got)))
	}
}
