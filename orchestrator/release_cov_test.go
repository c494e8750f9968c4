package orchestrator

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/issuequeue"
)

// haltByRepeats halts issue id of o's directory: the same failure three
// times in a row.
func haltByRepeats(t *testing.T, o *Orchestrator, id string) {
	t.Helper()
	for i := 0; i < 3; i++ {
		if _, err := o.Fail(context.Background(), id, []byte("error: same\n"), FailVerification); err != nil {
			t.Fatal(err)
		}
	}
	if is := loadQueue(t, o).Issue(id); !is.Halted || is.Status != issuequeue.StatusEscalated {
		t.Fatalf("%s: Halted %v, Status %s; want halted and escalated", id, is.Halted, is.Status)
	}
}

// A halted issue stays halted while what it was halted on is unchanged;
// once its fingerprint changes (here the loop command), the next check
// releases it first, once: halt_released with the cause and the code it
// was halted with, Halted false, its repeat count cleared, pending again,
// and the check that released it decides on it as released. explain says
// so beforehand and writes nothing.
func TestCheckReleasesChangedHaltOnce(t *testing.T) {
	o := newTestOrchestrator(t)
	var stdout bytes.Buffer
	o.Stdout = &stdout
	o.Now = func() time.Time { return testNow }
	ctx := context.Background()
	haltByRepeats(t, o, exVerified)
	halts := eventsOf(t, o, EvEscalated, exVerified)
	if len(halts) != 1 || halts[0].Fingerprint == nil {
		t.Fatalf("escalated events %+v, want one with the fingerprint", halts)
	}
	code := halts[0].Code

	// Unchanged: the check leaves the halt as it is.
	stdout.Reset()
	if _, err := o.Check(ctx); err != nil {
		t.Fatal(err)
	}
	if evs := eventsOf(t, o, EvHaltReleased, exVerified); len(evs) != 0 {
		t.Fatalf("an unchanged halt was released: %+v", evs)
	}
	if is := loadQueue(t, o).Issue(exVerified); !is.Halted {
		t.Fatal("an unchanged halt was cleared")
	}
	if strings.Contains(stdout.String(), "released") {
		t.Fatalf("the check said a release without one:\n%s", stdout.String())
	}
	ex, err := o.Explain([]string{exVerified})
	if err != nil {
		t.Fatal(err)
	}
	if len(ex.Check.Issues) != 1 || strings.Contains(ex.Check.Issues[0].Because, "released first") {
		t.Fatalf("explain of an unchanged halt: %+v, want no release", ex.Check.Issues)
	}

	// The loop command changed: explain tells of the release to come and
	// changes nothing.
	o.Config.Loop.Command = "another-agent --fix"
	qp := filepath.Join(o.Dir, "issue_queue.md")
	before, err := os.ReadFile(qp)
	if err != nil {
		t.Fatal(err)
	}
	ex, err = o.Explain([]string{exVerified})
	if err != nil {
		t.Fatal(err)
	}
	if len(ex.Check.Issues) != 1 || !strings.HasPrefix(ex.Check.Issues[0].Because, "released first ("+CauseCommandChanged+")") {
		t.Fatalf("explain after the change: %+v, want it to say the halt is released first", ex.Check.Issues)
	}
	if len(ex.Check.Retry) != 1 || ex.Check.Retry[0] != exVerified {
		t.Errorf("explain's check would retry %v, want the released %s", ex.Check.Retry, exVerified)
	}
	if after, _ := os.ReadFile(qp); !bytes.Equal(before, after) {
		t.Error("explain changed the queue")
	}
	if evs := eventsOf(t, o, EvHaltReleased, exVerified); len(evs) != 0 {
		t.Fatalf("explain recorded a release: %+v", evs)
	}

	// The check releases it, and decides on it released.
	stdout.Reset()
	rep, err := o.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	evs := eventsOf(t, o, EvHaltReleased, exVerified)
	if len(evs) != 1 || evs[0].Cause != CauseCommandChanged || evs[0].Code != code {
		t.Fatalf("halt_released events %+v, want one, cause %s, code %s", evs, CauseCommandChanged, code)
	}
	if want := exVerified + " released (" + CauseCommandChanged + "): halted on " + string(code); !strings.Contains(stdout.String(), want) {
		t.Errorf("stdout:\n%s\nwant %q", stdout.String(), want)
	}
	is := loadQueue(t, o).Issue(exVerified)
	if is.Halted || is.SignatureRepeatCount != 0 {
		t.Errorf("after the release: Halted %v, Signature-Repeat-Count %d; want false, 0", is.Halted, is.SignatureRepeatCount)
	}
	if rep.Outcome != "retry" || len(rep.Triggered) != 1 || rep.Triggered[0] != exVerified || is.Status != issuequeue.StatusInProgress {
		t.Errorf("the releasing check: outcome %s, triggered %v, Status %s; want the released issue retried",
			rep.Outcome, rep.Triggered, is.Status)
	}

	// Released once: the next check releases nothing again.
	stdout.Reset()
	if _, err := o.Check(ctx); err != nil {
		t.Fatal(err)
	}
	if evs := eventsOf(t, o, EvHaltReleased, exVerified); len(evs) != 1 {
		t.Errorf("halt_released events after a second check: %d, want still 1", len(evs))
	}
	if strings.Contains(stdout.String(), "released (") {
		t.Errorf("the second check released again:\n%s", stdout.String())
	}
}
