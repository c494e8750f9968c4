//go:build unix

package statefile

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A writer SIGKILLed at random instants while replacing a big file leaves
// the old or the new content, never a torn or missing file; a reader never
// sees anything else either.
func TestKillDuringReplaceLeavesOldOrNew(t *testing.T) {
	if testing.Short() {
		t.Skip("-short (the race detector's run): a storm of kills whose count depends on speed")
	}
	const maxKills, budget = 200, 20 * time.Second
	dir := t.TempDir()
	path := filepath.Join(dir, "issue_queue.md")
	a, b := bigContents()
	if err := WriteNew(path, a); err != nil {
		t.Fatal(err)
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))

	check := func(when string) bool {
		t.Helper()
		fi, err := os.Lstat(path)
		if err != nil {
			t.Errorf("%s: %v", when, err)
			return false
		}
		if !fi.Mode().IsRegular() || fi.Sys().(*syscall.Stat_t).Nlink != 1 {
			t.Errorf("%s: %s is %v with %d links", when, path, fi.Mode(), fi.Sys().(*syscall.Stat_t).Nlink)
			return false
		}
		data, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(data, a) && !bytes.Equal(data, b) {
			t.Errorf("%s: %s holds %d bytes (err %v), neither the old nor the new content", when, path, len(data), err)
			return false
		}
		return true
	}

	var (
		start       = time.Now()
		iteration   time.Duration // one replacement, measured on the first child
		kills       int
		leftovers   int // kills that left a temporary file: killed mid-write
		flips       int
		reads       int
		prev, _     = os.ReadFile(path)
		readerFails bool
	)
	// Each child is started one round ahead, so that process start-up
	// overlaps the previous round; it waits for a byte on stdin.
	env := []string{"STATEFILE_PATH=" + path}
	next := startChild(t, "replace-loop", env)
	for kills < maxKills && time.Since(start) < budget && !readerFails {
		c := next
		next = startChild(t, "replace-loop", env)
		if _, err := c.stdin.Write([]byte{'g'}); err != nil {
			t.Fatal(err)
		}
		c.readBytes(t, 1) // the first replacement has started
		if iteration == 0 {
			t0 := time.Now()
			c.readBytes(t, 4)
			iteration = time.Since(t0) / 4
			t.Logf("one replacement of ~1.3 MiB takes %s", iteration)
		}
		c.readBytes(t, rng.IntN(3))
		// Choose the kill instant within this and the next replacement; read
		// the file meanwhile, as a person's editor or `status` would.
		killAt := time.Now().Add(time.Duration(rng.Int64N(int64(2*iteration) + 1)))
		for i := 0; i < 1000 && time.Now().Before(killAt); i++ {
			reads++
			if !check("while the writer runs") {
				readerFails = true
				break
			}
		}
		c.cmd.Process.Signal(syscall.SIGKILL)
		c.cmd.Wait()
		kills++
		if !check("after kill -9") {
			break
		}
		cur, _ := os.ReadFile(path)
		if !bytes.Equal(cur, prev) {
			flips++
		}
		prev = cur

		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		left := false
		for _, e := range entries {
			if e.Name() == "issue_queue.md" {
				continue
			}
			if target, ok := tempTarget(e.Name()); !ok || target != "issue_queue.md" {
				t.Fatalf("unexpected file %s left in the directory", e.Name())
			}
			left = true
			os.Remove(filepath.Join(dir, e.Name())) // keep the disk use bounded
		}
		if left {
			leftovers++
		}
	}
	t.Logf("%d kills in %s: %d left a temporary file, %d changed the content; %d reads while writing",
		kills, time.Since(start).Round(time.Millisecond), leftovers, flips, reads)
	if t.Failed() {
		return
	}
	if kills < 10 {
		t.Errorf("only %d kills within %s", kills, budget)
	}
	if leftovers == 0 || flips == 0 {
		t.Errorf("the kills never landed mid-write (%d) or never after a replacement (%d)", leftovers, flips)
	}
}
