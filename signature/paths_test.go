package signature

import (
	"bytes"
	"testing"
)

// replaceCachesByMarker is replaceCaches as first written, looking for each
// marker in turn: the reference the one-pass search is checked against.
func replaceCachesByMarker(out, line []byte) []byte {
	mark := 0
	for mark < len(line) {
		at, which := -1, 0
		for k := range caches {
			if j := bytes.Index(line[mark:], caches[k].marker); j >= 0 && (at < 0 || j < at) {
				at, which = j, k
			}
		}
		if at < 0 {
			break
		}
		at += mark
		start := at
		for start > mark && pathChar[line[start-1]] {
			start--
		}
		end := at
		for end < len(line) && pathChar[line[end]] {
			end++
		}
		last := at + len(caches[which].marker)
		for k := range caches {
			m := caches[k].marker
			if j := bytes.LastIndex(line[start:end], m); j >= 0 && start+j+len(m) > last {
				last, which = start+j+len(m), k
			}
		}
		if caches[which].skipDir {
			if d := bytes.IndexByte(line[last:end], '/'); d >= 0 {
				last += d + 1
			}
		}
		out = append(out, line[mark:start]...)
		out = append(out, caches[which].ph...)
		out = append(out, '/')
		mark = last
	}
	return append(out, line[mark:]...)
}

var cacheLines = []string{
	"/root/go/pkg/mod/github.com/a/b@v1.2.3/c.go:12 /usr/lib/python3/dist-packages/_pytest/x.py",
	"/w/node_modules/.pnpm/vitest@4/node_modules/vitest/dist/x.js /w/node_modules/a/pkg/mod/b",
	"/home/ci/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/serde-1.0.2/src/de.rs",
	"/home/ci/.cargo/git/checkouts/x-123/abc/src/lib.rs /home/ci/.cargo/registry/src/",
	"x/pkg/mod//pkg/mod/ /site-packages//dist-packages/site-packages/ (/node_modules/)",
	"/node_modules/node_modules/ /node_modules /pkg/mo /.cargo/registry/src",
}

// TestReplaceCachesOnePass proves that the one-pass search for cache
// markers changes every line of the corpus, and lines made to trip it, as
// the search marker by marker did.
func TestReplaceCachesOnePass(t *testing.T) {
	lines := 0
	check := func(line []byte) {
		want := replaceCachesByMarker(nil, line)
		if got := replaceCaches(nil, line); !bytes.Equal(got, want) {
			t.Errorf("replaceCaches(%q) = %q, want %q", line, got, want)
		}
		// workspacePaths asks nextCache whether to call replaceCaches.
		if at, _ := nextCache(line, 0, len(line)); (at >= 0) == bytes.Equal(want, line) {
			t.Errorf("nextCache(%q) = %d, but replaceCaches changes the line: %v", line, at, !bytes.Equal(want, line))
		}
		lines++
	}
	for _, l := range cacheLines {
		check([]byte(l))
	}
	for _, set := range corpusSets {
		for _, p := range readCorpus(t, set) {
			for _, b := range p.bugs {
				for _, out := range b.out {
					for _, line := range bytes.Split(out, []byte("\n")) {
						if bytes.Contains(line, []byte("/")) {
							check(line)
						}
					}
				}
			}
		}
	}
	if lines < 1000 {
		t.Fatalf("only %d lines checked: the corpus is missing", lines)
	}
}

func FuzzReplaceCaches(f *testing.F) {
	for _, l := range cacheLines {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		want := replaceCachesByMarker(nil, line)
		if got := replaceCaches(nil, line); !bytes.Equal(got, want) {
			t.Fatalf("replaceCaches(%q) = %q, want %q", line, got, want)
		}
	})
}
