package issuequeue

import (
	"bytes"
	"strings"
	"testing"
)

// A field written as a list item reads exactly as the same field written as
// a table row: same value, same default when absent, same error at the
// name's line and column.
func TestListFieldsReadLikeTable(t *testing.T) {
	const head = "# Queue\n\n## ISSUE-20261122-001 login\n\n"
	for _, tc := range []struct {
		list      string
		status    string
		autoRetry bool
		max       int
	}{
		{"- **Status**: skipped\n- **Auto-Retry**: true\n", StatusSkipped, true, 0},
		{"- Status: skipped\n", StatusSkipped, false, 0},
		{"* Status: skipped\n* **Max-Retries**: 2\n", StatusSkipped, false, 2},
		{"- **Status:** skipped\n- **auto-retry:**   yes  \n", StatusSkipped, true, 0},
		{"+ STATUS : wont_fix\n", StatusSkipped, false, 0},
		{"- __Status__: skipped\n- **Auto-Retry**: true\n", StatusSkipped, true, 0},
		{"- **Note** call Ann\n- Status: skipped\n", StatusSkipped, false, 0},
		{"1. Status: resolved\n2. Max-Retries: 5\n", StatusResolved, false, 5},
		{"- Status: skipped\r\n- Auto-Retry: true\r\n", StatusSkipped, true, 0},
		{"- Status: skipped\n\n- Auto-Retry: true\n", StatusSkipped, true, 0},
		{"Some prose first.\n\n- Note: call Ann\n- Status: skipped\n", StatusSkipped, false, 0},
		{"- Note: not a field\n", StatusPending, false, 0},
		{"### Summary\n\n- Status: skipped\n", StatusPending, false, 0}, // a subsection's list is text
	} {
		q := ParseQueue("q.md", []byte(head+tc.list))
		if len(q.Issues) != 1 {
			t.Errorf("%q: %d valid issues, findings %v", tc.list, len(q.Issues), q.Findings())
			continue
		}
		is := q.Issues[0]
		if is.Status != tc.status || is.AutoRetry != tc.autoRetry || is.MaxRetries != tc.max || is.HasMaxRetries != (tc.max > 0) {
			t.Errorf("%q: Status %q Auto-Retry %t Max-Retries %d; want %q %t %d", tc.list, is.Status, is.AutoRetry, is.MaxRetries, tc.status, tc.autoRetry, tc.max)
		}
		if is.PendingAutoRetry() && tc.status == StatusSkipped {
			t.Errorf("%q: a skipped issue is pending auto-retry", tc.list)
		}
		for _, f := range q.Findings() {
			if strings.Contains(f.Msg, "no field table") && tc.status != StatusPending {
				t.Errorf("%q: %v", tc.list, f)
			}
		}
	}
}

func TestListFieldErrorsLikeTable(t *testing.T) {
	table := "## ISSUE-20261122-001\n\n| Field | Value |\n|---|---|\n| Retry-Count | abc |\n| Status | skiped |\n"
	list := "## ISSUE-20261122-001\n\n- Retry-Count: abc\n- **Status**: skiped\n"
	msgs := func(src string) []string {
		q := ParseQueue("q.md", []byte(src))
		if len(q.Quarantined) != 1 {
			t.Fatalf("%q: not quarantined: %v", src, q.Findings())
		}
		var out []string
		for _, f := range q.Quarantined[0].Findings() {
			out = append(out, f.Msg)
		}
		return out
	}
	if got, want := strings.Join(msgs(list), "\n"), strings.Join(msgs(table), "\n"); got != want {
		t.Errorf("list errors:\n%s\nwant the table's:\n%s", got, want)
	}
	q := ParseQueue("q.md", []byte(list))
	var where []string
	for _, f := range q.Findings() {
		where = append(where, f.String()[:len("q.md:3:3")])
	}
	if got, want := strings.Join(where, " "), "q.md:3:3 q.md:4:5"; got != want {
		t.Errorf("findings at %s, want %s", got, want)
	}
}

// A field written twice, in the table and a list or twice in lists, a
// field item that goes on past its line, and a bold name close to a known
// one quarantine the issue, at the line and column of the item.
func TestListFieldConflictsQuarantine(t *testing.T) {
	const head = "## ISSUE-20261122-001\n\n"
	for _, tc := range []struct{ body, at, msg string }{
		{"| Field | Value |\n|---|---|\n| Status | pending |\n\n- Status: skipped\n", "q.md:7:3", `field "Status" appears twice in ISSUE-20261122-001 (first in the table at line 5)`},
		{"| Field | Value |\n|---|---|\n| Status | skipped |\n\n- Status: skipped\n", "q.md:7:3", "appears twice"},
		{"- Status: skipped\n- Auto-Retry: true\n\n* **status**: pending\n", "q.md:6:5", "(first in the list at line 3)"},
		{"- Status: skipped\n  because it was flaky\n", "q.md:3:3", "must be alone on one line"},
		{"- **Max-Retry**: 3\n", "q.md:3:5", `did you mean "Max-Retries"?`},
		{"- Auto-Retry: maybe\n", "q.md:3:3", `"maybe" is not true or false`},
		{"- **Status** skipped\n", "q.md:3:5", "needs a colon after the name"},
		{"- __Status__ = skipped\n", "q.md:3:5", "needs a colon after the name"},
	} {
		q := ParseQueue("q.md", []byte(head+tc.body))
		if len(q.Quarantined) != 1 {
			t.Errorf("%q: not quarantined; findings %v", tc.body, q.Findings())
			continue
		}
		f := q.Quarantined[0].Findings()[0]
		if !strings.HasPrefix(f.String(), tc.at+": ") || !strings.Contains(f.Msg, tc.msg) {
			t.Errorf("%q: finding %v; want at %s with %q", tc.body, f, tc.at, tc.msg)
		}
		if _, err := q.Apply(SetField("ISSUE-20261122-001", FieldStatus, StatusResolved)); err == nil {
			t.Errorf("%q: an edit of the quarantined issue was not refused", tc.body)
		}
	}
}

// Setting a field written as a list item changes only its value's bytes;
// a field the issue lacks becomes an item like its last field item.
func TestListFieldEdits(t *testing.T) {
	const id = "ISSUE-20261122-001"
	for _, tc := range []struct {
		src   string
		edits []Edit
		want  string
	}{
		{"## " + id + "\n\n- **Status**: pending  \n- **Auto-Retry**: true\n- Notes: mine\n",
			[]Edit{SetField(id, FieldStatus, StatusSkipped)},
			"## " + id + "\n\n- **Status**: skipped  \n- **Auto-Retry**: true\n- Notes: mine\n"},
		{"## " + id + "\r\n\r\n* Status:\r\n* **Auto-Retry:** true\r\n\r\nProse.",
			[]Edit{SetField(id, FieldStatus, StatusInProgress), SetField(id, FieldRetryCount, "1"), SetField(id, FieldCategory, "ab\ncd")},
			"## " + id + "\r\n\r\n* Status: in_progress\r\n* **Auto-Retry:** true\r\n* **Retry-Count:** 1\r\n* **Category:** ab cd\r\n\r\nProse."},
		{"## " + id + "\n\n| Field | Value |\n|---|---|\n| Status | pending |\n\n- Auto-Retry: true\n",
			[]Edit{SetField(id, FieldAutoRetry, "false"), SetField(id, FieldRetryCount, "2")},
			"## " + id + "\n\n| Field | Value |\n|---|---|\n| Status | pending |\n| Retry-Count | 2 |\n\n- Auto-Retry: false\n"},
		{"## " + id + "\n\n- Source: a | b\n",
			[]Edit{SetField(id, FieldCategory, "x | y")},
			"## " + id + "\n\n- Source: a | b\n- Category: x | y\n"},
	} {
		q := ParseQueue("q.md", []byte(tc.src))
		out, err := q.Apply(tc.edits...)
		if err != nil {
			t.Errorf("%q: %v", tc.src, err)
			continue
		}
		if string(out) != tc.want {
			t.Errorf("%q:\ngot  %q\nwant %q", tc.src, out, tc.want)
		}
		q2 := ParseQueue("q.md", out)
		if len(q2.Issues) != 1 {
			t.Errorf("%q: after the edits: %v", tc.src, q2.Findings())
			continue
		}
		for _, e := range tc.edits {
			if got, _ := q2.Issues[0].Field(e.name); got != listValue(e.value) {
				t.Errorf("%q: %s reads back %q, want %q", tc.src, e.name, got, e.value)
			}
		}
	}
}

// A person's change of one list field is kept when the tool re-applies its
// edit of another to what they saved.
func TestListFieldRebase(t *testing.T) {
	const id = "ISSUE-20261122-001"
	old := "## " + id + "\n\n- Status: pending\n- Auto-Retry: true\n"
	theirs := "## " + id + "\n\nNotes a person added.\n\n- Status: pending\n- Auto-Retry: false\n"
	q := ParseQueue("q.md", []byte(old))
	out, err := q.Rebase([]byte(theirs), SetField(id, FieldStatus, StatusSkipped))
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(theirs, "Status: pending", "Status: skipped", 1); string(out) != want {
		t.Errorf("rebased:\n%s\nwant:\n%s", out, want)
	}
	if _, err := q.Rebase([]byte(strings.Replace(old, "pending", "resolved", 1)), SetField(id, FieldStatus, StatusSkipped)); err == nil {
		t.Error("a Status the person changed too was overwritten")
	}
}

// listQueue has free-text fields written as list items in each style.
const listQueue = "# Queue\n\n## ISSUE-20261122-001 a\n\n- **Category**: ui\n- **Source:** user  \n* Verify: \n\nProse.\n\n" +
	"## ISSUE-20261122-002 b\n\n| Field | Value |\n|---|---|\n| Status | pending |\n\n1. Category: x\n2. **Verify**:go\n\n### Summary\n\ntext\n"

// FuzzListEditLocal: setting a field written as a list item changes only
// the bytes of its value, reads back as set, and changes no other field.
func FuzzListEditLocal(f *testing.F) {
	for _, v := range []string{"in_progress", "", " ", "a | b", "**x**", "a: b", "one\ntwo\r\nthree", "## ISSUE-20261122-009", "- Status: resolved", "\\", "\x00\xff", "  padded  ", "<!--", "```"} {
		for pick := range uint(6) {
			f.Add(v, pick, false)
			f.Add(v, pick, true)
		}
	}
	f.Fuzz(func(t *testing.T, value string, pick uint, crlf bool) {
		src := []byte(listQueue)
		if crlf {
			src = bytes.ReplaceAll(src, []byte("\n"), []byte("\r\n"))
		}
		q := ParseQueue("issue_queue.md", src)
		if len(q.Issues) != 2 || len(q.Findings()) != 0 {
			t.Fatalf("%d issues, findings %v", len(q.Issues), q.Findings())
		}
		type target struct {
			is   *Issue
			name string
			f    fieldRef
		}
		var targets []target
		for _, is := range q.Issues {
			for _, name := range []string{FieldCategory, FieldSource, FieldVerify} {
				if fr := findField(q.d, is.r, name); fr != nil && fr.list() {
					targets = append(targets, target{is, name, *fr})
				}
			}
		}
		tg := targets[pick%uint(len(targets))]
		out, err := q.Apply(SetField(tg.is.ID, tg.name, value))
		if err != nil {
			t.Fatal(err)
		}
		start, end := int(tg.f.value.start), int(tg.f.value.end)
		if !bytes.HasPrefix(out, src[:start]) || !bytes.HasSuffix(out, src[end:]) {
			t.Fatalf("setting %s %s to %q changed bytes outside its value %d:%d:\n%q", tg.is.ID, tg.name, value, start, end, out)
		}
		q2 := ParseQueue("issue_queue.md", out)
		if len(q2.Issues) != 2 || len(q2.Findings()) != 0 {
			t.Fatalf("setting %s %s to %q: %d issues, findings %v\n%s", tg.is.ID, tg.name, value, len(q2.Issues), q2.Findings(), out)
		}
		want := cellReadBack(value)
		if got, ok := q2.Issue(tg.is.ID).Field(tg.name); !ok || got != want {
			t.Fatalf("%s %s reads back as %q, %t; want %q", tg.is.ID, tg.name, got, ok, want)
		}
		for _, is := range q.Issues {
			for _, name := range knownFields {
				v, ok := is.Field(name)
				if is.ID == tg.is.ID && name == tg.name {
					v, ok = want, true
				}
				if got, gok := q2.Issue(is.ID).Field(name); got != v || gok != ok {
					t.Fatalf("setting %s %s to %q changed %s %s from %q to %q", tg.is.ID, tg.name, value, is.ID, name, v, got)
				}
			}
		}
	})
}
