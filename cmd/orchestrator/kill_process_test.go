//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/autoretry/orchestrator/issuequeue"
)

var killsWanted = flag.Int("kills", 250, "how many SIGKILLs TestProcessKillEveryCommand deals, spread over the writing commands")

// TestProcessKillEveryCommand proves: a kill -9 at any instant of any
// command that writes (add, fail, check, resolve, archive), including
// between the two files that check and archive write, leaves no torn file,
// and once the next command has run (here status, which completes an
// interrupted change before it reads) no issue is lost or duplicated (none
// in both the queue and the archive), every failure a fail reported is
// recorded, in the issue and in the event log once each, and the sum of the issues' Retry-Count equals the run's
// total_auto_retries. A third of the kills land at a random instant of the
// command, a third just after its first temporary file appears, and a
// third just after the record of a change of several files appears (so
// that kills between the writes of check and archive do not depend on how
// fast the machine is that day).
func TestProcessKillEveryCommand(t *testing.T) {
	skipShort(t)
	ctx := testContext(t, 600*time.Second)
	c := newCLI(t)
	env := []string{"ORCHESTRATOR_NOW=2026-11-22T10:15:00Z"}
	// One issue is retried automatically, with no limit in sight, so that
	// each check that retries raises its Retry-Count and the run's
	// total_auto_retries by one each; the issues add makes are not.
	retried := issueIDs(1)[0]
	c.setup(ctx, "[loop]\ncommand = \"true\"\n[auto_retry]\nglobal_cap = 1000000\n",
		strings.Replace(queueOf("", []string{retried}), "| Max-Retries | 10 |", "| Max-Retries | 1000000 |", 1))
	if r := c.run(ctx, env, "check"); r.code != 0 {
		t.Fatalf("check: exit %d\n%s", r.code, r.stderr)
	}
	commands := []string{"add", "fail", "check", "resolve", "archive"}
	type tally struct{ runs, kills, between int }
	tallies := map[string]*tally{}
	for _, name := range commands {
		tallies[name] = &tally{}
	}
	known := map[string]bool{}  // issues seen after a command: they must stay
	failed := map[string]bool{} // rows of fails that reported success
	known[retried] = true
	torn, dealt := 0, 0
	// About two commands in three are killed before they end; the rest
	// finish first. The count of rounds is bounded all the same.
	for i := 0; dealt < *killsWanted && i < 4**killsWanted; i++ {
		name := commands[i%len(commands)]
		q := c.queue()
		var args []string
		row := ""
		switch name {
		case "add":
			args = []string{"add", "--summary", fmt.Sprintf("issue of round %d", i)}
		case "fail":
			id := pick(q, func(is *issuequeue.Issue) bool { return is.Status != issuequeue.StatusResolved })
			if id == "" {
				continue
			}
			row = fmt.Sprintf("FAIL: round %s", roundWord(i))
			c.write(fmt.Sprintf("out-%d.txt", i), row+"\n")
			args = []string{"fail", id, "--output", c.path(fmt.Sprintf("out-%d.txt", i))}
		case "check":
			args = []string{"check"}
		case "resolve":
			id := pick(q, func(is *issuequeue.Issue) bool { return is.ID != retried && is.Status != issuequeue.StatusResolved })
			if id == "" {
				continue
			}
			args = []string{"resolve", id}
		case "archive":
			args = []string{"archive", "--older-than", "0s"}
		}
		tl := tallies[name]
		tl.runs++
		killed, between := killDuring(ctx, t, c, env, killMoment(i%3), args)
		if killed {
			tl.kills++
			dealt++
		}
		if between {
			tl.between++
		}
		if !killed && row != "" {
			failed[row] = true
		}
		// Every file is whole, whatever the instant of the kill.
		for _, f := range []string{issuequeue.QueueFile, issuequeue.StateFile, issuequeue.ArchiveFile} {
			b, err := os.ReadFile(filepath.Join(c.dir(), f))
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			if err := issuequeue.ParseQueue(f, b).Err(); f != issuequeue.StateFile && err != nil {
				torn++
				t.Errorf("round %d (%s): %s is torn: %v", i, name, f, err)
			}
			if err := issuequeue.ParseState(f, b).Err(); f == issuequeue.StateFile && err != nil {
				torn++
				t.Errorf("round %d (%s): %s is torn: %v", i, name, f, err)
			}
		}
		// A command that only reads sees the change as it will be once
		// completed, and writes nothing; the next command that writes
		// completes it.
		_, intentBefore := os.Stat(filepath.Join(c.dir(), issuequeue.IntentFile))
		if r := c.run(ctx, env, "status", "--all"); r.code != 0 {
			t.Fatalf("round %d (%s): status after the kill: exit %d\n%s", i, name, r.code, r.stderr)
		}
		if _, err := os.Stat(filepath.Join(c.dir(), issuequeue.IntentFile)); (err == nil) != (intentBefore == nil) {
			t.Fatalf("round %d (%s): status, which only reads, changed the intent record (before: %v, after: %v)", i, name, intentBefore, err)
		}
		completeInterrupted(ctx, t, c, env)
		if _, err := os.Stat(filepath.Join(c.dir(), issuequeue.IntentFile)); err == nil {
			t.Fatalf("round %d (%s): the intent record is still there after the next writing command", i, name)
		}
		checkInvariants(t, c, fmt.Sprintf("round %d (%s, killed %v)", i, name, killed), known, failed)
		if t.Failed() {
			break
		}
	}
	var total, kills, between int
	for _, name := range commands {
		tl := tallies[name]
		t.Logf("%-8s %4d runs, %4d killed, %4d of them between two writes", name, tl.runs, tl.kills, tl.between)
		total += tl.runs
		kills += tl.kills
		between += tl.between
	}
	t.Logf("%d commands, %d SIGKILLs (%d between two writes): %d torn files; issues and counters checked after each", total, kills, between, torn)
	for _, name := range []string{"check", "archive"} {
		if tallies[name].kills >= 10 && tallies[name].between == 0 {
			t.Errorf("no kill of %s landed between its writes", name)
		}
	}
}

// roundWord makes each round's failure output differ in words, which the
// signature keeps (it masks numbers).
func roundWord(i int) string {
	const letters = "abcdefghijklmnopqrstuvwxyz"
	var b strings.Builder
	for i++; i > 0; i /= 26 {
		b.WriteByte(letters[i%26])
	}
	return b.String()
}

func pick(q *issuequeue.Queue, ok func(*issuequeue.Issue) bool) string {
	var ids []string
	for _, is := range q.Issues {
		if ok(is) {
			ids = append(ids, is.ID)
		}
	}
	if len(ids) == 0 {
		return ""
	}
	return ids[rand.N(len(ids))]
}

// killMoment is when killDuring kills a command.
type killMoment int

const (
	killAnytime       killMoment = iota // within its first 40 ms
	killFirstWrite                      // within 3 ms after its first temporary file appears
	killBetweenWrites                   // within 3 ms after the record of a change of several files appears
)

// killDuring runs a command and kills it with SIGKILL at the moment when
// says, if it is still running then. between says that the kill left an
// intent record: it landed between two writes.
func killDuring(ctx context.Context, t *testing.T, c *cli, env []string, when killMoment, args []string) (killed, between bool) {
	t.Helper()
	var r result
	switch when {
	case killFirstWrite:
		r, _ = killWithin(ctx, t, c, env, 3*time.Millisecond, func(base string) bool {
			return strings.Contains(base, ".tmp-") || base == issuequeue.IntentFile
		}, args...)
	case killBetweenWrites:
		r, _ = killWithin(ctx, t, c, env, 3*time.Millisecond, func(base string) bool {
			return base == issuequeue.IntentFile
		}, args...)
	default:
		r, _ = killWithin(ctx, t, c, env, 40*time.Millisecond, nil, args...)
	}
	if r.signal == "killed" {
		_, err := os.Stat(filepath.Join(c.dir(), issuequeue.IntentFile))
		return true, err == nil
	}
	if r.code != 0 && r.code != 1 && r.code != 3 {
		t.Fatalf("orchestrator %s: exit %d\n%s", strings.Join(args, " "), r.code, r.stderr)
	}
	return false, false
}

// killWithin runs orchestrator with args and sends it SIGKILL at a random
// instant within the first d of its run or, if created is not nil, within
// d after a file whose name created accepts first appears in the state
// directory. It returns how the command ended and whether the signal was
// sent.
func killWithin(ctx context.Context, t *testing.T, c *cli, env []string, d time.Duration, created func(base string) bool, args ...string) (r result, sent bool) {
	t.Helper()
	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Add(c.dir()); err != nil {
		t.Fatal(err)
	}
	p := c.start(ctx, env, args...)
	var fire <-chan time.Time
	if created == nil {
		fire = time.After(rand.N(d))
	}
	for {
		select {
		case ev := <-w.Events:
			if created != nil && fire == nil && !sent && ev.Has(fsnotify.Create) && created(filepath.Base(ev.Name)) {
				fire = time.After(rand.N(d))
			}
		case err := <-w.Errors:
			t.Fatal(err)
		case <-fire:
			sent = p.cmd.Process.Signal(syscall.SIGKILL) == nil
			fire = nil
		case <-p.done:
			return p.res, sent
		case <-ctx.Done():
			t.Fatalf("orchestrator %s still running at the deadline", strings.Join(args, " "))
		}
	}
}

// checkInvariants checks the queue and the archive against what earlier
// rounds saw: every issue once in one of the two files, every reported
// failure recorded, and the retry counters agreeing.
func checkInvariants(t *testing.T, c *cli, when string, known, failed map[string]bool) {
	t.Helper()
	q := c.queue()
	ab, err := os.ReadFile(filepath.Join(c.dir(), issuequeue.ArchiveFile))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	a := issuequeue.ParseArchive(issuequeue.ArchiveFile, ab) // each copy of an ID counted: an archive killed between its writes adds none
	where := map[string][]string{}
	sumRetries := 0
	rows := map[string]int{}
	for _, f := range []*issuequeue.Queue{q, a} {
		for _, is := range f.Issues {
			where[is.ID] = append(where[is.ID], f.Name())
			sumRetries += is.RetryCount
			_, rs, _ := is.Table(issuequeue.SectionAttemptHistory)
			for _, r := range rs {
				if len(r) > 4 {
					rows[r[4]]++
				}
			}
		}
	}
	for id, files := range where {
		if len(files) > 1 {
			t.Errorf("%s: %s is in %v", when, id, files)
		}
		known[id] = true
	}
	for id := range known {
		if len(where[id]) == 0 {
			t.Errorf("%s: %s is lost", when, id)
		}
	}
	for row := range failed {
		if rows[row] == 0 {
			t.Errorf("%s: the failure %q that fail reported is not recorded", when, row)
		}
	}
	for row, n := range rows {
		if n > 1 {
			t.Errorf("%s: the failure %q is recorded %d times", when, row, n)
		}
	}
	// Each recorded failure is in the ledger once, and the ledger holds no
	// failure the files lack.
	logged := map[string]int{}
	if b, err := os.ReadFile(filepath.Join(c.dir(), "logs", "retry.jsonl")); err == nil {
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var ev struct{ Event, Error string }
			if json.Unmarshal([]byte(line), &ev) != nil {
				t.Errorf("%s: retry.jsonl holds a torn line %q", when, line)
				continue
			}
			if ev.Event == "attempt" {
				logged[ev.Error]++
			}
		}
	}
	for row, n := range rows {
		if logged[row] != n {
			t.Errorf("%s: the failure %q is recorded %d time(s) but in the ledger %d time(s)", when, row, n, logged[row])
		}
	}
	for row, n := range logged {
		if rows[row] == 0 {
			t.Errorf("%s: the ledger holds the failure %q (%d time(s)) that no issue records", when, row, n)
		}
	}
	if total := c.state().TotalAutoRetries; total != sumRetries {
		t.Errorf("%s: total_auto_retries %d, but the issues' Retry-Count add up to %d (%v)", when, total, sumRetries, slices.Sorted(maps.Keys(where)))
	}
}

// TestProcessKillMidWrite proves: a kill -9 at any instant of a
// real command leaves the queue either as it was or as the command would
// have left it, byte for byte, never torn, and so does the next command,
// which completes a change the kill interrupted. The queue is about 5 MB so that
// writing it takes time. What the command would have left is computed by
// running the same command, unkilled, on a copy of the state directory.
// Half the kills land at a random instant of the whole command; the other
// half at a random instant after its temporary file appears, mid-write.
func TestProcessKillMidWrite(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 120*time.Second)
	const budget = 15 * time.Second
	c := newCLI(t)
	oracle := newCLI(t)
	// A fixed clock makes the command's result the same in both places.
	env := []string{"ORCHESTRATOR_NOW=2026-11-22T10:15:00Z"}
	queue := bigQueue(5 << 20)
	c.setup(ctx, "[loop]\ncommand = \"true\"\n", queue)
	oracle.setup(ctx, "[loop]\ncommand = \"true\"\n", queue)
	c.lint(ctx)
	const id = "ISSUE-20261122-001"
	queuePath := filepath.Join(c.dir(), issuequeue.QueueFile)

	prev := []byte(queue)
	start := time.Now()
	var kills, targetedKills, old, advanced, midWrite int
	for i := 0; time.Since(start) < budget && i < 40; i++ {
		out := c.path(fmt.Sprintf("out-%d.txt", i))
		if err := os.WriteFile(out, fmt.Appendf(nil, "FAIL: iteration %s broke the build\n", strings.Repeat("x", i+1)), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(oracle.dir(), issuequeue.QueueFile), prev, 0o644); err != nil {
			t.Fatal(err)
		}
		want := oracle.run(ctx, env, "fail", id, "--output", out)
		if want.code != 0 {
			t.Fatalf("fail (unkilled): exit %d\n%s", want.code, want.stderr)
		}
		next := oracle.read(".orchestrator/issue_queue.md")

		var r result
		var killed bool
		targeted := i%2 == 0
		if targeted {
			r, killed = killWithin(ctx, t, c, env, 20*time.Millisecond, func(base string) bool {
				return strings.HasPrefix(base, ".issue_queue.md.tmp-")
			}, "fail", id, "--output", out)
		} else {
			r, killed = killWithin(ctx, t, c, env, want.wall+want.wall/5, nil, "fail", id, "--output", out)
		}
		got, err := os.ReadFile(queuePath)
		if err != nil {
			t.Fatalf("after kill %d: %v", i, err)
		}
		switch {
		case r.signal == "killed":
			kills++
			if targeted {
				targetedKills++
			}
			switch {
			case bytes.Equal(got, prev):
				old++
			case bytes.Equal(got, next):
				advanced++
			default:
				t.Fatalf("kill %d: the queue is neither the old nor the new content (%d bytes; old %d, new %d)", i, len(got), len(prev), len(next))
			}
		case r.code == 0:
			if !bytes.Equal(got, next) {
				t.Fatalf("iteration %d: fail succeeded but the queue differs from the unkilled run's", i)
			}
		default:
			t.Fatalf("iteration %d: fail: exit %d (killed: %v)\n%s", i, r.code, killed, r.stderr)
		}
		temps, _ := filepath.Glob(filepath.Join(c.dir(), ".issue_queue.md.tmp-*"))
		if len(temps) > 1 {
			t.Errorf("kill %d left %d temporary files, want at most one", i, len(temps))
		}
		if len(temps) > 0 {
			midWrite++
		}
		// Leftover temporaries are removed only after a minute; each holds
		// 5 MB, so the test removes them itself.
		for _, tmp := range temps {
			os.Remove(tmp)
		}
		// A kill between the intent record and the end of the change has
		// the next command that writes complete it: the queue is then the
		// new content.
		completeInterrupted(ctx, t, c, env)
		if got = c.read(".orchestrator/issue_queue.md"); !bytes.Equal(got, prev) && !bytes.Equal(got, next) {
			t.Fatalf("kill %d: after the next command the queue is neither the old nor the new content", i)
		}
		prev = got
	}
	t.Logf("%d kills in %v: %d left the old queue, %d the new one; %d killed mid-write (temporary file left)",
		kills, time.Since(start).Round(time.Millisecond), old, advanced, midWrite)
	// A kill shortly after the temporary file appears lands while the new
	// queue is being written, unless the machine is very fast.
	if targetedKills >= 2 && midWrite == 0 {
		t.Errorf("none of %d kills aimed at the write landed while the new queue was being written", targetedKills)
	}
}

// bigQueue returns a queue of about size bytes: the issue the test fails,
// and an issue whose Failure Details hold a long build log.
func bigQueue(size int) string {
	var b strings.Builder
	b.WriteString(queueOf("", []string{"ISSUE-20261122-001"}))
	b.WriteString("\n## ISSUE-20261122-002\n\n| Field | Value |\n|-------|-------|\n| Priority | low |\n\n### Summary\nslow build\n\n### Failure Details\n```\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "2026-11-22T10:00:%02dZ step %d: compiling example.com/mod/pkg%d ... ok\n", i%60, i, i%97)
	}
	b.WriteString("```\n")
	return b.String()
}

// completeInterrupted runs a command that writes but changes nothing of its
// own (an archive of issues a century old): like every command that
// writes, it first completes a change a kill left half done.
func completeInterrupted(ctx context.Context, t *testing.T, c *cli, env []string) {
	t.Helper()
	if r := c.run(ctx, env, "archive", "--older-than", "876000h"); r.code != 0 {
		t.Fatalf("archive: exit %d\n%s", r.code, r.stderr)
	}
}
