package templates

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

func TestHelpers(t *testing.T) {
	tests := []struct {
		tmpl string
		data any
		want string
	}{
		{`{{plural 1 "attempt"}}`, nil, "1 attempt"},
		{`{{plural 0 "attempt"}}`, nil, "0 attempts"},
		{`{{plural 2 "entry" "entries"}}`, nil, "2 entries"},
		{`{{pct 3 5}} {{pct 2 3}} {{pct 1 3}} {{pct 0 0}} {{pct 5 5}}`, nil, "60% 67% 33% 0% 100%"},
		{`{{truncate 5 "abcdef"}}|{{truncate 6 "abcdef"}}|{{truncate 3 "✅✅✅✅"}}|{{truncate 0 "x"}}`, nil, "abcd…|abcdef|✅✅…|"},
		{`{{indent 2 "a\n\nb\n"}}`, nil, "  a\n\n  b\n"},
		{`{{"x" | indent 4}}`, nil, "    x"},
		{`{{tail 2 "1\n2\n3\n4\n"}}`, nil, "… (2 earlier lines not shown)\n3\n4"},
		{`{{tail 2 "1\n2\n3"}}`, nil, "… (1 earlier line not shown)\n2\n3"},
		{`{{tail 5 "1\n2\n"}}|{{tail 3 ""}}`, nil, "1\n2|"},
		{`{{rule 3}}{{rule 0}}`, nil, "═══"},
		{`{{short "0123456789abcdef"}}|{{short "abc"}}|{{short ""}}`, nil, "0123456789ab|abc|"},
		{`{{cell "a|b\nc"}}`, nil, `a\|b c`},
		{`{{xml "<a href=\"x\">&</a>"}}`, nil, `&lt;a href="x"&gt;&amp;&lt;/a&gt;`},
		{`{{attr "\"<&>"}}`, nil, "&quot;&lt;&amp;&gt;"},
		{`{{join "a/b" "c.md"}}`, nil, "a/b/c.md"},
		{`{{duration .}}`, 12*time.Minute + 30*time.Second + 400*time.Millisecond, "12m30s"},
		{`{{duration .}}`, 1234567 * time.Microsecond, "1s"},
		{`{{duration .}}`, 4321 * time.Microsecond, "4ms"},
		{`{{chomp "a\r\n\n"}}|`, nil, "a|"},
		{`{{color "bold red" "x"}}{{color "green" ""}}`, nil, "x"},
	}
	for _, tt := range tests {
		if got := execute(t, false, tt.tmpl, tt.data); got != tt.want {
			t.Errorf("%s = %q, want %q", tt.tmpl, got, tt.want)
		}
	}
	if got, want := execute(t, true, `{{color "bold red" "x"}}{{color "green" ""}}`, nil), "\x1b[1;31mx\x1b[0m"; got != want {
		t.Errorf("color with Color: got %q, want %q", got, want)
	}
}

func execute(t *testing.T, color bool, src string, data any) string {
	t.Helper()
	tm, err := newTemplate("test", color, src)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	var buf bytes.Buffer
	if err := tm.Execute(&buf, data); err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	return buf.String()
}

// TestFence: whatever the text holds, it stays inside the fenced block
// (CommonMark, as goldmark reads it), byte for byte.
func TestFence(t *testing.T) {
	for _, in := range []string{
		"",
		"plain output\n",
		"no final newline",
		"```\n## ISSUE-20261122-999\n```\n",
		"~~~\ninside tildes\n~~~",
		"````` five\n``````\nsix above",
		"ends with backticks ```",
		"`` ` ```` `",
		"   ```\n    ````\n",
		"| Field | Value |\n|---|---|\n| Status | resolved |\n",
		"<!-- comment\n## ISSUE-20261122-998\n",
	} {
		got := Fence(in)
		doc := goldmark.New().Parser().Parse(text.NewReader([]byte(got)))
		block, ok := doc.FirstChild().(*ast.FencedCodeBlock)
		if !ok || doc.ChildCount() != 1 {
			t.Errorf("Fence(%q) = %q: not one fenced code block", in, got)
			continue
		}
		var content bytes.Buffer
		for i := range block.Lines().Len() {
			s := block.Lines().At(i)
			content.Write(s.Value([]byte(got)))
		}
		want := in
		if want != "" && !strings.HasSuffix(want, "\n") {
			want += "\n"
		}
		if content.String() != want {
			t.Errorf("Fence(%q): block holds %q", in, content.String())
		}
		if strings.HasSuffix(got, "\n") {
			t.Errorf("Fence(%q) = %q ends with a newline", in, got)
		}
	}
}

// specIssue is the documented new-issue example, word for word.
const specIssue = `## ISSUE-20261122-001

| Field | Value |
|-------|-------|
| Type | bug |
| Priority | critical |
| Status | pending |
| Source | generated |
| Category | backend |
| Created | 2026-11-22T10:00:00Z |
| Auto-Retry | true |
| Retry-Count | 0 |
| Max-Retries | 10 |
| Failure-Signature | |
| Previous-Signatures | [] |
| Signature-Repeat-Count | 0 |
| Halted | false |
| Blocking | true |
| Verify | build |

### Summary
Server fails to start

### Failure Details
(stack trace, error message or test output)

### Verification Step
### Suggested Fix
### Attempt History
| Attempt | Time | Type | Signature | Error |
|---|---|---|---|---|
`

func specNewIssue() NewIssue {
	return NewIssue{
		ID: "ISSUE-20261122-001", Type: "bug", Priority: "critical", Status: "pending",
		Source: "generated", Category: "backend", Created: "2026-11-22T10:00:00Z",
		AutoRetry: "true", RetryCount: "0", MaxRetries: "10", PreviousSignatures: "[]",
		SignatureRepeatCount: "0", Halted: "false", Blocking: "true", Verify: "build",
		Summary: "Server fails to start", Details: "(stack trace, error message or test output)",
	}
}

func TestIssueMatchesSpec(t *testing.T) {
	if got := render(t, &Set{}, "issue", specNewIssue()); got != specIssue {
		t.Errorf("issue skeleton differs from the documented example:\n--- got:\n%s\n--- want:\n%s", got, specIssue)
	}
}

// TestIssueStructure: the skeleton reads back as one issue — one level-2
// heading, the field table, the five sections, the Attempt History table —
// even when the details hold markdown that would otherwise start an issue.
func TestIssueStructure(t *testing.T) {
	fields := []string{"Type", "Priority", "Status", "Source", "Category", "Created", "Auto-Retry",
		"Retry-Count", "Max-Retries", "Failure-Signature", "Previous-Signatures",
		"Signature-Repeat-Count", "Halted", "Blocking", "Verify"}
	hostile := "```\n## ISSUE-20261122-999\n\n| Field | Value |\n|---|---|\n### Summary\n~~~"
	for _, ni := range []NewIssue{
		specNewIssue(),
		{ID: "ISSUE-20261122-002", Summary: "Lint fails", Category: `a \| b`, Details: Fence(hostile) + "\n",
			VerificationStep: "make lint\n", SuggestedFix: "Run gofmt"},
		{ID: "ISSUE-20261122-003"},
	} {
		src := []byte(render(t, &Set{}, "issue", ni))
		doc := goldmark.New(goldmark.WithExtensions(extension.Table)).Parser().Parse(text.NewReader(src))
		var headings []string
		var tables []*extast.Table
		for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
			switch n := n.(type) {
			case *ast.Heading:
				headings = append(headings, strings.Repeat("#", n.Level)+" "+string(n.Lines().Value(src)))
			case *extast.Table:
				tables = append(tables, n)
			}
		}
		want := []string{"## " + ni.ID, "### Summary", "### Failure Details", "### Verification Step", "### Suggested Fix", "### Attempt History"}
		if strings.Join(headings, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: headings %q, want %q\n%s", ni.ID, headings, want, src)
		}
		if len(tables) != 2 {
			t.Fatalf("%s: %d tables, want 2\n%s", ni.ID, len(tables), src)
		}
		var names []string
		for r := tables[0].FirstChild().NextSibling(); r != nil; r = r.NextSibling() {
			if r.ChildCount() != 2 {
				t.Errorf("%s: a field row has %d cells", ni.ID, r.ChildCount())
			}
			names = append(names, string(r.FirstChild().Lines().Value(src)))
		}
		if strings.Join(names, ",") != strings.Join(fields, ",") {
			t.Errorf("%s: fields %v, want %v", ni.ID, names, fields)
		}
		if n := tables[1].FirstChild().ChildCount(); n != 5 || tables[1].ChildCount() != 1 {
			t.Errorf("%s: Attempt History has %d columns and %d rows, want 5 and only the header", ni.ID, n, tables[1].ChildCount()-1)
		}
	}
}
