package issuequeue

import (
	"fmt"
	"maps"
	"reflect"
	"strings"
	"testing"

	"github.com/autoretry/orchestrator/internal/testkit/hostile"
)

// splitAgrees fails t unless scanning src in two halves split at the first
// seam at or after offset mid gives exactly the one-pass scan; it reports
// whether the scan came from the two halves.
func splitAgrees(t testing.TB, name string, src []byte, mid int) bool {
	t.Helper()
	want := scanOnePass(src, splitLines(src))
	got, split := scanSplit(src, mid)
	want.md, got.md = nil, nil // goldmark parsers, made when needed
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s split at %d (seam %d): the two-half scan differs from the one-pass scan\none pass: %+v\ntwo halves: %+v",
			name, mid, seamAfter(src, mid), summarize(want), summarize(got))
	}
	return split
}

// summarize is what a failure shows of a scan.
func summarize(s *scan) string {
	return fmt.Sprintf("%d lines, headings %v, %d paras, %d lists, hidden %v, ambiguous %v, tooDeep %v, tooLong %v, unclosed %+v, work %d, spent at %d, defs %d",
		len(s.lines), scannerHeadings(s), len(s.paras), len(s.lists), s.hidden, s.ambiguous, s.tooDeep, s.tooLong, s.unclosed, s.work, s.spentLine, s.defsRead)
}

// A large file is scanned in two halves at once. Split at any line, the
// result is the one-pass scan's, exactly: when the first half ends inside
// a code fence, an HTML block, or a list or block quote that goldmark
// reads over the seam, the file is scanned again in one pass.
func TestScanSplitAgrees(t *testing.T) {
	inputs := map[string][]byte{}
	for i, src := range goldenInputs(t) {
		inputs[fmt.Sprintf("golden %d", i)] = src
	}
	// Every seed, and every pair of seeds, which puts each seed's open
	// blocks in front of the other's headings.
	for i, a := range scanSeeds {
		for j, b := range scanSeeds {
			inputs[fmt.Sprintf("seeds %d+%d", i, j)] = []byte(a + b)
		}
	}
	for _, k := range hostile.Kinds() {
		src, err := hostile.Generate(k.Name, 4<<10)
		if err != nil {
			t.Fatal(err)
		}
		inputs["hostile "+k.Name] = src
	}
	inputs["generated"] = generateQueue(50)
	// Link definitions too long to read under a setext underline.
	inputs["long definitions"] = []byte("a\n\n## b\n\n" + strings.Repeat("[ref]: /url\n", maxDefsParagraph/12+1) + "title\n---\n")
	maps.Copy(inputs, testdataMarkdown(t))
	splits := 0
	for name, src := range inputs {
		// Every line start is tried as the place to look for a seam from;
		// with -short (the race detector's run), a few spread over the file.
		var starts []int
		for mid := 0; mid < len(src); mid++ {
			if mid == 0 || src[mid-1] == '\n' {
				starts = append(starts, mid)
			}
		}
		step := 1
		if testing.Short() {
			step = max(1, len(starts)/4)
		}
		for i := 0; i < len(starts); i += step {
			if splitAgrees(t, name, src, starts[i]) {
				splits++
			}
		}
	}
	if splits == 0 {
		t.Error("no input was scanned in two halves")
	}
}

// FuzzScanSplit: a scan in two halves, split anywhere, is the one-pass scan.
func FuzzScanSplit(f *testing.F) {
	for i, s := range scanSeeds {
		f.Add([]byte(s+scanSeeds[(i+1)%len(scanSeeds)]), uint16(len(s)))
	}
	f.Fuzz(func(t *testing.T, src []byte, mid uint16) {
		splitAgrees(t, "input", src, int(mid)%(len(src)+1))
	})
}

// The file the commands read is split where it is large enough: a queue of
// ten thousand issues is, and its split scan is the one-pass scan.
func TestLargeQueueScansSplit(t *testing.T) {
	src := generateQueue(2000)
	if len(src) < splitFrom {
		t.Fatalf("a generated queue of 2,000 issues is %d bytes, under %d", len(src), splitFrom)
	}
	if seamAfter(src, len(src)/2) < 0 {
		t.Fatal("no seam in the second half of a generated queue")
	}
	if !splitAgrees(t, "generated", src, len(src)/2) {
		t.Error("a generated queue was scanned in one pass, not in two halves")
	}
}

// The link definitions read to tell setext headings apart are bounded per
// file: when the two halves together read more than one file may, the
// halves are not what one pass gives, and the file is scanned in one pass.
func TestScanSplitKeepsTheDefinitionBudget(t *testing.T) {
	unit := strings.Repeat("[ref]: /url\n", 80) + "title\n---\n\n"
	half := strings.Repeat(unit, maxDefsFile/len(unit)*3/4)
	src := []byte(half + "## seam\n\n" + half)
	if one := scanOnePass(src, splitLines(src)); len(one.tooLong) == 0 {
		t.Fatal("the input does not run out of the definition budget in one pass")
	}
	if splitAgrees(t, "definitions", src, len(half)-1) {
		t.Error("the halves were used though together they read more definitions than a file may")
	}
}

// BenchmarkScanQueue10k puts the two-halves scan of a queue of ten
// thousand issues (about 7 MiB) beside the one-pass scan: what scanSplit
// buys where the machine has a second processor free (bench/README.md).
func BenchmarkScanQueue10k(b *testing.B) {
	src := generateQueue(10000)
	for _, bc := range []struct {
		name string
		scan func() *scan
	}{
		{"onepass", func() *scan { return scanOnePass(src, splitLines(src)) }},
		{"split", func() *scan { s, _ := scanSplit(src, len(src)/2); return s }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for b.Loop() {
				bc.scan()
			}
		})
	}
}
