package signature

import (
	"bytes"
	"path/filepath"
	"strings"
)

// Placeholders of the rules V2 for the places code lives in: the workspace
// root and the package caches. Like the others, no rule matches them.
const (
	phRoot  = "<root>"
	phGoMod = "<gomod>"
	phPyPkg = "<pkgs>"
	phCargo = "<cargo>"
	phNode  = "<node_modules>"
)

// A cache is a directory of downloaded packages, recognised by a part of
// its path. Everything from the start of the path to the end of that part
// (and, for cargo's registry, the index directory after it) becomes the
// placeholder; the package's own path stays.
type cache struct {
	marker  []byte
	ph      string
	skipDir bool // one more directory follows the marker (cargo's index)
}

var caches = []cache{
	{[]byte("/pkg/mod/"), phGoMod, false},
	{[]byte("/site-packages/"), phPyPkg, false},
	{[]byte("/dist-packages/"), phPyPkg, false},
	{[]byte("/.cargo/registry/src/"), phCargo, true},
	{[]byte("/.cargo/git/checkouts/"), phCargo, false},
	{[]byte("/node_modules/"), phNode, false},
}

// cacheStart marks the bytes that follow the '/' starting a cache marker.
var cacheStart [256]bool

func init() {
	for _, c := range caches {
		cacheStart[c.marker[1]] = true
	}
}

// setWorkspace records the workspace root as a path without its trailing
// slash; "/" and relative paths are not roots.
func (s *scanner) setWorkspace(root string) {
	s.root = nil
	s.wsStart = cacheStart
	if root == "" || !filepath.IsAbs(root) {
		return
	}
	root = filepath.ToSlash(filepath.Clean(root))
	if root == "/" || strings.ContainsAny(root, "\n\r") {
		return
	}
	s.root = []byte(root)
	s.wsStart = cacheStart
	s.wsStart[root[1]] = true
}

// workspaceAt reports whether b, which starts with '/', starts with the
// workspace root or a cache marker. The scanner asks at every '/' whose
// next byte may start one, so that lines without either cost nothing more.
func (s *scanner) workspaceAt(b []byte) bool {
	if len(s.root) > 0 && bytes.HasPrefix(b, s.root) {
		return true
	}
	if cacheStart[b[1]] {
		for k := range caches {
			if bytes.HasPrefix(b, caches[k].marker) {
				return true
			}
		}
	}
	return false
}

// workspacePaths returns line with the package caches and the workspace
// root replaced by placeholders, written to bufs when anything changes, or
// line itself.
func (s *scanner) workspacePaths(bufs *[2][]byte, line []byte) []byte {
	if at, _ := nextCache(line, 0, len(line)); at >= 0 {
		bufs[0] = replaceCaches(bufs[0][:0], line)
		line = bufs[0]
	}
	if len(s.root) > 0 && bytes.Contains(line, s.root) {
		bufs[1] = replaceRoot(bufs[1][:0], line, s.root)
		line = bufs[1]
	}
	return line
}

// replaceCaches appends line to out with each path that goes through a
// package cache cut to the placeholder and the path inside the cache; in a
// path through several (node_modules in node_modules), the last counts.
func replaceCaches(out, line []byte) []byte {
	mark := 0
	for mark < len(line) {
		// The leftmost marker after mark.
		at, which := nextCache(line, mark, len(line))
		if at < 0 {
			break
		}
		start := at
		for start > mark && pathChar[line[start-1]] {
			start--
		}
		end := at
		for end < len(line) && pathChar[line[end]] {
			end++
		}
		// The marker that ends last in the path (no marker ends another,
		// so two never end at one byte).
		last := at + len(caches[which].marker)
		for j, k := nextCache(line, at+1, end); j >= 0; j, k = nextCache(line, j+1, end) {
			if e := j + len(caches[k].marker); e > last {
				last, which = e, k
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

// nextCache returns where the first cache marker in line[from:to] starts,
// and which it is (the first in caches of those that start there), or -1.
func nextCache(line []byte, from, to int) (at, which int) {
	for from < to {
		j := bytes.IndexByte(line[from:to], '/')
		if j < 0 {
			break
		}
		at = from + j
		if at+1 < to && cacheStart[line[at+1]] {
			for k := range caches {
				if bytes.HasPrefix(line[at:to], caches[k].marker) {
					return at, k
				}
			}
		}
		from = at + 1
	}
	return -1, 0
}

// replaceRoot appends line to out with the root replaced wherever it starts
// a path and ends at a path boundary (so /work/a is not taken out of
// /work/ab).
func replaceRoot(out, line, root []byte) []byte {
	mark := 0
	for {
		j := bytes.Index(line[mark:], root)
		if j < 0 {
			break
		}
		i := mark + j
		e := i + len(root)
		startOK := i == 0 || !pathChar[line[i-1]] || line[i-1] == '/'
		endOK := e == len(line) || line[e] == '/' || !pathChar[line[e]]
		if !startOK || !endOK {
			out = append(out, line[mark:i+1]...)
			mark = i + 1
			continue
		}
		out = append(out, line[mark:i]...)
		out = append(out, phRoot...)
		mark = e
	}
	return append(out, line[mark:]...)
}
