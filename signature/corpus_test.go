package signature

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// The corpus in testdata/corpus holds real failing test runs of real public
// projects, one gzip'd txtar archive per project, captured by
// scripts/corpus/capture.sh: for every injected bug KIND@LOC, run a, its
// rerun b in the same checkout, c in a second checkout at another path, and s
// after an unrelated edit above the bug. See testdata/corpus/README.md.

// maxSplitRate is the largest share of same-failure pairs (among runs a, b
// and c of one bug) allowed to get different signatures.
const maxSplitRate = 0.05

// maxSplits holds a set that misses maxSplitRate to what it was last
// measured at, so that it guards against getting worse without claiming
// the bar. Each blind set was measured once with rules never tuned on it,
// then the classes it showed were added to the rules (so it is blind no
// more): blind split 5 of 81 pairs under v2 (6.2%: go-lru's race reports
// and a random test's callers), 0 under v3; blind2 split 14 of 108 (13.0%)
// under v3 as first built, 6 (5.6%) once node's spec reporter's totals and
// races caught in other tests were added; blind3 split 18 of 144 (12.5%)
// and merged 3 different-bug pairs (numbers of 5 or more digits were
// masked, as v1 and v2 do: two hash values), 8 (5.6%) once long numbers
// were kept, hypothesis's search logs dropped and parallel tests that
// finished before a panic too. What is left are tests of random inputs,
// whose messages print other values every run (go-btree's permutations,
// "insert found item 374", then 9608; go-ulid's random entropy; a
// falsifying example hypothesis found anew in another checkout):
// different assertion values stay apart, so no rule may merge them.
// blind4, measured last, split 7 of 141 (5.0%, within the bar) and merged
// none; 3 (2.1%) once cargo test -q's progress and JavaScript stack frames
// cut short were added. The 3 are one bug whose output is longer than the
// 256 KiB a capture keeps, so each run's kept part starts at another
// place in a line.
var maxSplits = map[string]int{"blind2": 6, "blind3": 8}

// indistinct lists different-bug pairs whose failures print the same text:
// no signature can tell them apart, so they do not count as merged. The
// test checks that their outputs differ in numbers only.
var indistinct = map[string]string{
	// Skipping the first byte and dropping the line that stores the hash
	// both leave the hash at its offset basis: the same assertion with
	// the same values in the same test; the outputs differ in the thread
	// id, the time and a line number that the removed line moved.
	"blind3/rust-fnv offbyone@write~removedline@write": "the same assertion, values and test",
}

// corpusBug is one injected bug of a corpus project.
type corpusBug struct {
	name, kind string
	out        map[string][]byte // by run name
	root       map[string]string
}

// corpusProject is one archive.
type corpusProject struct {
	name string // archive name without .txtar.gz, LANG-PROJECT
	lang string
	bugs []*corpusBug
}

// corpusSets are the corpus's sets: train, the projects the rules may be
// tuned on; holdout, other projects and bugs; blind to blind4, others
// again, each captured after the rules were changed and measured before it
// was used to tune them. Each is held to the same bar, but for the split
// pairs of maxSplits.
var corpusSets = []string{"train", "holdout", "blind", "blind2", "blind3", "blind4"}

// corpusRuns are the runs of one bug; the first three are required.
var corpusRuns = []string{"a", "b", "c", "s"}

// shortStride is how far apart the inputs are that a test comparing two
// ways to one result over the whole corpus takes: every one, and under
// -short (the race detector's run in CI, where what counts is that every
// path runs, not every input) every fourth.
func shortStride() int {
	if testing.Short() {
		return 4
	}
	return 1
}

// readCorpus reads every archive of one set.
func readCorpus(t testing.TB, set string) []*corpusProject {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "corpus", set, "*.txtar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(paths)
	var ps []*corpusProject
	for _, path := range paths {
		p, err := readCorpusArchive(path)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		ps = append(ps, p)
	}
	return ps
}

// readCorpusArchive reads and checks one archive.
func readCorpusArchive(path string) (*corpusProject, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return nil, err
	}
	name := strings.TrimSuffix(filepath.Base(path), ".txtar.gz")
	lang, _, ok := strings.Cut(name, "-")
	if !ok {
		return nil, fmt.Errorf("archive name %q is not LANG-PROJECT", name)
	}
	p := &corpusProject{name: name, lang: lang}
	byName := map[string]*corpusBug{}
	for _, file := range txtar.Parse(data).Files {
		dir, base, ok := strings.Cut(file.Name, "/")
		if !ok {
			return nil, fmt.Errorf("file %q is not BUG/NAME", file.Name)
		}
		b := byName[dir]
		if b == nil {
			kind, _, ok := strings.Cut(dir, "@")
			if !ok || kind == "" {
				return nil, fmt.Errorf("bug %q is not KIND@LOC", dir)
			}
			b = &corpusBug{name: dir, kind: kind, out: map[string][]byte{}, root: map[string]string{}}
			byName[dir] = b
			p.bugs = append(p.bugs, b)
		}
		switch run, ext, _ := strings.Cut(base, "."); {
		case base == "cmd":
		case ext == "out":
			b.out[run] = file.Data
		case ext == "root":
			root := strings.TrimSuffix(string(file.Data), "\n")
			if !filepath.IsAbs(root) || strings.Contains(root, "\n") {
				return nil, fmt.Errorf("%s: want one absolute path, have %q", file.Name, file.Data)
			}
			b.root[run] = root
		default:
			return nil, fmt.Errorf("unexpected file %q", file.Name)
		}
	}
	if len(p.bugs) < 2 {
		return nil, fmt.Errorf("%d bugs; a project needs at least two to pair different bugs", len(p.bugs))
	}
	for _, b := range p.bugs {
		for _, run := range corpusRuns {
			_, hasOut := b.out[run]
			_, hasRoot := b.root[run]
			if hasOut != hasRoot || (!hasOut && run != "s") {
				return nil, fmt.Errorf("bug %s: run %s needs both %s.out and %s.root", b.name, run, run, run)
			}
			if hasOut && len(b.out[run]) == 0 {
				return nil, fmt.Errorf("bug %s: %s.out is empty", b.name, run)
			}
		}
	}
	return p, nil
}

// corpusSigner computes the signatures of corpus runs under one rule set,
// compiling the rules once per workspace root.
type corpusSigner struct {
	t     *testing.T
	rules string
	byDir map[string]*Rules
	sums  map[[2]string]string
}

func newCorpusSigner(t *testing.T, rules string) *corpusSigner {
	return &corpusSigner{t: t, rules: rules, byDir: map[string]*Rules{}, sums: map[[2]string]string{}}
}

// sum returns the signature of one run of b in project p.
func (s *corpusSigner) sum(p *corpusProject, b *corpusBug, run string) string {
	key := [2]string{p.name + "/" + b.name, run}
	if sum, ok := s.sums[key]; ok {
		return sum
	}
	root := b.root[run]
	r := s.byDir[root]
	if r == nil {
		var err error
		r, err = Compile(Options{Rules: s.rules, Root: root, Getenv: func(string) string { return "" }})
		if err != nil {
			s.t.Fatal(err)
		}
		s.byDir[root] = r
	}
	sum := r.SumBytes(b.out[run])
	s.sums[key] = sum
	return sum
}

// tally counts pairs and how many of them have equal signatures.
type tally struct{ pairs, equal int }

func (c *tally) add(equal bool) {
	c.pairs++
	if equal {
		c.equal++
	}
}

// of returns how many pairs have equal signatures, or different ones.
func (c tally) of(equal bool) int {
	if equal {
		return c.equal
	}
	return c.pairs - c.equal
}

func (c tally) rate(equal bool) float64 {
	if c.pairs == 0 {
		return 0
	}
	return float64(c.of(equal)) / float64(c.pairs)
}

// corpusFigures are the pair counts of one set under one rule set, by class
// and by language ("" for all).
type corpusFigures struct {
	same     map[string]*tally // a~b, a~c, b~c: by class ("rerun", "checkout") and language
	shifted  map[string]*tally // a~s
	differ   map[string]*tally // a of one KIND ~ a of another
	sameErr  map[string]*tally // a of KIND@L1 ~ a of KIND@L2
	splits   []string          // same-failure and shifted pairs that split
	merges   []string          // different-bug pairs that merged
	errMerge []string          // same-error pairs that merged
}

func (f *corpusFigures) count(m map[string]*tally, key string, equal bool) {
	if m[key] == nil {
		m[key] = &tally{}
	}
	m[key].add(equal)
}

// measure computes the figures of one set under one rule set.
func measure(ps []*corpusProject, s *corpusSigner) *corpusFigures {
	f := &corpusFigures{same: map[string]*tally{}, shifted: map[string]*tally{}, differ: map[string]*tally{}, sameErr: map[string]*tally{}}
	for _, p := range ps {
		for i, b := range p.bugs {
			for _, pr := range [][2]string{{"a", "b"}, {"a", "c"}, {"b", "c"}} {
				eq := s.sum(p, b, pr[0]) == s.sum(p, b, pr[1])
				class := "checkout"
				if pr[1] == "b" {
					class = "rerun"
				}
				for _, k := range []string{"", p.lang, class, p.lang + " " + class} {
					f.count(f.same, k, eq)
				}
				if !eq {
					f.splits = append(f.splits, fmt.Sprintf("%s %s %s~%s", p.name, b.name, pr[0], pr[1]))
				}
			}
			if _, ok := b.out["s"]; ok {
				eq := s.sum(p, b, "a") == s.sum(p, b, "s")
				f.count(f.shifted, "", eq)
				f.count(f.shifted, p.lang, eq)
				if !eq {
					f.splits = append(f.splits, fmt.Sprintf("%s %s a~s", p.name, b.name))
				}
			}
			for _, o := range p.bugs[i+1:] {
				eq := s.sum(p, b, "a") == s.sum(p, o, "a")
				pair := fmt.Sprintf("%s %s~%s", p.name, b.name, o.name)
				if o.kind != b.kind {
					f.count(f.differ, "", eq)
					f.count(f.differ, p.lang, eq)
					if eq {
						f.merges = append(f.merges, pair)
					}
					continue
				}
				f.count(f.sameErr, "", eq)
				f.count(f.sameErr, p.lang, eq)
				if eq {
					f.errMerge = append(f.errMerge, pair)
				}
			}
		}
	}
	return f
}

// log writes every figure of f.
func (f *corpusFigures) log(t *testing.T, label string) {
	t.Helper()
	show := func(what string, m map[string]*tally, equal bool, verb string) {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			c := m[k]
			name := k
			if name == "" {
				name = "all"
			}
			t.Logf("%s: %s pairs, %s: %d/%d %s (%.1f%%)", label, what, name, c.of(equal), c.pairs, verb, 100*c.rate(equal))
		}
	}
	show("same-failure", f.same, false, "split")
	show("shifted", f.shifted, false, "split")
	show("different-bug", f.differ, true, "merged")
	show("same-error-at-another-line", f.sameErr, true, "merged")
}

// TestCorpus holds the signature rules to the bar on the corpus: on each set,
// at most 5% of same-failure pairs split (the sets of maxSplits: no more than
// last measured), and so on all sets together; no different-bug pair merges
// (but those of indistinct, which print the same text); and the same error
// at another line merges no more often than under v1.
func TestCorpus(t *testing.T) {
	var all tally // same-failure pairs of every set
	defer func() {
		t.Logf("all sets: %d/%d same-failure pairs split (%.1f%%)", all.of(false), all.pairs, 100*all.rate(false))
		if r := all.rate(false); r > maxSplitRate {
			t.Errorf("all sets together: %.1f%% of same-failure pairs split, want at most %.0f%%", 100*r, 100*maxSplitRate)
		}
	}()
	for _, set := range corpusSets {
		t.Run(set, func(t *testing.T) {
			ps := readCorpus(t, set)
			if len(ps) == 0 {
				t.Fatalf("no archives in testdata/corpus/%s", set)
			}
			bugs := 0
			for _, p := range ps {
				bugs += len(p.bugs)
			}
			t.Logf("%s: %d projects, %d bugs", set, len(ps), bugs)

			raw := measure(ps, newCorpusSigner(t, Off))
			raw.log(t, set+" off")
			v1 := measure(ps, newCorpusSigner(t, V1))
			v1.log(t, set+" v1")
			measure(ps, newCorpusSigner(t, V2)).log(t, set+" v2")
			def := measure(ps, newCorpusSigner(t, ""))
			def.log(t, set+" default")
			all.pairs += def.same[""].pairs
			all.equal += def.same[""].equal
			for _, s := range def.splits {
				t.Logf("%s default: split: %s", set, s)
			}
			for _, s := range def.errMerge {
				t.Logf("%s default: same error at another line merged: %s", set, s)
			}

			if max, ok := maxSplits[set]; ok {
				if n := def.same[""].pairs - def.same[""].equal; n > max {
					t.Errorf("%s: %d same-failure pairs split, more than the %d measured when the set was captured", set, n, max)
				}
			} else if r := def.same[""].rate(false); r > maxSplitRate {
				t.Errorf("%s: %.1f%% of same-failure pairs split (%d/%d), want at most %.0f%%",
					set, 100*r, def.same[""].of(false), def.same[""].pairs, 100*maxSplitRate)
			}
			for _, m := range def.merges {
				if why, ok := indistinct[set+"/"+m]; ok {
					if !sameButNumbers(ps, m) {
						t.Errorf("%s: %s is listed as printing the same text (%s), but the outputs differ in more than numbers", set, m, why)
					}
					t.Logf("%s: different bugs with one signature, whose outputs differ in numbers only (%s): %s", set, why, m)
					continue
				}
				t.Errorf("%s: different bugs merged: %s", set, m)
			}
			if c := def.sameErr[""]; c != nil {
				if old := v1.sameErr[""]; c.rate(true) > old.rate(true) {
					t.Errorf("%s: the same error at another line merges in %.1f%% of pairs (%d/%d), more than v1's %.1f%%",
						set, 100*c.rate(true), c.equal, c.pairs, 100*old.rate(true))
				}
			}
		})
	}
}

// TestCorpusCheckouts guards the corpus itself: b and s ran in the checkout
// of a, and c in another one, or the pairs would not measure what they claim.
func TestCorpusCheckouts(t *testing.T) {
	for _, set := range corpusSets {
		for _, p := range readCorpus(t, set) {
			for _, b := range p.bugs {
				if b.root["a"] == b.root["c"] {
					t.Errorf("%s/%s %s: runs a and c share the root %s", set, p.name, b.name, b.root["a"])
				}
				for _, run := range []string{"b", "s"} {
					if r, ok := b.root[run]; ok && r != b.root["a"] {
						t.Errorf("%s/%s %s: run %s has the root %s, run a %s", set, p.name, b.name, run, r, b.root["a"])
					}
				}
			}
		}
	}
}

// sameButNumbers reports whether the first runs of the two bugs of a
// different-bug pair ("project bug1~bug2") print the same text but for
// their digits.
func sameButNumbers(ps []*corpusProject, pair string) bool {
	name, bugs, _ := strings.Cut(pair, " ")
	b1, b2, _ := strings.Cut(bugs, "~")
	var outs []string
	for _, p := range ps {
		if p.name != name {
			continue
		}
		for _, b := range p.bugs {
			if b.name == b1 || b.name == b2 {
				outs = append(outs, digits.ReplaceAllString(string(b.out["a"]), "0"))
			}
		}
	}
	return len(outs) == 2 && outs[0] == outs[1]
}

var digits = regexp.MustCompile(`[0-9]+`)
