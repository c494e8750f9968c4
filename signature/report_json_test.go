package signature

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestUnquoteJSON checks the quick reading of test2json's strings against
// strconv.Unquote, which reads the others: wherever it answers, it answers
// as Unquote does.
func TestUnquoteJSON(t *testing.T) {
	pieces := []string{"a", "é", "\\n", "\\t", "\\\"", "\\\\", "\\u00e9", "\\x41", "\\'", "\\", "\xff", "\t", "---", " "}
	rng := rand.New(rand.NewPCG(3, 4))
	quick := 0
	for range 50000 {
		q := ""
		for range rng.IntN(8) {
			q += pieces[rng.IntN(len(pieces))]
		}
		if !wholeJSONString(q) {
			continue // testJSON's string would end at its unescaped quote
		}
		got, ok := unquoteJSON([]byte("x"), []byte(q))
		if !ok {
			if string(got) != "x" {
				t.Fatalf("unquoteJSON(%q) = %q, false; want the buffer as it was", q, got)
			}
			continue
		}
		quick++
		want, err := strconv.Unquote(`"` + q + `"`)
		if err != nil || string(got) != "x"+want {
			t.Fatalf("unquoteJSON(%q) = %q; strconv.Unquote: %q, %v", q, got[1:], want, err)
		}
	}
	if quick < 1000 {
		t.Fatalf("only %d strings read the quick way", quick)
	}
}

// wholeJSONString reports whether testJSON reads all of q as one string's
// contents: no quote in it but escaped.
func wholeJSONString(q string) bool {
	for e := 0; e < len(q); e++ {
		switch q[e] {
		case '\\':
			e++
		case '"':
			return false
		}
	}
	return true
}
