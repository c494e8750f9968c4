// Package columns lays text out for a terminal of a given width: runs of
// tab-separated lines become aligned columns whose cells wrap inside their
// column when the row would be wider, and other lines wrap at spaces.
// Widths are counted in terminal columns: a wide rune, as in Japanese or
// most emoji, takes two.
package columns

import (
	"bytes"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// gap is the number of spaces between two columns.
const gap = 2

// Writer collects text and writes it laid out on Flush, as a
// text/tabwriter.Writer with padding 2 and ' ' does when Width is 0 (no
// limit); it is a drop-in for one.
type Writer struct {
	w     io.Writer
	width int
	buf   bytes.Buffer
}

// NewWriter returns a Writer that writes to w lines of at most width
// columns; width 0 means no limit.
func NewWriter(w io.Writer, width int) *Writer { return &Writer{w: w, width: width} }

// Write buffers p until Flush.
func (t *Writer) Write(p []byte) (int, error) { return t.buf.Write(p) }

// Flush writes the buffered text laid out.
func (t *Writer) Flush() error {
	text := t.buf.String()
	t.buf.Reset()
	_, err := io.WriteString(t.w, Layout(text, t.width))
	return err
}

// Layout lays text out in at most width columns (0: no limit): each run of
// lines holding tabs is a table, the others are wrapped by Wrap.
func Layout(text string, width int) string {
	var b strings.Builder
	lines := strings.SplitAfter(text, "\n")
	for i := 0; i < len(lines); {
		if !strings.Contains(lines[i], "\t") {
			b.WriteString(Wrap(lines[i], width))
			i++
			continue
		}
		j := i
		var rows [][]string
		for j < len(lines) && strings.Contains(lines[j], "\t") {
			rows = append(rows, strings.Split(strings.TrimSuffix(lines[j], "\n"), "\t"))
			j++
		}
		b.WriteString(table(rows, width))
		if !strings.HasSuffix(lines[j-1], "\n") {
			s := strings.TrimSuffix(b.String(), "\n")
			b.Reset()
			b.WriteString(s)
		}
		i = j
	}
	return b.String()
}

// table lays rows out in aligned columns; when they are wider than width,
// the widest columns are narrowed in turn, and their cells wrap.
func table(rows [][]string, width int) string {
	n := 0
	for _, r := range rows {
		n = max(n, len(r))
	}
	wid := make([]int, n)
	least := make([]int, n) // how narrow a column may become
	floor := make([]int, n) // its widest rune: no narrower, cutting words
	for _, r := range rows {
		for c, cell := range r {
			wid[c] = max(wid[c], Width(cell))
			for _, ru := range cell {
				floor[c] = max(floor[c], RuneWidth(ru))
			}
			for _, word := range strings.Fields(cell) {
				least[c] = max(least[c], min(Width(word), 12))
			}
		}
	}
	for c := range least {
		least[c] = max(min(least[c], wid[c]), min(wid[c], 4))
	}
	total := func() int {
		t := gap * (n - 1)
		for _, w := range wid {
			t += w
		}
		return t
	}
	for width > 0 && total() > width {
		widest := -1
		for c := range wid {
			if wid[c] > least[c] && (widest < 0 || wid[c] > wid[widest]) {
				widest = c
			}
		}
		if widest < 0 {
			// Every column is as narrow as its words: cut words too.
			if slices.Equal(least, floor) {
				break
			}
			copy(least, floor)
			continue
		}
		wid[widest]--
	}
	var b strings.Builder
	for _, r := range rows {
		cells := make([][]string, len(r))
		height := 1
		for c, cell := range r {
			cells[c] = wrapCell(cell, wid[c])
			height = max(height, len(cells[c]))
		}
		for l := 0; l < height; l++ {
			var line strings.Builder
			for c := range r {
				part := ""
				if l < len(cells[c]) {
					part = cells[c][l]
				}
				line.WriteString(part)
				if c < len(r)-1 {
					line.WriteString(strings.Repeat(" ", max(wid[c]-Width(part), 0)+gap))
				}
			}
			b.WriteString(strings.TrimRight(line.String(), " "))
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// wrapCell splits a cell into lines of at most width columns, at spaces,
// cutting a longer word.
func wrapCell(cell string, width int) []string {
	if Width(cell) <= width {
		return []string{cell}
	}
	var out []string
	line := ""
	for _, word := range strings.Fields(cell) {
		for Width(word) > width {
			if line != "" {
				out = append(out, line)
				line = ""
			}
			head := fit(word, width)
			if head == "" {
				// A rune wider than the column still takes a line.
				_, n := utf8.DecodeRuneInString(word)
				head = word[:n]
			}
			out = append(out, head)
			word = word[len(head):]
		}
		switch {
		case line == "":
			line = word
		case Width(line)+1+Width(word) <= width:
			line += " " + word
		default:
			out = append(out, line)
			line = word
		}
	}
	if line != "" || len(out) == 0 {
		out = append(out, line)
	}
	return out
}

// Wrap wraps each line of text wider than width columns at spaces,
// continuing it indented by two more than it starts; a word wider than the
// room is cut. width 0 means no limit.
func Wrap(text string, width int) string {
	if width <= 0 {
		return text
	}
	var b strings.Builder
	for _, l := range strings.SplitAfter(text, "\n") {
		body, nl := strings.CutSuffix(l, "\n")
		if Width(body) <= width {
			b.WriteString(l)
			continue
		}
		lead := len(body) - len(strings.TrimLeft(body, " "))
		indent := min(lead+2, width/2)
		// The first line keeps its spacing (it may be aligned with others):
		// it breaks at the last space that fits, else where the width ends.
		cut := len(fit(body, width))
		for i, col, prev := 0, 0, rune(0); i < len(body) && col <= width; {
			r, n := utf8.DecodeRuneInString(body[i:])
			if r == ' ' && prev != ' ' && i > lead {
				cut = i
			}
			col += RuneWidth(r)
			i += n
			prev = r
		}
		if cut == 0 {
			_, cut = utf8.DecodeRuneInString(body)
		}
		b.WriteString(strings.TrimRight(body[:cut], " "))
		for _, part := range wrapCell(strings.TrimLeft(body[cut:], " "), width-indent) {
			if part == "" {
				continue
			}
			b.WriteString("\n" + strings.Repeat(" ", indent) + part)
		}
		if nl {
			b.WriteByte('\n')
		}
	}
	return b.String()
}
