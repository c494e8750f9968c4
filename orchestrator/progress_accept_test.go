package orchestrator

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoretry/orchestrator/internal/foundations/config"
	"github.com/autoretry/orchestrator/signature"
	"github.com/autoretry/orchestrator/templates"
)

// The progress rules against real agents' patterns, with a real test
// runner over a project whose ten tests fail, in a git work tree: "go test"
// over a Go module and pytest over a Python project, each test run against
// both. The person's index, HEAD, refs and stash are never changed by the
// recordings.

// A testProject is one of the projects the acceptance tests run against,
// and how an agent edits it.
type testProject struct {
	name      string
	workspace func(t *testing.T, agent string) (*Runner, string)
	file      string // the source file, with ten functions that return 0
	touch     string // the project's files, for an agent that only touches them
	bug       string // the comment that marks a function not yet fixed
	first     string // the first function's line with its value as %s, a sed pattern
	head      string // a sed pattern of a function's line whose group is its number
	fixed     string // a function's line fixed, the number as $n
	keyword   string // what a function's line begins with
}

var testProjects = []testProject{
	{name: "go", workspace: progressWorkspace, file: "calc.go", touch: "calc.go calc_test.go", bug: "// bug",
		first: "func F1() int { return %s }", head: `func F\([0-9]*\)`, fixed: "func F$n() int { return $n }", keyword: "func"},
	{name: "pytest", workspace: pytestWorkspace, file: "calc.py", touch: "calc.py test_calc.py", bug: "# bug",
		first: "def f1(): return %s", head: `def f\([0-9]*\)`, fixed: "def f$n(): return $n", keyword: "def"},
}

// forProjects runs test once for each project, as a subtest named for it.
func forProjects(t *testing.T, test func(t *testing.T, p testProject)) {
	for _, p := range testProjects {
		t.Run(p.name, func(t *testing.T) { test(t, p) })
	}
}

// setFirst is a sed command that sets the value the first function of p
// returns to v (which may be a shell variable).
func (p testProject) setFirst(v string) string {
	return fmt.Sprintf(`sed -i "s/^%s/%s/" %s`, fmt.Sprintf(p.first, "[0-9]*"), fmt.Sprintf(p.first, v), p.file)
}

func progressWorkspace(t *testing.T, agent string) (*Runner, string) {
	t.Helper()
	var calc, test strings.Builder
	calc.WriteString("package calc\n\n")
	test.WriteString("package calc\n\nimport \"testing\"\n\n")
	for n := 1; n <= 10; n++ {
		fmt.Fprintf(&calc, "func F%d() int { return 0 } // bug\n", n)
		fmt.Fprintf(&test, "func TestF%d(t *testing.T) {\n\tif got := F%d(); got != %d {\n\t\tt.Errorf(\"F%d() = %%d\", got)\n\t}\n}\n\n", n, n, n, n)
	}
	return projectWorkspace(t, agent, "go test ./...", []string{"go"}, map[string]string{
		"go.mod": "module example.com/calc\n\ngo 1.21\n", "calc.go": calc.String(), "calc_test.go": test.String(),
		".gitignore": "*.log\n",
	})
}

// pytestCommand returns a python that has pytest (Debian's python3-pytest
// when the python3 first on PATH lacks it), or "" if none has.
func pytestCommand() string {
	for _, py := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(py, "-m", "pytest", "--version").Run() == nil {
			return py + " -m pytest"
		}
	}
	return ""
}

// pytestWorkspace is progressWorkspace for a Python project whose ten
// pytest tests fail. CI installs pytest; elsewhere the test is skipped
// without it.
func pytestWorkspace(t *testing.T, agent string) (*Runner, string) {
	t.Helper()
	pytest := pytestCommand()
	if pytest == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("no python3 with pytest: .ci/run installs python3-pytest")
		}
		t.Skip("needs pytest (python3-pytest)")
	}
	var calc, test strings.Builder
	test.WriteString("import calc\n\n")
	for n := 1; n <= 10; n++ {
		fmt.Fprintf(&calc, "def f%d(): return 0  # bug\n", n)
		fmt.Fprintf(&test, "def test_f%d():\n    assert calc.f%d() == %d\n\n", n, n, n)
	}
	return projectWorkspace(t, agent, "PYTHONDONTWRITEBYTECODE=1 "+pytest+" -q -p no:cacheprovider", nil, map[string]string{
		"calc.py": calc.String(), "test_calc.py": test.String(), ".gitignore": "*.log\n__pycache__/\n",
	})
}

// projectWorkspace makes a git work tree of files, agent.sh (the loop) and
// a state directory whose one issue is verified by check, and a runner for
// it. progs are the programs it needs beside git and sh.
func projectWorkspace(t *testing.T, agent, check string, progs []string, files map[string]string) (*Runner, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs a test suite in a loop")
	}
	for _, prog := range append([]string{"git", "sh"}, progs...) {
		if _, err := exec.LookPath(prog); err != nil {
			t.Skipf("needs %s", prog)
		}
	}
	root := t.TempDir()
	files["agent.sh"] = agent
	files[".orchestrator/issue_queue.md"] = "# Issue Queue\n\n" + issueMD(simFailing, "Priority=critical", "Auto-Retry=true", "Max-Retries=15", "Verify=test")
	tracked := []string{"add"}
	for name, text := range files {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(name, ".orchestrator/") {
			tracked = append(tracked, name)
		}
	}
	b, err := os.ReadFile(filepath.Join("..", ".orchestrator.example", "session_state.md"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, ".orchestrator", "session_state.md"), b, 0o644)
	env := append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@example.com", "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod")
	for _, args := range [][]string{{"init", "-q"}, tracked, {"commit", "-qm", "start"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = root, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	rules, err := signature.Compile(signature.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Loop.Command = "sh agent.sh"
	cfg.Verification.Checks = map[string]config.Check{"test": {Name: "test", Command: check, Timeout: 5 * 60e9}}
	dir := filepath.Join(root, ".orchestrator")
	o := &Orchestrator{Dir: dir, Config: cfg, Templates: &templates.Set{Dir: filepath.Join(dir, "templates")}, Stdout: io.Discard,
		NewSignature: func() (SignatureWriter, error) { return rules.NewDigest(), nil }}
	return &Runner{O: o, Terminal: io.Discard, Stderr: io.Discard, Environ: env}, root
}

// gitSnapshot is what of the person's repository must never change.
func gitSnapshot(t *testing.T, root string) string {
	t.Helper()
	index, err := os.ReadFile(filepath.Join(root, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("sh", "-c", "cd "+root+" && cat .git/HEAD && git for-each-ref && git stash list").CombinedOutput()
	if err != nil {
		t.Fatal(err)
	}
	return string(index) + string(out)
}

func loopVerdicts(t *testing.T, dir string) map[int]Event {
	t.Helper()
	evs, errs := ReadEvents(dir)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	m := map[int]Event{}
	for _, ev := range evs {
		if ev.Event == EvLoop {
			m[ev.Loop] = ev
		}
	}
	return m
}

func runStop(t *testing.T, r *Runner) (RunReport, Code) {
	t.Helper()
	rep, err := r.Run(context.Background())
	if se, ok := err.(*StopError); ok {
		return rep, se.Code
	}
	if err != nil {
		t.Fatal(err)
	}
	return rep, ""
}

func TestProgressFixingOneTestPerLoopRunsToAllPass(t *testing.T) {
	forProjects(t, func(t *testing.T, p testProject) {
		r, root := p.workspace(t, fixOneAgent(p.file, p.bug, p.head, p.fixed))
		wantRunToAllPass(t, r, root)
	})
}

// fixOneAgent is a loop that fixes the first line of file marked bug: it
// takes the function's number n from head (a sed pattern whose group is
// the number) and puts fixed (which may say $n) in the line's place. It
// notes the previous loop's verdict in agent.log.
func fixOneAgent(file, bug, head, fixed string) string {
	return `echo "previous: $ORCHESTRATOR_PREVIOUS_PROGRESS" >> agent.log
line=$(grep -n '` + bug + `' ` + file + ` | head -1 | cut -d: -f1)
[ -z "$line" ] && exit 0
n=$(sed -n "${line}p" ` + file + ` | sed 's/^` + head + `.*/\1/')
sed -i "${line}s/.*/` + fixed + `/" ` + file + `
`
}

// wantRunToAllPass runs an agent that fixes one failing test per loop: the
// run completes with the issue resolved, never stopped by the progress
// rules, every later loop progressed by one line of one file, and the
// person's repository untouched.
func wantRunToAllPass(t *testing.T, r *Runner, root string) {
	t.Helper()
	before := gitSnapshot(t, root)
	rep, code := runStop(t, r)
	if code != "" || rep.Outcome != "completed" || len(rep.Resolved) != 1 {
		t.Fatalf("run: %+v, code %q; want completed with the issue resolved", rep, code)
	}
	loops := loopVerdicts(t, r.O.Dir)
	for n := 3; n <= 10; n++ {
		if ev := loops[n]; ev.Progress != ProgressProgressed || ev.Workspace == nil || ev.Workspace.FilesChanged != 1 || ev.Workspace.LinesAdded != 1 {
			t.Errorf("loop %d: progress %q, workspace %+v; want progressed, one line of one file", n, ev.Progress, ev.Workspace)
		}
	}
	if gitSnapshot(t, root) != before {
		t.Error("the person's index, HEAD, refs or stash changed")
	}
	hist, _ := ReadHistory(r.O.Dir)
	if len(hist) == 0 || hist[len(hist)-1].Progress != ProgressProgressed {
		t.Errorf("history's last row: %+v", hist)
	}
	log, _ := os.ReadFile(filepath.Join(root, "agent.log"))
	if !strings.Contains(string(log), "previous: progressed") {
		t.Errorf("the loops were not told the previous verdict:\n%s", log)
	}
}

// An agent that only rewords and touches files is halted with no_change
// at its second auto-retry loop.
func TestProgressIdleAgentHaltsNoChange(t *testing.T) {
	forProjects(t, func(t *testing.T, p testProject) {
		r, root := p.workspace(t, `echo "I reworded my plan"
touch `+p.touch+`
echo "$ORCHESTRATOR_LOOP" >> notes.log
`)
		before := gitSnapshot(t, root)
		wantStopAt(t, r, CodeNoChange, 3, ProgressIdle, "no_change after loop 3 (2 auto-retry loops)")
		assertHaltEvent(t, r.O.Dir, CodeNoChange)
		if gitSnapshot(t, root) != before {
			t.Error("the person's index, HEAD, refs or stash changed")
		}
	})
}

// An agent that goes between two wrong fixes is halted with cycle at the
// first return to a state in which the tests had failed.
func TestProgressCyclingAgentHaltsCycle(t *testing.T) {
	forProjects(t, func(t *testing.T, p testProject) {
		r, root := p.workspace(t, `if [ $((ORCHESTRATOR_LOOP % 2)) = 1 ]; then v=100; else v=200; fi
`+p.setFirst("$v")+`
`)
		before := gitSnapshot(t, root)
		wantStopAt(t, r, CodeCycle, 3, ProgressCycled, "cycle at loop 3, the first return")
		assertHaltEvent(t, r.O.Dir, CodeCycle)
		if gitSnapshot(t, root) != before {
			t.Error("the person's index, HEAD, refs or stash changed")
		}
		lc, ok, err := FindLoopChange(r.O.Dir, "", 3)
		if err != nil || !ok {
			t.Fatalf("loop 3's change: %v %v", ok, err)
		}
		diff, err := lc.DiffText(context.Background(), r.O.Dir)
		if err != nil || !strings.Contains(string(diff), "-"+fmt.Sprintf(p.first, "200")) || !strings.Contains(string(diff), "+"+fmt.Sprintf(p.first, "100")) {
			t.Errorf("diff of loop 3: %v\n%s", err, diff)
		}
	})
}

// A wrong fix committed and then undone by git revert is a cycle too: the
// work tree is back where the run began.
func TestProgressGitRevertHaltsCycle(t *testing.T) {
	forProjects(t, func(t *testing.T, p testProject) {
		r, _ := p.workspace(t, `if [ "$ORCHESTRATOR_LOOP" = 1 ]; then
  `+p.setFirst("7")+`
  git commit -qam 'wrong fix'
else
  git revert --no-edit HEAD >/dev/null
fi
`)
		rep, code := runStop(t, r)
		if code != CodeCycle || rep.Loops != 2 {
			t.Fatalf("run: %+v, code %q; want cycle at loop 2, back where the run began", rep, code)
		}
		assertHaltEvent(t, r.O.Dir, CodeCycle)
	})
}

// An agent that only reformats (a blank line before every function) changes
// the files every loop but no test: it stops with no_progress.
func TestProgressReformattingAgentStopsNoProgress(t *testing.T) {
	forProjects(t, func(t *testing.T, p testProject) {
		r, root := p.workspace(t, `sed -i 's/^`+p.keyword+` /\n`+p.keyword+` /' `+p.file+`
`)
		before := gitSnapshot(t, root)
		wantStopAt(t, r, CodeNoProgress, 4, ProgressChanged, "no_progress after loop 4 (3 auto-retry loops)")
		if gitSnapshot(t, root) != before {
			t.Error("the person's index, HEAD, refs or stash changed")
		}
	})
}

// wantStopAt runs r to its stop and checks that it stopped with code after
// loop, whose progress verdict was progress; want says so in words.
func wantStopAt(t *testing.T, r *Runner, code Code, loop int, progress, want string) {
	t.Helper()
	rep, got := runStop(t, r)
	if got != code || rep.Loops != loop {
		t.Fatalf("run: %+v, code %q; want %s", rep, got, want)
	}
	if ev := loopVerdicts(t, r.O.Dir)[loop]; ev.Progress != progress {
		t.Errorf("loop %d: %q, want %s", loop, ev.Progress, progress)
	}
}

func assertHaltEvent(t *testing.T, dir string, code Code) {
	t.Helper()
	evs, _ := ReadEvents(dir)
	for _, ev := range evs {
		if ev.Event == EvHalted && ev.Code == code && ev.IssueID == simFailing {
			return
		}
	}
	t.Errorf("no halted event with code %s", code)
}
