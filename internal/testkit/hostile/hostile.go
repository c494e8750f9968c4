// Package hostile generates issue queues built to be slow to parse: the
// inputs on which a markdown block parser can go quadratic or use memory
// out of proportion — lines that open a list or block quote inside another
// hundreds of thousands of times, lists nested thousands deep, lines of
// pipes, tables with a million columns or rows, thousands of fences and
// HTML comments, blocks left open, huge single lines, CRLF variants. Each
// file is a valid queue with a pathological part inside it, of any size,
// so that the time and memory the commands need can be shown to grow
// linearly with it. The same kind and size always give the same bytes.
package hostile

import (
	"bytes"
	"fmt"
	"strings"
)

// Kind is one shape of hostile input.
type Kind struct {
	Name string
	What string
	body func(b *bytes.Buffer, n int) // writes about n bytes
	// intro puts the body where the issue's field table belongs, so that
	// the table reader sees it; otherwise it is the issue's summary.
	intro bool
}

const (
	head    = "# Issue Queue\n\n"
	issue1  = "## ISSUE-20261122-001\n\n"
	fields  = "| Field | Value |\n|-------|-------|\n| Status | pending |\n| Auto-Retry | true |\n"
	summary = "\n### Summary\n\n"
	issue2  = "\n\n## ISSUE-20261122-002\n\n" + fields
)

// repeatTo writes unit until about n bytes are written, then tail.
func repeatTo(b *bytes.Buffer, n int, unit, tail string) {
	for end := b.Len() + n - len(tail); b.Len() < end; {
		b.WriteString(unit)
	}
	b.WriteString(tail)
}

// nested writes lines of growing depth (prefix repeated 0, 1, 2, … times
// before item) until about n bytes, starting over at depth 0 after max.
func nested(b *bytes.Buffer, n int, prefix, item string, max int) {
	end := b.Len() + n
	for d := 0; b.Len() < end; d = (d + 1) % max {
		b.WriteString(strings.Repeat(prefix, d))
		b.WriteString(item)
	}
}

// manyFields writes rows of format with a different number each.
func manyFields(b *bytes.Buffer, n int, format string) {
	end := b.Len() + n
	for i := 0; b.Len() < end; i++ {
		fmt.Fprintf(b, format, i)
	}
}

// Kinds lists every shape, in a fixed order.
func Kinds() []Kind {
	return []Kind{
		{Name: "dash-line", What: `one line "- - - … x": a list item in a list item, all the way`,
			body: func(b *bytes.Buffer, n int) { repeatTo(b, n, "- ", "x\n") }},
		{Name: "star-line", What: `one line "* * * … x"`,
			body: func(b *bytes.Buffer, n int) { repeatTo(b, n, "* ", "x\n") }},
		{Name: "ordered-line", What: `one line "1. 1. 1. … x"`,
			body: func(b *bytes.Buffer, n int) { repeatTo(b, n, "1. ", "x\n") }},
		{Name: "quote-line", What: `one line "> > > … x"`,
			body: func(b *bytes.Buffer, n int) { repeatTo(b, n, "> ", "x\n") }},
		{Name: "mixed-line", What: `one line "> - 1. * > + … x"`,
			body: func(b *bytes.Buffer, n int) { repeatTo(b, n, "> - 1. * > + ", "x\n") }},
		{Name: "dash-lines", What: `lines "- - - … x" of 2 KiB, one after another`,
			body: func(b *bytes.Buffer, n int) { repeatTo(b, n, strings.Repeat("- ", 1024)+"x\n", "") }},
		{Name: "dash-blank", What: `a line "- - - … x" of 64 KiB, then blank lines`,
			body: func(b *bytes.Buffer, n int) {
				b.WriteString(strings.Repeat("- ", min(n/4, 32<<10)) + "x\n")
				repeatTo(b, n-min(n/2, 64<<10), "\n", "")
			}},
		{Name: "nested-list", What: "an indented list nested ever deeper, each item two spaces in",
			body: func(b *bytes.Buffer, n int) { nested(b, n, "  ", "- item\n", 1<<30) }},
		{Name: "nested-list-1k", What: "an indented list nested up to 1,000 deep, over and over",
			body: func(b *bytes.Buffer, n int) { nested(b, n, "  ", "- item\n", 1000) }},
		{Name: "nested-quote", What: `block quotes nested ever deeper, "> > > … text"`,
			body: func(b *bytes.Buffer, n int) { nested(b, n, "> ", "text\n", 1<<30) }},
		{Name: "nested-mixed", What: "list items and block quotes nested ever deeper, lazy lines between",
			body: func(b *bytes.Buffer, n int) { nested(b, n, "> - ", "text\nlazy\n", 1<<30) }},
		{Name: "pipes-line", What: "one line of pipes",
			body: func(b *bytes.Buffer, n int) { repeatTo(b, n, "|", "\n") }},
		{Name: "pipes-rows", What: "a paragraph of lines of 1,000 pipes",
			body: func(b *bytes.Buffer, n int) { repeatTo(b, n, strings.Repeat("|", 1000)+"\n", "") }},
		{Name: "wide-table", What: "a field table with a header and delimiter row of half the size each", intro: true,
			body: func(b *bytes.Buffer, n int) {
				repeatTo(b, n/2, "| a ", "|\n")
				repeatTo(b, n/2, "|---", "|\n")
			}},
		{Name: "tall-table", What: "a field table with hundreds of thousands of fields", intro: true,
			body: func(b *bytes.Buffer, n int) { b.WriteString(fields); manyFields(b, n, "| Note-%d | x |\n") }},
		{Name: "tall-table-dup", What: "a field table with millions of rows, all of the same field", intro: true,
			body: func(b *bytes.Buffer, n int) { b.WriteString(fields); repeatTo(b, n, "| Note | x |\n", "") }},
		{Name: "tall-table-tab", What: "a field table with hundreds of thousands of fields and tabs in it", intro: true,
			body: func(b *bytes.Buffer, n int) {
				b.WriteString("| Field\t| Value |\n|---|---|\n")
				manyFields(b, n, "|\tNote-%d\t| x |\n")
			}},
		{Name: "setext-table", What: `a paragraph of table rows underlined with "---"`,
			body: func(b *bytes.Buffer, n int) {
				b.WriteString("| a | b |\n|---|---|\n")
				repeatTo(b, n, "| c | d |\n", "---\n")
			}},
		{Name: "link-defs", What: `link reference definitions underlined with "==="`,
			body: func(b *bytes.Buffer, n int) { repeatTo(b, n, "[a]: /u\n", "===\n") }},
		{Name: "link-defs-many", What: `paragraphs of 4 KiB of link reference definitions, each underlined with "==="`,
			body: func(b *bytes.Buffer, n int) { repeatTo(b, n, strings.Repeat("[a]: /u\n", 500)+"===\n\n", "") }},
		{Name: "brackets", What: `one line of "[" underlined with "---"`,
			body: func(b *bytes.Buffer, n int) { repeatTo(b, n, "[", "\n---\n") }},
		{Name: "fences", What: "thousands of fenced code blocks with an issue heading in each",
			body: func(b *bytes.Buffer, n int) { repeatTo(b, n, "```\n## ISSUE-20261122-009\n```\n", "") }},
		{Name: "fence-open", What: "a fence never closed, then lines of backticks too short to close it",
			body: func(b *bytes.Buffer, n int) { b.WriteString("`````\n"); repeatTo(b, n, "````\n", "") }},
		{Name: "comments", What: "thousands of HTML comments",
			body: func(b *bytes.Buffer, n int) { repeatTo(b, n, "<!--\ncomment\n-->\n", "") }},
		{Name: "comment-open", What: "an HTML comment never closed",
			body: func(b *bytes.Buffer, n int) { b.WriteString("<!--\n"); repeatTo(b, n, "- - <!- -> x\n", "") }},
		{Name: "html-lines", What: "lines that look like HTML tags with attributes",
			body: func(b *bytes.Buffer, n int) { repeatTo(b, n, `<a href="x" title='y' data-z=w>`+"\n\n", "") }},
		{Name: "headings", What: "hundreds of thousands of subsection headings",
			body: func(b *bytes.Buffer, n int) { repeatTo(b, n, "#### h\n", "") }},
		{Name: "long-line", What: "one line of text with no line break",
			body: func(b *bytes.Buffer, n int) { repeatTo(b, n, "a", "") }},
		{Name: "crlf-dash-line", What: `"- - - … x" with CRLF line endings around it`,
			body: func(b *bytes.Buffer, n int) { b.WriteString("\r\n"); repeatTo(b, n, "- ", "x\r\n\r\n") }},
		{Name: "crlf-nested-list", What: "the nested list with CRLF line endings",
			body: func(b *bytes.Buffer, n int) { nested(b, n, "  ", "- item\r\n", 1<<30) }},
		{Name: "cr-only", What: `"- \r" over and over: carriage returns that are no line breaks`,
			body: func(b *bytes.Buffer, n int) { repeatTo(b, n, "- \r", "\n") }},
	}
}

// Generate returns a queue of about size bytes with the hostile part of
// kind name in its first issue and a second, ordinary issue after it.
func Generate(name string, size int) ([]byte, error) {
	for _, k := range Kinds() {
		if k.Name != name {
			continue
		}
		var b bytes.Buffer
		b.Grow(size + 1024)
		b.WriteString(head + issue1)
		if k.intro {
			k.body(&b, size-b.Len()-len(issue2))
		} else {
			b.WriteString(fields + summary)
			k.body(&b, size-b.Len()-len(issue2))
		}
		b.WriteString(issue2)
		return b.Bytes(), nil
	}
	return nil, fmt.Errorf("no hostile input called %q", name)
}
