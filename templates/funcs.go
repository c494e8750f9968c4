package templates

import (
	"fmt"
	"github.com/autoretry/orchestrator/issuequeue"
	"math"
	"path/filepath"
	"strings"
	"text/template"
	"time"
	"unicode/utf8"
)

// ruleChar draws the banners' horizontal lines.
const ruleChar = "═"

// colors are the names the color function accepts.
var colors = map[string]string{
	"bold":    "1",
	"dim":     "2",
	"red":     "31",
	"green":   "32",
	"yellow":  "33",
	"blue":    "34",
	"magenta": "35",
	"cyan":    "36",
}

// funcs returns the functions available to templates; doc.go documents them.
// color is the only one that depends on the Set.
func funcs(color bool) template.FuncMap {
	return template.FuncMap{
		"color": func(names, s string) (string, error) {
			var codes []string
			for _, n := range strings.Fields(names) {
				code, ok := colors[n]
				if !ok {
					return "", fmt.Errorf("unknown colour %q (known: bold, dim, red, green, yellow, blue, magenta, cyan)", n)
				}
				codes = append(codes, code)
			}
			if !color || s == "" || len(codes) == 0 {
				return s, nil
			}
			return "\x1b[" + strings.Join(codes, ";") + "m" + s + "\x1b[0m", nil
		},
		"rule": func(width int) string {
			return strings.Repeat(ruleChar, max(width, 0))
		},
		"plural":   plural,
		"pct":      pct,
		"truncate": truncate,
		"indent":   indent,
		"tail":     tail,
		"fence":    Fence,
		"xml":      escapeXML,
		"attr":     escapeAttr,
		"cell":     escapeCell,
		"short":    short,
		"join":     filepath.Join,
		"duration": duration,
		"chomp": func(s string) string {
			return strings.TrimRight(s, "\r\n")
		},
	}
}

// plural returns "1 attempt", "2 attempts"; the plural form is word+"s"
// unless given.
func plural(n int, word string, pluralForm ...string) (string, error) {
	if len(pluralForm) > 1 {
		return "", fmt.Errorf("plural: want at most one plural form, got %d", len(pluralForm))
	}
	if n == 1 {
		return "1 " + word, nil
	}
	p := word + "s"
	if len(pluralForm) == 1 {
		p = pluralForm[0]
	}
	return fmt.Sprintf("%d %s", n, p), nil
}

// pct returns part/whole as a whole percentage, "60%"; "0%" when whole is 0.
func pct(part, whole int) string {
	if whole == 0 {
		return "0%"
	}
	return fmt.Sprintf("%d%%", int(math.Round(100*float64(part)/float64(whole))))
}

// truncate shortens s to at most n characters, ending it with "…" when cut.
func truncate(n int, s string) string {
	if n <= 0 {
		return ""
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count := 0, 0
	for i = range s {
		if count == n-1 {
			break
		}
		count++
	}
	return s[:i] + "…"
}

// indent puts n spaces before every non-empty line of s.
func indent(n int, s string) string {
	pad := strings.Repeat(" ", max(n, 0))
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	for _, l := range lines {
		if l != "" && l != "\n" && l != "\r\n" {
			b.WriteString(pad)
		}
		b.WriteString(l)
	}
	return b.String()
}

// tail returns the last n lines of s, without a final newline, preceded by
// a line saying how many lines were left out, if any.
func tail(n int, s string) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	if n < 0 {
		n = 0
	}
	if len(lines) <= n {
		return s
	}
	cut := len(lines) - n
	head := "… (" + mustPlural(cut, "earlier line") + " not shown)"
	if n == 0 {
		return head
	}
	return head + "\n" + strings.Join(lines[cut:], "\n")
}

func mustPlural(n int, word string) string {
	s, _ := plural(n, word)
	return s
}

// Fence returns text as a fenced markdown code block, without a final
// newline. The fence is a run of backticks longer than any run inside text
// (at least three), so nothing in text can end the block or start a heading:
// failure output written into a section cannot create, end or alter an issue.
func Fence(text string) string { return issuequeue.Fence(text) }

var (
	xmlText = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
	xmlAttr = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")
)

// escapeXML escapes s for the text of an XML element, so that failure output
// cannot open or close an element of the retry context.
func escapeXML(s string) string { return xmlText.Replace(s) }

// escapeAttr escapes s for a double-quoted XML attribute value.
func escapeAttr(s string) string { return xmlAttr.Replace(s) }

var cellText = strings.NewReplacer("|", `\|`, "\r\n", " ", "\n", " ", "\r", " ")

// escapeCell makes s one markdown table cell: "|" escaped, line breaks as spaces.
func escapeCell(s string) string { return cellText.Replace(s) }

// short returns the first 12 characters of a signature: enough to tell
// failures apart on screen.
func short(sig string) string {
	n := 0
	for i := range sig {
		if n == 12 {
			return sig[:i]
		}
		n++
	}
	return sig
}

// duration formats d for people: whole seconds from one second up
// ("12m30s"), milliseconds below.
func duration(d time.Duration) string {
	if d >= time.Second || d <= -time.Second {
		return d.Round(time.Second).String()
	}
	return d.Round(time.Millisecond).String()
}
