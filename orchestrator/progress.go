package orchestrator

import (
	"slices"

	"github.com/autoretry/orchestrator/issuequeue"
	"github.com/autoretry/orchestrator/signature"
)

// How a loop is judged by what it did: to the workspace (its state before
// and after the loop) and to the failing tests (their set after each
// verification). The verdict is a pure function of those facts; the
// progress rules in governor.go turn verdicts in a row into halts and stops.

// Progress verdicts of a loop.
const (
	// ProgressProgressed: fewer tests fail, a test that failed passes, or a
	// check that failed passes.
	ProgressProgressed = "progressed"
	// ProgressChanged: the workspace changed, and no fewer tests fail.
	ProgressChanged = "changed"
	// ProgressIdle: the workspace is as the loop found it.
	ProgressIdle = "idle"
	// ProgressCycled: the workspace is back in a state recorded at an
	// earlier loop of the run, in which the issues had failed.
	ProgressCycled = "cycled"
	// ProgressUnknown: the workspace was not recorded ([progress] enabled
	// is false, or recording failed) and the tests did not progress.
	ProgressUnknown = "unknown"
)

// WorkspaceChange is what a loop did to the workspace, as its loop event in
// retry.jsonl records it.
type WorkspaceChange struct {
	State        string `json:"state"`            // after the loop
	Before       string `json:"before,omitempty"` // before the loop
	Kind         string `json:"kind,omitempty"`   // git or files
	FilesChanged int    `json:"files_changed"`
	LinesAdded   int    `json:"lines_added"`
	LinesRemoved int    `json:"lines_removed"`
}

// TestRun is what one verification of an issue said.
type TestRun struct {
	Passed    bool
	Known     bool     // Failing was read from a test runner's report
	Failing   []string // sorted
	Signature string   // of the whole output, when the runner is unknown
}

// testRunOf reads a verification's output.
func testRunOf(passed bool, out []byte, sig string) TestRun {
	t := TestRun{Passed: passed, Signature: sig}
	if !passed {
		t.Failing, t.Known = signature.FailingTests(out)
	}
	return t
}

// detailsTests reads the tests an issue failed from its Failure Details,
// the output of its last recorded failure (nil: none recorded).
func detailsTests(is *issuequeue.Issue) *TestRun {
	if is == nil || is.FailureSignature == "" {
		return nil
	}
	details, ok := is.Section(issuequeue.SectionFailureDetails)
	if !ok || details == "" {
		return nil
	}
	t := testRunOf(false, []byte(details), "")
	return &t
}

// testsProgressed reports whether a verification made progress over the
// one before it (nil: none in this run): the check newly passes, or, both
// read from a runner's report, fewer tests fail or a test that failed no
// longer does. A failure whose tests are unknown progresses only by passing:
// a different signature is a different failure, not a better one.
func testsProgressed(prev *TestRun, cur TestRun) bool {
	if cur.Passed {
		return prev == nil || !prev.Passed
	}
	if prev == nil || prev.Passed || !prev.Known || !cur.Known {
		return false
	}
	if len(cur.Failing) < len(prev.Failing) {
		return true
	}
	for _, name := range prev.Failing {
		if _, found := slices.BinarySearch(cur.Failing, name); !found {
			return true
		}
	}
	return false
}

// fewerTestsFail reports whether the failure cur names fewer failing tests
// than the failure prev (nil: none recorded), both read from a runner's
// report. It is stricter than testsProgressed: a fix that breaks another
// test in its place is no fewer.
func fewerTestsFail(prev *TestRun, cur TestRun) bool {
	return prev != nil && prev.Known && !prev.Passed && cur.Known && !cur.Passed && len(cur.Failing) < len(prev.Failing)
}

// LoopProgress is the verdict of one loop and the facts it rests on, as the
// loop event in retry.jsonl records them for replay.
type LoopProgress struct {
	Loop    int    `json:"-"`
	Verdict string `json:"-"`
	Kind    string `json:"kind"` // regular or auto_retry
	// Recorded: the workspace's states before and after the loop were both
	// recorded.
	Recorded bool `json:"recorded"`
	Idle     bool `json:"idle,omitempty"` // the states are equal
	// CycledTo is the loop before which the workspace was in the failed
	// state this loop returned it to; 0 when it did not.
	CycledTo int `json:"cycled_to,omitempty"`
	// Tests: a verification of the loop progressed over the one before.
	Tests bool `json:"tests_progressed,omitempty"`
	// Passed: every verification of the loop passed (none: false).
	Passed bool `json:"passed,omitempty"`
	// Failing is the number of failing tests over the loop's
	// verifications that a runner's report named.
	Failing int `json:"failing_tests,omitempty"`
}

// DecideProgress returns a loop's verdict from its facts. A loop whose
// tests progressed progressed, unless it returned the workspace to a state
// in which they had already failed and no check newly passes: the same
// files cannot be better than they were. Otherwise an unchanged workspace
// is idle, a return to a failed state cycled, any other change changed.
func DecideProgress(p LoopProgress) string {
	switch {
	case p.Tests && (p.CycledTo == 0 || p.Passed):
		return ProgressProgressed
	case !p.Recorded:
		return ProgressUnknown
	case p.Idle:
		return ProgressIdle
	case p.CycledTo > 0:
		return ProgressCycled
	}
	return ProgressChanged
}

// progressTracker follows one run's loops: the states in which issues
// failed, the last verification of each issue, and the counts the
// progress rules read.
type progressTracker struct {
	failedAt   map[string]int // a failed state's hex -> the first loop that began in it
	tests      map[string]TestRun
	idle       int // auto-retry loops in a row that were idle
	noProgress int // auto-retry loops in a row without progress
	last       LoopProgress
}

func newProgressTracker() *progressTracker {
	return &progressTracker{failedAt: map[string]int{}, tests: map[string]TestRun{}}
}

// failed notes that the issues had failed in state hex, the state before
// loop. The earliest loop is kept.
func (t *progressTracker) failed(hex string, loop int) {
	if _, ok := t.failedAt[hex]; hex != "" && !ok {
		t.failedAt[hex] = loop
	}
}

// cycledTo returns the earlier loop that began in the failed state after,
// unless after is where this loop began.
func (t *progressTracker) cycledTo(before, after string) int {
	if after == "" || after == before {
		return 0
	}
	return t.failedAt[after]
}

// count updates the counts of auto-retry loops in a row after a loop's
// verdict.
func (t *progressTracker) count(kind string, p LoopProgress) {
	t.last = p
	if kind != KindAutoRetry {
		return
	}
	if p.Verdict == ProgressIdle {
		t.idle++
	} else {
		t.idle = 0
	}
	if p.Verdict == ProgressProgressed {
		t.noProgress = 0
	} else {
		t.noProgress++
	}
}
