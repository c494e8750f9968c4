package watch

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/autoretry/orchestrator/issuequeue"
)

func TestRoute(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, ".orchestrator")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	in := func(name string) string { return filepath.Join(dir, name) }
	tests := []struct {
		name    string
		op      fsnotify.Op
		wantKey string // "" means ignored
		withRun string // the key when OnPending is set, if it differs
	}{
		{in("issue_queue.md"), fsnotify.Write, in("issue_queue.md"), ""},
		{in("issue_queue.md"), fsnotify.Create, in("issue_queue.md"), ""},
		{in("issue_queue.md"), fsnotify.Remove, in("issue_queue.md"), ""},
		{in("issue_queue.md"), fsnotify.Rename, in("issue_queue.md"), ""},
		{in("issue_queue.md"), fsnotify.Chmod, "", ""},
		{in("issue_queue.md"), fsnotify.Chmod | fsnotify.Write, in("issue_queue.md"), ""},
		{in("session_state.md"), fsnotify.Write, in("session_state.md"), ""},
		{in("config.toml"), fsnotify.Create, in("config.toml"), ""},
		{in("no_auto_retry"), fsnotify.Create, in("no_auto_retry"), ""},
		{in("no_auto_retry"), fsnotify.Remove, in("no_auto_retry"), ""},
		{in("templates"), fsnotify.Create, in("templates"), ""},
		{in("templates/triggered.tmpl"), fsnotify.Write, in("templates/triggered.tmpl"), ""},
		{dir, fsnotify.Remove, keyDir, ""},
		{dir, fsnotify.Create, keyDir, ""}, // seen from the parent's watch
		{in(".lock"), fsnotify.Write, "", in(".lock")},
		// Temporary files of the tool and of editors, and everything else.
		{in(".issue_queue.md.tmp-1a2b3c"), fsnotify.Create, "", ""},
		{in(".issue_queue.md.swp"), fsnotify.Write, "", ""},
		{in(".issue_queue.md.swx"), fsnotify.Create, "", ""},
		{in("issue_queue.md~"), fsnotify.Rename, "", ""},
		{in("4913"), fsnotify.Create, "", ""},
		{in("#issue_queue.md#"), fsnotify.Create, "", ""},
		{in("templates/.triggered.tmpl.swp"), fsnotify.Write, "", ""},
		{in("templates/triggered.tmpl~"), fsnotify.Create, "", ""},
		{in("history.csv"), fsnotify.Write, "", ""},
		{in("issue_archive.md"), fsnotify.Write, "", ""},
		{in("logs"), fsnotify.Create, "", ""},
		{in("logs/retry.log"), fsnotify.Write, "", ""},
		{filepath.Join(root, "README.md"), fsnotify.Write, "", ""},
		{filepath.Join(root, "issue_queue.md"), fsnotify.Write, "", ""},
	}
	for _, withRun := range []bool{false, true} {
		o := Options{Dir: dir, Out: io.Discard}
		if withRun {
			o.OnPending = func(context.Context, io.Writer) error { return nil }
		}
		w, err := newWatcher(o, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tt := range tests {
			want := tt.wantKey
			if withRun && tt.withRun != "" {
				want = tt.withRun
			}
			key, ok := w.route(fsnotify.Event{Name: tt.name, Op: tt.op})
			if !ok {
				key = ""
			}
			if got := key; got != want {
				t.Errorf("--run %v: route(%s %s) = %q, want %q", withRun, tt.op, tt.name, got, want)
			}
		}
	}
}

// TestOverflowRescans feeds the loop an overflow error and no events: the
// change made meanwhile must still be linted.
func TestOverflowRescans(t *testing.T) {
	dir := t.TempDir()
	queue := filepath.Join(dir, issuequeue.QueueFile)
	if err := os.WriteFile(queue, []byte("# Issue Queue\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer fw.Close()
	pr, pw := io.Pipe()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	w, err := newWatcher(Options{Dir: dir, Out: pw, Now: func() time.Time { return time.Date(2026, 11, 22, 10, 15, 0, 0, time.UTC) }}, fw)
	if err != nil {
		t.Fatal(err)
	}
	events, errs := make(chan fsnotify.Event), make(chan error)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.loop(ctx, events, errs) }()

	next := func(want string) {
		t.Helper()
		select {
		case got := <-lines:
			if got != want {
				t.Fatalf("line = %q, want %q", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no line; want %q", want)
		}
	}
	next("10:15:00 ok: " + queue + ": 0 issue(s), 0 pending auto-retry")
	if err := os.WriteFile(queue, []byte("# Issue Queue\n\n## ISSUE-20261122-001\n\n| Field | Value |\n|---|---|\n| Status | pendin |\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	errs <- fsnotify.ErrEventOverflow
	next("10:15:00 too many changes at once: checking every file again")
	next("10:15:00 " + queue + `:7:3: Status: "pendin" is not a status (pending, in_progress, resolved, escalated, skipped, or a synonym such as completed or wont_fix); did you mean "pending"?`)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("loop returned %v after cancel, want nil", err)
	}
}
