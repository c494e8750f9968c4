package issuequeue

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A save in place that opens the file a change is replacing, before the
// swap, writes into the file that no longer has the name. That save is
// never lost: it is put back with the change re-applied on top while it
// can be, even when the command's waiting budget is already spent, and
// kept beside the file, noted for a warning, when it cannot. A second save,
// into the file the put-back replaced, or a save into the new file made
// before the tool holds it, is never merged blindly either: what is in
// place stands, and the other save is kept beside it, whole. A change that
// swaps nothing in leaves a save into the file alone.
func TestSaveIntoReplacedFileIsKept(t *testing.T) {
	const (
		before = "line one\nline two\n"
		change = "the change\n"
		first  = "a person's own text\n"
		second = "a second save, from an editor's buffer\n"
		early  = "a save into the new file\n"
	)
	for _, tc := range []struct {
		name     string
		s        *settler
		second   string // saved while the first is put back
		early    string // saved into the new file before the tool leases it
		writing  bool   // the new file is open for writing when the tool would lease it
		same     bool   // the change writes what the file holds: nothing is swapped
		conflict bool   // the change conflicts with the first save
		want     string // the file at the end
		kept     []string
	}{
		{name: "put back", s: newSettler(), want: first + change},
		{name: "put back with the budget spent", s: &settler{deadline: time.Now().Add(-time.Second)}, want: first + change},
		{name: "kept beside when the new file cannot be leased", s: newSettler(), writing: true, want: before + change, kept: []string{first}},
		{name: "nothing swapped: the save stands", s: newSettler(), same: true, want: first},
		{name: "a second save into the file put back", s: newSettler(), second: second, want: first + change, kept: []string{second}},
		{name: "a save into the new file first", s: newSettler(), early: early, want: early, kept: []string{first}},
		{name: "a conflict, then a second save", s: newSettler(), conflict: true, second: second, want: first, kept: []string{second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), QueueFile)
			if err := os.WriteFile(path, []byte(before), 0o644); err != nil {
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
			editors := make(chan error, 2)
			started := 0
			// saveDuring starts a save in place of the file at path and
			// returns when it waits for the tool's lease to be given up.
			saveDuring := func(text string) {
				breaking := breakingLease(t, path)
				go func() { editors <- saveInPlace(path, text) }()
				started++
				breaking()
			}
			calls := 0
			// The command read the file before someone else changed it, so
			// its change is re-applied (rebase) before the swap: at that
			// moment the first editor opens the file. The second call puts
			// the first save back, while the second editor opens the file
			// in place then.
			rebase := func(cur []byte) ([]byte, error) {
				calls++
				switch {
				case calls == 1:
					saveDuring(first)
				case calls == 2 && tc.second != "":
					saveDuring(tc.second)
				}
				if calls == 2 && tc.conflict {
					return nil, &ConflictError{File: path, Key: "ISSUE-20261122-001"}
				}
				return append(cur[:len(cur):len(cur)], change...), nil
			}
			switch {
			case tc.early != "":
				tc.s.replaced = func() {
					if err := saveInPlace(path, tc.early); err != nil {
						t.Error(err)
					}
				}
			case tc.writing:
				tc.s.replaced = func() {
					f, err := os.OpenFile(path, os.O_WRONLY, 0)
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { f.Close() })
				}
			case tc.same:
				tc.s.replaced = func() { saveDuring(first) }
			}
			orig, next := []byte("stale\n"), []byte("stale\n"+change)
			if tc.same {
				orig, next = []byte(before), []byte(before)
			}
			err := tc.s.replaceKeeping(t.Context(), path, orig, next, rebase, new([]byte), nil)
			for range started {
				if err := <-editors; err != nil {
					t.Fatal(err)
				}
			}
			var ce *ConflictError
			if tc.conflict != errors.As(err, &ce) || !tc.conflict && err != nil {
				t.Errorf("err %v, want a conflict: %v", err, tc.conflict)
			}
			got, rerr := os.ReadFile(path)
			if rerr != nil {
				t.Fatal(rerr)
			}
			if string(got) != tc.want {
				t.Errorf("file %q, want %q", got, tc.want)
			}
			saved, _ := filepath.Glob(path + ".saved-*")
			var kept []string
			for _, name := range saved {
				b, err := os.ReadFile(name)
				if err != nil {
					t.Fatal(err)
				}
				kept = append(kept, string(b))
			}
			if !slices.Equal(kept, tc.kept) || len(tc.s.kept) != len(saved) || len(tc.s.lost) > 0 {
				t.Fatalf("kept beside the file %q, noted %v, lost %v; want %q, whole", kept, tc.s.kept, tc.s.lost, tc.kept)
			}
			for i, k := range tc.s.kept {
				if k.Saved != saved[i] || k.Cut != nil || !strings.Contains(k.String(), saved[i]) {
					t.Errorf("noted %s; want it to name %s, whole", k, saved[i])
				}
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
