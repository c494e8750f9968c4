package issuequeue

import (
	"fmt"
	"strings"
	"testing"

	"github.com/yuin/goldmark/ast"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// blockTree prints the block tree md makes of src: every node's kind, its
// position and its lines, and a table's alignments.
func blockTree(md parser.Parser, src []byte) string {
	var b strings.Builder
	var walk func(n ast.Node, depth int)
	walk = func(n ast.Node, depth int) {
		fmt.Fprintf(&b, "%s%s pos=%d", strings.Repeat("  ", depth), n.Kind(), n.Pos())
		if t, ok := n.(*extast.Table); ok {
			fmt.Fprintf(&b, " align=%v", t.Alignments)
		}
		if c, ok := n.(*extast.TableCell); ok {
			fmt.Fprintf(&b, " align=%v", c.Alignment)
		}
		if n.Type() == ast.TypeBlock {
			for i := 0; i < n.Lines().Len(); i++ {
				seg := n.Lines().At(i)
				fmt.Fprintf(&b, " [%d,%d)", seg.Start, seg.Stop)
			}
		}
		b.WriteByte('\n')
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			walk(c, depth+1)
		}
	}
	walk(md.Parse(text.NewReader(src)), 0)
	return b.String()
}

// checkTableTransformer holds the parser's own table transformer to
// goldmark's table extension on src.
func checkTableTransformer(t *testing.T, src []byte) {
	t.Helper()
	if got, want := blockTree(newBlockParser(), src), blockTree(referenceTableParser(), src); got != want {
		t.Fatalf("block trees differ on %q\nours:\n%s\ngoldmark's extension:\n%s", src, got, want)
	}
}

var tableTransformerCases = []string{
	"| a | b |\n|:--|--:|\n| 1 | 2 |\n",
	"a | b\n:-: | ---\n1 | 2 | 3\n",
	"para\n| a |\n| - |\n| x |\n",
	"| a | b | c |\n|---|---|\n",
	"| a |\n|---|---|\n| b |\n",
	"| a |\n| : |\n",
	"| a |\n| :-- : |\n",
	"| a |\n| - - |\n",
	"| a |\n|--\f|\n",
	"    | a |\n    |---|\n",
	"   | a |\n   |---|\n",
	"| `a\\|b` | c |\n|---|---|\n| \\| | d |\n",
	"[x]: /url\n| a | b |\n|---|---|\n===\n",
	"- | a |\n  |---|\n  | b |\n",
	"> | a |\n> |---|\n",
	"| a |\r\n|---|\r\n| b |\r\n",
	"|---|\n|---|\n",
	"|\n|-\n",
}

func TestTableTransformerIsGoldmarks(t *testing.T) {
	inputs := append(append([]string{}, tableTransformerCases...), fastTableCases...)
	inputs = append(inputs, scanSeeds...)
	for _, src := range inputs {
		checkTableTransformer(t, []byte(src))
	}
}

func FuzzTableTransformer(f *testing.F) {
	for _, s := range tableTransformerCases {
		f.Add([]byte(s))
	}
	for _, s := range fastTableCases {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(src) > 4096 {
			return
		}
		checkTableTransformer(t, src)
	})
}
