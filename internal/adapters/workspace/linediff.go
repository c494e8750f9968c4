package workspace

import (
	"bytes"
	"fmt"
	"strings"
)

// An op is one line of an edit script: kept (' '), removed ('-') or added ('+').
type op struct {
	kind byte
	line string // with its newline, if it has one
}

// maxEdits bounds the search for a shortest edit script (its memory grows
// with the square of the edits); past it the differing middle of the two
// files is shown as removed whole and added whole.
const maxEdits = 1000

// contextLines is the number of unchanged lines shown around a change.
const contextLines = 3

func splitLines(data []byte) []string {
	if len(data) == 0 {
		return nil
	}
	lines := strings.SplitAfter(string(data), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// diffLines returns an edit script turning a into b, shortest when it has at
// most maxEdits edits.
func diffLines(a, b []string) []op {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ops := make([]op, 0, len(a)+len(b)-pre-suf)
	for _, l := range a[:pre] {
		ops = append(ops, op{' ', l})
	}
	ops = append(ops, myers(a[pre:len(a)-suf], b[pre:len(b)-suf])...)
	for _, l := range a[len(a)-suf:] {
		ops = append(ops, op{' ', l})
	}
	return ops
}

// myers is E. Myers' O(ND) difference algorithm ("An O(ND) Difference
// Algorithm and Its Variations", 1986), greedy forward pass and backtrack.
func myers(a, b []string) []op {
	n, m := len(a), len(b)
	limit := min(n+m, maxEdits)
	off := limit + 1
	v := make([]int, 2*limit+3)
	var trace [][]int // trace[d][k+d]: the furthest x on diagonal k after d edits
	for d := 0; d <= limit; d++ {
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || k != d && v[off+k-1] < v[off+k+1] {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				trace = append(trace, append([]int(nil), v[off-d:off+d+1]...))
				return backtrack(a, b, trace)
			}
		}
		trace = append(trace, append([]int(nil), v[off-d:off+d+1]...))
	}
	ops := make([]op, 0, n+m)
	for _, l := range a {
		ops = append(ops, op{'-', l})
	}
	for _, l := range b {
		ops = append(ops, op{'+', l})
	}
	return ops
}

func backtrack(a, b []string, trace [][]int) []op {
	var rev []op
	x, y := len(a), len(b)
	for d := len(trace) - 1; d > 0; d-- {
		prev := trace[d-1] // indexed by k + d - 1
		k := x - y
		var pk int
		if k == -d || k != d && prev[k-1+d-1] < prev[k+1+d-1] {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := prev[pk+d-1]
		py := px - pk
		for x > px && y > py {
			rev = append(rev, op{' ', a[x-1]})
			x--
			y--
		}
		if x == px {
			rev = append(rev, op{'+', b[y-1]})
		} else {
			rev = append(rev, op{'-', a[x-1]})
		}
		x, y = px, py
	}
	for x > 0 && y > 0 {
		rev = append(rev, op{' ', a[x-1]})
		x--
		y--
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev
}

func countLines(ops []op) (added, removed int) {
	for _, o := range ops {
		switch o.kind {
		case '+':
			added++
		case '-':
			removed++
		}
	}
	return added, removed
}

// writeHunks writes ops as unified diff hunks with context lines around
// each change, hunks closer than twice the context merged.
func writeHunks(out *bytes.Buffer, ops []op) {
	// ai[i], bi[i]: lines of a and b before ops[i].
	ai, bi := make([]int, len(ops)+1), make([]int, len(ops)+1)
	for i, o := range ops {
		ai[i+1], bi[i+1] = ai[i], bi[i]
		if o.kind != '+' {
			ai[i+1]++
		}
		if o.kind != '-' {
			bi[i+1]++
		}
	}
	for i := 0; i < len(ops); {
		for i < len(ops) && ops[i].kind == ' ' {
			i++
		}
		if i == len(ops) {
			return
		}
		start := max(i-contextLines, 0)
		end := i
		for {
			for end < len(ops) && ops[end].kind != ' ' {
				end++
			}
			j := end
			for j < len(ops) && ops[j].kind == ' ' {
				j++
			}
			if j < len(ops) && j-end <= 2*contextLines {
				end = j
				continue
			}
			break
		}
		stop := min(end+contextLines, len(ops))
		fmt.Fprintf(out, "@@ -%s +%s @@\n", hunkRange(ai[start], ai[stop]-ai[start]), hunkRange(bi[start], bi[stop]-bi[start]))
		for _, o := range ops[start:stop] {
			out.WriteByte(o.kind)
			out.WriteString(o.line)
			if !strings.HasSuffix(o.line, "\n") {
				out.WriteString("\n\\ No newline at end of file\n")
			}
		}
		i = stop
	}
}

// hunkRange words a hunk's lines as unified diffs do: the first line
// (1-based; the line before when there are none) and the count, left out
// when it is 1.
func hunkRange(before, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", before)
	case 1:
		return fmt.Sprintf("%d", before+1)
	}
	return fmt.Sprintf("%d,%d", before+1, n)
}
