package issuequeue

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func readExample(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", ".orchestrator.example", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// view is what a test compares of an issue: every typed field.
func view(is *Issue) string {
	return fmt.Sprintf("%s line=%d type=%s priority=%s status=%s source=%q category=%q created=%s auto=%t halted=%t blocking=%t retries=%d max=%d/%t sig=%q prev=%q repeat=%d verify=%q",
		is.ID, is.Line, is.Type, is.Priority, is.Status, is.Source, is.Category, is.Created.Format(time.RFC3339),
		is.AutoRetry, is.Halted, is.Blocking, is.RetryCount, is.MaxRetries, is.HasMaxRetries,
		is.FailureSignature, is.PreviousSignatures, is.SignatureRepeatCount, is.Verify)
}

func findingStrings(fs []Finding) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.String()
	}
	return out
}

// variants returns src as it is and in the shapes people's editors save:
// CRLF line endings, a byte-order mark, no final newline.
func variants(src string) map[string][]byte {
	crlf := strings.ReplaceAll(src, "\n", "\r\n")
	return map[string][]byte{
		"lf":                 []byte(src),
		"crlf":               []byte(crlf),
		"bom":                []byte(utf8BOM + src),
		"bom crlf":           []byte(utf8BOM + crlf),
		"no final newline":   []byte(strings.TrimRight(src, "\n")),
		"crlf, no final eol": []byte(strings.TrimRight(crlf, "\r\n")),
	}
}

func TestParseExampleQueue(t *testing.T) {
	want := []string{
		`ISSUE-20261122-001 line=8 type=build priority=critical status=pending source="generated" category="backend" created=2026-11-22T10:00:00Z auto=true halted=false blocking=true retries=0 max=3/true sig="" prev=[] repeat=0 verify="build"`,
		`ISSUE-20261122-002 line=47 type=review priority=low status=pending source="user" category="docs" created=2026-11-22T10:05:00Z auto=false halted=false blocking=false retries=0 max=2/true sig="" prev=[] repeat=0 verify=""`,
	}
	sections := []struct{ id, name, text string }{
		{"ISSUE-20261122-001", SectionSummary, "Server fails to start (TypeError in src/index.ts:42)"},
		{"ISSUE-20261122-001", SectionFailureDetails, "src/index.ts:42:17 - error TS2339: Property 'listen' does not exist on type 'Config'."},
		{"ISSUE-20261122-001", SectionVerification, "`npm run build`"},
		{"ISSUE-20261122-001", SectionSuggestedFix, "`Config` lost its `listen` method in the last refactor; restore it or call\n`server.listen` instead."},
		{"ISSUE-20261122-001", SectionAttemptHistory, "| Attempt | Time | Type | Signature | Error |\n|---|---|---|---|---|"},
		{"ISSUE-20261122-002", SectionSummary, "README quick start skips the install step"},
		{"ISSUE-20261122-002", SectionSuggestedFix, "Not blocking: fixed in a regular loop, never auto-retried."},
	}
	for name, src := range variants(string(readExample(t, "issue_queue.md"))) {
		t.Run(name, func(t *testing.T) {
			q := ParseQueue("issue_queue.md", src)
			if fs := q.Findings(); len(fs) != 0 {
				t.Fatalf("findings in the example: %q", findingStrings(fs))
			}
			if got, want := len(q.Issues), len(want); got != want {
				t.Fatalf("got %d issues, want %d", got, want)
			}
			for i, is := range q.Issues {
				if got := view(is); got != want[i] {
					t.Errorf("issue %d:\ngot  %s\nwant %s", i, got, want[i])
				}
			}
			for _, s := range sections {
				got, ok := q.Issue(s.id).Section(s.name)
				if !ok || got != s.text {
					t.Errorf("%s %s = %q, %t; want %q", s.id, s.name, got, ok, s.text)
				}
			}
			if _, ok := q.Issue("ISSUE-20261122-002").Section(SectionFailureDetails); ok {
				t.Error("ISSUE-20261122-002 has no Failure Details section, but Section found one")
			}
			if got, want := q.Issue("ISSUE-20261122-001").Summary(), "Server fails to start (TypeError in src/index.ts:42)"; got != want {
				t.Errorf("Summary() = %q, want %q", got, want)
			}
			h, rows, ok := q.Issue("ISSUE-20261122-001").Table(SectionAttemptHistory)
			if !ok || strings.Join(h, ",") != "Attempt,Time,Type,Signature,Error" || len(rows) != 0 {
				t.Errorf("Attempt History table = %q %q %t", h, rows, ok)
			}
			if out, err := q.Apply(); err != nil || !bytes.Equal(out, src) {
				t.Errorf("Apply() with no edits changed the file (err %v)", err)
			}
		})
	}
}

func TestParseExampleState(t *testing.T) {
	for name, src := range variants(string(readExample(t, "session_state.md"))) {
		t.Run(name, func(t *testing.T) {
			st := ParseState("session_state.md", src)
			if fs := st.Findings(); len(fs) != 0 {
				t.Fatalf("findings in the example: %q", findingStrings(fs))
			}
			got := fmt.Sprintf("%d %q %t %q %v %v %d %q %q %d %v", st.TotalAutoRetries, st.LastRetryReason, st.AutoRetryEnabled,
				st.RunID, st.StartedAt.IsZero(), st.FinishedAt.IsZero(), st.Loops, st.Outcome, st.Breaker, st.ConsecutiveFailures, st.OpenedAt.IsZero())
			if want := `0 "" true "" true true 0 "none" "closed" 0 true`; got != want {
				t.Errorf("state = %s, want %s", got, want)
			}
			if v, ok := st.Field(SectionRun, "OUTCOME"); !ok || v != "none" {
				t.Errorf(`Field(Run, "OUTCOME") = %q, %t; want "none", true`, v, ok)
			}
			if out, err := st.Apply(); err != nil || !bytes.Equal(out, src) {
				t.Errorf("Apply() with no edits changed the file (err %v)", err)
			}
		})
	}
}

func TestParseStateValues(t *testing.T) {
	src := "# Session State\n\n## Auto-Retry State\n\n| Field | Value |\n|---|---|\n| total_auto_retries | 7 |\n| last_retry_reason | Server fails \\| twice |\n| auto_retry_enabled | no |\n\n" +
		"## Run\n\n| Field | Value |\n|---|---|\n| run_id | 20261122T101500Z-4242 |\n| started_at | 2026-11-22T10:15:00Z |\n| finished_at | null |\n| loops | 3 |\n| outcome | running |\n\n" +
		"## Circuit Breaker\n\n| Field | Value |\n|---|---|\n| state | half-open |\n| consecutive_failures | 2 |\n| opened_at | 2026-11-22T09:00:00Z |\n"
	st := ParseState("session_state.md", []byte(src))
	if fs := st.Findings(); len(fs) != 0 {
		t.Fatalf("findings: %q", findingStrings(fs))
	}
	got := fmt.Sprintf("%d %q %t %q %s %v %d %q %q %d %s", st.TotalAutoRetries, st.LastRetryReason, st.AutoRetryEnabled,
		st.RunID, st.StartedAt.Format(time.RFC3339), st.FinishedAt.IsZero(), st.Loops, st.Outcome, st.Breaker, st.ConsecutiveFailures, st.OpenedAt.Format(time.RFC3339))
	if want := `7 "Server fails | twice" false "20261122T101500Z-4242" 2026-11-22T10:15:00Z true 3 "running" "half-open" 2 2026-11-22T09:00:00Z`; got != want {
		t.Errorf("state = %s\nwant    %s", got, want)
	}

	// Missing sections and fields read as their defaults; auto-retry stays
	// enabled unless a person turned it off.
	st = ParseState("session_state.md", []byte("# Session State\n"))
	if fs := st.Findings(); len(fs) != 0 {
		t.Fatalf("findings: %q", findingStrings(fs))
	}
	if !st.AutoRetryEnabled || st.Breaker != BreakerClosed || st.Loops != 0 {
		t.Errorf("empty state: enabled %t breaker %q loops %d; want true closed 0", st.AutoRetryEnabled, st.Breaker, st.Loops)
	}
}

func TestParseStateFindings(t *testing.T) {
	src := "# Session State\n\n## Auto-Retry State\n\n| Field | Value |\n|---|---|\n| total_auto_retries | many |\n| auto_retry_enabled | maybe |\n\n" +
		"## Run\n\n| Field | Value |\n|---|---|\n| started_at | today |\n\n## Circuit Breaker\n\n| Field | Value |\n|---|---|\n| state | opne |\n\n## Run\n"
	st := ParseState("session_state.md", []byte(src))
	want := []string{
		`session_state.md:7:3: total_auto_retries: "many" is not a whole number`,
		`session_state.md:8:3: auto_retry_enabled: "maybe" is not true or false (yes and no work too)`,
		`session_state.md:14:3: started_at: "today" is not an RFC 3339 time or null`,
		`session_state.md:20:3: state: "opne" is not a breaker state (closed, open, half-open); did you mean "open"?`,
		`session_state.md:22:1: section "Run" appears twice`,
	}
	if got := findingStrings(st.Findings()); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if st.AutoRetryEnabled {
		t.Error("auto_retry_enabled = maybe reads as enabled; only true enables auto-retry")
	}
	if err := st.Err(); err == nil {
		t.Error("Err() = nil for a state with errors")
	}
}

// issueWith returns a queue with one issue whose field table has the given rows.
func issueWith(rows ...string) string {
	return "# Issue Queue\n\n## ISSUE-20261122-001\n\n| Field | Value |\n|-------|-------|\n" + strings.Join(rows, "\n") + "\n\n### Summary\nsomething broke\n"
}

func TestParseFieldValues(t *testing.T) {
	sig1 := strings.Repeat("a", 64)
	sig2 := strings.Repeat("0123456789abcdef", 4)
	const defaults = `ISSUE-20261122-001 line=3 type=bug priority=medium status=pending source="" category="" created=0001-01-01T00:00:00Z auto=false halted=false blocking=false retries=0 max=0/false sig="" prev=[] repeat=0 verify=""`
	tests := []struct {
		name string
		rows []string
		want string
	}{
		{"no rows", nil, defaults},
		{"blank values", []string{"| Type | |", "| Priority | |", "| Status | |", "| Created | |", "| Auto-Retry | |", "| Retry-Count | |",
			"| Max-Retries | |", "| Failure-Signature | |", "| Previous-Signatures | |", "| Signature-Repeat-Count | |", "| Halted | |", "| Blocking | |", "| Verify | |"}, defaults},
		{"missing value cells", []string{"| Status |", "| Halted ||", "| Max-Retries |"}, defaults},
		{"yes and no", []string{"| Auto-Retry | yes |", "| Halted | No |", "| Blocking | YES |"},
			`ISSUE-20261122-001 line=3 type=bug priority=medium status=pending source="" category="" created=0001-01-01T00:00:00Z auto=true halted=false blocking=true retries=0 max=0/false sig="" prev=[] repeat=0 verify=""`},
		{"odd spacing and case", []string{"| status |  Pending  |", "|PRIORITY|High|", "|  type  |   Build   |", "| auto-retry | True |", "| max-retries |   0 |"},
			`ISSUE-20261122-001 line=3 type=build priority=high status=pending source="" category="" created=0001-01-01T00:00:00Z auto=true halted=false blocking=false retries=0 max=0/true sig="" prev=[] repeat=0 verify=""`},
		{"every field", []string{"| Type | test |", "| Priority | critical |", "| Status | in_progress |", "| Source | user |", "| Category | api \\| db |",
			"| Created | 2026-11-22T11:00:00+01:00 |", "| Auto-Retry | true |", "| Retry-Count | 4 |", "| Max-Retries | 5 |", "| Failure-Signature | " + sig1 + " |",
			"| Previous-Signatures | [" + sig2 + ",  " + sig1 + "] |", "| Signature-Repeat-Count | 2 |", "| Halted | true |", "| Blocking | false |", "| Verify | unit |"},
			`ISSUE-20261122-001 line=3 type=test priority=critical status=in_progress source="user" category="api | db" created=2026-11-22T11:00:00+01:00 auto=true halted=true blocking=false retries=4 max=5/true sig="` + sig1 + `" prev=["` + sig2 + `" "` + sig1 + `"] repeat=2 verify="unit"`},
		{"no outer pipes", []string{"Status | escalated", "Retry-Count | 3"},
			`ISSUE-20261122-001 line=3 type=bug priority=medium status=escalated source="" category="" created=0001-01-01T00:00:00Z auto=false halted=false blocking=false retries=3 max=0/false sig="" prev=[] repeat=0 verify=""`},
		{"unknown fields", []string{"| Owner | alice |", "| Status | skipped |"},
			`ISSUE-20261122-001 line=3 type=bug priority=medium status=skipped source="" category="" created=0001-01-01T00:00:00Z auto=false halted=false blocking=false retries=0 max=0/false sig="" prev=[] repeat=0 verify=""`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for vname, src := range variants(issueWith(tt.rows...)) {
				q := ParseQueue("issue_queue.md", src)
				if fs := q.Findings(); len(fs) != 0 {
					t.Fatalf("%s: findings: %q", vname, findingStrings(fs))
				}
				if len(q.Issues) != 1 {
					t.Fatalf("%s: got %d issues, want 1", vname, len(q.Issues))
				}
				if got := view(q.Issues[0]); got != tt.want {
					t.Errorf("%s:\ngot  %s\nwant %s", vname, got, tt.want)
				}
			}
		})
	}
}

func TestUnknownFieldsReadable(t *testing.T) {
	q := ParseQueue("issue_queue.md", []byte(issueWith("| Owner | alice \\| bob |", "| Status | pending |")))
	is := q.Issue("ISSUE-20261122-001")
	if v, ok := is.Field("owner"); !ok || v != "alice | bob" {
		t.Errorf(`Field("owner") = %q, %t; want "alice | bob", true`, v, ok)
	}
	if v, ok := is.Field("Missing"); ok || v != "" {
		t.Errorf(`Field("Missing") = %q, %t; want "", false`, v, ok)
	}
}

// Field names are matched ignoring case, also when they are written with an
// escaped pipe or with letters outside ASCII, and only whole names match.
func TestFieldNamesIgnoreCase(t *testing.T) {
	q := ParseQueue("issue_queue.md", []byte(issueWith(
		"| STATUS | pending |",
		"| a\\|b | piped |",
		"| Größe | groß |",
		"| Verify | |",
		"| Verified | short |",
	)))
	if err := q.Err(); err != nil {
		t.Fatal(err)
	}
	is := q.Issue("ISSUE-20261122-001")
	for _, tt := range []struct{ name, want string }{
		{"status", "pending"}, {"Status", "pending"}, {"A|B", "piped"}, {"GRÖSSE", ""}, {"größe", "groß"},
		{"verify", ""}, {"verified", "short"}, {"verifie", ""}, {"veri", ""}, {"Verify!", ""},
	} {
		v, ok := is.Field(tt.name)
		if v != tt.want || ok != (tt.want != "" || tt.name == "verify") {
			t.Errorf("Field(%q) = %q, %t; want %q", tt.name, v, ok, tt.want)
		}
	}
	if is.Status != StatusPending {
		t.Errorf("Status = %q, want pending", is.Status)
	}
	// The same name twice, in another case, is a duplicate.
	q = ParseQueue("issue_queue.md", []byte(issueWith("| Status | pending |", "| a\\|B | x |", "| A\\|b | y |")))
	if f := q.Findings(); len(f) != 1 || !strings.Contains(f[0].Msg, `field "A|b" appears twice`) {
		t.Errorf("findings = %v, want one duplicate a|b", f)
	}
}

func TestIssueExtent(t *testing.T) {
	src := `# Queue

## ISSUE-20261122-001

| Field | Value |
|---|---|
| Status | resolved |

### Summary
first line
#### Detail
deeper text belongs to Summary
### Failure Details
boom
## Notes

Not an issue; ends ISSUE-20261122-001.

### ISSUE-20261122-002

| Field | Value |
|---|---|
| Status | escalated |

#### Summary
second
### ISSUE-20261122-003 Title after the ID

| Field | Value |
|---|---|
| Priority | low |

#### Summary
#### Failure Details
third
# Appendix
### Summary
`
	q := ParseQueue("issue_queue.md", []byte(src))
	if fs := q.Findings(); len(fs) != 0 {
		t.Fatalf("findings: %q", findingStrings(fs))
	}
	var ids []string
	for _, is := range q.Issues {
		ids = append(ids, fmt.Sprintf("%s@%d:%s", is.ID, is.Line, is.Status))
	}
	if got, want := strings.Join(ids, " "), "ISSUE-20261122-001@3:resolved ISSUE-20261122-002@19:escalated ISSUE-20261122-003@27:pending"; got != want {
		t.Errorf("issues = %s, want %s", got, want)
	}
	tests := []struct {
		id, section, text string
		ok                bool
	}{
		{"ISSUE-20261122-001", "Summary", "first line\n#### Detail\ndeeper text belongs to Summary", true},
		{"ISSUE-20261122-001", "failure details", "boom", true},
		{"ISSUE-20261122-001", "Detail", "", false},
		{"ISSUE-20261122-001", "Notes", "", false},
		{"ISSUE-20261122-002", "Summary", "second", true},
		{"ISSUE-20261122-003", "Summary", "", true},
		{"ISSUE-20261122-003", "Failure Details", "third", true},
	}
	for _, tt := range tests {
		got, ok := q.Issue(tt.id).Section(tt.section)
		if got != tt.text || ok != tt.ok {
			t.Errorf("%s Section(%q) = %q, %t; want %q, %t", tt.id, tt.section, got, ok, tt.text, tt.ok)
		}
	}
	if got, want := q.Issue("ISSUE-20261122-003").Summary(), "Title after the ID"; got != want {
		t.Errorf("Summary() of an issue with an empty Summary section = %q, want the heading's title %q", got, want)
	}
}

// TestTableNotFirstParagraph: a paragraph of prose containing a pipe before
// the field table must not hide the table.
func TestTableNotFirstParagraph(t *testing.T) {
	src := "## ISSUE-20261122-001\n\nNote: run a | b first.\n\n| Field | Value |\n|---|---|\n| Status | resolved |\n\n### Attempt History\nSee a | b.\n\n| Attempt | Time |\n|---|---|\n| 1 | now |\n"
	q := ParseQueue("issue_queue.md", []byte(src))
	if fs := q.Findings(); len(fs) != 0 {
		t.Fatalf("findings: %q", findingStrings(fs))
	}
	if got := q.Issues[0].Status; got != StatusResolved {
		t.Errorf("Status = %q, want resolved: the field table after a prose paragraph with a pipe was not read", got)
	}
	_, rows, ok := q.Issues[0].Table(SectionAttemptHistory)
	if !ok || len(rows) != 1 || rows[0][1] != "now" {
		t.Errorf("Attempt History rows = %q, %t; want the table after the prose", rows, ok)
	}
	out, err := q.Apply(SetField("ISSUE-20261122-001", "Status", "pending"),
		AppendRow("ISSUE-20261122-001", SectionAttemptHistory, []string{"Attempt", "Time"}, []string{"2", "later"}))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(strings.Replace(src, "| resolved |", "| pending |", 1), "| 1 | now |\n", "| 1 | now |\n| 2 | later |\n", 1)
	if string(out) != want {
		t.Errorf("Apply:\n%s\nwant:\n%s", out, want)
	}
}

func TestFindings(t *testing.T) {
	sig := strings.Repeat("b", 64)
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"retry count not a number", issueWith("| Status | pending |", "| Retry-Count | abc |"),
			[]string{`issue_queue.md:8:3: Retry-Count: "abc" is not a whole number`}},
		{"negative number, col of the name cell", issueWith("|   Max-Retries | -1 |"),
			[]string{`issue_queue.md:7:5: Max-Retries: "-1" is not a whole number`}},
		{"status with did you mean", issueWith("| Status | pendng |"),
			[]string{`issue_queue.md:7:3: Status: "pendng" is not a status (pending, in_progress, resolved, escalated, skipped, or a synonym such as completed or wont_fix); did you mean "pending"?`}},
		{"status prefix", issueWith("| Status | resol |"),
			[]string{`issue_queue.md:7:3: Status: "resol" is not a status (pending, in_progress, resolved, escalated, skipped, or a synonym such as completed or wont_fix); did you mean "resolved"?`}},
		{"status far from any", issueWith("| Status | done |"),
			[]string{`issue_queue.md:7:3: Status: "done" is not a status (pending, in_progress, resolved, escalated, skipped, or a synonym such as completed or wont_fix)`}},
		{"priority", issueWith("| Priority | urgent |", "| Type | x |", "| Priority2 | hihg |"),
			[]string{`issue_queue.md:7:3: Priority: "urgent" is not a priority (critical, high, medium, low)`}},
		{"priority did you mean", issueWith("| Priority | hgh |"),
			[]string{`issue_queue.md:7:3: Priority: "hgh" is not a priority (critical, high, medium, low); did you mean "high"?`}},
		{"bad bool", issueWith("| Auto-Retry | maybe |", "| Blocking | 1 |"),
			[]string{`issue_queue.md:7:3: Auto-Retry: "maybe" is not true or false (yes and no work too)`,
				`issue_queue.md:8:3: Blocking: "1" is not true or false (yes and no work too)`}},
		{"bad created", issueWith("| Created | 2026-11-22 10:00 |"),
			[]string{`issue_queue.md:7:3: Created: "2026-11-22 10:00" is not an RFC 3339 time such as 2026-11-22T10:00:00Z`}},
		{"bad signature", issueWith("| Failure-Signature | " + strings.ToUpper(sig) + " |"),
			[]string{`issue_queue.md:7:3: Failure-Signature: "` + strings.ToUpper(sig) + `" is not a signature (64 lowercase hex digits, or their first 16, or empty)`}},
		{"previous signatures not a list", issueWith("| Previous-Signatures | " + sig + " |"),
			[]string{`issue_queue.md:7:3: Previous-Signatures: "` + sig + `" is not a list such as [] or [h1, h2]`}},
		{"previous signatures bad element", issueWith("| Previous-Signatures | [" + sig + ", abc] |"),
			[]string{`issue_queue.md:7:3: Previous-Signatures: "abc" in the list is not a signature (64 lowercase hex digits, or their first 16)`}},
		{"duplicate field rows", issueWith("| Status | pending |", "| status | resolved |"),
			[]string{`issue_queue.md:8:3: field "status" appears twice in ISSUE-20261122-001 (first at line 7)`}},
		{"row wider than header", issueWith("| Status | pending | extra |"),
			[]string{`issue_queue.md:7:1: row has 3 cells but the table header has 2; the extra cells would be ignored`}},
		{"text directly under the table", strings.Replace(issueWith("| Status | pending |"), "| pending |\n\n", "| pending |\nA note about it\n\n", 1),
			[]string{`issue_queue.md:8:1: text directly under a table is read as a table row; put a blank line between the table and the text`}},
		{"bad delimiter row", "## ISSUE-20261122-001\n\n| Field | Value |\n|---|\n| Status | pending |\n",
			[]string{`issue_queue.md:3:1: malformed table: the line after the header must be a delimiter row such as |---|---| with as many cells as the header`}},
		{"one-column table", "## ISSUE-20261122-001\n\n| Field |\n|---|\n| Status |\n",
			[]string{`issue_queue.md:3:1: the field table needs two columns, | Field | Value |`}},
		{"no field table", "## ISSUE-20261122-001\n\n### Summary\n| Status | pending |\n|---|---|\n",
			[]string{`issue_queue.md:1:1: warning: ISSUE-20261122-001 has no field table, so every field has its default; start it with | Field | Value | right under the heading`}},
		{"no field table, prose with a pipe", "## ISSUE-20261122-001\n\nuse a | b\n",
			[]string{`issue_queue.md:1:1: warning: ISSUE-20261122-001 has no field table, so every field has its default; start it with | Field | Value | right under the heading`}},
		{"malformed IDs", "## ISSUE-2026-1\n\n## ISSUE-20261122-01\n\n### ISSUE-20261122-001x\n\n## issue-20261122-001\n",
			[]string{`issue_queue.md:1:1: malformed issue ID "ISSUE-2026-1": want ISSUE-YYYYMMDD-NNN, e.g. ISSUE-20261122-001`,
				`issue_queue.md:3:1: malformed issue ID "ISSUE-20261122-01": want ISSUE-YYYYMMDD-NNN, e.g. ISSUE-20261122-001`,
				`issue_queue.md:5:1: malformed issue ID "ISSUE-20261122-001x": want ISSUE-YYYYMMDD-NNN, e.g. ISSUE-20261122-001`,
				`issue_queue.md:7:1: malformed issue ID "issue-20261122-001": want ISSUE-YYYYMMDD-NNN, e.g. ISSUE-20261122-001; did you mean "ISSUE-20261122-001"?`}},
		{"duplicate IDs", "## ISSUE-20261122-001\n\n| Field | Value |\n|---|---|\n\n## ISSUE-20261122-001\n\n| Field | Value |\n|---|---|\n",
			[]string{`issue_queue.md:1:1: duplicate issue ID ISSUE-20261122-001 (again at line 6); rename one of them`,
				`issue_queue.md:6:1: duplicate issue ID ISSUE-20261122-001 (first at line 1); rename one of them`}},
		{"unclosed fence", issueWith() + "\n### Failure Details\n```\n## ISSUE-20261122-002\n\n| Field | Value |\n|---|---|\n",
			[]string{`issue_queue.md:13:1: this code fence is never closed, so everything after it is code; close it with a line of ` + "```"}},
		{"unclosed comment", issueWith() + "<!-- notes\n## ISSUE-20261122-002\n",
			[]string{`issue_queue.md:11:1: this HTML block is never closed, so everything after it is part of it; close it with -->`,
				`issue_queue.md:12:1: warning: "## ISSUE-20261122-002" is inside an HTML comment, so it is not an issue`}},
		{"hidden headings are warnings", "# Queue\n\n```\n## ISSUE-20261122-009\n```\n\n<!--\n## ISSUE-20261122-008\n-->\n\n    ## ISSUE-20261122-007\n\n> ## ISSUE-20261122-006\n\n- ## ISSUE-20261122-005\n\n# ISSUE-20261122-004\n\n#### ISSUE-20261122-003\n\nISSUE-20261122-002\n---\n",
			[]string{`issue_queue.md:4:1: warning: "## ISSUE-20261122-009" is inside a fenced code block, so it is not an issue`,
				`issue_queue.md:8:1: warning: "## ISSUE-20261122-008" is inside an HTML comment, so it is not an issue`,
				`issue_queue.md:11:1: warning: "## ISSUE-20261122-007" is inside an indented code block, so it is not an issue`,
				`issue_queue.md:13:1: warning: "> ## ISSUE-20261122-006" is inside a block quote, so it is not an issue`,
				`issue_queue.md:15:1: warning: "- ## ISSUE-20261122-005" is inside a list item, so it is not an issue`,
				`issue_queue.md:17:1: warning: ISSUE-20261122-004 is a level-1 heading; only ## and ### headings are issues`,
				`issue_queue.md:19:1: warning: ISSUE-20261122-003 is a level-4 heading; only ## and ### headings are issues`,
				`issue_queue.md:21:1: warning: "ISSUE-20261122-002" is underlined, which makes it a heading but not an issue; write it as "## ISSUE-20261122-002"`}},
		{"fenced output in a section is not reported", issueWith("| Status | pending |") + "\n### Failure Details\n````\n## ISSUE-20261122-002\n```\n## ISSUE-20261122-003\n````\n",
			nil},
		{"html block in a section is reported", issueWith("| Status | pending |") + "\n### Notes\n<details>\n## ISSUE-20261122-002\n</details>\n",
			[]string{`issue_queue.md:14:1: warning: "## ISSUE-20261122-002" is inside an HTML block, so it is not an issue`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := ParseQueue("issue_queue.md", []byte(tt.src))
			got := findingStrings(q.Findings())
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			errs := 0
			for _, f := range q.Findings() {
				if !f.Warning {
					errs++
				}
			}
			// Every error is either the file's (Err) or an issue's, which
			// quarantines that issue.
			fileErrs := 0
			if err := q.Err(); err != nil {
				fileErrs = len(err.(*ValidationError).Findings)
			}
			if n := len(q.QuarantineFindings()); fileErrs+n != errs {
				t.Errorf("%d file errors and %d issue errors, want the %d errors", fileErrs, n, errs)
			}
		})
	}
}

// TestFindingsAllAtOnce: one file with many problems reports every one of
// them, in file order.
func TestFindingsAllAtOnce(t *testing.T) {
	src := "# Queue\n\n```\n## ISSUE-20261122-009\n```\n\n" +
		"## ISSUE-20261122-001\n\n| Field | Value |\n|---|---|\n| Status | pendng |\n| Retry-Count | abc |\n| Halted | nope |\n\n" +
		"## ISSUE-20261122-001\n\n| Field | Value |\n|---|---|\n| Priority | hgih |\n\n" +
		"## ISSUE-1\n"
	q := ParseQueue("issue_queue.md", []byte(src))
	want := []string{
		`issue_queue.md:4:1: warning: "## ISSUE-20261122-009" is inside a fenced code block, so it is not an issue`,
		`issue_queue.md:7:1: duplicate issue ID ISSUE-20261122-001 (again at line 15); rename one of them`,
		`issue_queue.md:11:3: Status: "pendng" is not a status (pending, in_progress, resolved, escalated, skipped, or a synonym such as completed or wont_fix); did you mean "pending"?`,
		`issue_queue.md:12:3: Retry-Count: "abc" is not a whole number`,
		`issue_queue.md:13:3: Halted: "nope" is not true or false (yes and no work too)`,
		`issue_queue.md:15:1: duplicate issue ID ISSUE-20261122-001 (first at line 7); rename one of them`,
		`issue_queue.md:19:3: Priority: "hgih" is not a priority (critical, high, medium, low); did you mean "high"?`,
		`issue_queue.md:21:1: malformed issue ID "ISSUE-1": want ISSUE-YYYYMMDD-NNN, e.g. ISSUE-20261122-001`,
	}
	if got := findingStrings(q.Findings()); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Each error is an issue's own: every issue is quarantined, and the
	// file as a whole is fine.
	if err := q.Err(); err != nil {
		t.Errorf("Err() = %v", err)
	}
	var got []string
	for _, is := range q.Quarantined {
		got = append(got, fmt.Sprintf("%s@%d:%d", is.ID, is.Line, len(is.Findings())))
	}
	if w := "ISSUE-20261122-001@7:4 ISSUE-20261122-001@15:2 ISSUE-1@21:1"; strings.Join(got, " ") != w || len(q.Issues) != 0 {
		t.Errorf("quarantined %v, valid %d; want %s, 0", got, len(q.Issues), w)
	}
}

func TestNextID(t *testing.T) {
	now := time.Date(2026, 11, 22, 23, 30, 0, 0, time.FixedZone("X", -3*3600)) // 2026-11-23 in UTC
	tests := []struct {
		name string
		ids  []string
		want string
	}{
		{"empty queue", nil, "ISSUE-20261123-001"},
		{"other dates ignored", []string{"ISSUE-20261122-007", "ISSUE-20261124-003"}, "ISSUE-20261123-001"},
		{"highest plus one", []string{"ISSUE-20261123-002", "ISSUE-20261123-010", "ISSUE-20261123-004"}, "ISSUE-20261123-011"},
		{"999 to 1000", []string{"ISSUE-20261123-999"}, "ISSUE-20261123-1000"},
		{"four digits", []string{"ISSUE-20261123-1041", "ISSUE-20261123-007"}, "ISSUE-20261123-1042"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			for _, id := range tt.ids {
				fmt.Fprintf(&b, "## %s\n\n| Field | Value |\n|---|---|\n\n", id)
			}
			q := ParseQueue("issue_queue.md", []byte(b.String()))
			if fs := q.Findings(); len(fs) != 0 {
				t.Fatalf("findings: %q", findingStrings(fs))
			}
			if got := q.NextID(now); got != tt.want {
				t.Errorf("NextID = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestParseBoolAndSignatureList(t *testing.T) {
	for _, v := range []string{"true", "TRUE", " yes ", "Yes"} {
		if b, err := ParseBool(v); !b || err != nil {
			t.Errorf("ParseBool(%q) = %t, %v", v, b, err)
		}
	}
	for _, v := range []string{"false", "No", "", "  "} {
		if b, err := ParseBool(v); b || err != nil {
			t.Errorf("ParseBool(%q) = %t, %v", v, b, err)
		}
	}
	if _, err := ParseBool("y"); err == nil {
		t.Error(`ParseBool("y") accepted`)
	}
	sigs := []string{strings.Repeat("1", 64), strings.Repeat("f", 64)}
	got, err := ParseSignatureList(FormatSignatureList(sigs))
	if err != nil || strings.Join(got, ",") != strings.Join(sigs, ",") {
		t.Errorf("round trip = %q, %v", got, err)
	}
	if got, err := ParseSignatureList(FormatSignatureList(nil)); err != nil || len(got) != 0 {
		t.Errorf("empty list = %q, %v", got, err)
	}
}

// TestBOMBeforeIssue: a byte-order mark before the first issue's heading
// neither hides the issue nor is lost when the issue is removed.
func TestBOMBeforeIssue(t *testing.T) {
	src := utf8BOM + "## ISSUE-20261122-001\n\n| Field | Value |\n|---|---|\n| Status | resolved |\n\n## ISSUE-20261122-002\n\n| Field | Value |\n|---|---|\n"
	q := ParseQueue("issue_queue.md", []byte(src))
	if fs := q.Findings(); len(fs) != 0 || len(q.Issues) != 2 || q.Issues[0].Status != StatusResolved {
		t.Fatalf("findings %q, issues %d", findingStrings(fs), len(q.Issues))
	}
	out, err := q.Apply(RemoveIssue("ISSUE-20261122-001"))
	if err != nil {
		t.Fatal(err)
	}
	if want := utf8BOM + "## ISSUE-20261122-002\n\n| Field | Value |\n|---|---|\n"; string(out) != want {
		t.Errorf("after RemoveIssue: %q, want %q", out, want)
	}
}
