// Package report renders analytics.html: one self-contained page, with inline
// CSS and SVG and nothing loaded from anywhere, that shows what the loops of
// a state directory did and how each issue's retries went.
package report

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/autoretry/orchestrator/internal/foundations/statefile"
	"github.com/autoretry/orchestrator/issuequeue"
	"github.com/autoretry/orchestrator/orchestrator"
)

// Input is what the report is made from. Every field may be empty: a fresh
// state directory gives a page saying there is no history yet.
type Input struct {
	Dir string // state directory, named on the page
	// Runs is the history aggregated as Load reads it; when nil, History
	// is aggregated instead.
	Runs     *Runs
	History  []orchestrator.LoopRecord // history.csv and its rotated months
	Events   []orchestrator.Event      // logs/retry.jsonl; Load streams it instead
	Since    time.Time                 // the start of the window the report covers; zero: everything
	Queue    *issuequeue.Queue         // issue_queue.md; nil if there is none
	Archive  *issuequeue.Queue         // issue_archive.md, parsed by ParseArchive; nil if there is none
	State    *issuequeue.State         // session_state.md; nil if there is none
	Problems []error                   // what could not be read; listed on the page
	Now      time.Time                 // when the report is made

	// MaxRetries gives an issue's retry limit. If nil, the issue's own
	// Max-Retries applies, else 10.
	MaxRetries func(*issuequeue.Issue) int

	// Budgets are the daily budgets as spent in the last 24 hours; the
	// ones that are on get a card each.
	Budgets []orchestrator.Budget

	// events, set by Load, reads the event log one event at a time, once,
	// putting the lines it cannot read in logProblems.
	events      func(fn func(orchestrator.Event))
	logProblems *[]error
}

// AllProblems returns Problems and, once the page is written, the lines of
// the event log that could not be read (Load reads the log as it writes the
// page).
func (in Input) AllProblems() []error {
	if in.logProblems == nil {
		return in.Problems
	}
	return append(slices.Clip(in.Problems), *in.logProblems...)
}

// eachEvent calls fn with every event, from the log as Load found it or
// from Events.
func (in *Input) eachEvent(fn func(orchestrator.Event)) {
	if in.events != nil {
		in.events(fn)
		return
	}
	for _, ev := range in.Events {
		fn(ev)
	}
}

// Load reads the files of state directory dir. Rows and lines that cannot
// be read, and problems in the markdown files, become Input.Problems; a
// missing directory is an *issuequeue.NoStateDirError.
func Load(dir string, now time.Time) (Input, error) { return LoadSince(dir, now, time.Time{}) }

// LoadSince reads what Load reads for the window from since on (zero:
// everything): the loops that finished in it, read from history.csv and the
// rotated months that reach into it, and the events logged in it. The
// history is aggregated as it is read, so memory follows the latest runs
// and the event log, not the age of the history.
func LoadSince(dir string, now, since time.Time) (Input, error) {
	p := issuequeue.Paths{Dir: dir}
	q, st, err := p.Load()
	if err != nil {
		return Input{}, err
	}
	in := Input{Dir: dir, Queue: q, State: st, Now: now, Since: since, Runs: &Runs{}}
	in.Problems = append(in.Problems, orchestrator.EachHistory(dir, since, in.Runs.Add)...)
	logProblems := new([]error)
	in.logProblems = logProblems
	in.events = func(fn func(orchestrator.Event)) {
		*logProblems = orchestrator.EachEvent(dir, since, fn)
	}
	if in.Archive, err = p.LoadArchive(); err != nil {
		return Input{}, err
	}
	checks := []error{q.Err(), st.Err()}
	if in.Archive != nil {
		checks = append(checks, in.Archive.Err())
	}
	for _, err := range checks {
		if err != nil {
			in.Problems = append(in.Problems, fmt.Errorf("%w (the lint command lists every problem; the report shows what could be read)", err))
		}
	}
	for _, qq := range []*issuequeue.Queue{q, in.Archive} {
		if qq != nil && len(qq.Quarantined) > 0 {
			in.Problems = append(in.Problems, fmt.Errorf("%w (these issues are left out and left alone until a person fixes them)",
				&issuequeue.ValidationError{File: qq.Name(), Findings: qq.QuarantineFindings()}))
		}
	}
	return in, nil
}

//go:embed page.html.tmpl
var pageText string

// page is parsed the first time a report is written, not when the
// program starts, which every command would pay.
var page = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("page").Parse(pageText))
})

// Write renders the report as one HTML5 document in valid UTF-8.
func Write(w io.Writer, in Input) error {
	var b bytes.Buffer
	if err := page().Execute(&b, build(in)); err != nil {
		return fmt.Errorf("rendering report: %w", err)
	}
	_, err := w.Write(clean(b.Bytes()))
	return err
}

// clean replaces what the files may hold but an HTML document may not:
// invalid UTF-8 and control characters other than white space. The
// template itself has neither, so only text from the files is touched.
func clean(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		switch {
		case r == utf8.RuneError && n == 1,
			r < 0x20 && r != '\t' && r != '\n' && r != '\r' && r != '\f',
			r >= 0x7f && r <= 0x9f:
			out = utf8.AppendRune(out, utf8.RuneError)
		default:
			out = append(out, b[:n]...)
		}
		b = b[n:]
	}
	return out
}

// WriteFile renders the report into path, replacing it atomically: a
// reader sees the old page or the new one, never half of one.
func WriteFile(path string, in Input) error {
	if err := statefile.WriteAtomic(path, func(w io.Writer) error { return Write(w, in) }); err != nil {
		return fmt.Errorf("writing report: %w", err)
	}
	return nil
}

// view is the page's data.
type view struct {
	Dir       string
	Generated string
	Period    string
	Empty     bool
	HasLoops  bool
	Cards     []card
	Summary   []row
	Types     []countRow
	Sigs      []sigRow
	LoopChart template.HTML
	OutChart  template.HTML
	RunNote   string
	OutNote   string
	IssChart  template.HTML
	IssNote   string
	Details   []detailRow
	Streaks   []streakRow
	TTR       []card
	Resolved  []ttrRow
	Escal     []escRow
	Problems  []string
	// Notes saying a table shows only its first rows.
	DetailsNote, StreakNote, ResolvedNote, EscalNote string
}

// Table lengths: past these a table shows its most relevant rows and says
// how many it left out, so that a long-lived state directory still gives a
// page a phone can open.
const (
	maxDetails  = 500
	maxTableRow = 200
)

// capRows cuts rows to n and returns the note saying so.
func capRows[T any](rows []T, n int, what string) ([]T, string) {
	if len(rows) <= n {
		return rows, ""
	}
	return rows[:n], fmt.Sprintf("Showing the first %d of %d %s.", n, len(rows), what)
}

type card struct{ Value, Label, Class string }

type row struct{ Metric, Value string }

type countRow struct {
	Name  string
	Count int
}

type sigRow struct {
	Signature string
	Count     int
	Issues    int
	Error     string
}

type detailRow struct {
	ID, Summary, Priority string
	Retries, Failures     string
	Streak                int
	Result, Class         string
	TTR                   string
	Archived              bool
}

type streakRow struct {
	ID, Signature  string
	Len            int
	From, To       string
	Halted         bool
	Error, Summary string
}

type ttrRow struct {
	ID, Summary string
	Created     string
	Resolved    string
	Took        string
	Retries     int
}

type escRow struct {
	Time, ID, Summary, Reason string
	Response, Now, Class      string
}

// build turns what the report is made from into the page's data.
func build(in Input) view {
	a := analyze(in)
	v := view{Dir: in.Dir, Generated: stamp(in.Now), HasLoops: a.HasLoops}
	if v.Dir == "" {
		v.Dir = "."
	}
	for _, p := range in.AllProblems() {
		v.Problems = append(v.Problems, p.Error())
	}
	v.Period = period(a.Totals, in.Since)
	v.Empty = a.Totals.Loops == 0 && a.EventCount == 0 && len(a.Issues) == 0
	if v.Empty {
		return v
	}
	s := a.summary()
	v.Cards = append(headline(a, s), budgetCards(in.Budgets)...)
	v.Summary = summaryRows(a, s)
	v.Types, v.Sigs = failureRows(a.Issues)
	v.charts(a)
	v.Details = detailRows(a.Issues)
	v.Streaks = streakRows(a.Issues)
	v.Resolved, v.TTR = resolutionRows(a.Issues)
	v.Escal = escalationRows(a)
	v.Details, v.DetailsNote = capRows(v.Details, maxDetails, "issues (escalated and open ones first)")
	v.Streaks, v.StreakNote = capRows(v.Streaks, maxTableRow, "streaks (longest first)")
	v.Resolved, v.ResolvedNote = capRows(v.Resolved, maxTableRow, "resolved issues (newest first)")
	v.Escal, v.EscalNote = capRows(v.Escal, maxTableRow, "escalations (newest first)")
	return v
}

// headline is the cards of the headline numbers.
func headline(a *analysis, s summary) []card {
	breaker := a.Breaker
	if breaker == "" {
		breaker = issuequeue.BreakerClosed
	}
	breakerClass := classOK
	if breaker != issuequeue.BreakerClosed {
		breakerClass = classBad
	}
	return []card{
		{fmt.Sprint(a.Totals.Count), "runs", ""},
		{fmt.Sprint(s.Loops), fmt.Sprintf("loops (%d auto-retry)", s.AutoLoops), ""},
		{pct(s.FirstAttempt, s.Total), fmt.Sprintf("first-attempt success (%d of %d issues)", s.FirstAttempt, s.Total), classOK},
		{fmt.Sprintf("%d/%d", s.RetrySuccess, s.Retried), "retried issues that were fixed", ""},
		{fmt.Sprint(s.Escalated), "escalated to a person", map[bool]string{true: classBad, false: ""}[s.Escalated > 0]},
		{fmt.Sprint(s.Open), fmt.Sprintf("open issues (%d halted)", s.Halted), map[bool]string{true: classOpen, false: ""}[s.Open > 0]},
		{breaker, "circuit breaker", breakerClass},
	}
}

// budgetCards is a card for each daily budget that has a limit, saying
// until when a spent one stays spent.
func budgetCards(bs []orchestrator.Budget) []card {
	var cards []card
	for _, b := range bs {
		if b.Limit <= 0 {
			continue
		}
		used, limit := fmt.Sprint(b.Used), fmt.Sprint(b.Limit)
		switch b.Code {
		case orchestrator.CodeDailyAgentTime:
			used, limit = (time.Duration(b.Used) * time.Second).String(), (time.Duration(b.Limit) * time.Second).String()
		case orchestrator.CodeDailyCost:
			used, limit = fmt.Sprintf("%.2f", b.Used), fmt.Sprintf("%.2f", b.Limit)
		}
		class, label := "", strings.ReplaceAll(strings.TrimSuffix(b.Key, "_per_day"), "_", " ")+" in the last 24 h"
		if b.Spent {
			class, label = classBad, label+": spent until "+b.NextAt.UTC().Format("15:04 UTC")
		}
		cards = append(cards, card{used + "/" + limit, label, class})
	}
	return cards
}

// summaryRows is the retry summary table.
func summaryRows(a *analysis, s summary) []row {
	return []row{
		{"Total tasks (issues)", fmt.Sprint(s.Total)},
		{"First-attempt success", fmt.Sprintf("%d (%s)", s.FirstAttempt, pct(s.FirstAttempt, s.Total))},
		{"Retried tasks", fmt.Sprintf("%d (%s)", s.Retried, pct(s.Retried, s.Total))},
		{"Retry success", fmt.Sprint(s.RetrySuccess)},
		{"Escalations", fmt.Sprint(s.Escalated)},
		{"Halted (same failure repeated)", fmt.Sprint(s.Halted)},
		{"Skipped", fmt.Sprint(s.Skipped)},
		{"Still open", fmt.Sprint(s.Open)},
		{"Runs", fmt.Sprint(a.Totals.Count)},
		{"Loops", fmt.Sprintf("%d (%d regular, %d auto-retry)", s.Loops, s.Loops-s.AutoLoops, s.AutoLoops)},
		{"Transient retries", fmt.Sprint(s.Transient)},
		{"Wall time", duration(s.Wall)},
	}
}

// failureRows counts the issues' failures by type, most first, and by
// signature: the ten most frequent, with how many issues each hit and its
// last error.
func failureRows(issues []*issue) ([]countRow, []sigRow) {
	types := map[string]int{}
	type sigAgg struct {
		n      int
		issues map[string]bool
		err    string
	}
	sigs := map[string]*sigAgg{}
	for _, is := range issues {
		for _, f := range is.Failures {
			t := f.Type
			if t == "" {
				t = "(no type)"
			}
			types[t]++
			if f.Signature == "" {
				continue
			}
			k := shortSig(f.Signature)
			g := sigs[k]
			if g == nil {
				g = &sigAgg{issues: map[string]bool{}}
				sigs[k] = g
			}
			g.n++
			g.issues[is.ID] = true
			if f.Error != "" {
				g.err = f.Error
			}
		}
	}
	var byType []countRow
	for t, n := range types {
		byType = append(byType, countRow{t, n})
	}
	sort.Slice(byType, func(i, j int) bool {
		if byType[i].Count != byType[j].Count {
			return byType[i].Count > byType[j].Count
		}
		return byType[i].Name < byType[j].Name
	})
	var bySig []sigRow
	for k, g := range sigs {
		bySig = append(bySig, sigRow{k, g.n, len(g.issues), g.err})
	}
	sort.Slice(bySig, func(i, j int) bool {
		if bySig[i].Count != bySig[j].Count {
			return bySig[i].Count > bySig[j].Count
		}
		return bySig[i].Signature < bySig[j].Signature
	})
	if len(bySig) > 10 {
		bySig = bySig[:10]
	}
	return byType, bySig
}

// charts draws the runs' charts, when there were loops, and the issues'
// retries, each with a note when it shows only the latest or the most.
func (v *view) charts(a *analysis) {
	if a.HasLoops {
		v.LoopChart = loopsPerRunChart(a.Runs)
		v.OutChart = outcomeChart(a.Runs)
		if n := a.Totals.Count; n > maxRunBars {
			v.RunNote = fmt.Sprintf("The latest %d of %d runs.", maxRunBars, n)
		}
		if n := a.Totals.Count; n > maxOutcomeRun {
			v.OutNote = fmt.Sprintf("The latest %d of %d runs.", maxOutcomeRun, n)
		}
	}
	var shown int
	v.IssChart, shown = issueChart(a.Issues)
	if shown > maxIssueRows {
		v.IssNote = fmt.Sprintf("The %d issues with the most retries, of %d retried; the table lists all.", maxIssueRows, shown)
	}
}

// detailRows is the per-issue table, in retry-relevant order: escalated
// first, then open, then by retries.
func detailRows(issues []*issue) []detailRow {
	order := append([]*issue(nil), issues...)
	rank := func(is *issue) int {
		switch is.Status {
		case issuequeue.StatusEscalated:
			return 0
		case issuequeue.StatusInProgress, issuequeue.StatusPending:
			return 1
		}
		return 2
	}
	sort.SliceStable(order, func(i, j int) bool {
		if ri, rj := rank(order[i]), rank(order[j]); ri != rj {
			return ri < rj
		}
		return order[i].Retries > order[j].Retries
	})
	var rows []detailRow
	for _, is := range order {
		res, class := is.result()
		d := detailRow{ID: is.ID, Summary: is.Summary, Priority: is.Priority, Retries: fmt.Sprintf("%d/%d", is.Retries, is.MaxRetries),
			Failures: fmt.Sprint(len(is.Failures)), Streak: is.longestStreak(), Result: res, Class: class, TTR: "–", Archived: is.Archived}
		if !is.Known {
			d.Retries = fmt.Sprint(is.Retries)
		}
		if t, ok := is.resolutionTime(); ok {
			d.TTR = duration(t)
		}
		rows = append(rows, d)
	}
	return rows
}

// streakRows is the streaks of one signature, longest first, then latest.
func streakRows(issues []*issue) []streakRow {
	var st []streak
	for _, is := range issues {
		st = append(st, streaksOf(is)...)
	}
	sort.SliceStable(st, func(i, j int) bool {
		if st[i].Len != st[j].Len {
			return st[i].Len > st[j].Len
		}
		return st[i].To.After(st[j].To)
	})
	var rows []streakRow
	for _, s := range st {
		rows = append(rows, streakRow{ID: s.Issue.ID, Summary: s.Issue.Summary, Signature: shortSig(s.Signature), Len: s.Len,
			From: stamp(s.From), To: stamp(s.To), Halted: s.Halted, Error: s.FirstError})
	}
	return rows
}

// resolutionRows is the resolved issues, newest first, with how long each
// took, and the cards that sum those times up (none when none resolved).
func resolutionRows(issues []*issue) ([]ttrRow, []card) {
	var rows []ttrRow
	var took []time.Duration
	for _, is := range issues {
		if t, ok := is.resolutionTime(); ok {
			took = append(took, t)
			start := is.Created
			if start.IsZero() || start.After(is.Resolved) {
				start = is.FirstSeen
			}
			rows = append(rows, ttrRow{ID: is.ID, Summary: is.Summary, Created: stamp(start), Resolved: stamp(is.Resolved),
				Took: duration(t), Retries: is.Retries})
		}
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Resolved > rows[j].Resolved })
	if len(took) == 0 {
		return rows, nil
	}
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	var sum time.Duration
	for _, t := range took {
		sum += t
	}
	return rows, []card{
		{fmt.Sprint(len(took)), "issues resolved", ""},
		{duration(median(took)), "median time to resolution", ""},
		{duration(sum / time.Duration(len(took))), "mean", ""},
		{duration(took[len(took)-1]), "longest", ""},
	}
}

// escalationRows is the escalations and the runs stopped at the global
// cap, newest first, each escalation with what a person did next.
func escalationRows(a *analysis) []escRow {
	byID := map[string]*issue{}
	for _, is := range a.Issues {
		byID[is.ID] = is
	}
	var rows []escRow
	for i := len(a.Escal) - 1; i >= 0; i-- {
		ev := a.Escal[i]
		is := byID[ev.IssueID]
		_, class := is.result()
		r := escRow{Time: stamp(ev.Time), ID: ev.IssueID, Summary: is.Summary, Reason: reasonText(ev), Response: "none yet", Now: shortResult(is), Class: class}
		for _, later := range a.Responses[ev.IssueID] {
			if !later.Time.Before(ev.Time) {
				r.Response = later.Response
				if later.Reason != "" {
					r.Response += ": " + later.Reason
				}
				break
			}
		}
		rows = append(rows, r)
	}
	for i := len(a.CapHits) - 1; i >= 0; i-- {
		ev := a.CapHits[i]
		rows = append(rows, escRow{Time: stamp(ev.Time), ID: "run " + ev.RunID, Reason: "global auto-retry cap reached",
			Response: "–", Now: "run stopped", Class: classWarn})
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Time > rows[j].Time })
	return rows
}

// period says what stretch of the history the page covers.
func period(r *Runs, since time.Time) string {
	covers := "Covers the loops"
	if !since.IsZero() {
		covers += " since " + stamp(since)
	}
	if r.Loops == 0 {
		if since.IsZero() {
			return ""
		}
		return covers + ": none."
	}
	return covers + ": from " + stamp(r.First) + " to " + stamp(r.Last) + "."
}

func median(sorted []time.Duration) time.Duration {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}
