package statefile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "orchestrator.prom")
	if err := os.WriteFile(path, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A failed write leaves the old file and no temporary file.
	boom := errors.New("boom")
	err := WriteAtomic(path, func(w io.Writer) error {
		io.WriteString(w, "half")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old\n" {
		t.Errorf("after a failed write the file holds %q", b)
	}
	// A good write replaces it, mode 0644, and leaves nothing else.
	if err := WriteAtomic(path, func(w io.Writer) error { _, err := io.WriteString(w, "new\n"); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new\n" {
		t.Errorf("file holds %q", b)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, %v; want 0644", fi.Mode(), err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("the directory holds %d entries, want only the file", len(ents))
	}
}

// WriteAtomic refuses a symbolic link, a hard-linked file and a directory
// at its path: nothing is written, the link and the file it names are as
// they were, and no temporary file is left.
func TestWriteAtomicRefusesLinks(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(t *testing.T, path, outside string)
		want string
	}{
		{"symlink", func(t *testing.T, path, outside string) { makeSymlink(t, outside, path) }, "is a symbolic link"},
		{"dangling symlink", func(t *testing.T, path, outside string) { makeSymlink(t, outside+".new", path) }, "is a symbolic link"},
		{"hardlink", func(t *testing.T, path, outside string) { makeHardlink(t, outside, path) }, "has more than one hard link"},
		{"directory", func(t *testing.T, path, outside string) { makeDir(t, path) }, "is not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state, elsewhere := t.TempDir(), t.TempDir()
			outside := filepath.Join(elsewhere, "outside.txt")
			if err := os.WriteFile(outside, []byte("outside\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(state, "analytics.html")
			tc.make(t, path, outside)
			before, _ := os.Lstat(path)
			err := WriteAtomic(path, func(w io.Writer) error { _, err := io.WriteString(w, "new\n"); return err })
			var unsafe *UnsafeFileError
			if !errors.As(err, &unsafe) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("WriteAtomic: %v; want an UnsafeFileError saying %q", err, tc.want)
			}
			if b, _ := os.ReadFile(outside); string(b) != "outside\n" {
				t.Errorf("the file outside holds %q", b)
			}
			if _, err := os.Stat(outside + ".new"); err == nil {
				t.Error("a file was created outside through the dangling link")
			}
			if after, _ := os.Lstat(path); !os.SameFile(before, after) || before.Mode() != after.Mode() {
				t.Errorf("%s was replaced", path)
			}
			if ents, _ := os.ReadDir(state); len(ents) != 1 {
				t.Errorf("the state directory holds %d entries, want only the link", len(ents))
			}
		})
	}
}

// Every way a file is read or written refuses a symbolic link, a hard-linked
// file and a directory with the same words, so that a person meets one
// message for one problem whichever command found it.
func TestRefusalsWordedAlike(t *testing.T) {
	ways := map[string]func(path string) error{
		"ReadFile": func(path string) error { _, err := ReadFile(path); return err },
		"Check":    Check,
		"WriteAtomic": func(path string) error {
			return WriteAtomic(path, func(w io.Writer) error { return nil })
		},
		"OpenNoLink": func(path string) error {
			f, err := OpenNoLink(path, os.O_RDONLY, 0)
			if err == nil {
				f.Close()
			}
			return err
		},
	}
	for _, tc := range []struct {
		name string
		make func(t *testing.T, path, real string)
		want string
	}{
		{"symlink", func(t *testing.T, path, real string) { makeSymlink(t, real, path) }, "is a symbolic link: the tool does not write through links; remove the link, or point the tool at the real file"},
		{"hardlink", func(t *testing.T, path, real string) { makeHardlink(t, real, path) }, "has more than one hard link: the tool does not write a file that has other names; replace it with a copy of its own"},
		{"directory", func(t *testing.T, path, real string) { makeDir(t, path) }, "is not a regular file"},
	} {
		for way, do := range ways {
			t.Run(tc.name+"/"+way, func(t *testing.T) {
				dir := t.TempDir()
				real := filepath.Join(dir, "real")
				if err := os.WriteFile(real, []byte("x\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				path := filepath.Join(dir, "f")
				tc.make(t, path, real)
				err := do(path)
				var unsafe *UnsafeFileError
				if !errors.As(err, &unsafe) {
					t.Fatalf("%s: %v; want an *UnsafeFileError", way, err)
				}
				if got, want := err.Error(), path+" "+tc.want; got != want {
					t.Errorf("%s:\n got %q\nwant %q", way, got, want)
				}
			})
		}
	}
}

// makeSymlink, makeHardlink and makeDir make path what the package refuses
// to read or write: a symbolic link to target, a second name of target, a
// directory.
func makeSymlink(t *testing.T, target, path string) {
	t.Helper()
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
}

func makeHardlink(t *testing.T, target, path string) {
	t.Helper()
	if err := os.Link(target, path); err != nil {
		t.Fatal(err)
	}
}

func makeDir(t *testing.T, path string) {
	t.Helper()
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
}
