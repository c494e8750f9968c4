// Package suggest finds the known word a misspelt one was meant to be, for
// "did you mean" hints.
package suggest

import "strings"

// Nearest returns the candidate closest to s, ignoring case, if it is close
// enough to be a plausible typo: within an edit distance of about half of
// s, or starting with s (three letters or more). It returns "" otherwise.
func Nearest(s string, candidates []string) string {
	ls := strings.ToLower(s)
	best, bestD := "", len(s)/2+1
	for _, c := range candidates {
		lc := strings.ToLower(c)
		d := distance(ls, lc)
		if d < bestD || (d == bestD && len(ls) >= 3 && strings.HasPrefix(lc, ls)) {
			best, bestD = c, d
		}
	}
	return best
}

// distance is the Levenshtein distance between a and b, in bytes.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Distance is the Levenshtein distance between a and b, in bytes.
func Distance(a, b string) int { return distance(a, b) }
