// Command record makes a recorded loop history (bench/histories/FORMAT.md)
// from a real project's test suite and a scripted agent.
//
// Usage:
//
//	go run ./bench/record -tree DIR -scenario bench/histories/rec-NAME/scenario.json [-work DIR] [-out FILE]
//
// DIR is a checkout of the project named in the scenario's source (for a
// GitHub repository: git archive of the commit it names, unpacked); it is
// copied to the work directory (-work, default /tmp/rec/NAME; emptied
// first) and never changed. Nothing is downloaded: the project's tests must
// run offline there.
//
// The scenario is the scripted agent: the edits that break the project
// (break), then per run and per loop the edits the agent makes, what it
// prints, how long it ran. For each loop the recorder applies the edits,
// runs the real check commands of the issues still open (and of the issues
// the loop files) in the work directory, and writes what they printed and
// how they exited as the loop's verify, add and fail entries. The
// workspace name of a loop is a hash of the files that differ from the
// project as given, so the same files give the same name. The queue's
// Failure Details are the checks' output on the broken project. Outputs
// are kept as the tools print them; one longer than 150 lines keeps its
// first 30 and last 119 lines, with a line saying how many were cut.
//
// A loop's output is what the scripted agent says (say), then the command
// of the first check and the end of what it printed, as an agent that runs
// the tests itself prints it; or, with output_file, the content of a real
// agent output sample (a path from the module's root, such as
// internal/adapters/agentout/testdata/real/claude-limit-warsaw-6119.txt).
//
// The history is written to -out (default history.json beside the
// scenario) and read back with the replay package's reader.
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/procgroup"
	"github.com/autoretry/orchestrator/internal/views/replay"
)

// Scenario is the scripted agent and the issues it works on.
type Scenario struct {
	Label   replay.Label      `json:"label"`
	Why     string            `json:"why"`
	Source  string            `json:"source"`
	Notes   string            `json:"notes"`
	Start   time.Time         `json:"start"`
	Every   string            `json:"every"`
	Config  string            `json:"config"`  // extra config.toml text, after the checks
	Checks  map[string]string `json:"checks"`  // check name to command
	Timeout string            `json:"timeout"` // longest one check may run (default 10m)
	Issues  []Issue           `json:"issues"`  // the queue at the start
	Break   []Edit            `json:"break"`   // the regression, before the first loop
	Runs    []ScRun           `json:"runs"`
}

// Issue is an issue of the starting queue.
type Issue struct {
	ID      string `json:"id"`
	Summary string `json:"summary"`
	Verify  string `json:"verify"` // a check name
}

// ScRun is one run of the scripted agent.
type ScRun struct {
	At    time.Time `json:"at,omitzero"`
	Loops []ScLoop  `json:"loops"`
}

// Try is an execution of the loop command before the loop's last one.
type Try struct {
	Minutes    float64 `json:"minutes"`
	Exit       int     `json:"exit"`
	OutputFile string  `json:"output_file"`
}

// ScLoop is what the scripted agent does in one loop.
type ScLoop struct {
	Minutes    float64  `json:"minutes"`
	Exit       int      `json:"exit"`
	Silent     float64  `json:"silent_minutes"`
	Say        string   `json:"say"`
	Quiet      bool     `json:"quiet"` // the output is only what it says: it never saw its tests end
	OutputFile string   `json:"output_file"`
	Tries      []Try    `json:"tries"`
	Edits      []Edit   `json:"edits"`
	Add        []Issue  `json:"add"`      // issues the QA step files, with the check's output as details
	Fail       []string `json:"fail"`     // issues the QA step records a failure of
	Resolve    []string `json:"resolve"`  // issues the QA step says are fixed
	Verify     []string `json:"verify"`   // issues verified after the loop; default: every open one
	NoVerify   bool     `json:"noverify"` // no verification after this loop
	Person     []string `json:"person"`
}

// Edit is one change of the scripted agent.
type Edit struct {
	File    string  `json:"file"`
	Old     string  `json:"old"`
	New     string  `json:"new"`
	All     bool    `json:"all"`     // replace every occurrence of old (else exactly one)
	Write   *string `json:"write"`   // the file's whole new content
	Append  string  `json:"append"`  // text added at the end
	Restore bool    `json:"restore"` // back to the project as given
	Save    string  `json:"save"`    // remember the workspace under this name
	Load    string  `json:"load"`    // put the workspace back as remembered
}

type recorder struct {
	tree, work string
	timeout    time.Duration
	touched    map[string]bool
	saved      map[string]map[string][]byte
}

func main() {
	tree := flag.String("tree", "", "the project's tree (not changed)")
	scen := flag.String("scenario", "", "the scenario file")
	work := flag.String("work", "", "work directory (default /tmp/rec/NAME)")
	out := flag.String("out", "", "history file (default history.json beside the scenario)")
	flag.Parse()
	if *tree == "" || *scen == "" {
		fmt.Fprintln(os.Stderr, "usage: record -tree DIR -scenario FILE [-work DIR] [-out FILE]")
		os.Exit(2)
	}
	if err := run(*tree, *scen, *work, *out); err != nil {
		fmt.Fprintln(os.Stderr, "record:", err)
		os.Exit(1)
	}
}

func run(tree, scenFile, work, out string) error {
	b, err := os.ReadFile(scenFile)
	if err != nil {
		return err
	}
	var sc Scenario
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&sc); err != nil {
		return fmt.Errorf("%s: %w", scenFile, err)
	}
	name := filepath.Base(filepath.Dir(scenFile))
	if work == "" {
		work = filepath.Join("/tmp/rec", name)
	}
	if out == "" {
		out = filepath.Join(filepath.Dir(scenFile), "history.json")
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	r := &recorder{tree: tree, work: work, timeout: 10 * time.Minute,
		touched: map[string]bool{}, saved: map[string]map[string][]byte{}}
	if sc.Timeout != "" {
		if r.timeout, err = time.ParseDuration(sc.Timeout); err != nil {
			return fmt.Errorf("timeout: %w", err)
		}
	}
	if err := os.RemoveAll(work); err != nil {
		return err
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	if o, err := exec.Command("cp", "-a", filepath.Clean(tree)+"/.", work).CombinedOutput(); err != nil {
		return fmt.Errorf("copy %s: %v: %s", tree, err, o)
	}
	if err := r.apply(sc.Break); err != nil {
		return fmt.Errorf("break: %w", err)
	}

	h := replay.History{Label: sc.Label, Why: sc.Why, Kind: replay.KindRecorded, Source: sc.Source,
		Start: sc.Start}
	if sc.Every != "" {
		v, err := time.ParseDuration(sc.Every)
		if err != nil {
			return fmt.Errorf("every: %w", err)
		}
		h.Every = replay.Duration(v)
	}
	h.Config = checksConfig(sc.Checks) + sc.Config

	check := map[string]string{} // issue to check name
	open := []string{}
	var q strings.Builder
	q.WriteString("# Issue Queue\n")
	for _, is := range sc.Issues {
		res := r.check(sc.Checks, is.Verify)
		if res.Exit == 0 {
			return fmt.Errorf("issue %s: check %s passes on the broken project", is.ID, is.Verify)
		}
		check[is.ID] = is.Verify
		open = append(open, is.ID)
		q.WriteString(queueIssue(is, sc.Start, res.Output))
	}
	h.Queue = q.String()
	first := firstCheck(sc)

	for ri, sr := range sc.Runs {
		run := replay.Run{At: sr.At}
		for li, sl := range sr.Loops {
			where := fmt.Sprintf("run %d, loop %d", ri+1, li+1)
			if err := r.apply(sl.Edits); err != nil {
				return fmt.Errorf("%s: %w", where, err)
			}
			results := map[string]replay.Result{} // per check name, run once a loop
			res := func(name string) replay.Result {
				if v, ok := results[name]; ok {
					return v
				}
				v := r.check(sc.Checks, name)
				results[name] = v
				return v
			}
			l := replay.Loop{Exec: replay.Exec{Minutes: sl.Minutes, Exit: sl.Exit, Silent: sl.Silent}}
			for _, t := range sl.Tries {
				o, err := os.ReadFile(filepath.Join(root, t.OutputFile))
				if err != nil {
					return fmt.Errorf("%s: %w", where, err)
				}
				l.Tries = append(l.Tries, replay.Exec{Minutes: t.Minutes, Exit: t.Exit, Output: string(o)})
			}
			if sl.OutputFile != "" {
				o, err := os.ReadFile(filepath.Join(root, sl.OutputFile))
				if err != nil {
					return fmt.Errorf("%s: %w", where, err)
				}
				l.Output = string(o)
			} else if sl.Quiet {
				l.Output = strings.TrimSpace(sl.Say) + "\n"
			} else {
				l.Output = agentSays(sl, sc.Checks[first], res(first).Output)
			}
			l.Workspace = r.workspace()
			for _, a := range sl.Add {
				v := res(a.Verify)
				if v.Exit == 0 {
					return fmt.Errorf("%s: added issue %s: check %s passes", where, a.ID, a.Verify)
				}
				l.Add = append(l.Add, replay.NewIssue{ID: a.ID, Summary: a.Summary, Verify: a.Verify,
					Details: tail(v.Output, 60)})
				check[a.ID] = a.Verify
				open = append(open, a.ID)
			}
			for _, id := range sl.Fail {
				if l.Fail == nil {
					l.Fail = map[string]string{}
				}
				l.Fail[id] = res(check[id]).Output
			}
			l.Resolve = sl.Resolve
			l.Person = sl.Person
			if !sl.NoVerify {
				ids := sl.Verify
				if ids == nil {
					ids = open
				}
				l.Verify = map[string]replay.Result{}
				var still []string
				for _, id := range ids {
					c, ok := check[id]
					if !ok {
						return fmt.Errorf("%s: verify: unknown issue %s", where, id)
					}
					v := res(c)
					l.Verify[id] = v
					if v.Exit != 0 {
						still = append(still, id)
					}
				}
				if sl.Verify == nil {
					open = still
				}
			}
			fmt.Fprintf(os.Stderr, "%s: %s; workspace %s;", name, where, l.Workspace)
			for c, v := range results {
				fmt.Fprintf(os.Stderr, " %s exit %d;", c, v.Exit)
			}
			fmt.Fprintln(os.Stderr)
			run.Loops = append(run.Loops, l)
		}
		h.Runs = append(h.Runs, run)
	}
	notes := strings.TrimSpace(sc.Notes) + "\n\nRegenerate: go run ./bench/record -tree DIR -scenario " +
		filepath.ToSlash(filepath.Join("bench/histories", name, "scenario.json")) +
		" (DIR: the project at the commit named in source)."
	nb, _ := json.Marshal(notes)
	h.Extra = nb

	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(&h); err != nil {
		return err
	}
	if _, err := replay.Parse(out, buf.Bytes()); err != nil {
		return fmt.Errorf("the history does not read back: %w", err)
	}
	return os.WriteFile(out, buf.Bytes(), 0o644)
}

// moduleRoot finds the directory holding go.mod above the working directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("run from inside the module (no go.mod found)")
		}
		dir = up
	}
}

func firstCheck(sc Scenario) string {
	if len(sc.Issues) > 0 {
		return sc.Issues[0].Verify
	}
	for _, r := range sc.Runs {
		for _, l := range r.Loops {
			for _, a := range l.Add {
				return a.Verify
			}
		}
	}
	return ""
}

func checksConfig(checks map[string]string) string {
	var names []string
	for n := range checks {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		cmd, _ := json.Marshal(checks[n])
		fmt.Fprintf(&b, "[verify.%s]\ncommand = %s\n", n, cmd)
	}
	return b.String()
}

func queueIssue(is Issue, created time.Time, details string) string {
	return fmt.Sprintf(`
## %s

| Field | Value |
|-------|-------|
| Priority | critical |
| Status | pending |
| Source | generated |
| Created | %s |
| Auto-Retry | true |
| Retry-Count | 0 |
| Failure-Signature | |
| Previous-Signatures | [] |
| Signature-Repeat-Count | 0 |
| Halted | false |
| Blocking | true |
| Verify | %s |

### Summary
%s

### Failure Details
`+"```"+`
%s
`+"```"+`

### Attempt History
| Attempt | Time | Type | Signature | Error |
|---|---|---|---|---|
`, is.ID, created.UTC().Format(time.RFC3339), is.Verify, is.Summary, strings.TrimRight(tail(details, 40), "\n"))
}

// agentSays is what a scripted agent that runs the tests itself prints.
func agentSays(sl ScLoop, cmd, testOut string) string {
	say := strings.TrimSpace(sl.Say)
	if say == "" {
		files := map[string]bool{}
		for _, e := range sl.Edits {
			if e.File != "" {
				files[e.File] = true
			}
		}
		var fs []string
		for f := range files {
			fs = append(fs, f)
		}
		sort.Strings(fs)
		say = "edited " + strings.Join(fs, ", ")
	}
	if cmd == "" {
		return say + "\n"
	}
	return say + "\n\n$ " + cmd + "\n" + tail(testOut, 30)
}

// apply makes the edits in the work directory.
func (r *recorder) apply(edits []Edit) error {
	for _, e := range edits {
		switch {
		case e.Save != "":
			snap := map[string][]byte{}
			for f := range r.touched {
				b, err := os.ReadFile(filepath.Join(r.work, f))
				if err != nil {
					return err
				}
				snap[f] = b
			}
			r.saved[e.Save] = snap
			continue
		case e.Load != "":
			snap, ok := r.saved[e.Load]
			if !ok {
				return fmt.Errorf("load %q: never saved", e.Load)
			}
			for f := range r.touched {
				b, ok := snap[f]
				if !ok {
					var err error
					if b, err = os.ReadFile(filepath.Join(r.tree, f)); err != nil {
						return err
					}
				}
				if err := os.WriteFile(filepath.Join(r.work, f), b, 0o644); err != nil {
					return err
				}
			}
			continue
		}
		path := filepath.Join(r.work, e.File)
		r.touched[e.File] = true
		cur, err := os.ReadFile(path)
		if err != nil && !(errors.Is(err, os.ErrNotExist) && (e.Write != nil || e.Restore)) {
			return err
		}
		var next []byte
		switch {
		case e.Restore:
			if next, err = os.ReadFile(filepath.Join(r.tree, e.File)); err != nil {
				return err
			}
		case e.Write != nil:
			next = []byte(*e.Write)
		case e.Append != "":
			next = append(cur, e.Append...)
		default:
			n := strings.Count(string(cur), e.Old)
			if e.Old == "" || n == 0 || (n > 1 && !e.All) {
				return fmt.Errorf("%s: %q occurs %d times", e.File, e.Old, n)
			}
			next = []byte(strings.ReplaceAll(string(cur), e.Old, e.New))
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, next, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// workspace names the files that differ from the project as given.
func (r *recorder) workspace() string {
	var fs []string
	for f := range r.touched {
		fs = append(fs, f)
	}
	sort.Strings(fs)
	h := sha256.New()
	n := 0
	for _, f := range fs {
		a, errA := os.ReadFile(filepath.Join(r.tree, f))
		b, errB := os.ReadFile(filepath.Join(r.work, f))
		if (errA == nil) == (errB == nil) && bytes.Equal(a, b) {
			continue
		}
		n++
		fmt.Fprintf(h, "%s\x00%d\x00", f, len(b))
		h.Write(b)
	}
	if n == 0 {
		return "as-given"
	}
	return "ws-" + hex.EncodeToString(h.Sum(nil))[:12]
}

// check runs a check's command in the work directory.
func (r *recorder) check(checks map[string]string, name string) replay.Result {
	cmdline, ok := checks[name]
	if !ok {
		return replay.Result{Exit: 2, Output: "no check " + name}
	}
	// In its own process group, killed whole at the timeout: a test
	// suite that deadlocks is part of what is recorded.
	var out bytes.Buffer
	res, err := procgroup.Run(context.Background(), procgroup.Spec{Command: cmdline, Dir: r.work, Timeout: r.timeout, Grace: time.Second,
		Env: append(os.Environ(), "NO_COLOR=1", "TERM=dumb", "CARGO_TERM_COLOR=never"), Output: &out})
	exit := res.ExitCode
	switch {
	case err != nil:
		exit = 127
		out.WriteString(err.Error())
	case exit < 0:
		exit = 137
	}
	return replay.Result{Exit: exit, Output: trim(out.String())}
}

// trim keeps an output of at most 150 lines as it is; a longer one keeps
// its first 30 lines and its last 119, with a line saying how many were cut.
func trim(s string) string {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) <= 150 {
		return s
	}
	cut := len(lines) - 149
	return strings.Join(lines[:30], "") + fmt.Sprintf("[... %d lines cut ...]\n", cut) +
		strings.Join(lines[len(lines)-119:], "")
}

// tail keeps the last n lines of s.
func tail(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) <= n {
		return s
	}
	return strings.Join(lines[len(lines)-n:], "")
}
