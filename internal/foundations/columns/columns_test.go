package columns

import (
	"bytes"
	"strings"
	"testing"
	"text/tabwriter"
	"unicode/utf8"
)

const sample = "A sentence before the table that is rather long for a narrow terminal, and goes on.\n\nrule\tnow\tlimit\tverdict\npaused\tnot paused\tno loop while paused\tok\ndaily_loops\t0 loop command executions in the last 24h\t200 per 24h\tSTOP: the daily budget of loops is spent, wait for the window\n\nhint: a hint that is long enough to need wrapping when the terminal is only forty columns wide\n"

// With no width, the layout is text/tabwriter's, byte for byte, so that
// output that fits is unchanged.
func TestNoWidthIsTabwriter(t *testing.T) {
	var want, got bytes.Buffer
	tw := tabwriter.NewWriter(&want, 0, 0, 2, ' ', 0)
	tw.Write([]byte(sample))
	tw.Flush()
	w := NewWriter(&got, 0)
	w.Write([]byte(sample))
	w.Flush()
	if got.String() != want.String() {
		t.Errorf("got\n%s\nwant\n%s", got.String(), want.String())
	}
}

// Every line fits the width, and where every word fits, none is lost.
func TestLayoutFits(t *testing.T) {
	for _, width := range []int{30, 40, 60, 80} {
		out := Layout(sample, width)
		for _, l := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(l); n > width {
				t.Errorf("width %d: a line of %d: %q", width, n, l)
			}
		}
		if width < 60 {
			continue // narrower, long words are cut
		}
		if got, want := strings.Join(strings.Fields(out), " "), strings.Join(strings.Fields(strings.ReplaceAll(sample, "\t", " ")), " "); len(strings.Fields(got)) != len(strings.Fields(want)) {
			t.Errorf("width %d: words changed:\n%s", width, out)
		}
	}
}

func TestWrap(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  string
	}{
		{"short\n", 10, "short\n"},
		{"one two three four\n", 10, "one two\n  three\n  four\n"},
		{"  indented words here\n", 12, "  indented\n    words\n    here\n"},
		{"abcdefghijkl\n", 5, "abcde\n  fgh\n  ijk\n  l\n"}, {"a  b  c d e f\n", 6, "a  b\n  c d\n  e f\n"},
	} {
		if got := Wrap(tc.in, tc.width); got != tc.want {
			t.Errorf("Wrap(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
	}
}

func TestWidth(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"", 0},
		{"abc", 3},
		{"ビルド", 6},
		{"ｶﾅ", 2},      // halfwidth katakana
		{"ＡＢ", 4},      // fullwidth Latin
		{"한글", 4},      // hangul
		{"🔥", 2},       // emoji drawn as a picture
		{"👍🏽", 4},      // with a skin tone, which a terminal may draw apart
		{"e\u0301", 1}, // e and a combining acute accent
		{"a\u200db", 2},
		{"…", 1},
	} {
		if got := Width(tc.in); got != tc.want {
			t.Errorf("Width(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestCut(t *testing.T) {
	for _, tc := range []struct {
		in          string
		width       int
		cut, tailed string
	}{
		{"short", 10, "short", "short"},
		{"short", 0, "short", "short"},
		{"abcdefgh", 5, "abcd…", "…efgh"},
		{"ビルドが失敗", 7, "ビルド…", "…が失敗"},
		{"ビルドが失敗", 6, "ビル…", "…失敗"}, // a wide rune does not fit the last column
		{"🔥 fire", 4, "🔥 …", "…ire"},
	} {
		if got := Cut(tc.in, tc.width); got != tc.cut {
			t.Errorf("Cut(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.cut)
		}
		if got := CutStart(tc.in, tc.width); got != tc.tailed {
			t.Errorf("CutStart(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.tailed)
		}
		if tc.width > 0 && Width(Cut(tc.in, tc.width)) > tc.width {
			t.Errorf("Cut(%q, %d) is wider than %d", tc.in, tc.width, tc.width)
		}
	}
}

// Wide runes count two columns: text in Japanese with emoji wraps to lines
// that fit the width as a terminal draws them, and keeps every rune.
func TestLayoutWideRunes(t *testing.T) {
	const text = "概要: キャッシュディレクトリが無いとビルドが失敗する🔥 再現手順を書いた\n\nissue\twhy\nISSUE-1\tキャッシュディレクトリが無いとビルドが失敗する🔥🔥\n"
	for _, width := range []int{20, 30, 40} {
		out := Layout(text, width)
		for _, l := range strings.Split(out, "\n") {
			if n := Width(l); n > width {
				t.Errorf("width %d: a line of %d columns: %q", width, n, l)
			}
		}
		strip := func(s string) string {
			return strings.Join(strings.Fields(strings.ReplaceAll(s, "\t", " ")), "")
		}
		if got, want := strip(out), strip(text); got != want {
			t.Errorf("width %d: text changed:\n%s", width, out)
		}
	}
}
