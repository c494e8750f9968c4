package signature

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// readArchive returns the files of a testdata archive by name.
func readArchive(t testing.TB, path string) map[string][]byte {
	t.Helper()
	ar, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, f := range ar.Files {
		files[f.Name] = f.Data
	}
	return files
}

// readPair returns files a and b of a testdata archive.
func readPair(t testing.TB, path string) (a, b []byte) {
	t.Helper()
	files := readArchive(t, path)
	a, b = files["a"], files["b"]
	if a == nil || b == nil {
		t.Fatalf("%s: want files a and b", path)
	}
	return a, b
}

// archives returns the paths of the archives in testdata/dir.
func archives(t *testing.T, dir string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", dir, "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatalf("no archives in testdata/%s", dir)
	}
	return paths
}

// TestCapturedOutputs runs the rules on output captured from real tools:
// each archive in testdata/same holds two runs of one failure that must get
// one signature, each in testdata/differ two failures that must not.
func TestCapturedOutputs(t *testing.T) {
	r := compile(t, "")
	for _, dir := range []string{"same", "differ"} {
		for _, path := range archives(t, dir) {
			t.Run(dir+"/"+strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
				a, b := readPair(t, path)
				if bytes.Equal(a, b) {
					t.Fatal("a and b are identical: the pair proves nothing")
				}
				sa, sb := r.SumBytes(a), r.SumBytes(b)
				if same := sa == sb; same != (dir == "same") {
					t.Errorf("signatures equal = %v, want %v\n--- a normalized:\n%s--- b normalized:\n%s",
						same, dir == "same", explain(t, r, string(a)), explain(t, r, string(b)))
				}
			})
		}
	}
}

// TestGoTestReruns runs a real failing Go test twice, from two temporary
// directories, and once with a different failing assertion: the reruns must
// get one signature although their temporary paths, timestamps, pids,
// ports, addresses and durations differ; the other failure must not.
func TestGoTestReruns(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	r := compile(t, os.Getenv("TMPDIR"))
	run := func(edit func(string) string) []byte {
		t.Helper()
		dir := filepath.Join(t.TempDir(), "gomod")
		copyDir(t, filepath.Join("testdata", "gomod"), dir, edit)
		cmd := exec.Command(gobin, "test", "-v", "-count=1", ".")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
		out, err := cmd.CombinedOutput()
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("go test: %v\n%s", err, out)
		}
		if !bytes.Contains(out, []byte("--- FAIL: TestAdd")) || !bytes.Contains(out, []byte("goroutine ")) {
			t.Fatalf("go test did not fail as expected:\n%s", out)
		}
		return out
	}
	same := func(s string) string { return s }
	first, second := run(same), run(same)
	other := run(func(s string) string {
		return strings.Replace(s, "Add(1, 2), 4", "Add(1, 2), 5", 1)
	})
	if bytes.Equal(first, second) {
		t.Fatal("the two runs printed the same bytes: nothing was normalized")
	}
	if a, b := r.SumBytes(first), r.SumBytes(second); a != b {
		t.Errorf("reruns of one failure got different signatures\n--- first:\n%s--- second:\n%s",
			explain(t, r, string(first)), explain(t, r, string(second)))
	}
	if a, b := r.SumBytes(first), r.SumBytes(other); a == b {
		t.Errorf("different failures got one signature\n--- first:\n%s--- other:\n%s",
			explain(t, r, string(first)), explain(t, r, string(other)))
	}
}

// copyDir copies the files of src (no subdirectories) to dst, passing Go
// files through edit.
func copyDir(t *testing.T, src, dst string, edit func(string) string) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(e.Name(), ".go") {
			data = []byte(edit(string(data)))
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
