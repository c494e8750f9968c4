package issuequeue

import (
	"fmt"
	"strings"
	"testing"
)

func tableString(t *table, src []byte) string {
	if t == nil {
		return "<nil>"
	}
	var b strings.Builder
	for _, r := range append([]row{t.header}, t.rows...) {
		fmt.Fprintf(&b, "line %d [%d,%d) w%d:", r.line, r.start, r.end, r.width)
		for _, c := range r.cells {
			if c.missing {
				b.WriteString(" <missing>")
			} else {
				fmt.Fprintf(&b, " [%d,%d)%q", c.start, c.end, src[c.start:c.end])
			}
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "end %d endLine %d\n", t.end, t.endLine)
	return b.String()
}

// checkFastTable compares the fast path with goldmark on every paragraph of src.
func checkFastTable(t *testing.T, src []byte) {
	t.Helper()
	s := scanBlocks(src)
	buf := &tableBuf{} // reused from paragraph to paragraph, as the parallel parse does
	for _, p := range s.paras {
		ft, ok := s.fastTable(p, buf)
		fresh, freshOK := s.fastTable(p, nil)
		if ok != freshOK || tableString(ft, src) != tableString(fresh, src) {
			t.Fatalf("fast path with a reused buffer and without differ on %q:\n%s\n%s", src[p.start:p.end], tableString(ft, src), tableString(fresh, src))
		}
		if !ok {
			continue
		}
		gt := s.goldmarkTable(newBlockParser(), p)
		if got, want := tableString(ft, src), tableString(gt, src); got != want {
			t.Fatalf("fast path and goldmark differ on %q\nfast:\n%s\ngoldmark:\n%s", src[p.start:p.end], got, want)
		}
	}
}

var fastTableCases = []string{
	"| Field | Value |\n|-------|-------|\n| Status | pending |\n| Failure-Signature | |\n| Halted ||\n",
	"|a|b|\n|:-|-:|\n|1|2|3|\n|x|\n",
	"| a | b |\n|---|---|\n| `x\\|y` | \\| |\n| a \\|\n",
	"  | a | b |\n  |---|---|\n  | c | d |   \n",
	"| a |\n|---|---|\n| b |\n",
	"| a | b |\n| --- | :-: |\n| c | d |\r\n| e | f |\r\n",
	"| a | b |\n|-- -|---|\n",
	"| a | b |\n| - | - |\n|   |   |\n",
	"|a|\n|-|\n|\\\\|x|\n",
	"| a | b |\n|---|---|\n||\n| |\n|\n",
	"| a | b | c |\n|---|---|---|\n| 1 | 2 | 3 |\n| 4 | 5 | 6 |\n\n| x | y |\n|---|---|\n| z |\n\n| p | q | r | s |\n|-|-|-|-|\n| 1 |\n",
	"| Field\t| Value |\n|---|\t---|\n|\tStatus\t|\tpending\t|\n",
	"a | b\n--|--\nc | d\ne\n",
	"text\nmore text\n| a | b |\n|---|---|\n| c | d |\n",
	"| a | b |\n    |---|---|\n| c | d |\n",
	"| a | b |\n\t|---|---|\n| c | d |\n",
	"| a | b |\n   |---|---|\n  \t| c | d |\n",
	"| a | b | c |\nx\n|---|---|\n| c | d |\n",
	"x\n| a | b | c |\n|---|---|\n| c | d |\n|---|---|---|\n",
	"\\| a \\|\n|-|\n",
	"a\n-\n| b |\n",
	"| a |\r\n|:-:|\r\n|\tb\t|\r\n",
}

func TestFastTableAgreesWithGoldmark(t *testing.T) {
	for _, c := range fastTableCases {
		checkFastTable(t, []byte(c))
	}
}

func FuzzFastTable(f *testing.F) {
	for _, c := range fastTableCases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, src string) {
		checkFastTable(t, []byte(src))
	})
}

func TestFastTableAfterBOM(t *testing.T) {
	checkFastTable(t, []byte("\ufeff| a | b |\n|---|---|\n| c | d |\n"))
}
