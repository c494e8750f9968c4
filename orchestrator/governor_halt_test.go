package orchestrator

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Halt, rule by rule, on both sides of each limit (halt_after_repeats 3):
// a failure being recorded meets every rule; the last recorded failure,
// judged again before a loop, only the halt of another issue on it; a
// failure that printed nothing never counts across issues, on either
// side.
func TestHalt(t *testing.T) {
	const id, other = "ISSUE-20261122-001", "ISSUE-20261122-002"
	sa, sb := strings.Repeat("a", 64), strings.Repeat("b", 64)
	loud, silent := Failure{Signature: sa}, Failure{Signature: sa, Silent: true}
	twice := Usage{Attempts: []Attempt{hourAgo(other, sa), hourAgo(other, sa)}}
	once := Usage{Attempts: []Attempt{hourAgo(other, sa)}}
	halted := Usage{Halts: []Attempt{hourAgo(other, sa)}}
	silentHalt := Usage{Halts: []Attempt{{At: testNow, IssueID: other, Signature: sa, Silent: true}}}
	silentTwice := Usage{Attempts: []Attempt{{IssueID: other, Signature: sa, Silent: true}, {IssueID: other, Signature: sa, Silent: true}}}
	tests := []struct {
		name string
		h    HaltFacts
		want Code
	}{
		{"2 in a row", HaltFacts{Failure: loud, New: true, Repeats: 2}, ""},
		{"3 in a row", HaltFacts{Failure: loud, New: true, Repeats: 3}, CodeRepeatedFailure},
		{"3 in a row, silent", HaltFacts{Failure: silent, New: true, Repeats: 3}, CodeRepeatedFailure},
		{"3 in a row, judged again before a loop", HaltFacts{Failure: loud, Repeats: 3}, ""},
		{"1 elsewhere and 1 here", HaltFacts{Failure: loud, New: true, Repeats: 1, Usage: once}, ""},
		{"2 elsewhere and 1 here", HaltFacts{Failure: loud, New: true, Repeats: 1, Usage: twice}, CodeRepeatedAcross},
		{"2 elsewhere and 1 here, silent", HaltFacts{Failure: silent, New: true, Repeats: 1, Usage: twice}, ""},
		{"2 silent elsewhere and 1 loud here", HaltFacts{Failure: loud, New: true, Repeats: 1, Usage: silentTwice}, ""},
		{"2 elsewhere, judged again before a loop", HaltFacts{Failure: loud, Usage: twice}, ""},
		{"halted elsewhere", HaltFacts{Failure: loud, New: true, Repeats: 1, Usage: halted}, CodeRepeatedAcross},
		{"halted elsewhere, before a loop", HaltFacts{Failure: loud, Usage: halted}, CodeRepeatedAcross},
		{"halted elsewhere, silent", HaltFacts{Failure: silent, New: true, Repeats: 1, Usage: halted}, ""},
		{"halted elsewhere, silent, before a loop", HaltFacts{Failure: silent, Usage: halted}, ""},
		{"halted elsewhere on a silent failure", HaltFacts{Failure: loud, Usage: silentHalt}, ""},
		{"halted itself", HaltFacts{Issue: other, Failure: loud, Usage: halted}, ""},
		{"no signature", HaltFacts{Failure: Failure{}, Usage: halted}, ""},
		{"A B A", HaltFacts{Failure: loud, New: true, Repeats: 1, Recent: []string{sa, sb, sa}}, ""},
		{"A B A B", HaltFacts{Failure: loud, New: true, Repeats: 1, Recent: []string{sa, sb, sa, sb}}, CodeOscillation},
		{"A B A B, before a loop", HaltFacts{Failure: loud, Recent: []string{sa, sb, sa, sb}}, ""},
	}
	for _, tt := range tests {
		if tt.h.Issue == "" {
			tt.h.Issue = id
		}
		code, because := Halt(tt.h, testConfig())
		if code != tt.want || (code != "") != (because != "") {
			t.Errorf("%s: Halt = %q (%q), want %q", tt.name, code, because, tt.want)
		}
	}
}

// Two issues failing the same Verify check: when the check prints
// nothing, the failure says only which check failed, so the second issue
// is never halted on the first one's failures, neither when its failure
// is recorded nor by the check before the next loop; when it prints the
// same failure, the second issue halts on it (repeated_failure_across_issues)
// as soon as the first was halted on it, or their failures add up to
// halt_after_repeats.
func TestSameVerifyCheckAcrossIssues(t *testing.T) {
	const a, b = "ISSUE-20261122-001", "ISSUE-20261122-002"
	tests := []struct {
		name   string
		out    string
		bFirst bool // b fails once before a fails
		aAt    int  // a's failure that halts it
		aCode  Code
		bFail  Code // the halt of b's failure as it is recorded
		bCheck Code // the check's verdict on b before the next loop ("" retries it)
	}{
		{"silent, a halted first", "", false, 3, CodeRepeatedFailure, "", ""},
		{"silent, b failed first", "", true, 3, CodeRepeatedFailure, "", ""},
		{"loud, a halted first", "--- FAIL: TestServer\n", false, 3, CodeRepeatedFailure, CodeRepeatedAcross, CodeRepeatedAcross},
		{"loud, b failed first", "--- FAIL: TestServer\n", true, 2, CodeRepeatedAcross, "", CodeRepeatedAcross},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newTestOrchestrator(t)
			ctx := context.Background()
			queue := "# Issue Queue\n\n" + issueMD(a, "Status=pending", "Auto-Retry=true", "Max-Retries=10", "Verify=quiet") +
				issueMD(b, "Status=pending", "Auto-Retry=true", "Max-Retries=10", "Verify=quiet")
			if err := os.WriteFile(filepath.Join(o.Dir, "issue_queue.md"), []byte(queue), 0o644); err != nil {
				t.Fatal(err)
			}
			sig := strings.Repeat("d", 64) // the check's signature: the same for both issues
			out := Output{Tail: []byte(tt.out)}
			fail := func(id string) FailReport {
				t.Helper()
				rep, err := o.recordFailure(ctx, id, Failure{Type: FailVerification, Output: out, Signature: sig, Silent: isSilent(out)}, "quiet")
				if err != nil {
					t.Fatal(err)
				}
				return rep
			}
			var bRep FailReport
			if tt.bFirst {
				bRep = fail(b)
			}
			for i := 1; i <= tt.aAt; i++ {
				rep := fail(a)
				if want := i == tt.aAt; rep.Halted != want || (want && rep.Code != tt.aCode) {
					t.Fatalf("%s's failure %d: halted %v (%s); want halted %v (%s)", a, i, rep.Halted, rep.Code, want, tt.aCode)
				}
			}
			if !tt.bFirst {
				bRep = fail(b)
			}
			if bRep.Halted != (tt.bFail != "") || bRep.Code != tt.bFail {
				t.Fatalf("%s's first failure: halted %v (%q); want %q", b, bRep.Halted, bRep.Code, tt.bFail)
			}
			if bRep.Halted {
				return
			}
			rep, err := o.Check(ctx)
			if err != nil {
				t.Fatal(err)
			}
			retried := slices.Contains(rep.Triggered, b)
			halted := slices.Contains(rep.Halted, b)
			if tt.bCheck == "" && (!retried || halted) || tt.bCheck != "" && (retried || !halted || rep.Code != tt.bCheck) {
				t.Errorf("check: %s retried %v, halted %v (%s); want the verdict %q", b, retried, halted, rep.Code, tt.bCheck)
			}
		})
	}
}
