//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/issuequeue"
)

// TestProcessEightWriters proves: eight processes recording
// failures on eight different issues at once lose nothing. Each issue gets
// ten failures, two of each of five different outputs, so that every row,
// signature and counter of every issue is known.
func TestProcessEightWriters(t *testing.T) {
	skipShort(t)
	ctx := testContext(t, 50*time.Second)
	c := newCLI(t)
	ids := issueIDs(8)
	c.setup(ctx, "[loop]\ncommand = \"true\"\n", queueOf("", ids))
	words := []string{"alpha", "bravo", "charlie", "delta", "echo"}
	const attempts = 10
	output := func(w, k int) string {
		return fmt.Sprintf("FAIL: TestWriter%d: assertion %s failed", w, words[(k-1)/2])
	}

	start := time.Now()
	outcomes := raceFails(ctx, c, ids, attempts, output, nil, nil)
	elapsed := time.Since(start)
	for _, o := range outcomes {
		r, repeat := o.res, 2-o.k%2
		if o.err != nil || r.code != 0 || !strings.Contains(r.stdout, fmt.Sprintf("repeat %d/3", repeat)) {
			t.Errorf("fail %s (attempt %d): exit %d (%v), want 0 and repeat %d/3\nstdout:\n%sstderr:\n%s",
				ids[o.w], o.k, r.code, o.err, repeat, r.stdout, r.stderr)
		}
	}

	q := c.queue()
	for w, id := range ids {
		is := q.Issue(id)
		if is == nil {
			t.Errorf("%s is gone", id)
			continue
		}
		_, rows, _ := is.Table(issuequeue.SectionAttemptHistory)
		if got, want := len(rows), attempts; got != want {
			t.Errorf("%s has %d Attempt History rows, want %d", id, got, want)
			continue
		}
		for k, row := range rows {
			if got, want := row[0], strconv.Itoa(k+1); got != want {
				t.Errorf("%s row %d: Attempt %q, want %q", id, k+1, got, want)
			}
			if got, want := row[4], strings.TrimSpace(output(w, k+1)); got != want {
				t.Errorf("%s row %d: Error %q, want %q", id, k+1, got, want)
			}
			// The two failures of each pair have one signature; pairs differ.
			if k%2 == 1 && row[3] != rows[k-1][3] {
				t.Errorf("%s rows %d and %d: signatures %s and %s differ for the same output", id, k, k+1, rows[k-1][3], row[3])
			}
			if k%2 == 0 && k > 0 && row[3] == rows[k-1][3] {
				t.Errorf("%s rows %d and %d: the same signature for different outputs", id, k, k+1)
			}
		}
		if got, want := is.SignatureRepeatCount, 2; got != want {
			t.Errorf("%s Signature-Repeat-Count = %d, want %d", id, got, want)
		}
		if !strings.HasPrefix(is.FailureSignature, rows[attempts-1][3]) || len(is.FailureSignature) != 64 {
			t.Errorf("%s Failure-Signature = %q, want the last row's %s…", id, is.FailureSignature, rows[attempts-1][3])
		}
		var wantPrev []string
		for k := 0; k < attempts-2; k += 2 {
			wantPrev = append(wantPrev, rows[k][3])
		}
		if len(is.PreviousSignatures) != len(wantPrev) {
			t.Errorf("%s Previous-Signatures = %v, want %d entries", id, is.PreviousSignatures, len(wantPrev))
		} else {
			for i, p := range is.PreviousSignatures {
				if !strings.HasPrefix(p, wantPrev[i]) {
					t.Errorf("%s Previous-Signatures[%d] = %s, want %s…", id, i, p, wantPrev[i])
				}
			}
		}
		if is.Status != issuequeue.StatusPending || is.Halted {
			t.Errorf("%s Status %q Halted %v, want pending and not halted", id, is.Status, is.Halted)
		}
	}

	// Every failure is in the event log once, on a line of its own.
	attemptsLogged := map[string][]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(c.read(".orchestrator/logs/retry.jsonl"))), "\n") {
		var ev struct {
			Event   string `json:"event"`
			IssueID string `json:"issue_id"`
			Attempt int    `json:"attempt"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Errorf("retry.jsonl: %v: %q", err, line)
			continue
		}
		if ev.Event == "attempt" {
			attemptsLogged[ev.IssueID] = append(attemptsLogged[ev.IssueID], ev.Attempt)
		}
	}
	for _, id := range ids {
		got := attemptsLogged[id]
		slices.Sort(got)
		if want := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}; !slices.Equal(got, want) {
			t.Errorf("retry.jsonl attempts of %s = %v, want %v", id, got, want)
		}
	}
	c.lint(ctx)
	t.Logf("%d failures recorded by 8 processes in %v", len(ids)*attempts, elapsed)
}
