package queuegen

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/autoretry/orchestrator/internal/foundations/config"
	"github.com/autoretry/orchestrator/issuequeue"
	"github.com/autoretry/orchestrator/orchestrator"
)

// The speed benchmarks are only as good as their data: a 10,000-issue
// queue of about 7 MiB that lints clean, uses every field and status, and
// on which the end-of-loop check retries and escalates only the few issues
// the generator says.
func TestGenerateQueueIsRealistic(t *testing.T) {
	const n = 10000
	r := Generate(Options{Issues: n, Seed: 1})
	if got := float64(len(r.Queue)) / (1 << 20); got < 6.5 || got > 7.5 {
		t.Errorf("queue is %.2f MiB, want about 7", got)
	}
	q := issuequeue.ParseQueue("issue_queue.md", r.Queue)
	if fs := q.Findings(); len(fs) > 0 {
		t.Fatalf("queue has %d findings, first: %v", len(fs), fs[0])
	}
	st := issuequeue.ParseState("session_state.md", r.State)
	if fs := st.Findings(); len(fs) > 0 {
		t.Fatalf("state has %d findings, first: %v", len(fs), fs[0])
	}
	if got, want := len(q.Issues), n; got != want {
		t.Fatalf("got %d issues, want %d", got, want)
	}

	statuses := map[string]int{}
	rows := map[int]int{}
	var halted, withSig, withPrev, blankMax int
	for _, is := range q.Issues {
		statuses[is.Status]++
		if is.Halted {
			halted++
			if is.Status != issuequeue.StatusEscalated || is.SignatureRepeatCount != 3 {
				t.Errorf("%s is halted with Status %s, Signature-Repeat-Count %d", is.ID, is.Status, is.SignatureRepeatCount)
			}
		}
		if is.FailureSignature != "" {
			withSig++
		}
		if len(is.PreviousSignatures) > 0 {
			withPrev++
		}
		if v, ok := is.Field(issuequeue.FieldMaxRetries); ok && strings.TrimSpace(v) == "" {
			blankMax++
		}
		_, hist, _ := is.Table(issuequeue.SectionAttemptHistory)
		rows[len(hist)]++
		if len(hist) > 0 {
			// The last attempt's signature is the current one.
			if got, want := hist[len(hist)-1][3], is.FailureSignature[:12]; got != want {
				t.Errorf("%s: last attempt signature %s, Failure-Signature %s", is.ID, got, want)
			}
		}
		if d, ok := is.Section(issuequeue.SectionFailureDetails); ok && strings.Count(d, "\n") > 8 {
			t.Errorf("%s: Failure Details has %d lines, want a few", is.ID, strings.Count(d, "\n")+1)
		}
	}
	for _, s := range issuequeue.Statuses {
		if statuses[s] == 0 {
			t.Errorf("no issue is %s", s)
		}
	}
	if statuses[issuequeue.StatusResolved] < n/2 {
		t.Errorf("%d resolved issues, want most of %d", statuses[issuequeue.StatusResolved], n)
	}
	for k := 0; k <= 5; k++ {
		if rows[k] == 0 {
			t.Errorf("no issue has %d Attempt History rows", k)
		}
	}
	if len(rows) > 6 {
		t.Errorf("Attempt History row counts %v, want 0 to 5", rows)
	}
	if halted == 0 || withSig == 0 || withPrev == 0 || blankMax == 0 {
		t.Errorf("halted %d, with signature %d, with previous signatures %d, blank Max-Retries %d: want some of each",
			halted, withSig, withPrev, blankMax)
	}
}

func TestGenerateCheckDecisions(t *testing.T) {
	for _, n := range []int{30, 10000} {
		r := Generate(Options{Issues: n, Seed: 1})
		q := issuequeue.ParseQueue("issue_queue.md", r.Queue)
		st := issuequeue.ParseState("session_state.md", r.State)
		// The example config's limits; every candidate has its own Max-Retries.
		d := orchestrator.Decide(orchestrator.Inputs{Queue: q, State: st, Config: config.Default()})
		if got, want := d.Outcome, orchestrator.CheckRetry; got != want {
			t.Fatalf("%d issues: outcome %v, want %v", n, got, want)
		}
		ids := func(is []*issuequeue.Issue) []string {
			var out []string
			for _, i := range is {
				out = append(out, i.ID)
			}
			slices.Sort(out)
			return out
		}
		retried, exhausted := slices.Sorted(slices.Values(r.Retried)), slices.Sorted(slices.Values(r.Exhausted))
		if got := ids(d.Triggered); !slices.Equal(got, retried) {
			t.Errorf("%d issues: check retries %v, generator says %v", n, got, retried)
		}
		if got := ids(d.Exhausted); !slices.Equal(got, exhausted) {
			t.Errorf("%d issues: check escalates %v, generator says %v", n, got, exhausted)
		}
		if got, want := len(r.Retried), (n+RetryEvery-11)/RetryEvery; got != want {
			t.Errorf("%d issues: %d retried, want %d", n, got, want)
		}
	}
}

// The linearity bar compares 20,000 issues with 10,000: the bigger queue
// must be the same kind of data, twice as much.
func TestGenerateScalesLinearly(t *testing.T) {
	small := Generate(Options{Issues: 10000, Seed: 1})
	big := Generate(Options{Issues: 20000, Seed: 1})
	if got := float64(len(big.Queue)) / float64(len(small.Queue)); got < 1.95 || got > 2.05 {
		t.Errorf("20,000 issues are %.3f times the bytes of 10,000, want 2", got)
	}
	if got, want := len(big.Retried), 2*len(small.Retried); got != want {
		t.Errorf("20,000 issues: %d retried, want %d", got, want)
	}
}

func TestGenerateIsDeterministic(t *testing.T) {
	a := Generate(Options{Issues: 500, Seed: 1})
	b := Generate(Options{Issues: 500, Seed: 1})
	if !bytes.Equal(a.Queue, b.Queue) || !bytes.Equal(a.State, b.State) {
		t.Error("the same options gave different files")
	}
	if c := Generate(Options{Issues: 500, Seed: 2}); bytes.Equal(a.Queue, c.Queue) {
		t.Error("another seed gave the same queue")
	}
}

func TestWrite(t *testing.T) {
	r := Generate(Options{Issues: 50, Seed: 1})
	dir := filepath.Join(t.TempDir(), "new", ".orchestrator")
	if err := r.Write(dir); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]byte{"issue_queue.md": r.Queue, "session_state.md": r.State} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not what Generate made", name)
		}
	}
}
