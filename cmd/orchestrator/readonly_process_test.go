//go:build linux

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/statefile"
	"github.com/autoretry/orchestrator/issuequeue"
)

// halfDone is the record a `check` killed before its first write leaves:
// it raised ISSUE-20261122-001's Retry-Count from 0 to 1 and the run's
// total_auto_retries from 0 to 1, and wrote neither file yet.
const halfDone = `{"command":"check","files":[` +
	`{"name":"issue_queue.md","edits":[{"kind":0,"key":"ISSUE-20261122-001","name":"Retry-Count","value":"1"},{"kind":0,"key":"ISSUE-20261122-001","name":"Status","value":"in_progress"}],"old":"","after":"0"},` +
	`{"name":"session_state.md","edits":[{"kind":0,"key":"Auto-Retry State","name":"total_auto_retries","value":"1"}],"old":"","after":"0"}]}`

// TestProcessReadersWriteNothing proves: with a change a killed command
// left half done on disk and another command holding the write lock, the
// commands and views that only read (status, explain, lint, fleet status,
// report to stdout, a serve GET) answer at once, show the change as it
// will be once completed, and change no byte of the state directory. The
// next command that writes completes the change.
func TestProcessReadersWriteNothing(t *testing.T) {
	ctx := testContext(t, 60*time.Second)
	c := newCLI(t)
	ids := issueIDs(1)
	c.setup(ctx, "[loop]\ncommand = \"true\"\n", queueOf("", ids))
	c.write(".orchestrator/"+issuequeue.IntentFile, halfDone)
	lk, err := statefile.LockWrite(ctx, c.dir(), time.Second, statefile.Owner{Command: "holder"})
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Unlock()
	before := dirBytes(t, c.dir())

	for _, args := range [][]string{
		{"status", "--json"}, {"explain", ids[0]}, {"lint"}, {"fleet", "status", c.work}, {"report", "--out", "-"},
	} {
		start := time.Now()
		r := c.run(ctx, nil, args...)
		if r.code > 1 {
			t.Errorf("%s: exit %d\n%s", args, r.code, r.stderr)
		}
		if took := time.Since(start); took > issuequeue.DefaultLockWait/2 {
			t.Errorf("%s took %v with the write lock held: it waited for the lock", args, took)
		}
		if args[0] == "status" {
			var st struct {
				Issues []struct {
					RetryCount int `json:"retry_count"`
				} `json:"issues"`
				TotalAutoRetries int `json:"total_auto_retries"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
				t.Fatalf("status --json: %v\n%s", err, r.stdout)
			}
			if len(st.Issues) != 1 || st.Issues[0].RetryCount != 1 || st.TotalAutoRetries != 1 {
				t.Errorf("status shows %+v, want the half-done change completed: Retry-Count 1, total_auto_retries 1", st)
			}
		}
	}
	get := serveGet(ctx, t, c)
	if !strings.Contains(get, ids[0]) {
		t.Errorf("serve's page does not show the issue:\n%.500s", get)
	}
	if after := dirBytes(t, c.dir()); after != before {
		t.Errorf("a command that only reads changed the state directory")
	}
	lk.Unlock()
	completeInterrupted(ctx, t, c, nil)
	if _, err := os.Stat(filepath.Join(c.dir(), issuequeue.IntentFile)); err == nil {
		t.Error("the next command that writes did not complete the change")
	}
	if got := c.queue().Issue(ids[0]).RetryCount; got != 1 {
		t.Errorf("Retry-Count %d on disk after completion, want 1", got)
	}
}

// serveGet starts serve on a free loopback port, fetches its page once and
// stops it.
func serveGet(ctx context.Context, t *testing.T, c *cli) string {
	t.Helper()
	p := c.start(ctx, nil, "serve", "--addr", "127.0.0.1:0")
	var line string
	for ok := false; !ok; {
		var changed <-chan struct{}
		if line, ok, changed = p.errOut.find("orchestrator: serving"); ok {
			break
		}
		select {
		case <-changed:
		case <-p.done:
			t.Fatalf("serve exited: %s", p.errOut.String())
		case <-ctx.Done():
			t.Fatalf("serve never said where it listens: %s", p.errOut.String())
		}
	}
	i := strings.Index(line, "http://")
	if i < 0 {
		t.Fatalf("serve said %q", line)
	}
	url := strings.Fields(line[i:])[0]
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(bufio.NewReader(resp.Body))
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Process.Signal(os.Interrupt)
	p.wait(ctx)
	return string(body)
}

// dirBytes describes every file under dir, the lock file's content aside
// (its holder lines are the lock's, not the state's): path, mode and
// content.
func dirBytes(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		b.WriteString(path + " " + fi.Mode().String() + "\n")
		if d.IsDir() || d.Name() == statefile.LockFile {
			return nil
		}
		data, err := os.ReadFile(path)
		b.Write(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
