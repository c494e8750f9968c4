package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"html/template"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/statefile"
	"github.com/autoretry/orchestrator/internal/views/fleet"
	analytics "github.com/autoretry/orchestrator/internal/views/report"
	"github.com/autoretry/orchestrator/orchestrator"
)

func init() {
	register(&command{
		name:    "fleet",
		summary: "many repositories at once: status, explain, report, run",
		usage: `Usage: orchestrator fleet status [--json] [--from FILE] [DIR…]
       orchestrator fleet explain [--from FILE] [DIR…]
       orchestrator fleet report --out FILE [--from FILE] [DIR…]
       orchestrator fleet run [--parallel N] [--max-loops N] [--quiet] [--from FILE] [DIR…]

For one person who runs the orchestrator over several repositories. Each
DIR is a project (the directory that holds .orchestrator) or a state
directory itself. --from FILE lists more, one a line: blank lines and lines
starting with # are skipped, globs (~/src/*) are expanded, and relative
paths are taken from the directory that holds FILE.

status     one line per repository (those with problems get a line per
           problem), problems first: issues that need a person, quarantined
           issues, paused, circuit breaker open, a daily budget (its own or
           a shared one) spent, rate-limited, runs overdue, never run. It
           only reads. Exit 3 when any repository needs a person (an issue
           halted or escalated or quarantined, the breaker open, a budget
           spent, runs overdue), else 0. Lines fit the terminal as
           'orchestrator status' says; to a pipe or a file, lines are
           whole unless $COLUMNS is set.
explain    for each repository, every problem with its reason, and each
           shared budget: its figures and which repositories spent it.
report     one self-contained HTML page: the fleet's status, then each
           repository's report (as 'orchestrator report' writes it).
run        'orchestrator run' in each directory in turn, or N at a time
           with --parallel N; each run's heartbeat and notifications are
           its own. The exit status is the worst of theirs: 2 (a usage,
           config or state file error), then 3 (a person is needed), then
           4 (busy), else 0.

Flags:
    --json          status: one JSON array, an entry per directory
    --from FILE     read more directories from FILE
    --out FILE      report: the page to write
    --parallel N    run: at most N runs at once (default 1)
    --max-loops N   run: passed to each run
    --quiet         run: passed to each run (for cron)

Examples:
    orchestrator fleet status ~/src/api ~/src/web
    orchestrator fleet status --from ~/.config/orchestrator/fleet
    */10 * * * * orchestrator fleet run --quiet --from /srv/repos/list
`,
		run:         runFleet,
		longRunning: true,
	})
}

func runFleet(ctx context.Context, e *env, args []string) error {
	c := commands["fleet"]
	if len(args) == 0 || strings.HasPrefix(args[0], "-") && args[0] != "-h" && args[0] != "--help" {
		return usageErr(c, "fleet needs a subcommand: status, explain, report or run")
	}
	if args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(e.stdout, c.usage)
		return nil
	}
	sub, args := args[0], args[1:]
	fs := flag.NewFlagSet("fleet "+sub, flag.ContinueOnError)
	from := fs.String("from", "", "")
	asJSON := fs.Bool("json", false, "")
	out := fs.String("out", "", "")
	parallel := fs.Int("parallel", 1, "")
	maxLoops := fs.Int("max-loops", 0, "")
	quiet := fs.Bool("quiet", false, "")
	names, err := e.parseFlags(c, fs, args)
	if err != nil {
		return err
	}
	if len(names) == 0 && *from == "" {
		return usageErr(c, "fleet %s: name the repositories (DIR…) or a list of them (--from FILE)", sub)
	}
	var dirs []string
	if *from != "" {
		l, err := fleet.ReadList(*from)
		if err != nil {
			return withCode(exitUsage, err)
		}
		names = append(names, l...)
	}
	names, dirs = uniqueDirs(names)
	now, err := e.now()
	if err != nil {
		return err
	}
	switch sub {
	case "status":
		return fleetStatus(e, names, dirs, now, *asJSON)
	case "explain":
		return fleetExplain(e, names, dirs, now)
	case "report":
		if *out == "" {
			return usageErr(c, "fleet report: --out FILE names the page to write")
		}
		return fleetReport(e, names, dirs, now, *out)
	case "run":
		if *parallel < 1 {
			return usageErr(c, "fleet run: --parallel must be at least 1")
		}
		var extra []string
		if *maxLoops != 0 {
			extra = append(extra, "--max-loops", strconv.Itoa(*maxLoops))
		}
		if *quiet {
			extra = append(extra, "--quiet")
		}
		return fleetRun(ctx, e, names, dirs, *parallel, extra)
	}
	return usageErr(c, "fleet: unknown subcommand %q (status, explain, report, run)", sub)
}

// uniqueDirs returns the names and the state directories they name, each
// directory once.
func uniqueDirs(names []string) ([]string, []string) {
	seen := map[string]bool{}
	var ns, ds []string
	for _, n := range names {
		d := fleet.StateDir(n)
		key, err := filepath.Abs(d)
		if err != nil {
			key = d
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		// A repository is named by its project, not by its state directory.
		name := filepath.Clean(n)
		if filepath.Base(name) == fleet.StateDirName {
			name = filepath.Dir(name)
		}
		ns, ds = append(ns, name), append(ds, d)
	}
	return ns, ds
}

func fleetStatus(e *env, names, dirs []string, now time.Time, asJSON bool) error {
	es := fleet.ReadAll(names, dirs, now, self)
	if asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(es); err != nil {
			return err
		}
	} else {
		width, _ := termSize(e)
		nw := fleet.NameWidth(es, width)
		for _, en := range es {
			for _, l := range en.Lines(nw, width) {
				fmt.Fprintln(e.stdout, l)
			}
		}
	}
	for _, en := range es {
		if en.NeedsPerson {
			return silentExit(exitSafeguard)
		}
	}
	return nil
}

func fleetExplain(e *env, names, dirs []string, now time.Time) error {
	es := fleet.ReadAll(names, dirs, now, self)
	w := e.stdout
	shared := map[string]fleet.Entry{}
	for i, en := range es {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s (%s)\n", en.Name, en.Dir)
		if en.Healthy() {
			fmt.Fprintf(w, "  nothing wrong: %d open issue(s); %s\n", en.Open, en.Schedule)
		}
		for _, p := range en.Problems {
			who := ""
			if p.NeedsPerson {
				who = " [needs a person]"
			}
			code := ""
			if p.Code != "" {
				code = " (" + string(p.Code) + ")"
			}
			fmt.Fprintf(w, "  %s%s%s: %s\n", p.Kind, code, who, p.Text)
		}
		for _, id := range en.Issues {
			fmt.Fprintf(w, "    %s  %s\n", id, en.Summaries[id])
		}
		printBudgets(w, en.Budgets)
		if en.SharedDir != "" {
			fmt.Fprintf(w, "Shared budget: %s\n", en.SharedDir)
			if _, ok := shared[en.SharedDir]; !ok {
				shared[en.SharedDir] = en
			}
		}
	}
	for _, d := range slices.Sorted(maps.Keys(shared)) {
		en := shared[d]
		fmt.Fprintf(w, "\nShared budget %s (last 24 h, limits of %s):\n", d, en.Name)
		for _, v := range en.Shared {
			state := "ok"
			if v.Stop {
				state = "SPENT"
			}
			fmt.Fprintf(w, "  %-26s %-5s %s; limit %s\n", v.Rule, state, v.Value[:strings.Index(v.Value+",", ",")], v.Limit)
		}
		u, err := orchestrator.ReadSharedUsage(d, now)
		if err != nil {
			return err
		}
		fmt.Fprintln(w, "  spent by:")
		if len(u.Entries) == 0 {
			fmt.Fprintln(w, "    nobody yet")
		}
		for _, s := range u.Spenders() {
			fmt.Fprintf(w, "    %-40s %d loop(s), %d auto-retry, %s, cost %.2f, %d tokens\n", filepath.Dir(s.Dir), s.Loops, s.AutoRetry,
				s.AgentTime.Round(time.Second), s.Cost, s.Tokens)
		}
	}
	return nil
}

func fleetRun(ctx context.Context, e *env, names, dirs []string, parallel int, extra []string) error {
	codes := make([]int, len(dirs))
	outs := make([]bytes.Buffer, len(dirs))
	var mu sync.Mutex // one repository's output at a time
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i, d := range dirs {
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			var stdout, stderr io.Writer = e.stdout, e.stderr
			if parallel > 1 {
				stdout, stderr = &outs[i], &outs[i]
			} else {
				mu.Lock()
				defer mu.Unlock()
			}
			sub := newEnv(e.stdin, stdout, stderr, e.getenv)
			sub.environ = e.environ
			if parallel == 1 && !contains(extra, "--quiet") {
				fmt.Fprintf(stdout, "== %s\n", names[i])
			}
			codes[i] = sub.run(ctx, append([]string{"--dir", d, "run"}, extra...))
			if parallel > 1 {
				mu.Lock()
				defer mu.Unlock()
				if outs[i].Len() > 0 {
					fmt.Fprintf(e.stdout, "== %s\n", names[i])
					e.stdout.Write(outs[i].Bytes())
				}
			}
		}()
	}
	wg.Wait()
	worst := exitOK
	for _, c := range codes {
		if exitRank(c) > exitRank(worst) {
			worst = c
		}
	}
	return silentExit(worst)
}

// run runs one command line in this env, as Main does, and returns its
// exit code; its messages go to the env's stderr.
func (e *env) run(ctx context.Context, args []string) int {
	return report(e, dispatch(ctx, e, args))
}

// exitRank orders exit statuses by how much they need attention: a
// repository that cannot run at all, then one that needs a person, then
// one that was busy.
func exitRank(code int) int {
	switch code {
	case exitOK, exitNothing:
		return 0
	case exitBusy:
		return 1
	case exitSafeguard:
		return 2
	}
	return 3
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// fleetPage is the fleet report: the fleet's status, then each
// repository's own report in a frame of its own (srcdoc: nothing is
// fetched from anywhere). It is parsed the first time it is written.
var fleetPage = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("fleet").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>orchestrator fleet report</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font-family:system-ui,sans-serif;margin:1.5rem;color:#222}
table{border-collapse:collapse}td,th{padding:.25rem .6rem;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}
.person{color:#b00020;font-weight:600}.problem{color:#8a5a00}.ok{color:#1b6e20}
iframe{width:100%;height:80vh;border:1px solid #ccc}
summary{cursor:pointer;font-size:1.1rem;margin:.6rem 0}
</style></head><body>
<h1>orchestrator fleet report</h1>
<p>{{len .Entries}} repositories, {{.Now}}</p>
<table><tr><th></th><th>repository</th><th>state</th></tr>
{{range .Entries}}<tr><td class="{{.Class}}">{{.Mark}}</td><td><a href="#{{.Anchor}}">{{.Name}}</a></td><td>{{range .Lines}}{{.}}<br>{{end}}</td></tr>
{{end}}</table>
{{range .Entries}}<details id="{{.Anchor}}"{{if .Open}} open{{end}}><summary>{{.Name}}</summary>
<iframe title="report of {{.Name}}" srcdoc="{{.Page}}"></iframe></details>
{{end}}</body></html>
`))
})

type fleetPageEntry struct {
	Name, Anchor, Mark, Class string
	Lines                     []string
	Open                      bool
	Page                      string
}

func fleetReport(e *env, names, dirs []string, now time.Time, out string) error {
	es := fleet.ReadAll(names, dirs, now, self)
	data := struct {
		Now     string
		Entries []fleetPageEntry
	}{Now: now.UTC().Format(time.RFC3339)}
	for i, en := range es {
		pe := fleetPageEntry{Name: en.Name, Anchor: "repo-" + strconv.Itoa(i+1), Open: en.NeedsPerson}
		pe.Mark, pe.Class = en.PageMark("problem")
		pe.Lines = en.PageLines()
		in, err := analytics.Load(en.Dir, now)
		var b bytes.Buffer
		if err == nil {
			err = analytics.Write(&b, in)
		}
		if err != nil {
			b.Reset()
			template.HTMLEscape(&b, []byte("no report: "+err.Error()))
		}
		pe.Page = b.String()
		data.Entries = append(data.Entries, pe)
	}
	return statefile.WriteAtomic(out, func(w io.Writer) error { return fleetPage().Execute(w, data) })
}

// printOverdue prints a line when the next run of the state directory is
// overdue (more than twice the usual interval since the last run), and
// nothing when runs come on time.
func printOverdue(w io.Writer, dir string, now time.Time) {
	if s, err := orchestrator.ReadSchedule(dir, now); err == nil && s.Overdue {
		fmt.Fprintf(w, "Schedule: %s; is the cron job still running?\n", s)
	}
}
