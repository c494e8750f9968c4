package report_test

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/autoretry/orchestrator/internal/views/report"
	"github.com/autoretry/orchestrator/issuequeue"
	"github.com/autoretry/orchestrator/orchestrator"
)

var now = time.Date(2026, 11, 22, 10, 15, 0, 0, time.UTC)

func render(t testing.TB, in report.Input) string {
	t.Helper()
	var b bytes.Buffer
	if err := report.Write(&b, in); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func load(t testing.TB, dir string) report.Input {
	t.Helper()
	in, err := report.Load(dir, now)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// cell matches a two-column table row of the retry summary.
func summaryRow(metric, value string) string {
	return "<tr><td>" + template.HTMLEscapeString(metric) + `</td><td class="n">` + template.HTMLEscapeString(value) + "</td></tr>"
}

// TestFixture proves analytics.html: from history.csv, the logs,
// the queue and the archive, the page shows loops per run, outcome per
// loop, retries per issue, repeat streaks, time to resolution,
// first-attempt success, escalations and retry summary, with
// the figures of the fixture.
func TestFixture(t *testing.T) {
	in := load(t, fixtureDir(t))
	if len(in.Problems) > 0 {
		t.Fatalf("fixture has problems: %v", in.Problems)
	}
	out := render(t, in)
	if !strings.HasPrefix(out, "<!DOCTYPE html>\n<html lang=\"en\">") || !strings.Contains(out, `<meta charset="utf-8">`) {
		t.Error("not an HTML5 document declaring UTF-8")
	}
	if !utf8.ValidString(out) {
		t.Error("output is not valid UTF-8")
	}
	if !strings.Contains(out, `<meta name="viewport" content="width=device-width, initial-scale=1">`) {
		t.Error("no viewport meta: phones would render the desktop layout")
	}
	for _, id := range []string{"summary", "patterns", "loops", "outcomes", "issues", "streaks", "resolution", "escalations"} {
		if !strings.Contains(out, `<section id="`+id+`">`) {
			t.Errorf("section %s missing", id)
		}
	}
	if got, want := strings.Count(out, "<svg "), 3; got != want {
		t.Errorf("%d charts, want %d", got, want)
	}
	for _, r := range [][2]string{
		{"Total tasks (issues)", "7"},           // six in the queue, one archived
		{"First-attempt success", "1 (14%)"},    // 003
		{"Retried tasks", "5 (71%)"},            // 001, 002, 004, 005, the archived one
		{"Retry success", "2"},                  // 001, the archived one
		{"Escalations", "3"},                    // 002 halted, 005 exhausted then skipped, 007 permanent
		{"Halted (same failure repeated)", "1"}, // 002
		{"Skipped", "1"},
		{"Still open", "1"},
		{"Runs", "7"},
		{"Loops", "14 (7 regular, 7 auto-retry)"},
		{"Transient retries", "3"},
		{"Wall time", "4h 19m"}, // 65+30+72+60+1+24+7 minutes
	} {
		if !strings.Contains(out, summaryRow(r[0], r[1])) {
			t.Errorf("summary row %q = %q missing", r[0], r[1])
		}
	}
	for _, want := range []string{
		// Headline card.
		`<span class="v">14%</span><span class="k">first-attempt success (1 of 7 issues)</span>`,
		// Failure patterns: 8 logged failures of one type, and the archived one from its Attempt History.
		`<tr><td>verification_failed</td><td class="n">9</td></tr>`,
		`<tr><td class="sig">cccccccccccc</td><td class="n">3</td><td class="n">1</td>`,
		// The streak that halted 002.
		`<tr><td class="id">ISSUE-20261116-002</td><td class="sig">cccccccccccc</td><td class="n">3</td>`,
		// Time to resolution: 001 in 1h 5m, 003 in 1 day and 20 minutes.
		`<td class="n">2</td><td class="n">1h 5m</td></tr>`, `<span class="v">24h 20m</span><span class="k">longest</span>`,
		`<span class="v">12h 42m</span><span class="k">median time to resolution</span>`,
		// Retry details.
		`<td class="n">3/10</td><td class="n">3</td><td class="n">3</td><td class="result"><span class="pill bad">escalated: same failure 3× in a row</span>`,
		`<td class="n">2/3</td><td class="n">2</td><td class="n">1</td><td class="result"><span class="pill ok">success (retry worked)</span></td><td class="n">1h 5m</td>`,
		`<span class="pill ok">success (first attempt)</span>`,
		`<span class="pill muted">skipped (escalated)</span>`,
		`<span class="pill bad">escalated: permanent error (permission denied)</span>`,
		// Escalations with the person's response.
		`<td class="text">same failure 3× in a row</td><td class="text">fix: check for nil before parsing</td>`,
		`<td class="text">retries exhausted (2)</td><td class="text">skip: needs a DBA</td>`,
		`global auto-retry cap reached`,
		// Charts: a bar per run with its tooltip, a square per loop.
		`<title>run 20261118T020000Z-4002, started 2026-11-18 02:00 UTC: 4 loop(s), 1 regular and 3 auto-retry</title>`,
		`run 20261118T020000Z-4002, loop 3 (auto-retry): timeout, exit -1, 30m; retried ISSUE-20261116-002`,
		`circuit breaker`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s", want)
		}
	}
	// Escalations newest first.
	i7, i5, i2 := strings.Index(out, "permanent error (permission denied)</td>"), strings.Index(out, "retries exhausted (2)</td>"),
		strings.Index(out, "same failure 3× in a row</td><td class=\"text\">fix")
	if !(i7 < i5 && i5 < i2) {
		t.Errorf("escalations not newest first: %d, %d, %d", i7, i5, i2)
	}
	// Every loop result has its colour in the outcome chart.
	for _, col := range []string{"#2f9e44", "#e03131", "#f08c00", "#9c36b5", "#868e96"} {
		if !strings.Contains(out, `rx="3" fill="`+col+`"`) {
			t.Errorf("no loop square of colour %s", col)
		}
	}
}

// TestHostileText proves that summaries and errors written by agents are
// text on the page, never markup: every tag and attribute in the output is
// one the report itself writes.
func TestHostileText(t *testing.T) {
	out := render(t, load(t, fixtureDir(t)))
	if strings.Contains(out, hostile) {
		t.Fatal("hostile text copied unescaped")
	}
	if !strings.Contains(out, template.HTMLEscapeString(hostile)) {
		t.Error("hostile summary not shown escaped")
	}
	if err := checkMarkup(out); err != nil {
		t.Error(err)
	}
}

// TestSelfContained proves "nothing from the network": no scripts, no
// element that loads anything, no URL other than in-page anchors, and no
// http(s) URL at all except inside escaped text taken from the files.
func TestSelfContained(t *testing.T) {
	for name, dir := range map[string]string{"fixture": fixtureDir(t), "empty": t.TempDir()} {
		out := render(t, load(t, dir))
		if err := checkMarkup(out); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		text := strings.ReplaceAll(out, template.HTMLEscapeString(hostile), "")
		for _, bad := range []string{"http://", "https://", "<script", "url(", "@import", "@font-face"} {
			if strings.Contains(strings.ToLower(text), bad) {
				t.Errorf("%s: output contains %q", name, bad)
			}
		}
		for _, m := range regexp.MustCompile(`(?i)(src|href)\s*=\s*"([^"]*)"`).FindAllStringSubmatch(out, -1) {
			if strings.HasPrefix(m[2], "//") || !strings.HasPrefix(m[2], "#") {
				t.Errorf("%s: %s=%q is not an in-page anchor", name, m[1], m[2])
			}
		}
	}
}

// A fresh state directory gives a friendly page, not an error.
func TestEmpty(t *testing.T) {
	out := render(t, load(t, t.TempDir()))
	if !strings.Contains(out, "<h2>No history yet</h2>") {
		t.Error("no friendly empty page")
	}
	if strings.Contains(out, "<svg") {
		t.Error("charts drawn from nothing")
	}
	// The zero Input, with no directory at all, renders too.
	if out := render(t, report.Input{}); !strings.Contains(out, "No history yet") {
		t.Error("zero Input does not render the empty page")
	}
}

// Issues but no loops yet: the issue sections render, the loop charts say
// there is nothing yet.
func TestIssuesWithoutHistory(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, issuequeue.QueueFile), "# Issue Queue\n\n"+
		issueMD("ISSUE-20261122-001", "bug", "high", "pending", "2026-11-22T10:00:00Z", 0, 3, 0, false, "It broke", nil))
	out := render(t, load(t, dir))
	if strings.Contains(out, "No history yet") {
		t.Error("a queue with an issue reported as empty")
	}
	if got, want := strings.Count(out, "No loops recorded yet"), 2; got != want {
		t.Errorf("%d loop sections say there are no loops, want %d", got, want)
	}
	if !strings.Contains(out, summaryRow("Total tasks (issues)", "1")) || !strings.Contains(out, "It broke") {
		t.Error("the issue is not in the report")
	}
}

// The daily budgets that are on get a card each; a spent one says so and
// when it frees up.
func TestBudgetCards(t *testing.T) {
	in := load(t, fixtureDir(t))
	in.Budgets = []orchestrator.Budget{
		{Code: orchestrator.CodeDailyLoops, Key: "loops_per_day", Used: 200, Limit: 200, Spent: true,
			NextAt: time.Date(2026, 11, 23, 14, 20, 0, 0, time.UTC)},
		{Code: orchestrator.CodeDailyAgentTime, Key: "agent_time_per_day", Used: 5400, Limit: 28800},
		{Code: orchestrator.CodeDailyCost, Key: "cost_per_day", Used: 3, Limit: 0},
	}
	out := render(t, in)
	for _, want := range []string{"200/200", "loops in the last 24 h: spent until 14:20 UTC", "1h30m0s/8h0m0s", "agent time in the last 24 h"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q", want)
		}
	}
	if strings.Contains(out, "cost in the last 24 h") {
		t.Error("a budget that is off has a card")
	}
}

// Rows that cannot be read are listed, and the rest is still reported.
func TestProblemsListed(t *testing.T) {
	dir := fixtureDir(t)
	f, err := os.OpenFile(orchestrator.HistoryPath(dir), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("run,1,regular,not-a-time,x,0,0,ok,0,,,,,,0,closed\n")
	f.Close()
	os.WriteFile(filepath.Join(dir, "logs", "retry.jsonl"), []byte("{not json <b>\n"), 0o644)
	in := load(t, dir)
	out := render(t, in) // the event log is read as the page is written
	if got, want := len(in.AllProblems()), 2; got != want {
		t.Fatalf("%d problems, want %d: %v", got, want, in.AllProblems())
	}
	for _, want := range []string{"Some records could not be read", "history.csv:16:", "retry.jsonl:1:", summaryRow("Runs", "7")} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q", want)
		}
	}
}

func TestLoadMissingDir(t *testing.T) {
	_, err := report.Load(filepath.Join(t.TempDir(), "nope"), now)
	var nd *issuequeue.NoStateDirError
	if !errors.As(err, &nd) {
		t.Fatalf("error %v, want *issuequeue.NoStateDirError", err)
	}
}

// WriteFile replaces the page whole and leaves no temporary file behind.
func TestWriteFile(t *testing.T) {
	dir := fixtureDir(t)
	path := filepath.Join(dir, "analytics.html")
	write(t, path, "old page")
	if err := report.WriteFile(path, load(t, dir)); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("<!DOCTYPE html>")) || !bytes.HasSuffix(b, []byte("</html>\n")) {
		t.Error("page not replaced whole")
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
	if err := report.WriteFile(filepath.Join(dir, "no", "such.html"), load(t, dir)); err == nil {
		t.Error("no error writing into a missing directory")
	}
}

// FuzzWrite feeds arbitrary text where agents write (summaries, errors,
// reasons, responses, issue IDs in the log): the page always renders, in
// valid UTF-8 without control characters, and never contains markup the
// report did not write.
func FuzzWrite(f *testing.F) {
	f.Add("Server fails to start", "exit status 1", "ISSUE-20261122-001")
	f.Add(hostile, hostile, `ISSUE-1"><svg onload=x>`)
	f.Add("]]><![CDATA[", "</title><script>", "</text></svg><iframe src=//x>")
	f.Fuzz(func(t *testing.T, summary, msg, id string) {
		src := "# Q\n\n" + issueMD("ISSUE-20261122-001", "bug", "high", "escalated", "2026-11-22T10:00:00Z", 2, 3, 2, true, summary,
			[][]string{{"1", "x", msg, msg, msg}})
		q := issuequeue.ParseQueue("issue_queue.md", []byte(src))
		t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
		in := report.Input{Dir: summary, Queue: q, Now: t0, Problems: []error{errors.New(msg)},
			History: []orchestrator.LoopRecord{{RunID: id, Loop: 1, Kind: "auto_retry", Started: t0, Finished: t0.Add(time.Minute),
				Result: msg, Issues: []string{id}, Resolved: []string{msg}, Breaker: msg}},
			Events: []orchestrator.Event{
				{Time: t0, Event: orchestrator.EvAttempt, IssueID: id, Status: "failed", FailureType: msg, Signature: msg, Error: msg},
				{Time: t0, Event: orchestrator.EvAttempt, IssueID: id, Status: "failed", FailureType: msg, Signature: msg, Error: summary},
				{Time: t0, Event: orchestrator.EvTriggered, IssueID: id},
				{Time: t0, Event: orchestrator.EvEscalated, IssueID: id, Reason: msg, Error: summary},
				{Time: t0, Event: orchestrator.EvUserResponse, IssueID: id, Response: summary, Reason: msg},
				{Time: t0, Event: orchestrator.EvCapReached, RunID: id},
				{Time: t0, Event: orchestrator.EvRunFinished, RunID: id, Status: summary},
			}}
		var b bytes.Buffer
		if err := report.Write(&b, in); err != nil {
			t.Fatal(err)
		}
		if err := checkMarkup(b.String()); err != nil {
			t.Fatal(err)
		}
		if !utf8.Valid(b.Bytes()) {
			t.Fatal("output is not valid UTF-8")
		}
		for _, r := range b.String() {
			if r < 0x20 && r != '\t' && r != '\n' && r != '\r' && r != '\f' || r >= 0x7f && r <= 0x9f {
				t.Fatalf("control character %U in the output", r)
			}
		}
	})
}

// Tags and attributes the report writes; anything else in the output came
// from the input and escaped escaping.
var (
	allowedTags = setOf("!DOCTYPE html", "html", "head", "meta", "title", "style", "body", "header", "div", "h1", "h2", "h3", "p",
		"strong", "nav", "a", "main", "section", "ul", "li", "code", "span", "table", "thead", "tbody", "tr", "th", "td", "footer",
		"svg", "g", "rect", "line", "circle", "text")
	allowedAttrs = setOf("lang", "charset", "name", "content", "class", "id", "href", "aria-label", "role", "viewBox", "x", "y",
		"x1", "x2", "y1", "y2", "width", "height", "fill", "stroke", "stroke-width", "rx", "r", "cx", "cy", "text-anchor",
		"font-size", "font-weight")
	attrRE = regexp.MustCompile(`^\s*([^\s=/>]+)(?:\s*=\s*"([^"]*)")?`)
)

func setOf(s ...string) map[string]bool {
	m := map[string]bool{}
	for _, x := range s {
		m[x] = true
	}
	return m
}

// checkMarkup walks every tag of a page the report wrote. Escaped text
// holds no '<', so each '<' starts a tag; the one raw-text element, <style>,
// is static.
func checkMarkup(page string) error {
	rest := page
	for {
		i := strings.IndexByte(rest, '<')
		if i < 0 {
			return nil
		}
		rest = rest[i+1:]
		j := strings.IndexByte(rest, '>')
		if j < 0 {
			return fmt.Errorf("unterminated tag at %q", clip(rest))
		}
		tag := rest[:j]
		rest = rest[j+1:]
		if strings.HasPrefix(tag, "/") {
			if !allowedTags[tag[1:]] {
				return fmt.Errorf("unexpected closing tag <%s>", tag)
			}
			continue
		}
		if tag == "!DOCTYPE html" {
			continue
		}
		name := tag
		if k := strings.IndexAny(tag, " \t\n/"); k >= 0 {
			name = tag[:k]
		}
		if !allowedTags[name] {
			return fmt.Errorf("unexpected tag <%s>", clip(tag))
		}
		attrs := strings.TrimSuffix(tag[len(name):], "/")
		for strings.TrimSpace(attrs) != "" {
			m := attrRE.FindStringSubmatch(attrs)
			if m == nil {
				return fmt.Errorf("unparsable attributes in <%s>", clip(tag))
			}
			if !allowedAttrs[m[1]] {
				return fmt.Errorf("unexpected attribute %s in <%s>", m[1], clip(tag))
			}
			if m[1] == "href" && !strings.HasPrefix(m[2], "#") {
				return fmt.Errorf("link to %q", m[2])
			}
			attrs = attrs[len(m[0]):]
		}
		if name == "style" {
			k := strings.Index(rest, "</style>")
			if k < 0 {
				return errors.New("unterminated <style>")
			}
			rest = rest[k:]
		}
	}
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// A long-lived queue still gives a page of bounded size: long tables show
// their most relevant rows (escalated and open issues first) and say how
// many they leave out.
func TestLongTablesCapped(t *testing.T) {
	var b strings.Builder
	b.WriteString("# Issue Queue\n\n")
	for i := 1; i <= 600; i++ {
		b.WriteString(issueMD(fmt.Sprintf("ISSUE-20261101-%03d", i), "bug", "low", "resolved", "2026-11-01T00:00:00Z", 0, 3, 0, false, "done", nil))
	}
	b.WriteString(issueMD("ISSUE-20261122-001", "bug", "high", "escalated", "2026-11-22T00:00:00Z", 3, 3, 1, false, "still broken", nil))
	q := issuequeue.ParseQueue("issue_queue.md", []byte(b.String()))
	out := render(t, report.Input{Queue: q, Now: now})
	if !strings.Contains(out, "Showing the first 500 of 601 issues (escalated and open ones first).") {
		t.Error("no note on the capped table")
	}
	if got, want := strings.Count(out, `<tr><td class="id">ISSUE-`), 500; got != want {
		t.Errorf("%d rows, want %d", got, want)
	}
	if !strings.Contains(out, `<tr><td class="id">ISSUE-20261122-001</td>`) {
		t.Error("the escalated issue was cut")
	}
}
