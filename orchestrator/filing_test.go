package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/procgroup"
	"github.com/autoretry/orchestrator/issuequeue"
)

func TestSummaryKey(t *testing.T) {
	o := newTestOrchestrator(t)
	same := [][2]string{
		{"Server fails to start", "  server   FAILS to start."},
		{"build broken!", "Build broken"},
		{"test timed out after 12ms at 2026-11-22T10:15:03Z", "test timed out after 40ms at 2026-11-23T01:00:00Z."},
		{"crash at 0xc000123456", "crash at 0xdeadbeef"},
	}
	for _, c := range same {
		if !sameSummary(summaryKeys(c[0], o.signatureOf), summaryKeys(c[1], o.signatureOf)) {
			t.Errorf("%q and %q are different summaries; want the same", c[0], c[1])
		}
	}
	differ := [][2]string{
		{"server fails to start", "server fails to stop"},
		{"new problem number 1", "new problem number 2"},
	}
	for _, c := range differ {
		if sameSummary(summaryKeys(c[0], o.signatureOf), summaryKeys(c[1], o.signatureOf)) {
			t.Errorf("%q and %q are the same summary; want different", c[0], c[1])
		}
	}
}

// 100 filings of one summary make one issue that says it was filed 100
// times (Seen counts every filing, the first included).
func TestFileSameSummaryHundredTimes(t *testing.T) {
	o := newTestOrchestrator(t)
	before := len(mustLoad(t, o).Issues)
	var first string
	for i := range 100 {
		f, err := o.File(context.Background(), NewIssue{Summary: "parser crashes on empty input", MaxRetries: -1, FromLoop: i%2 == 0})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = f.ID
			if f.Repeat {
				t.Fatalf("the first filing is a repeat: %+v", f)
			}
			continue
		}
		if f.ID != first || !f.Repeat || f.Seen != i+1 {
			t.Fatalf("filing %d: %+v, want %s seen %d", i+1, f, first, i+1)
		}
	}
	q := mustLoad(t, o)
	if got, want := len(q.Issues), before+1; got != want {
		t.Fatalf("%d issues after 100 filings of one summary, want %d", got, want)
	}
	if v, _ := q.Issue(first).Field(issuequeue.FieldSeen); v != "100" {
		t.Errorf("Seen = %q, want 100", v)
	}
	if got := SeenNote(q.Issue(first)); !strings.HasPrefix(got, "filed 100 times, last ") {
		t.Errorf("SeenNote = %q", got)
	}
	// Only the first filing counts against issues_filed_per_day.
	u, err := ReadUsage(o.Dir, o.now())
	if err != nil {
		t.Fatal(err)
	}
	if len(u.Filed) != 1 {
		t.Errorf("%d filings from loops counted, want 1", len(u.Filed))
	}
}

// Past issues_filed_per_day, a new issue from a loop is refused; a repeat
// of an open one and a person's filing are not.
func TestFilingLimit(t *testing.T) {
	o := newTestOrchestrator(t)
	o.Config.Budget.IssuesFiledPerDay = 3
	for i := range 3 {
		if _, err := o.File(context.Background(), NewIssue{Summary: fmt.Sprintf("problem %c", 'a'+i), MaxRetries: -1, FromLoop: true}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := o.File(context.Background(), NewIssue{Summary: "problem d", MaxRetries: -1, FromLoop: true})
	var fl *FilingLimitError
	if !errors.As(err, &fl) || fl.Used != 3 || fl.Limit != 3 || !strings.Contains(err.Error(), "issues_filed_per_day") {
		t.Fatalf("fourth filing from a loop: %v, want a FilingLimitError", err)
	}
	if f, err := o.File(context.Background(), NewIssue{Summary: "Problem A.", MaxRetries: -1, FromLoop: true}); err != nil || !f.Repeat {
		t.Errorf("a repeat past the limit: %+v, %v; want the open issue", f, err)
	}
	if _, err := o.File(context.Background(), NewIssue{Summary: "problem d", MaxRetries: -1}); err != nil {
		t.Errorf("a person's filing past the limit: %v", err)
	}
	se, err := o.filingStop()
	if err != nil || se == nil || se.Code != CodeDailyIssuesFiled || se.Hint == "" {
		t.Errorf("filingStop = %+v, %v; want a daily_issues_filed stop with a hint", se, err)
	}
	o.Config.Budget.IssuesFiledPerDay = 0
	if se, err := o.filingStop(); se != nil || err != nil {
		t.Errorf("with the limit off, filingStop = %+v, %v", se, err)
	}
}

func mustLoad(t *testing.T, o *Orchestrator) *issuequeue.Queue {
	t.Helper()
	q, _, err := o.paths().Load()
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// An agent that files the failure it was given (its issue's Failure
// Details) again in every loop, for a day of cron every 10 minutes, grows
// the queue by at most 5 issues: with a summary that only differs in times
// and durations, and with a summary that differs each time.
func TestCronDayOfRefilingAgent(t *testing.T) {
	ok := procgroup.Result{}
	crash := "panic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: segmentation violation code=0x1 addr=0x0]\n"
	same := func(s *sim, id, check string) procgroup.Result { return failed2(crash) }
	for _, tc := range []struct {
		name    string
		summary func(s *sim) string
	}{
		{"same words, new times", func(s *sim) string {
			return fmt.Sprintf("Server still crashes at %s after %dms", s.now.Format(time.RFC3339), 10+s.n%90)
		}},
		{"new words, same failure", func(s *sim) string { return fmt.Sprintf("attempt %d: the server crashes again", s.n) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newSim(t)
			start := len(mustLoad(t, s.o).Issues)
			s.verify = same
			s.agent = func(s *sim, kind string, try int) procgroup.Result {
				s.n++
				given := crash
				if d, _ := mustLoad(t, s.o).Issue(simFailing).Section(issuequeue.SectionFailureDetails); strings.TrimSpace(d) != "" {
					given = d
				}
				_, err := s.o.File(context.Background(), NewIssue{Summary: tc.summary(s), Priority: "critical", AutoRetry: true,
					MaxRetries: -1, Verify: "test", Details: Output{Tail: []byte(given)}, FromLoop: true})
				if err != nil {
					var fl *FilingLimitError
					if !errors.As(err, &fl) {
						s.t.Fatal(err)
					}
				}
				return ok
			}
			s.day(144)
			grown := len(mustLoad(t, s.o).Issues) - start

			t.Logf("%d loop executions; the queue grew by %d", len(s.execs), grown)
			if grown > 5 {
				t.Errorf("the queue grew by %d issues in a day, want at most 5", grown)
			}
		})
	}
}
