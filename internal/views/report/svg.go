package report

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"sort"
	"strings"

	"github.com/autoretry/orchestrator/orchestrator"
)

// Colours of loop results and issue classes; the legend and the page's CSS
// use the same ones.
var (
	resultColor = map[string]string{
		orchestrator.ResultOK:        "#2f9e44",
		orchestrator.ResultFailed:    "#e03131",
		orchestrator.ResultTimeout:   "#f08c00",
		orchestrator.ResultPermanent: "#9c36b5",
		orchestrator.ResultAborted:   "#868e96",
	}
	resultOrder = []string{orchestrator.ResultOK, orchestrator.ResultFailed, orchestrator.ResultTimeout,
		orchestrator.ResultPermanent, orchestrator.ResultAborted}
	classColor = map[string]string{classOK: "#2f9e44", classBad: "#e03131", classWarn: "#f08c00", classOpen: "#1c7ed6", classGrey: "#868e96"}
	// Failure signatures of one issue, in order of first appearance.
	sigPalette = []string{"#364fc7", "#c2255c", "#087f5b", "#e8590c", "#5f3dc4", "#0b7285", "#5c940d", "#a61e4d"}
)

const (
	colRegular = "#4c6ef5"
	colAuto    = "#fab005"
	colText    = "#343a40"
	colMuted   = "#868e96"
	colGrid    = "#e9ecef"
	colTrack   = "#dbe4ff"
)

// Limits that keep the charts readable; the tables list everything.
const (
	maxRunBars    = 30
	maxOutcomeRun = 15
	maxLoopCells  = 40
	maxIssueRows  = 20
)

// svg builds one chart. Every text that may come from the files goes
// through esc; numbers are formatted here.
type svg struct {
	b    strings.Builder
	w, h float64
}

func esc(s string) string { return html.EscapeString(s) }

func (s *svg) add(format string, args ...any) { fmt.Fprintf(&s.b, format, args...) }

func (s *svg) text(x, y float64, anchor, fill, text string, extra ...string) {
	s.add(`<text x="%.1f" y="%.1f" text-anchor="%s" fill="%s"%s>%s</text>`, x, y, anchor, fill, strings.Join(extra, ""), esc(text))
}

// html wraps the chart; label is its accessible name.
func (s *svg) html(label string) template.HTML {
	return template.HTML(fmt.Sprintf(`<svg width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" role="img" aria-label="%s">%s</svg>`,
		s.w, s.h, s.w, s.h, esc(label), s.b.String()))
}

// niceStep returns a tick step of 1, 2 or 5 × 10^n giving at most 5 ticks.
func niceStep(maxV int) int {
	for _, base := range []int{1, 10, 100, 1000, 10000} {
		for _, m := range []int{1, 2, 5} {
			if step := m * base; maxV/step <= 5 {
				return step
			}
		}
	}
	return int(math.Ceil(float64(maxV) / 5))
}

// loopsPerRunChart draws a bar per run (the latest maxRunBars), stacked:
// its regular loop and its auto-retry loops.
func loopsPerRunChart(runs []*run) template.HTML {
	if len(runs) > maxRunBars {
		runs = runs[len(runs)-maxRunBars:]
	}
	maxV := 1
	for _, r := range runs {
		maxV = max(maxV, len(r.Loops))
	}
	step := niceStep(maxV)
	top := (maxV + step - 1) / step * step
	c := &svg{w: 800, h: 290}
	const left, right, topM, bottom = 40.0, 12.0, 20.0, 64.0
	pw, ph := c.w-left-right, c.h-topM-bottom
	y := func(v int) float64 { return topM + ph - float64(v)/float64(top)*ph }
	for v := 0; v <= top; v += step {
		c.add(`<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s"/>`, left, c.w-right, y(v), y(v), colGrid)
		c.text(left-8, y(v)+4, "end", colMuted, fmt.Sprint(v), ` font-size="14"`)
	}
	slot := pw / float64(len(runs))
	bw := math.Min(slot*0.7, 56)
	every := int(math.Ceil(float64(len(runs)) / 10)) // at most ten date labels
	for i, r := range runs {
		x := left + slot*float64(i) + (slot-bw)/2
		tip := fmt.Sprintf("run %s, started %s: %d loop(s), %d regular and %d auto-retry", r.ID, stamp(r.Start),
			len(r.Loops), r.Regular, r.Auto)
		if r.Outcome != "" {
			tip += "; " + r.Outcome
		}
		c.add(`<g><title>%s</title>`, esc(tip))
		c.add(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`, x, y(r.Regular), bw, y(0)-y(r.Regular), colRegular)
		if r.Auto > 0 {
			c.add(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`, x, y(len(r.Loops)), bw, y(r.Regular)-y(len(r.Loops)), colAuto)
		}
		c.add(`</g>`)
		c.text(x+bw/2, y(len(r.Loops))-5, "middle", colText, fmt.Sprint(len(r.Loops)), ` font-size="14" font-weight="600"`)
		if i%every == 0 || i == len(runs)-1 && len(runs) <= 10 {
			lx, ly := x+bw/2, y(0)+18
			c.text(lx, ly, "middle", colMuted, r.Start.UTC().Format("01-02"), ` font-size="14"`)
			c.text(lx, ly+16, "middle", colMuted, r.Start.UTC().Format("15:04"), ` font-size="14"`)
		}
	}
	lx := left
	for _, it := range []struct{ col, label string }{{colRegular, "regular loop"}, {colAuto, "auto-retry loops"}} {
		c.add(`<rect x="%.1f" y="%.1f" width="14" height="14" rx="2" fill="%s"/>`, lx, c.h-17, it.col)
		c.text(lx+20, c.h-5, "start", colText, it.label, ` font-size="14"`)
		lx += 180
	}
	return c.html("Loops per run: a bar per run, regular and auto-retry loops stacked")
}

// outcomeChart draws a row per run (the latest maxOutcomeRun), a square per
// loop coloured by its result.
func outcomeChart(runs []*run) template.HTML {
	if len(runs) > maxOutcomeRun {
		runs = runs[len(runs)-maxOutcomeRun:]
	}
	const label, cell, gap, rowH, topM = 112.0, 18.0, 4.0, 26.0, 8.0
	most := 1
	for _, r := range runs {
		most = max(most, min(len(r.Loops), maxLoopCells))
	}
	c := &svg{w: math.Max(560, label+float64(most)*(cell+gap)+60), h: topM + float64(len(runs))*rowH + 34}
	seen := map[string]bool{}
	for i, r := range runs {
		y := topM + float64(i)*rowH
		c.text(0, y+cell-4, "start", colText, r.Start.UTC().Format("01-02 15:04"), ` font-size="13"`)
		for j, l := range r.Loops {
			if j == maxLoopCells {
				c.text(label+float64(j)*(cell+gap)+2, y+cell-4, "start", colMuted, fmt.Sprintf("+%d", len(r.Loops)-j))
				break
			}
			col, ok := resultColor[l.Result]
			if !ok {
				col = "#495057"
			}
			seen[l.Result] = true
			kind := "regular"
			if l.Kind == "auto_retry" {
				kind = "auto-retry"
			}
			tip := fmt.Sprintf("run %s, loop %d (%s): %s, exit %d, %s", r.ID, l.Loop, kind, l.Result, l.ExitCode,
				duration(l.Finished.Sub(l.Started)))
			if len(l.Issues) > 0 {
				tip += "; retried " + strings.Join(l.Issues, ", ")
			}
			if len(l.Resolved) > 0 {
				tip += "; resolved " + strings.Join(l.Resolved, ", ")
			}
			if l.TransientRetries > 0 {
				tip += fmt.Sprintf("; %d transient retr%s", l.TransientRetries, map[bool]string{true: "y", false: "ies"}[l.TransientRetries == 1])
			}
			x := label + float64(j)*(cell+gap)
			c.add(`<rect x="%.1f" y="%.1f" width="%.0f" height="%.0f" rx="3" fill="%s"><title>%s</title></rect>`, x, y, cell, cell, col, esc(tip))
			if l.Kind == "auto_retry" {
				// A dot marks auto-retry loops, so the row reads without colour for kind.
				c.add(`<circle cx="%.1f" cy="%.1f" r="2.5" fill="#fff"/>`, x+cell/2, y+cell/2)
			}
		}
	}
	lx, ly := 0.0, c.h-18
	item := func(col, text string, dot bool) {
		c.add(`<rect x="%.1f" y="%.1f" width="12" height="12" rx="2" fill="%s"/>`, lx, ly, col)
		if dot {
			c.add(`<circle cx="%.1f" cy="%.1f" r="2.5" fill="#fff"/>`, lx+6, ly+6)
		}
		c.text(lx+17, ly+10, "start", colText, text)
		lx += 17 + 7*float64(len(text)) + 18
	}
	for _, r := range resultOrder {
		if seen[r] {
			item(resultColor[r], r, false)
		}
	}
	item(colMuted, "auto-retry loop", true)
	c.w = math.Max(c.w, lx)
	return c.html("Outcome of each loop: a row per run, a square per loop coloured by its result")
}

// issueChart draws a row per issue (the maxIssueRows with most retries): a
// bar of the auto-retry loops it was given on a track as long as its
// Max-Retries, and under it a dot per recorded failure, one colour per
// signature, with repeats in a row joined and counted.
func issueChart(issues []*issue) (template.HTML, int) {
	var rows []*issue
	for _, is := range issues {
		if is.Retries > 0 || len(is.Failures) > 0 {
			rows = append(rows, is)
		}
	}
	shown := len(rows)
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.Retries != b.Retries {
			return a.Retries > b.Retries
		}
		return len(a.Failures) > len(b.Failures)
	})
	if len(rows) > maxIssueRows {
		rows = rows[:maxIssueRows]
	}
	if len(rows) == 0 {
		return "", 0
	}
	units := 1
	for _, is := range rows {
		units = max(units, is.Retries, is.MaxRetries, len(is.Failures))
	}
	const label, right, rowH, topM = 170.0, 150.0, 42.0, 6.0
	c := &svg{w: 800, h: topM + float64(len(rows))*rowH + 4}
	pw := c.w - label - right
	u := pw / float64(units)
	for i, is := range rows {
		y := topM + float64(i)*rowH
		res, class := is.result()
		tip := fmt.Sprintf("%s: %s. %d of %d retries, %d failure(s) recorded; %s", is.ID, is.Summary, is.Retries, is.MaxRetries,
			len(is.Failures), res)
		c.add(`<g><title>%s</title>`, esc(tip))
		c.text(0, y+13, "start", colText, is.ID, ` font-size="14"`)
		if is.MaxRetries > 0 {
			c.add(`<rect x="%.1f" y="%.1f" width="%.1f" height="12" rx="2" fill="%s"/>`, label, y+2, u*float64(min(is.MaxRetries, units)), colTrack)
		}
		if is.Retries > 0 {
			c.add(`<rect x="%.1f" y="%.1f" width="%.1f" height="12" rx="2" fill="%s"/>`, label, y+2, u*float64(min(is.Retries, units)), classColor[class])
		}
		c.text(label+u*float64(max(is.Retries, is.MaxRetries))+6, y+12, "start", colText, fmt.Sprintf("%d/%d", is.Retries, is.MaxRetries), ` font-size="13"`)
		sigs := map[string]int{}
		fy := y + 25
		r := math.Min(5, u/2-1)
		r = math.Max(r, 2)
		for j := 0; j < len(is.Failures) && j < units; j++ {
			f := is.Failures[j]
			if _, ok := sigs[f.Signature]; !ok {
				sigs[f.Signature] = len(sigs)
			}
			x := label + u*(float64(j)+0.5)
			if j > 0 && f.Signature != "" && f.Signature == is.Failures[j-1].Signature {
				px := label + u*(float64(j)-0.5)
				c.add(`<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="3"/>`, px, x, fy, fy,
					sigPalette[sigs[f.Signature]%len(sigPalette)])
			}
			c.add(`<circle cx="%.1f" cy="%.1f" r="%.1f" fill="%s"/>`, x, fy, r, sigPalette[sigs[f.Signature]%len(sigPalette)])
		}
		for _, s := range streaksOf(is) {
			if end := s.last; end < units {
				c.text(label+u*(float64(end)+0.5)+r+3, fy+4, "start", colText, fmt.Sprintf("×%d", s.Len), ` font-size="11" font-weight="600"`)
			}
		}
		c.text(c.w-right+48, y+13, "start", classColor[class], shortResult(is), ` font-size="14" font-weight="600"`)
		c.add(`</g>`)
	}
	return c.html("Retries and failures per issue"), shown
}

// shortResult is the end of an issue's row in the chart.
func shortResult(is *issue) string {
	switch {
	case is.Halted:
		return "halted"
	case is.Status == "":
		return "not in queue"
	}
	return strings.ReplaceAll(is.Status, "_", " ")
}
