package report_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/internal/views/report"
	"github.com/autoretry/orchestrator/orchestrator"
)

// copyDir copies the files of a state directory (not its subdirectories'
// subdirectories: the fixture has none deeper than logs/).
func copyDir(t *testing.T, from string) string {
	t.Helper()
	to := t.TempDir()
	err := filepath.WalkDir(from, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return to
}

// longHistory is the fixture with three months of runs before it, more
// than the charts draw, written into history.csv as one file.
func longHistory(t *testing.T) string {
	t.Helper()
	src := fixtureDir(t)
	b, err := os.ReadFile(orchestrator.HistoryPath(src))
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(orchestrator.HistoryPath(src))
	start := time.Date(2026, 8, 10, 3, 0, 0, 0, time.UTC)
	results := []string{"ok", "failed", "timeout", "ok", "permanent"}
	for n := 0; n < 300; n++ {
		at := start.Add(time.Duration(n) * 7 * time.Hour)
		for loop := 1; loop <= 1+n%3; loop++ {
			kind := "regular"
			if loop > 1 {
				kind = "auto_retry"
			}
			r := orchestrator.LoopRecord{RunID: fmt.Sprintf("old-%d", n), Loop: loop, Kind: kind, Started: at, Finished: at.Add(time.Duration(loop) * time.Minute),
				Result: results[(n+loop)%len(results)], TransientRetries: n % 2, TotalAutoRetries: loop - 1, Breaker: "closed"}
			if err := orchestrator.AppendHistory(src, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	f, err := os.OpenFile(orchestrator.HistoryPath(src), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(b[strings.IndexByte(string(b), '\n')+1:]) // the fixture's rows, without their header
	f.Close()
	return src
}

// Rotation loses nothing the report shows: the page made from the monthly
// files equals the page made from the same history in one file, and says
// what period it covers.
func TestReportOverRotatedHistory(t *testing.T) {
	one := longHistory(t)
	rotated := copyDir(t, one)
	if err := orchestrator.RotateHistory(rotated, now, 0); err != nil {
		t.Fatal(err)
	}
	if n := len(orchestrator.HistoryFiles(rotated)); n != 4 {
		t.Fatalf("%d history files after rotation, want August to October rotated and November", n)
	}
	page := func(dir string) string {
		in := load(t, dir)
		if len(in.Problems) > 0 {
			t.Fatalf("problems: %v", in.Problems)
		}
		in.Dir = ".orchestrator"
		return render(t, in)
	}
	a, b := page(one), page(rotated)
	if a != b {
		t.Errorf("the page differs over rotated files:\n%s", firstDiff(a, b, [2]string{"one file", "rotated"}))
	}
	if want := "Covers the loops: from 2026-08-10 03:00 UTC to 2026-11-22 02:07 UTC."; !strings.Contains(a, want) {
		i := strings.Index(a, "Covers")
		t.Errorf("the page does not say %q: %.90s", want, a[max(i, 0):])
	}
	for _, r := range [][2]string{{"Runs", "307"}, {"Loops", "614 (307 regular, 307 auto-retry)"}} {
		if !strings.Contains(a, summaryRow(r[0], r[1])) {
			t.Errorf("summary row %s = %s missing", r[0], r[1])
		}
	}
}

// firstDiff shows where pages a and b, named as, first differ.
func firstDiff(a, b string, as [2]string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return fmt.Sprintf("at byte %d:\n  %s: %.200q\n  %s: %.200q", i, as[0], a[i:], as[1], b[i:])
}

// A window covers the loops and events in it: the months before it are not
// counted, and the page says since when.
func TestReportSince(t *testing.T) {
	dir := longHistory(t)
	if err := orchestrator.RotateHistory(dir, now, 0); err != nil {
		t.Fatal(err)
	}
	in, err := report.LoadSince(dir, now, now.Add(-30*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	out := render(t, in)
	if want := "Covers the loops since 2026-10-23 10:15 UTC: from 2026-10-23 12:00 UTC to "; !strings.Contains(out, want) {
		t.Errorf("the page does not say %q", want)
	}
	// Runs old-255 (2026-10-23 12:00) to old-299, and the fixture's 7.
	full := render(t, load(t, dir))
	if out == full || !strings.Contains(out, summaryRow("Runs", "52")) {
		i := strings.Index(out, "<tr><td>Runs</td>")
		t.Errorf("the window's page does not count the window's runs only: %.80s", out[max(i, 0):])
	}
}

// The page does not depend on the order of the log's lines: events taken in
// file order give what the same events sorted by time give (a clock stepped
// back, or a line logged late, puts them out of order).
func TestEventsOutOfOrder(t *testing.T) {
	dir := fixtureDir(t)
	base := load(t, dir)
	hist, errs := orchestrator.ReadHistory(dir)
	evs, errs2 := orchestrator.ReadEvents(dir)
	if len(errs)+len(errs2) > 0 {
		t.Fatal(errs, errs2)
	}
	// What the order decides: an issue only the log knows, escalated and
	// later resolved, and a run's outcome after a stray earlier one.
	gone := "ISSUE-20261101-009"
	at := hist[0].Finished
	evs = append(evs,
		orchestrator.Event{Time: at, Event: orchestrator.EvEscalated, IssueID: gone, Reason: "max_retries_exceeded"},
		orchestrator.Event{Time: at.Add(time.Hour), Event: orchestrator.EvResolved, IssueID: gone, Resolution: "resolved"},
		orchestrator.Event{Time: at, Event: orchestrator.EvRunFinished, RunID: hist[0].RunID, Status: "halted"})
	evs = append([]orchestrator.Event{{Time: at.Add(-time.Hour), Event: orchestrator.EvRunFinished, RunID: hist[0].RunID, Status: "stray"}}, evs...)
	slices.Reverse(evs)
	sorted := slices.Clone(evs)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Time.Before(sorted[j].Time) })
	page := func(evs []orchestrator.Event) string {
		return render(t, report.Input{Dir: base.Dir, History: hist, Events: evs, Queue: base.Queue, Archive: base.Archive, State: base.State, Now: now})
	}
	got, want := page(evs), page(sorted)
	if !strings.Contains(want, "success (archived elsewhere)") || !strings.Contains(want, "; halted") {
		t.Fatal("the resolved issue only the log knows, or the run's outcome, is not on the page")
	}
	if got != want {
		t.Errorf("the page of the log in reverse differs from the page of it sorted by time:\n%s", firstDiff(got, want, [2]string{"reversed", "sorted"}))
	}
}
