package issuequeue

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// scanSeeds exercise every block the scanner models or must recognise as a
// container: lists, quotes, fences in lists, HTML blocks of each type,
// setext headings, tabs, CRLF.
var scanSeeds = []string{
	"# a\n## b\n### c\n#### d\n##### e\n###### f\n####### g\n",
	"#\n##  \n## x ##\n## x #y\n#5 bolt\n\\## x\n",
	"   ## three\n    ## four\n\t## tab\n  \t## mixed\n",
	"title\n=====\n\ntitle\n---\n\ntitle\n  ---  \n\ntitle\n- - -\n",
	"a\nb\n---\n\n---\n\n***\n___\n",
	"para\n    indented lazy\n## h\n",
	"    code\n## h\n    code\n\n    more\n## after\n",
	"```\n## in fence\n```\n## out\n~~~~\n## in\n~~~\n## still in\n~~~~~\n## out\n",
	"``` go\n## in\n ```\n## out\n```a`b\n## h\n",
	"   ```\n## in\n   ```\n    ```\n## out of indented\n",
	"```\n## never closed\n",
	"<!-- comment\n## ISSUE-20261122-001\n-->\n## after\n",
	"<!-- one line --> text\n## h\n",
	"<script>\n## in\n</script>\n## out\n<pre>x</pre>\n## out2\n<style type=\"a\">\n## in\n</STYLE>\n## out3\n",
	"<?php\n## in\n?>\n## out\n<!DOCTYPE html\n## in\n>\n## out\n<![CDATA[\n## in\n]]>\n## out\n",
	"<details>\n## in\n\n## out\n<div>\n## in\n</div>\n## in too\n\n## out\n",
	"<custom-tag>\n## in\n\n## out\npara\n<custom-tag>\n## h\n",
	"<a href=\"x\">\n## in\n\n</b>\n## in\n\n<td>\n## in\n",
	"- item\n## h\n- item\n  ## in item\n-\n  ## in empty item\n",
	"1. one\n2. two\n   ## in\n10) ten\n## out\n",
	"- a\n\n  b\n\n## out\n- a\n\n    ## code in item\n",
	"- a\n  ```\n  ## in fence in item\n  ```\n## out\n",
	"- a\n  ```\n## out? fence unclosed\n```\n## h\n",
	"> quote\n## out\n> ## in\n>\n## out2\n> lazy\ncontinued\n## out3\n",
	"> ```\n## out\n> - a\n## h\n",
	"para\n1. not interrupting unless one\n2. x\n## h\n",
	"para\n2. two cannot interrupt\n## h\n",
	"* * *\n- - -\n## h\n",
	"| Field | Value |\n|---|---|\n| a | b |\n---\n## h\n",
	"text\n| a | b |\n|---|---|\n---\n",
	"[ref]: /url\n===\n\n[ref]: /url\ntitle\n---\n",
	"## a\r\n## b\r\ntitle\r\n---\r\n```\r\n## in\r\n```\r\n",
	"\t\t## tabs\n \t## x\n- a\n\t## in item\n",
	"\xef\xbb\xbf## ISSUE-20261122-001\n",
	"## ISSUE-20261122-001\n\n| Field | Value |\n|-------|-------|\n| Status | pending |\n\n### Summary\ntext\n\n### Failure Details\n````\n## ISSUE-20261122-002\n```\n````\n",
	"## x\n\n<details>\n<summary>more</summary>\n\n## y\n</details>\n",
	"+ a\n+ b\n\n  ## in\n\n* c\n## out\n",
	"- ```\n  ## in\n  ```\n## out\n",
	">     code\n## h\n> > nested\n## h2\n",
	"1.  a\n\n     ## in\n\n## out\n",
	"-\n\n  ## not in item\n",
	"a\r\n---\r\r\n- -\r-\r\n-\r\n## h\r\npara\r\n-\r\n",
	"para\n01. one\n## h\npara\n1) x\n",
	"a\n    ---\n---\n\nb\n:--\n===\n",
	"| a | b |\n|---|---|\n===\nx\n",
	"- a\n> b\n## c\n> d\n- e\n  > ## f\n",
	"1. a\n   1. b\n      ## c\n   ## d\n## e\n",
	"- a\n\n\n  ## b\n",
	"> a\n> ```\n> ## x\n## y\n> ```\n## z\n",
	"<div>\n- a\n\n## b\n",
	"##\v x\n#\fx\n\v\n## h\n",
	"a\n\v\n---\n",
	"para\n01. one\n---\n",
	"## ISSUE-20261122-001\n\n- **Status**: skipped\n- **Auto-Retry:** true\n* Status: x\n+ Max-Retries: 2\n\n  more\n- a\n  - Status: nested\n-\n  Status: below\n1. Verify: go\n- Type: a\nlazy\n- \tStatus: tab\n",
	"- Status: a\r\n\r\n- **Verify**: b\r\n  ## in\r\n> - Status: quoted\n",
}

// FuzzScanAgreesWithGoldmark: the top-level headings the scanner finds are
// the ones goldmark finds, unless the scanner says it cannot tell. With
// SCAN_STRICT set in the environment, an ambiguity fails too, and so does an
// input that takes the scanner or goldmark more than a second: that shows
// where the scanner falls back.
func FuzzScanAgreesWithGoldmark(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		start := time.Now()
		s := scanBlocks(src)
		if d := time.Since(start); d > time.Second && os.Getenv("SCAN_STRICT") != "" {
			t.Fatalf("scanning %d bytes took %v: %q", len(src), d, src)
		}
		start = time.Now()
		want := goldmarkHeadings(src)
		if d := time.Since(start); d > time.Second && os.Getenv("SCAN_STRICT") != "" {
			t.Fatalf("goldmark took %v on %d bytes: %q", d, len(src), src)
		}
		if s.cannotTell() {
			if os.Getenv("SCAN_STRICT") != "" {
				t.Fatalf("ambiguous %v for %q", s.ambiguous, src)
			}
			return
		}
		if got := scannerHeadings(s); !slices.Equal(got, want) {
			t.Fatalf("top-level headings (line:level) differ for %q\nscanner:  %v\ngoldmark: %v", src, got, want)
		}
		if got, want := scannerListItems(s), goldmarkListItems(src); !slices.Equal(got, want) {
			t.Fatalf("top-level list items differ for %q\nscanner:  %v\ngoldmark: %v", src, got, want)
		}
	})
}

// scannerListItems returns the items of the top-level lists the scanner
// found, as field lists read them: "line:col" of the first line's text,
// and "+" for an item of that one line alone.
func scannerListItems(s *scan) []string {
	var out []string
	for _, l := range s.lists {
		for _, it := range l.items {
			single := ""
			if it.single {
				single = "+"
			}
			out = append(out, fmt.Sprintf("%d:%d%s", it.line, s.col(it.start), single))
		}
	}
	return out
}

// goldmarkParse parses src as goldmark with GFM tables does, after
// dropping a leading byte-order mark (goldmark does not know it, and the
// store reads the file as text); it returns the parsed bytes and whether
// there was a mark.
func goldmarkParse(src []byte) (ast.Node, []byte, bool) {
	bom := bytes.HasPrefix(src, []byte(utf8BOM))
	if bom {
		src = src[len(utf8BOM):]
	}
	return goldmark.New(goldmark.WithExtensions(extension.Table)).Parser().Parse(text.NewReader(src)), src, bom
}

// goldmarkListItems is scannerListItems from goldmark's parse of the whole
// of src: the items of the lists that are direct children of the document.
func goldmarkListItems(src []byte) []string {
	doc, src, bom := goldmarkParse(src)
	var out []string
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		if _, ok := n.(*ast.List); !ok {
			continue
		}
		for it := n.FirstChild(); it != nil; it = it.NextSibling() {
			c := it.FirstChild()
			switch c.(type) {
			case *ast.TextBlock, *ast.Paragraph:
			default:
				continue
			}
			if c.Lines().Len() == 0 {
				continue
			}
			seg := c.Lines().At(0)
			line := bytes.Count(src[:seg.Start], []byte{'\n'})
			col := seg.Start - (bytes.LastIndexByte(src[:seg.Start], '\n') + 1) + 1
			if bom && line == 0 {
				col += len(utf8BOM)
			}
			single := ""
			if c.Lines().Len() == 1 && c.NextSibling() == nil && seg.Padding == 0 {
				single = "+"
			}
			out = append(out, fmt.Sprintf("%d:%d%s", line, col, single))
		}
	}
	return out
}

// cannotTell reports whether the scanner said it cannot tell where some
// block ends.
func (s *scan) cannotTell() bool {
	return len(s.ambiguous) > 0 || len(s.tooDeep) > 0 || len(s.tooLong) > 0
}

func scannerHeadings(s *scan) []string {
	var out []string
	for _, h := range s.headings {
		out = append(out, fmt.Sprintf("%d:%d", h.line, h.level))
	}
	slices.Sort(out)
	return out
}

// goldmarkHeadings returns the line and level of every heading that is a
// direct child of the document, as goldmark with GFM tables parses src. A
// leading byte-order mark is dropped first: goldmark does not know it, and
// the store reads the file as text.
func goldmarkHeadings(src []byte) []string {
	doc, src, _ := goldmarkParse(src)
	var out []string
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		h, ok := n.(*ast.Heading)
		if !ok {
			continue
		}
		pos := h.Pos()
		if pos < 0 && h.Lines().Len() > 0 {
			pos = h.Lines().At(0).Start
		}
		out = append(out, fmt.Sprintf("%d:%d", bytes.Count(src[:pos], []byte{'\n'}), h.Level))
	}
	slices.Sort(out)
	return out
}

// TestScanSeedsAgree runs the differential check on the seeds and on every
// markdown file under testdata, so that plain `go test` exercises it with
// realistic files too.
func TestScanSeedsAgree(t *testing.T) {
	inputs := testdataMarkdown(t)
	for i, s := range scanSeeds {
		inputs[fmt.Sprintf("seed %d", i)] = []byte(s)
	}
	for name, src := range inputs {
		s := scanBlocks(src)
		if s.cannotTell() {
			continue
		}
		if got, want := strings.Join(scannerHeadings(s), " "), strings.Join(goldmarkHeadings(src), " "); got != want {
			t.Errorf("%s: headings differ\nscanner:  %s\ngoldmark: %s", name, got, want)
		}
		if got, want := strings.Join(scannerListItems(s), " "), strings.Join(goldmarkListItems(src), " "); got != want {
			t.Errorf("%s: list items differ\nscanner:  %s\ngoldmark: %s", name, got, want)
		}
	}
}

// testdataMarkdown returns every markdown file under testdata, by name.
func testdataMarkdown(t *testing.T) map[string][]byte {
	files, _ := filepath.Glob("testdata/*/*.md")
	inputs := map[string][]byte{}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		inputs[name] = b
	}
	return inputs
}
