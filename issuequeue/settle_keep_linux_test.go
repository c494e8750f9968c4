package issuequeue

import (
	"bytes"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// A save in place that opens the file a change is replacing, before the
// swap, writes into the file that no longer has the name. That save is
// never lost: it is put back with the change re-applied on top while it
// can be, even when the command's waiting budget is already spent, and
// kept beside the file, noted for a warning, when it cannot: the change
// stands either way.
func TestSaveIntoReplacedFileIsKept(t *testing.T) {
	for _, tc := range []struct {
		name   string
		s      *settler
		putBak bool
	}{
		{"put back", newSettler(), true},
		{"put back with the budget spent", &settler{deadline: time.Now().Add(-time.Second), keep: maxKept}, true},
		{"set aside", &settler{deadline: time.Now().Add(SettleTime), keep: 0}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), QueueFile)
			before := []byte("line one\nline two\n")
			if err := os.WriteFile(path, before, 0o644); err != nil {
				t.Fatal(err)
			}
			old := time.Now().Add(-time.Hour) // long settled: no save going on
			if err := os.Chtimes(path, old, old); err != nil {
				t.Fatal(err)
			}
			if l, _ := lease(path); l == nil {
				t.Skip("no leases here (another user's file or a network file system)")
			} else {
				l.close()
			}
			const person = "a person's own text\n"
			editor := make(chan error, 1)
			var once sync.Once
			// The command read the file before someone else changed it, so
			// its change is re-applied (rebase) before the swap. At that
			// moment the person's editor opens the file to save in place,
			// and waits for the command's lease to be given up.
			rebase := func(cur []byte) ([]byte, error) {
				once.Do(func() {
					breaking := breakingLease(t, path)
					go func() { editor <- saveInPlace(path, person) }()
					breaking()
				})
				return append(cur[:len(cur):len(cur)], "the change\n"...), nil
			}
			err := tc.s.replaceKeeping(t.Context(), path, []byte("stale\n"), []byte("stale\nthe change\n"), rebase, new([]byte), nil)
			if err := <-editor; err != nil {
				t.Fatal(err)
			}
			got, rerr := os.ReadFile(path)
			if rerr != nil {
				t.Fatal(rerr)
			}
			saved, _ := filepath.Glob(path + ".saved-*")
			if tc.putBak {
				if err != nil || string(got) != person+"the change\n" || len(saved) != 0 {
					t.Fatalf("err %v, file %q, set aside %v; want the save put back under the change", err, got, saved)
				}
				return
			}
			if err != nil || len(saved) != 1 || len(tc.s.kept) != 1 || tc.s.kept[0].Saved != saved[0] || tc.s.kept[0].Cut != nil {
				t.Fatalf("err %v, set aside %v, noted %v; want the change to stand and the one file set aside noted", err, saved, tc.s.kept)
			}
			if !strings.Contains(tc.s.kept[0].String(), saved[0]) {
				t.Errorf("the warning does not say where the save is: %s", tc.s.kept[0])
			}
			kept, rerr := os.ReadFile(saved[0])
			if rerr != nil || string(kept) != person {
				t.Errorf("set aside: %q, %v; want the save whole", kept, rerr)
			}
			if want := string(before) + "the change\n"; string(got) != want {
				t.Errorf("file %q, want the change %q", got, want)
			}
		})
	}
}

// saveInPlace saves text into the file at path as editors that write in
// place do: open, truncate, write, close.
func saveInPlace(path, text string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// breakingLease returns a function that waits until a process's open of
// the file at path is waiting for a read lease on it to be given up: the
// kernel then signals the lease's holder (SIGIO) and lists the lease as
// breaking in /proc/locks.
func breakingLease(t *testing.T, path string) func() {
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	ino := fmt.Sprintf(":%d ", fi.Sys().(*syscall.Stat_t).Ino)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGIO)
	return func() {
		defer signal.Stop(sig)
		timeout := time.After(10 * time.Second)
		for {
			locks, err := os.ReadFile("/proc/locks")
			if err != nil {
				t.Error(err)
				return
			}
			for _, line := range bytes.Split(locks, []byte("\n")) {
				if bytes.Contains(line, []byte("BREAKING")) && bytes.Contains(line, []byte(ino)) {
					return
				}
			}
			select {
			case <-sig:
			case <-timeout:
				t.Error("the editor's open never waited for the lease")
				return
			}
		}
	}
}
