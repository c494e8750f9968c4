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
	hasCache := false
	for k := range caches {
		if bytes.Contains(line, caches[k].marker) {
			hasCache = true
			break
		}
	}
	if hasCache {
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
