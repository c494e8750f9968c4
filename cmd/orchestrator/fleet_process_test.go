//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// fleet status over twenty repositories in every state a person must hear
// of (an issue halted, a pause, the breaker open, never run) and healthy
// ones: every problem is on screen, problems come first, no line is wider
// than 100 columns, the exit status says a person is needed, and --json
// reads the same from a list file (with a glob and comments) as from the
// directories named.
func TestProcessFleetStatusTwenty(t *testing.T) {
	ctx := testContext(t, 300*time.Second)
	c := newCLI(t)
	env := []string{"ORCHESTRATOR_NOW=2026-11-22T10:15:00Z"}
	halting := "[loop]\ncommand = \"echo working\"\n[verify.test]\ncommand = \"echo '--- FAIL: TestServer: nil map'; exit 1\"\n"
	queue := strings.Replace(queueOf("", issueIDs(1)), "| Halted | false |", "| Halted | false |\n| Verify | test |", 1)
	kinds := map[string]string{}
	var names []string
	for i := range 20 {
		kind := []string{"halted", "paused", "breaker", "fresh", "healthy"}[i%5]
		name := fmt.Sprintf("p%02d-%s", i, kind)
		names = append(names, name)
		kinds[name] = kind
		dir := name + "/.orchestrator"
		if err := os.MkdirAll(c.path(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if r := c.run(ctx, env, "--dir", dir, "init"); r.code != 0 {
			t.Fatalf("init %s: exit %d\n%s", name, r.code, r.stderr)
		}
		switch kind {
		case "halted":
			c.write(dir+"/config.toml", halting)
			c.write(dir+"/issue_queue.md", queue)
			if r := c.run(ctx, env, "--dir", dir, "run", "--quiet"); r.code != 3 {
				t.Fatalf("run %s: exit %d, want 3\n%s%s", name, r.code, r.stdout, r.stderr)
			}
		case "paused":
			c.write(dir+"/config.toml", "[loop]\ncommand = \"echo working\"\n")
			c.run(ctx, env, "--dir", dir, "run", "--quiet")
			if r := c.run(ctx, env, "--dir", dir, "pause"); r.code != 0 {
				t.Fatalf("pause %s: exit %d\n%s", name, r.code, r.stderr)
			}
		case "breaker":
			c.write(dir+"/config.toml", "[loop]\ncommand = \"echo boom; exit 1\"\n[circuit_breaker]\nthreshold = 1\n")
			c.run(ctx, env, "--dir", dir, "run", "--quiet")
		case "healthy":
			c.write(dir+"/config.toml", "[loop]\ncommand = \"echo working\"\n")
			if r := c.run(ctx, env, "--dir", dir, "run", "--quiet"); r.code != 0 {
				t.Fatalf("run %s: exit %d\n%s", name, r.code, r.stderr)
			}
		}
	}

	args := append([]string{"fleet", "status"}, names...)
	r := c.run(ctx, env, args...)
	t.Logf("fleet status on 20 repositories: %s\n%s", r.wall, r.stdout)
	if r.code != 3 {
		t.Fatalf("fleet status: exit %d, want 3 (a person is needed)\n%s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	if len(lines) != 20 {
		t.Errorf("fleet status printed %d lines for 20 repositories, want one each", len(lines))
	}
	want := map[string]string{"halted": "need a person", "paused": "paused", "breaker": "breaker", "fresh": "never run", "healthy": "last run"}
	lastProblem, firstHealthy := -1, len(lines)
	for i, l := range lines {
		if n := utf8.RuneCountInString(l); n > 100 {
			t.Errorf("line %d is %d columns wide: %q", i+1, n, l)
		}
		f := strings.Fields(l)
		if len(f) < 2 {
			t.Errorf("line %d has no repository: %q", i+1, l)
			continue
		}
		kind, ok := kinds[f[1]]
		if !ok {
			t.Errorf("line %d names no repository of the fleet: %q", i+1, l)
			continue
		}
		if !strings.Contains(l, want[kind]) {
			t.Errorf("%s (%s): %q does not say %q", f[1], kind, l, want[kind])
		}
		if kind == "healthy" {
			firstHealthy = min(firstHealthy, i)
		} else {
			lastProblem = i
		}
	}
	if lastProblem > firstHealthy {
		t.Errorf("a repository with a problem (line %d) comes after a healthy one (line %d)", lastProblem+1, firstHealthy+1)
	}

	c.write("fleet.list", "# every project of this machine\n\np*\n")
	fromList := c.run(ctx, env, "fleet", "status", "--json", "--from", c.path("fleet.list"))
	named := c.run(ctx, env, append([]string{"fleet", "status", "--json"}, names...)...)
	if fromList.code != 3 || named.code != 3 {
		t.Fatalf("fleet status --json: exit %d (--from) and %d (named), want 3", fromList.code, named.code)
	}
	type entry struct {
		Dir         string `json:"dir"`
		NeedsPerson bool   `json:"needs_person"`
		Problems    []struct {
			Kind string `json:"kind"`
		} `json:"problems"`
	}
	decode := func(s string) map[string]string {
		var entries []entry
		if err := json.Unmarshal([]byte(s), &entries); err != nil {
			var wrapped struct {
				Repositories []entry `json:"repositories"`
			}
			if err2 := json.Unmarshal([]byte(s), &wrapped); err2 != nil {
				t.Fatalf("fleet status --json: %v\n%s", err, s)
			}
			entries = wrapped.Repositories
		}
		got := map[string]string{}
		for _, e := range entries {
			var k []string
			for _, p := range e.Problems {
				k = append(k, p.Kind)
			}
			got[filepath.Base(filepath.Dir(e.Dir))] = fmt.Sprint(e.NeedsPerson, k)
		}
		return got
	}
	a, b := decode(fromList.stdout), decode(named.stdout)
	if len(a) != 20 || fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("--from and named directories disagree:\n--from: %v\nnamed:  %v", a, b)
	}
}

// fleet run --parallel N runs the repositories' runs at once, N at a time,
// in one process: the first three loops below each wait (up to 10 s) until
// three of them have started, so they see three only if they ran together.
// Each run's output is printed whole under its repository's name, never
// mixed with another's, each repository records its own loop, and the exit
// status is the worst: the fourth repository's loop crashes. The race
// detector's run of CI includes this test: the runs share one process.
func TestProcessFleetRunParallel(t *testing.T) {
	ctx := testContext(t, 120*time.Second)
	c := newCLI(t)
	names := []string{"a", "b", "c", "d"}
	for _, name := range names {
		dir := name + "/.orchestrator"
		if err := os.MkdirAll(c.path(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if r := c.run(ctx, nil, "--dir", dir, "init"); r.code != 0 {
			t.Fatalf("init %s: exit %d\n%s", name, r.code, r.stderr)
		}
		loop := fmt.Sprintf(`echo working-%[1]s; touch %[2]s/started-%[1]s; n=0; `+
			`until [ $(ls %[2]s | grep -c '^started-') -ge 3 ] || [ $n -ge 400 ]; do sleep 0.025; n=$((n+1)); done; `+
			`ls %[2]s | grep -c '^started-' > %[2]s/seen-%[1]s`, name, c.path("marks"))
		if name == "d" {
			loop = "echo crashing-d; exit 1"
		}
		c.write(dir+"/config.toml", fmt.Sprintf("[loop]\ncommand = %q\n", loop))
	}
	if err := os.Mkdir(c.path("marks"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := c.run(ctx, nil, append([]string{"fleet", "run", "--parallel", "3"}, names...)...)
	if r.code != 3 {
		t.Errorf("fleet run: exit %d, want 3 (d's loop crashed)\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, name := range names[:3] {
		b, err := os.ReadFile(c.path("marks/seen-" + name))
		if err != nil {
			t.Fatalf("%s's loop left no mark: %v", name, err)
		}
		if n, _ := strconv.Atoi(strings.TrimSpace(string(b))); n < 3 {
			t.Errorf("%s's loop saw %d loops started, want 3: the runs did not run at once", name, n)
		}
	}
	// One group per repository, each holding its own loop's output only.
	groups := strings.Split(r.stdout, "== ")[1:]
	seen := map[string]bool{}
	for _, g := range groups {
		name, body, _ := strings.Cut(g, "\n")
		if seen[name] || !slices.Contains(names, name) {
			t.Errorf("output group %q: unknown or repeated\n%s", name, r.stdout)
		}
		seen[name] = true
		for _, other := range names {
			mark := "working-" + other
			if other == "d" {
				mark = "crashing-d"
			}
			if (other == name) != strings.Contains(body, mark) {
				t.Errorf("group %s: holds %s: %v", name, mark, other != name)
			}
		}
	}
	if len(seen) != len(names) {
		t.Errorf("%d output groups, want %d\n%s", len(seen), len(names), r.stdout)
	}
	for _, name := range names {
		h, err := os.ReadFile(c.path(name + "/.orchestrator/history.csv"))
		if err != nil {
			t.Fatal(err)
		}
		if rows := strings.Count(strings.TrimSpace(string(h)), "\n"); rows != 1 {
			t.Errorf("%s's history.csv has %d loop rows, want 1\n%s", name, rows, h)
		}
	}
}
