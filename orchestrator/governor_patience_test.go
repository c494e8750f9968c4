package orchestrator

import (
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"

	"github.com/autoretry/orchestrator/issuequeue"
)

// goFail is go test's output with the named tests failing.
func goFail(names ...string) []byte {
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "--- FAIL: %s (0.00s)\n    x_test.go:1: wrong\n", n)
	}
	b.WriteString("FAIL\nFAIL\texample.com/x\t0.01s\nFAIL\n")
	return []byte(b.String())
}

// Progress earns patience, on both sides: a failure whose report names
// fewer failing tests than the issue's last failure starts its count at 0
// and gives its attempt back, so a plateau reached by a fix halts only at
// the third failure after it; the same number of failing tests (one fixed,
// another broken), more of them, or output no runner's report can be read
// from count as always.
func TestDecideFailProgressEarnsPatience(t *testing.T) {
	const id = "ISSUE-20261122-001"
	type step struct {
		out        []byte
		repeat     int
		progressed bool
		retries    int // Retry-Count after the decision; it is 2 before each
		halted     bool
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"a fix, then a plateau of three", []step{
			{goFail("A", "B", "C"), 1, false, 2, false},
			{goFail("A", "B"), 0, true, 1, false},
			{goFail("A", "B"), 1, false, 2, false},
			{goFail("A", "B"), 2, false, 2, false},
			{goFail("A", "B"), 3, false, 2, true},
		}},
		{"no fix: the third in a row halts", []step{
			{goFail("A", "B"), 1, false, 2, false},
			{goFail("A", "B"), 2, false, 2, false},
			{goFail("A", "B"), 3, false, 2, true},
		}},
		{"one fixed and another broken is no fewer", []step{
			{goFail("A", "B"), 1, false, 2, false},
			{goFail("A", "C"), 1, false, 2, false},
		}},
		{"more failing tests", []step{
			{goFail("A"), 1, false, 2, false},
			{goFail("A", "B"), 1, false, 2, false},
		}},
		{"no runner's report", []step{
			{[]byte("error: three things wrong\n"), 1, false, 2, false},
			{[]byte("error: two things wrong\n"), 1, false, 2, false},
		}},
	}
	for _, tt := range tests {
		q, _ := parse(t, issueMD(id, "Auto-Retry=true", "Status=in_progress", "Retry-Count=2", "Failure-Signature= "), "")
		for i, s := range tt.steps {
			sig := fmt.Sprintf("%x", sha256.Sum256(s.out))
			f := Failure{Type: FailVerification, Output: Output{Tail: s.out}, Signature: sig, Tests: testRunOf(false, s.out, "")}
			d := DecideFail(q.Issue(id), f, testConfig(), Usage{})
			out, err := q.Apply(d.Edits...)
			if err != nil {
				t.Fatal(err)
			}
			q, _ = parse(t, string(out), "")
			is := q.Issue(id)
			if d.RepeatCount != s.repeat || is.SignatureRepeatCount != s.repeat || d.Progressed != s.progressed ||
				is.RetryCount != s.retries || is.Halted != s.halted {
				t.Fatalf("%s, step %d: repeat %d (field %d), progressed %v, Retry-Count %d, halted %v; want %+v",
					tt.name, i+1, d.RepeatCount, is.SignatureRepeatCount, d.Progressed, is.RetryCount, is.Halted, s)
			}
			// The next attempt is claimed with Retry-Count 2 again.
			if out, err = q.Apply(issuequeue.SetField(id, issuequeue.FieldRetryCount, "2")); err != nil {
				t.Fatal(err)
			}
			q, _ = parse(t, string(out), "")
		}
	}
}

// With [auto_retry] progress_resets off, a failure with fewer failing
// tests counts as any other: 1, and the attempt is kept.
func TestDecideFailProgressResetsOff(t *testing.T) {
	const id = "ISSUE-20261122-001"
	cfg := testConfig()
	cfg.AutoRetry.ProgressResets = false
	q, _ := parse(t, issueMD(id, "Auto-Retry=true", "Status=in_progress", "Retry-Count=2", "Failure-Signature= "), "")
	for i, out := range [][]byte{goFail("A", "B", "C"), goFail("A", "B")} {
		f := Failure{Type: FailVerification, Output: Output{Tail: out}, Signature: fmt.Sprintf("%x", sha256.Sum256(out)), Tests: testRunOf(false, out, "")}
		d := DecideFail(q.Issue(id), f, cfg, Usage{})
		b, err := q.Apply(d.Edits...)
		if err != nil {
			t.Fatal(err)
		}
		q, _ = parse(t, string(b), "")
		if is := q.Issue(id); d.RepeatCount != 1 || d.Progressed || is.RetryCount != 2 {
			t.Fatalf("step %d: repeat %d, progressed %v, Retry-Count %d; want 1, false, 2", i+1, d.RepeatCount, d.Progressed, is.RetryCount)
		}
	}
}
