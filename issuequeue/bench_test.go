package issuequeue

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// generateQueue returns a queue of n issues laid out like the example: a
// field table, Summary, fenced Failure Details and an Attempt History with
// one row. 10,000 issues are about 7 MB.
func generateQueue(n int) []byte {
	var b bytes.Buffer
	b.WriteString("# Issue Queue\n\nIssues found by QA, one `## ISSUE-…` heading each.\n\n")
	day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	statuses := []string{"pending", "resolved", "in_progress", "escalated", "skipped"}
	for i := range n {
		date := day.AddDate(0, 0, i/500)
		id := fmt.Sprintf("ISSUE-%s-%03d", date.Format("20060102"), i%500+1)
		sig := ""
		if i%2 == 0 {
			sig = fmt.Sprintf("%064x", i*7919+1)
		}
		fmt.Fprintf(&b, `## %s

| Field | Value |
|-------|-------|
| Type | build |
| Priority | %s |
| Status | %s |
| Source | generated |
| Category | backend |
| Created | %s |
| Auto-Retry | true |
| Retry-Count | %d |
| Max-Retries | 10 |
| Failure-Signature | %s |
| Previous-Signatures | [] |
| Signature-Repeat-Count | 1 |
| Halted | false |
| Blocking | %t |
| Verify | build |

### Summary
Server fails to start (TypeError in src/module%d.ts:42)

### Failure Details
`+"```"+`
src/module%d.ts:42:17 - error TS2339: Property 'listen' does not exist on type 'Config'.
`+"```"+`

### Attempt History
| Attempt | Time | Type | Signature | Error |
|---|---|---|---|---|
| 1 | %s | verification_failed | %s | TS2339 |

`, id, Priorities[i%4], statuses[i%5], date.Add(10*time.Hour).Format(time.RFC3339), i%3, sig, i%2 == 0, i, i,
			date.Add(11*time.Hour).Format(time.RFC3339), sig[:min(12, len(sig))])
	}
	return b.Bytes()
}

func TestGenerateQueueIsValid(t *testing.T) {
	src := generateQueue(600)
	q := ParseQueue("issue_queue.md", src)
	if fs := q.Findings(); len(fs) != 0 {
		t.Fatalf("findings: %q", findingStrings(fs[:min(5, len(fs))]))
	}
	if len(q.Issues) != 600 || q.Issues[599].Status != "skipped" || q.Issues[598].FailureSignature == "" {
		t.Fatalf("got %d issues, last %+v", len(q.Issues), q.Issues[len(q.Issues)-1])
	}
	if _, rows, ok := q.Issues[7].Table(SectionAttemptHistory); !ok || len(rows) != 1 {
		t.Fatalf("Attempt History rows = %q", rows)
	}
}

func benchmarkParseQueue(b *testing.B, n int) {
	src := generateQueue(n)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		q := ParseQueue("issue_queue.md", src)
		if len(q.Issues) != n {
			b.Fatalf("got %d issues", len(q.Issues))
		}
	}
}

func BenchmarkParseQueue10k(b *testing.B) { benchmarkParseQueue(b, 10000) }
func BenchmarkParseQueue20k(b *testing.B) { benchmarkParseQueue(b, 20000) }

// BenchmarkApplyQueue10k is a check's write: parse, then one field of one
// issue and a section of another changed.
func BenchmarkApplyQueue10k(b *testing.B) {
	src := generateQueue(10000)
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		q := ParseQueue("issue_queue.md", src)
		if _, err := q.Apply(SetField(q.Issues[5000].ID, FieldStatus, StatusInProgress),
			setSectionFenced(q.Issues[9000].ID, SectionFailureDetails, "boom")); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCopyQueue10k is the yardstick: copying the bytes in memory.
func BenchmarkCopyQueue10k(b *testing.B) {
	src := generateQueue(10000)
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		_ = bytes.Clone(src)
	}
}

// BenchmarkFileCopyQueue10k is what cp does: read the file, write a copy.
func BenchmarkFileCopyQueue10k(b *testing.B) {
	src := generateQueue(10000)
	dir := b.TempDir()
	from := filepath.Join(dir, "issue_queue.md")
	if err := os.WriteFile(from, src, 0o666); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		data, err := os.ReadFile(from)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "copy.md"), data, 0o666); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGoldmarkQueue10k is a plain goldmark parse of the whole file,
// for comparison.
func BenchmarkGoldmarkQueue10k(b *testing.B) {
	src := generateQueue(10000)
	md := goldmark.New(goldmark.WithExtensions(extension.Table))
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		md.Parser().Parse(text.NewReader(src))
	}
}
