// Package fleet reads many state directories at once, for a person who runs
// the orchestrator over several repositories: which of them need a person,
// which are stopped, and which have stopped running.
package fleet

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/columns"
	"github.com/autoretry/orchestrator/internal/foundations/config"
	"github.com/autoretry/orchestrator/issuequeue"
	"github.com/autoretry/orchestrator/orchestrator"
)

// StateDirName is the state directory a project holds.
const StateDirName = ".orchestrator"

// StateDir returns the state directory that arg names: arg itself when it
// is one (it holds an issue queue or session state, or is named
// .orchestrator), else arg/.orchestrator.
func StateDir(arg string) string {
	clean := filepath.Clean(arg)
	if filepath.Base(clean) == StateDirName {
		return clean
	}
	if fi, err := os.Stat(filepath.Join(clean, StateDirName)); err == nil && fi.IsDir() {
		return filepath.Join(clean, StateDirName)
	}
	for _, f := range []string{issuequeue.QueueFile, issuequeue.StateFile} {
		if _, err := os.Stat(filepath.Join(clean, f)); err == nil {
			return clean
		}
	}
	return filepath.Join(clean, StateDirName)
}

// ReadList reads a list of directories, one a line: blank lines and lines
// starting with # are skipped, a glob (*, ?, [) is expanded to the
// directories it matches, sorted, and a relative path is taken from the
// directory that holds the list. A glob that matches no directory is an
// error, as is a list that names nothing.
func ReadList(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the list of directories: %w", err)
	}
	base := filepath.Dir(path)
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !filepath.IsAbs(line) {
			line = filepath.Join(base, line)
		}
		if !strings.ContainsAny(line, "*?[") {
			out = append(out, line)
			continue
		}
		m, err := filepath.Glob(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, n, err)
		}
		found := false
		for _, d := range m {
			if fi, err := os.Stat(d); err == nil && fi.IsDir() {
				out, found = append(out, d), true
			}
		}
		if !found {
			return nil, fmt.Errorf("%s:%d: %s matches no directory", path, n, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s names no directory", path)
	}
	return out, nil
}

// Kinds of problem, most urgent first: entries sort by their first.
const (
	KindUnreadable  = "unreadable"
	KindNeedsPerson = "needs_person" // issues halted or escalated
	KindQuarantined = "quarantined"
	KindPaused      = "paused"
	KindBreaker     = "breaker_open"
	KindBudget      = "budget_spent"
	KindRateLimited = "rate_limited"
	KindOverdue     = "overdue"
	KindNeverRun    = "never_run"
)

var kindRank = map[string]int{KindUnreadable: 0, KindNeedsPerson: 1, KindQuarantined: 2, KindPaused: 3, KindBreaker: 4,
	KindBudget: 5, KindRateLimited: 6, KindOverdue: 7, KindNeverRun: 8}

// Problem is one thing about a repository a person may want to know.
type Problem struct {
	Kind        string            `json:"kind"`
	Code        orchestrator.Code `json:"code,omitempty"` // the reason code, when a rule says it
	Text        string            `json:"text"`
	NeedsPerson bool              `json:"needs_person"`
}

// Entry is one repository's state.
type Entry struct {
	Name        string                 `json:"name"` // as named, for people
	Dir         string                 `json:"dir"`  // the state directory
	NeedsPerson bool                   `json:"needs_person"`
	Problems    []Problem              `json:"problems"`
	Issues      []string               `json:"issues_needing_person"`
	Open        int                    `json:"open_issues"`
	Run         RunInfo                `json:"run"`
	Schedule    orchestrator.Schedule  `json:"schedule"`
	Budgets     []orchestrator.Budget  `json:"budgets"`
	Shared      []orchestrator.Verdict `json:"shared_budget,omitempty"`
	SharedDir   string                 `json:"shared_budget_dir,omitempty"`
	Summaries   map[string]string      `json:"-"`
}

// RunInfo is the current or last run.
type RunInfo struct {
	ID       string    `json:"id,omitempty"`
	Outcome  string    `json:"outcome,omitempty"`
	Loops    int       `json:"loops"`
	Started  time.Time `json:"started_at,omitzero"`
	Finished time.Time `json:"finished_at,omitzero"`
}

// Healthy reports whether nothing is wrong with the repository.
func (e Entry) Healthy() bool { return len(e.Problems) == 0 }

// Read reads the state directory dir (named name) at now; self is the
// command as a person invokes it, for the hints. It only reads:
// no lock is taken and nothing is written. What cannot be read is an
// unreadable problem, never an error: one broken repository does not hide
// the others.
func Read(name, dir string, now time.Time, self string) Entry {
	e := Entry{Name: name, Dir: dir, Problems: []Problem{}, Issues: []string{}}
	bad := func(err error) Entry {
		e.Problems = append(e.Problems, Problem{Kind: KindUnreadable, Text: err.Error(), NeedsPerson: true})
		e.NeedsPerson = true
		return e
	}
	q, st, err := orchestrator.PathsIn(dir).Load()
	if err != nil {
		return bad(err)
	}
	cfg, err := config.LoadOptional(filepath.Join(dir, "config.toml"), nil)
	if err != nil {
		return bad(err)
	}
	u, err := orchestrator.ReadUsage(dir, now)
	if err != nil {
		return bad(fmt.Errorf("reading the event log: %w", err))
	}
	pause, err := orchestrator.ReadPause(dir)
	if err != nil {
		return bad(err)
	}
	if e.Schedule, err = orchestrator.ReadSchedule(dir, now); err != nil {
		return bad(fmt.Errorf("reading the event log: %w", err))
	}
	e.Summaries = map[string]string{}
	for _, is := range q.Issues {
		if is.Status != issuequeue.StatusResolved && is.Status != issuequeue.StatusSkipped {
			e.Open++
		}
		e.Summaries[is.ID] = is.Summary()
	}
	e.Run = RunInfo{ID: st.RunID, Outcome: st.Outcome, Loops: st.Loops, Started: st.StartedAt, Finished: st.FinishedAt}
	e.Budgets = orchestrator.Budgets(cfg, u)
	in := orchestrator.Inputs{Queue: q, State: st, Usage: u, Config: cfg, Now: now, Pause: pause, Run: true,
		Sentinel: orchestrator.PathsIn(dir).SentinelPresent(), Dir: dir, Invocation: self + " --dir " + dir}
	if d := cfg.SharedBudget.Dir; d != "" {
		if !filepath.IsAbs(d) {
			if abs, err := filepath.Abs(dir); err == nil {
				d = filepath.Join(filepath.Dir(abs), d)
			}
		}
		su, err := orchestrator.ReadSharedUsage(d, now)
		if err != nil {
			return bad(err)
		}
		in.Shared, e.SharedDir = &su, d
		e.Shared = orchestrator.SharedVerdicts(in, orchestrator.KindRegular)
	}

	ids := orchestrator.NeedingPerson(q)
	nq := len(q.Quarantined)
	if nq > 0 {
		e.add(Problem{Kind: KindQuarantined, NeedsPerson: true,
			Text: fmt.Sprintf("%d quarantined issue(s): %s ('%s --dir %s lint' says why)", nq, strings.Join(ids[:nq], ", "), self, dir)})
	}
	if rest := ids[nq:]; len(rest) > 0 {
		e.Issues = rest
		var parts []string
		for _, id := range rest {
			how := "escalated"
			if is := q.Issue(id); is != nil && is.Halted {
				how = "halted"
			}
			parts = append(parts, id+" "+how)
		}
		e.add(Problem{Kind: KindNeedsPerson, NeedsPerson: true, Text: fmt.Sprintf("%d issue(s) need a person: %s", len(rest), strings.Join(parts, ", "))})
	}
	all, _ := orchestrator.Gate(in, orchestrator.KindRegular)
	for _, v := range all {
		if !v.Stop {
			continue
		}
		p := Problem{Code: v.Rule, Text: v.Reason, NeedsPerson: !v.Wait && orchestrator.NeedsPerson(v.Rule)}
		switch v.Rule {
		case orchestrator.CodePaused:
			p.Kind = KindPaused
		case orchestrator.CodeBreakerOpen:
			p.Kind = KindBreaker
		case orchestrator.CodeRateLimited:
			p.Kind = KindRateLimited
		default:
			p.Kind = KindBudget
		}
		e.add(p)
	}
	switch {
	case e.Schedule.Last.IsZero():
		e.add(Problem{Kind: KindNeverRun, Text: "never run"})
	case e.Schedule.Overdue:
		// Runs that stopped coming need a person: nothing else will say so.
		e.add(Problem{Kind: KindOverdue, NeedsPerson: true, Text: e.Schedule.String()})
	}
	sort.SliceStable(e.Problems, func(i, j int) bool { return kindRank[e.Problems[i].Kind] < kindRank[e.Problems[j].Kind] })
	return e
}

func (e *Entry) add(p Problem) {
	e.Problems = append(e.Problems, p)
	e.NeedsPerson = e.NeedsPerson || p.NeedsPerson
}

// ReadAll reads every directory (names as given, dirs the state
// directories), a few at a time, and returns the entries problems first:
// those that need a person, then those with other problems, then the
// healthy ones, each group by its most urgent problem, then by name.
func ReadAll(names, dirs []string, now time.Time, self string) []Entry {
	out := make([]Entry, len(dirs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := range dirs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i] = Read(names[i], dirs[i], now, self)
		}()
	}
	wg.Wait()
	Sort(out)
	return out
}

// Sort orders entries problems first (see ReadAll).
func Sort(es []Entry) {
	group := func(e Entry) int {
		switch {
		case e.NeedsPerson:
			return 0
		case !e.Healthy():
			return 1
		}
		return 2
	}
	sort.SliceStable(es, func(i, j int) bool {
		a, b := es[i], es[j]
		if ga, gb := group(a), group(b); ga != gb {
			return ga < gb
		}
		if !a.Healthy() && !b.Healthy() {
			if ra, rb := kindRank[a.Problems[0].Kind], kindRank[b.Problems[0].Kind]; ra != rb {
				return ra < rb
			}
		}
		return a.Name < b.Name
	})
}

// Lines writes the entry for a terminal of width columns: a healthy one on
// one line, one with problems on a line for the most urgent and an
// indented line for each other. Every line fits the width; width 0 means
// no limit.
func (e Entry) Lines(nameWidth, width int) []string {
	mark := "ok"
	switch {
	case e.NeedsPerson:
		mark = "!!"
	case !e.Healthy():
		mark = "--"
	}
	name := shortName(e.Name, nameWidth)
	head := mark + " " + name + strings.Repeat(" ", max(nameWidth-columns.Width(name), 0)) + "  "
	if e.Healthy() {
		return []string{columns.Cut(head+e.healthText(), width)}
	}
	out := []string{columns.Cut(head+e.Problems[0].Text, width)}
	pad := strings.Repeat(" ", columns.Width(head))
	for _, p := range e.Problems[1:] {
		out = append(out, columns.Cut(pad+p.Text, width))
	}
	return out
}

// PageMark is the mark and the style class a web page gives the entry:
// problem is the mark of an entry with problems that needs no person.
func (e Entry) PageMark(problem string) (mark, class string) {
	switch {
	case e.NeedsPerson:
		return "needs a person", "person"
	case !e.Healthy():
		return problem, "problem"
	}
	return "ok", "ok"
}

// PageLines is what a web page shows under the entry: the text of each
// problem, or for a healthy entry its one status line.
func (e Entry) PageLines() []string {
	if e.Healthy() {
		return e.Lines(0, 0)
	}
	out := make([]string, 0, len(e.Problems))
	for _, p := range e.Problems {
		out = append(out, p.Text)
	}
	return out
}

func (e Entry) healthText() string {
	t := fmt.Sprintf("%d open issue(s)", e.Open)
	if !e.Schedule.Last.IsZero() {
		t += ", " + e.Schedule.String()
	}
	if e.Run.Outcome != "" && e.Run.Outcome != issuequeue.Null {
		t += ", last outcome " + e.Run.Outcome
	}
	return t
}

// shortName fits a repository's path into width columns (0: no limit)
// keeping its end, where repositories in one directory differ and their
// own names are: the last elements whole after "…" (…/fleet/repo-07), or
// when even the last is too long, its end (…po-07).
func shortName(name string, width int) string {
	if width <= 0 || columns.Width(name) <= width {
		return name
	}
	for i := 1; i < len(name); i++ {
		if os.IsPathSeparator(name[i]) && columns.Width(name[i:])+1 <= width {
			return "…" + name[i:]
		}
	}
	return columns.CutStart(filepath.Base(name), width)
}

// NameWidth is the width the names get in Lines: the longest, up to a
// third of width (0: no limit).
func NameWidth(es []Entry, width int) int {
	n := 0
	for _, e := range es {
		n = max(n, columns.Width(e.Name))
	}
	if width <= 0 {
		return n
	}
	return min(n, max(width/3, 8))
}
