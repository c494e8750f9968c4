package orchestrator

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/config"
	"github.com/autoretry/orchestrator/internal/foundations/procgroup"
)

// A failure that printed nothing is no evidence that another issue fails
// the same way: a second issue failing silently is not halted on the first
// issue's failures, but its own repeats still halt it.
func TestSilentFailureNeverCountsAcrossIssues(t *testing.T) {
	o := newTestOrchestrator(t)
	ctx := context.Background()
	const a, b = "ISSUE-20261122-001", "ISSUE-20261122-002"
	threshold := o.Config.AutoRetry.HaltAfterRepeats
	var rep FailReport
	var err error
	for range threshold {
		if rep, err = o.FailFrom(ctx, a, strings.NewReader(""), FailVerification); err != nil {
			t.Fatal(err)
		}
	}
	if !rep.Halted || rep.Code != CodeRepeatedFailure {
		t.Fatalf("%s after %d silent failures: halted %v (%s); want repeated_failure", a, threshold, rep.Halted, rep.Code)
	}
	for i := 1; i <= threshold; i++ {
		if rep, err = o.FailFrom(ctx, b, strings.NewReader("\n  \n"), FailVerification); err != nil {
			t.Fatal(err)
		}
		if want := i == threshold; rep.Halted != want || (want && rep.Code != CodeRepeatedFailure) {
			t.Fatalf("%s, silent failure %d: halted %v (%s); want halted %v, and then on its own repeats", b, i, rep.Halted, rep.Code, want)
		}
	}
	evs, _ := ReadEvents(o.Dir)
	silent := 0
	for _, ev := range evs {
		if ev.Event == EvAttempt && ev.Silent {
			silent++
		}
	}
	if silent != 2*threshold {
		t.Errorf("%d attempts recorded as silent, want %d", silent, 2*threshold)
	}
}

// A Verify check that prints nothing and fails: its signature names the
// check and its exit status, so two different silent checks are two
// failures; the failure is recorded as the check's, and SilentChecks (what
// lint and explain warn from) lists the check until it prints something.
func TestSilentCheckSignatureNamesTheCheck(t *testing.T) {
	f := newFakeRunner(t, succeeded, succeeded, succeeded, succeeded)
	queue := "# Issue Queue\n"
	for i, check := range []string{"quiet", "hush"} {
		queue += "\n## ISSUE-20261122-00" + string(rune('1'+i)) + "\n\n| Field | Value |\n|---|---|\n| Priority | critical |\n| Status | pending |\n" +
			"| Auto-Retry | true |\n| Max-Retries | 5 |\n| Verify | " + check + " |\n\n### Summary\nbroken " + check + "\n"
	}
	if err := os.WriteFile(filepath.Join(f.O.Dir, "issue_queue.md"), []byte(queue), 0o644); err != nil {
		t.Fatal(err)
	}
	f.O.Config.Loop.MaxLoops = 2
	f.O.Config.Verification.Checks = map[string]config.Check{
		"quiet": {Name: "quiet", Command: "false", Timeout: time.Minute},
		"hush":  {Name: "hush", Command: "false", Timeout: time.Minute},
	}
	loop := f.Exec
	f.Exec = func(ctx context.Context, s procgroup.Spec) (procgroup.Result, error) {
		if s.Command != "false" {
			return loop(ctx, s)
		}
		return procgroup.Result{ExitCode: 1}, nil
	}
	f.Run(context.Background())
	q, _, err := f.O.paths().Load()
	if err != nil {
		t.Fatal(err)
	}
	one, two := q.Issue("ISSUE-20261122-001"), q.Issue("ISSUE-20261122-002")
	if one.FailureSignature == "" || one.FailureSignature == two.FailureSignature {
		t.Errorf("signatures %q and %q: want two different failures", one.FailureSignature, two.FailureSignature)
	}
	if one.Halted || two.Halted {
		t.Errorf("halted: %v, %v; want neither on one failure each", one.Halted, two.Halted)
	}
	got, _ := SilentChecks(f.O.Dir)
	var names []string
	for _, s := range got {
		names = append(names, s.Check)
	}
	if strings.Join(names, ",") != "hush,quiet" {
		t.Errorf("silent checks %v, want hush and quiet", names)
	}
	ex, err := f.O.Explain([]string{"ISSUE-20261122-001"})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	ex.Print(&out)
	if !strings.Contains(out.String(), "Verify check quiet printed nothing") {
		t.Errorf("explain does not say the check prints nothing:\n%s", out.String())
	}
}
