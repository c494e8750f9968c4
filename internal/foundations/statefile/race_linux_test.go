package statefile

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// blockedWriter plays an editor that saves in place and opens the file at
// path for writing while Replace holds its lease: the open resolves the
// file, takes write access to it and waits in the kernel until the lease is
// given up; then the editor truncates the file, writes data and closes it.
// blockedWriter returns once the open is waiting, which the kernel tells
// the lease's holder, this process, with SIGIO; done gets the save's error.
func blockedWriter(t *testing.T, path string, data []byte) (done <-chan error) {
	t.Helper()
	broke := make(chan os.Signal, 1)
	signal.Notify(broke, syscall.SIGIO)
	defer signal.Stop(broke)
	opened := make(chan struct{})
	ch := make(chan error, 1)
	go func() {
		w, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
		close(opened)
		if err != nil {
			ch <- err
			return
		}
		_, err = w.Write(data)
		ch <- errors.Join(err, w.Close())
	}()
	select {
	case <-broke:
		return ch
	case <-opened:
		t.Fatal("the file was not leased: an open for writing went through at once")
	case <-time.After(30 * time.Second):
		t.Fatal("the open for writing broke no lease")
	}
	return nil
}

func wait(t *testing.T, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the editor's save never went on")
	}
}

// A save in place that opens the file while Replace holds its lease, before
// the swap or in the instant before it (seen after it), is let go on into
// the file that has the name, and the change is rebased onto it.
func TestOpenForWritingUnderTheLeaseIsLetGoOn(t *testing.T) {
	for _, when := range []string{"before swap", "after swap"} {
		t.Run(when, func(t *testing.T) {
			dir, path := queueFile(t)
			h := new(seams)
			var done <-chan error
			if when == "before swap" {
				h.beforeSwap = once(func() { done = blockedWriter(t, path, theirs) })
			} else {
				h.afterSwap = func(displaced string) {
					h.afterSwap = nil
					done = blockedWriter(t, displaced, theirs)
				}
			}
			replaceRebasedOntoTheirs(t, h, dir, path)
			wait(t, done)
			assertContent(t, path, rebased)
		})
	}
}

// Two saves race with one swap, one into the file read and one into the
// new file in the instant it had the name: the first is rebased onto, the
// second kept beside the file, and Replace names it.
func TestTwoRacingSavesAreBothKept(t *testing.T) {
	dir, path := queueFile(t)
	second := []byte("a: 1\nb: 7\n")
	h := new(seams)
	var first, other <-chan error
	h.afterSwap = func(displaced string) {
		h.afterSwap = nil
		first = blockedWriter(t, displaced, theirs)
		other = blockedWriter(t, path, second)
	}
	var calls [][]byte
	kept, err := h.replace(context.Background(), path, orig, next, rebaseB(&calls))
	if err != nil {
		t.Fatal(err)
	}
	wait(t, first)
	wait(t, other)
	wantRebasedOnce(t, calls, theirs)
	assertContent(t, path, rebased)
	if len(kept) != 1 {
		t.Fatalf("kept %q, want one save", kept)
	}
	assertContent(t, kept[0], second)
	if got := SetAsideBeside(path); len(got) != 1 || got[0] != kept[0] {
		t.Errorf("SetAsideBeside = %q, want %q", got, kept)
	}
	assertOnly(t, dir, "issue_queue.md", filepath.Base(kept[0]))
}

// Read waits while a process has the file open for writing, and then
// refuses it; a file no one writes is read whole at once.
func TestReadWaitsForWriters(t *testing.T) {
	_, path := queueFile(t)
	b, whole, err := Read(context.Background(), path, time.Second)
	if err != nil || !whole || string(b) != string(orig) {
		t.Fatalf("Read = %q, %v, %v; want the file, whole", b, whole, err)
	}
	w, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var we *WritingError
	if _, _, err := Read(context.Background(), path, 50*time.Millisecond); !errors.As(err, &we) {
		t.Errorf("Read of a file open for writing = %v, want a *WritingError", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := Read(ctx, path, time.Minute); !errors.Is(err, context.Canceled) {
		t.Errorf("an interrupted Read = %v, want the interruption", err)
	}
	if b, whole, err := Read(context.Background(), path, 0); err != nil || whole || string(b) != string(orig) {
		t.Errorf("Read without waiting = %q, %v, %v; want the file as it is, not whole", b, whole, err)
	}
	h := &seams{leaseFn: func(*os.File) error { return errNoLeaseHere }}
	w.Close()
	if c, err := h.hold(context.Background(), path, time.Second); err != nil || c.leased {
		t.Errorf("without leases: %+v, %v; want a read not vouched whole", c, err)
	}
}
