package fleet

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/columns"
	"github.com/autoretry/orchestrator/internal/testkit/queuegen"
)

// A list file skips blank lines and comments, expands globs to the
// directories they match, and takes relative paths from its own
// directory; a glob that matches no directory is an error.
func TestReadList(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"api", "web", "docs"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, "wobble.txt"), nil, 0o644)
	list := filepath.Join(dir, "list")
	os.WriteFile(list, []byte("# my projects\n\n  w*  \ndocs\n/abs/elsewhere\n"), 0o644)
	got, err := ReadList(list)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "web"), filepath.Join(dir, "docs"), "/abs/elsewhere"}
	if !slices.Equal(got, want) {
		t.Errorf("ReadList = %q, want %q", got, want)
	}
	os.WriteFile(list, []byte("nothing-*\n"), 0o644)
	if _, err := ReadList(list); err == nil || !strings.Contains(err.Error(), "matches no directory") {
		t.Errorf("a glob matching nothing: %v", err)
	}
	os.WriteFile(list, []byte("# only a comment\n"), 0o644)
	if _, err := ReadList(list); err == nil {
		t.Error("an empty list is not an error")
	}
}

// fleetDirs makes n state directories with a generated queue of issues
// and a day of recorded runs every 10 minutes.
func fleetDirs(tb testing.TB, n, issues int, now time.Time) (names, dirs []string) {
	tb.Helper()
	root := tb.TempDir()
	for i := range n {
		d := filepath.Join(root, fmt.Sprintf("repo-%02d", i), StateDirName)
		if err := os.MkdirAll(filepath.Join(d, "logs"), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := queuegen.Generate(queuegen.Options{Issues: issues, Seed: uint64(i)}).Write(d); err != nil {
			tb.Fatal(err)
		}
		var b strings.Builder
		for k := 144; k > 0; k-- {
			at := now.Add(-time.Duration(k) * 10 * time.Minute).Format(time.RFC3339)
			fmt.Fprintf(&b, `{"timestamp":%q,"event":"run_started","run_id":"r%d"}`+"\n", at, k)
			fmt.Fprintf(&b, `{"timestamp":%q,"event":"loop_exec","run_id":"r%d","loop":1,"kind":"regular","attempt":1,"duration_ms":60000}`+"\n", at, k)
			fmt.Fprintf(&b, `{"timestamp":%q,"event":"run_finished","run_id":"r%d","status":"completed","loop":1}`+"\n", at, k)
		}
		os.WriteFile(filepath.Join(d, "logs", "retry.jsonl"), []byte(b.String()), 0o644)
		names, dirs = append(names, filepath.Base(filepath.Dir(d))), append(dirs, d)
	}
	return names, dirs
}

// Twenty repositories, each with 200 issues and a day of runs: what
// "fleet status" reads. It must take well under a second.
func BenchmarkReadAll20(b *testing.B) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	names, dirs := fleetDirs(b, 20, 200, now)
	b.ResetTimer()
	for b.Loop() {
		es := ReadAll(names, dirs, now, "orchestrator")
		if len(es) != 20 {
			b.Fatal(len(es))
		}
	}
}

// The generated fleet reads without an unreadable entry, sorted problems
// first, each healthy entry on one line that fits 100 columns.
func TestReadAllOrder(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	names, dirs := fleetDirs(t, 4, 30, now)
	os.WriteFile(filepath.Join(dirs[2], "paused"), nil, 0o644)
	es := ReadAll(names, dirs, now, "orchestrator")
	seenHealthy := false
	for _, e := range es {
		for _, p := range e.Problems {
			if p.Kind == KindUnreadable {
				t.Fatalf("%s: %s", e.Name, p.Text)
			}
		}
		if e.Healthy() {
			seenHealthy = true
			if l := e.Lines(NameWidth(es, 100), 100); len(l) != 1 {
				t.Errorf("%s: healthy on %d lines", e.Name, len(l))
			}
		} else if seenHealthy {
			t.Errorf("%s has problems but comes after a healthy entry", e.Name)
		}
		for _, l := range e.Lines(NameWidth(es, 100), 100) {
			if n := len([]rune(l)); n > 100 {
				t.Errorf("line of %d columns: %q", n, l)
			}
		}
	}
}

// A path too long for the name column keeps its end: the repository's own
// name, after as many of the directories above it as fit.
func TestShortName(t *testing.T) {
	for _, tc := range []struct {
		name  string
		width int
		want  string
	}{
		{"/tmp/work/fleet/repo-07", 30, "/tmp/work/fleet/repo-07"},
		{"/tmp/work/fleet/repo-07", 0, "/tmp/work/fleet/repo-07"},
		{"/tmp/work/fleet/repo-07", 22, "…/work/fleet/repo-07"},
		{"/tmp/work/fleet/repo-07", 16, "…/fleet/repo-07"},
		{"/tmp/work/fleet/repo-07", 9, "…/repo-07"},
		{"/tmp/work/fleet/repo-07", 6, "…po-07"},
		{"a-repository-name", 8, "…ry-name"},
		{"/srv/リポジトリ/ビルド", 12, "…/ビルド"},
		{"/srv/リポジトリ/ビルド", 5, "…ルド"},
	} {
		got := shortName(filepath.FromSlash(tc.name), tc.width)
		if want := filepath.FromSlash(tc.want); got != want {
			t.Errorf("shortName(%q, %d) = %q, want %q", tc.name, tc.width, got, want)
		}
	}
}

// Twenty repositories in one directory, deep enough that their paths do
// not fit the name column of an 80-column terminal: every row still names
// its repository, no two rows read the same, and every line fits.
func TestLinesNameSiblingRepositories(t *testing.T) {
	root := filepath.FromSlash("/home/someone/src/clients/acme/work/fleet")
	var es []Entry
	for i := 1; i <= 20; i++ {
		e := Entry{Name: filepath.Join(root, fmt.Sprintf("repo-%02d", i)), Open: 3}
		if i%3 == 0 {
			e.Problems = []Problem{{Text: "paused by a person"}, {Text: "never run"}}
		}
		es = append(es, e)
	}
	nw := NameWidth(es, 80)
	if nw >= len(es[0].Name) {
		t.Fatalf("the names fit a column of %d: the test needs longer ones", nw)
	}
	seen := map[string]bool{}
	for i, e := range es {
		lines := e.Lines(nw, 80)
		for _, l := range lines {
			if n := columns.Width(l); n > 80 {
				t.Errorf("a line of %d columns: %q", n, l)
			}
		}
		name := fmt.Sprintf("repo-%02d ", i+1)
		if !strings.Contains(lines[0], string(filepath.Separator)+name) {
			t.Errorf("the row of %s does not name it: %q", e.Name, lines[0])
		}
		if seen[lines[0]] {
			t.Errorf("two rows read %q", lines[0])
		}
		seen[lines[0]] = true
	}
}
