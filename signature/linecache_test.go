package signature

import (
	"bytes"
	"fmt"
	"testing"
)

// The table of lines seen lately changes nothing: every line of the
// corpus's real outputs, and lines that need preparing first (escape
// sequences, carriage returns, the workspace root, no-break spaces, a
// line longer than the table keeps), normalizes through it to what the
// rules make of it on buffers that never saw a line, whether the line is
// found in the table or not.
func TestLineCacheChangesNothing(t *testing.T) {
	r := compileSet(t, Current, "/home/ci/src/app")
	lines := bytes.Split(corpusOnce(t, ""), []byte("\n"))
	lines = append(lines,
		[]byte("\x1b[31m--- FAIL: TestX (0.01s)\x1b[0m"),
		[]byte("50%\r100% /tmp/x.go:12"),
		[]byte("    /home/ci/src/app/pkg/x.go:42 +0x1f"),
		[]byte("want\xc2\xa0got 12:00:01"),
		bytes.Repeat([]byte("0123456789 abcdef "), cacheMaxLine/8),
	)
	// Twice over, so that the second time round lines are found.
	lines = append(lines, lines...)
	warm := &lineBufs{sc: &r.sc}
	found := 0
	for i, b := range lines {
		fresh := &lineBufs{sc: &r.sc}
		wantOut, wantRaw := fresh.normalizeLine2(nil, b)
		if tb := warm.seen.t; tb != nil {
			if s := tb.slotOf(b); s.used && bytes.Equal(s.line, b) && tb.rest == 0 && len(b) <= cacheMaxLine {
				found++
			}
		}
		gotOut, gotRaw := warm.appendLine2([]byte("x"), b)
		if !bytes.Equal(gotOut[1:], wantOut) || !bytes.Equal(gotRaw, wantRaw) {
			t.Fatalf("line %d %q: through the table %q (raw %q), want %q (raw %q)", i, b, gotOut[1:], gotRaw, wantOut, wantRaw)
		}
	}
	if found < len(lines)/4 {
		t.Errorf("%d of %d lines found in the table; the corpus repeats more than that", found, len(lines))
	}
}

// Output that does not repeat itself makes the table rest, for longer
// after each trial that fails, and a trial that succeeds ends the rests.
func TestLineCacheRests(t *testing.T) {
	var c lineCache
	distinct := func(n, from int) {
		for i := range n {
			if c.use() {
				slot, hit := c.lookup(fmt.Appendf(nil, "line %d", from+i))
				if hit {
					t.Fatalf("line %d found in the table", from+i)
				}
				slot.store(nil, nil, nil)
			}
		}
	}
	resting := func() int {
		n := 0
		for !c.use() {
			n++
		}
		return n
	}
	distinct(cacheTrial, 0)
	if n := resting(); n != cacheRest {
		t.Fatalf("rested %d lines after a failed trial, want %d", n, cacheRest)
	}
	c.lookup([]byte("the line")) // the line resting's last use let through
	distinct(cacheTrial-1, 1<<20)
	if n := resting(); n != 2*cacheRest {
		t.Fatalf("rested %d lines after a second failed trial, want %d", n, 2*cacheRest)
	}
	same := []byte("the same line")
	c.lookup(same)
	for range cacheTrial - 1 {
		slot, hit := c.lookup(same)
		if !hit {
			slot.store(same, nil, same)
		}
	}
	if n := resting(); n != 0 {
		t.Fatalf("rested %d lines after a trial that found its lines", n)
	}
	distinct(cacheTrial, 2<<20)
	if n := resting(); n != cacheRest {
		t.Fatalf("rested %d lines after a failed trial that follows a good one, want %d", n, cacheRest)
	}
}
