package issuequeue_test

import (
	"fmt"
	"time"

	"github.com/autoretry/orchestrator/issuequeue"
)

const exampleQueue = `# Issue Queue

## ISSUE-20261122-001

| Field | Value |
|-------|-------|
| Priority | critical |
| Status | pending |
| Auto-Retry | yes |
| Retry-Count | 2 |
| Owner | alice |

### Summary
Server fails to start

## ISSUE-20261122-002

| Field | Value |
|-------|-------|
| Status | pendng |
| Retry-Count | abc |
`

func ExampleParseQueue() {
	q := issuequeue.ParseQueue("issue_queue.md", []byte(exampleQueue))
	for _, is := range q.Issues {
		fmt.Printf("%s: %s, %s, auto-retry %t, %d retries, type %s\n", is.ID, is.Priority, is.Status, is.AutoRetry, is.RetryCount, is.Type)
	}
	owner, _ := q.Issue("ISSUE-20261122-001").Field("owner")
	fmt.Println("owner:", owner)
	fmt.Println("summary:", q.Issue("ISSUE-20261122-001").Summary())
	for _, is := range q.Quarantined {
		fmt.Println("quarantined:", is.ID)
	}
	for _, f := range q.Findings() {
		fmt.Println(f)
	}
	fmt.Println("next:", q.NextID(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)))
	// Output:
	// ISSUE-20261122-001: critical, pending, auto-retry true, 2 retries, type bug
	// owner: alice
	// summary: Server fails to start
	// quarantined: ISSUE-20261122-002
	// issue_queue.md:20:3: Status: "pendng" is not a status (pending, in_progress, resolved, escalated, skipped, or a synonym such as completed or wont_fix); did you mean "pending"?
	// issue_queue.md:21:3: Retry-Count: "abc" is not a whole number
	// next: ISSUE-20261122-003
}

func ExampleQueue_Apply() {
	src := "## ISSUE-20261122-001\r\n\r\n| Field | Value |\r\n|---|---|\r\n| Status | pending |\r\n| Retry-Count | 0 |\r\n"
	q := issuequeue.ParseQueue("issue_queue.md", []byte(src))
	out, err := q.Apply(
		issuequeue.SetField("ISSUE-20261122-001", issuequeue.FieldStatus, issuequeue.StatusInProgress),
		issuequeue.SetField("ISSUE-20261122-001", issuequeue.FieldCategory, "api | db"),
		issuequeue.SetSectionMarkdown("ISSUE-20261122-001", issuequeue.SectionFailureDetails, issuequeue.Fence("## ISSUE-20261122-002\n```")),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%q\n", out)
	// Output:
	// "## ISSUE-20261122-001\r\n\r\n| Field | Value |\r\n|---|---|\r\n| Status | in_progress |\r\n| Retry-Count | 0 |\r\n| Category | api \\| db |\r\n\r\n### Failure Details\r\n````\r\n## ISSUE-20261122-002\r\n```\r\n````\r\n"
}
