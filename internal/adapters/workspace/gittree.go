package workspace

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// Modes of index entries that go into a tree as they are.
const (
	indexFile    = 0o100644
	indexExec    = 0o100755
	indexLink    = 0o120000
	indexGitlink = 0o160000
)

// writeTree returns the id of the tree "git write-tree" makes from an index
// of entries in a SHA-1 repository, writing the tree objects that objects
// (a loose object directory) lacks. It spares starting git for what is only
// hashing: the entries' blobs are already written by "git add". ok is false,
// and nothing written, when the entries hold what is left to git: a stage
// other than 0 (a merge), extended flags (intent to add, skip-worktree), or
// a mode other than a file's, a link's or a gitlink's.
func writeTree(objects string, entries []indexEntry) (tree string, ok bool, err error) {
	for _, e := range entries {
		if e.stage != 0 || e.ext != 0 || len(e.oid) != sha1.Size {
			return "", false, nil
		}
		switch e.mode {
		case indexFile, indexExec, indexLink, indexGitlink:
		default:
			return "", false, nil
		}
	}
	tw := treeWriter{objects: objects}
	oid, err := tw.tree(entries, 0)
	if err != nil {
		return "", false, fmt.Errorf("workspace: writing a tree: %w", err)
	}
	return hex.EncodeToString(oid), true, nil
}

type treeWriter struct {
	objects string
	buf     []byte // the trees being made, each after the one that holds it
	zbuf    bytes.Buffer
	z       *zlib.Writer
}

// tree writes the tree of entries, which all have the same first base
// bytes of path (a directory and its slash, or nothing at the top), and
// returns its id. The index's order, by path, is the order of the entries
// in every tree, a directory sorting as its name and a slash.
func (tw *treeWriter) tree(entries []indexEntry, base int) ([]byte, error) {
	start := len(tw.buf)
	for i := 0; i < len(entries); {
		e := entries[i]
		name := e.name[base:]
		slash := bytes.IndexByte(name, '/')
		if slash < 0 {
			tw.buf = strconv.AppendUint(tw.buf, uint64(e.mode), 8)
			tw.buf = append(tw.buf, ' ')
			tw.buf = append(tw.buf, name...)
			tw.buf = append(tw.buf, 0)
			tw.buf = append(tw.buf, e.oid...)
			i++
			continue
		}
		dir := e.name[:base+slash+1]
		j := i + 1
		for j < len(entries) && bytes.HasPrefix(entries[j].name, dir) {
			j++
		}
		oid, err := tw.tree(entries[i:j], len(dir))
		if err != nil {
			return nil, err
		}
		tw.buf = append(tw.buf, "40000 "...)
		tw.buf = append(tw.buf, name[:slash]...)
		tw.buf = append(tw.buf, 0)
		tw.buf = append(tw.buf, oid...)
		i = j
	}
	oid, err := tw.write(tw.buf[start:])
	tw.buf = tw.buf[:start]
	return oid, err
}

// write writes a tree object of content, unless it is there, and returns
// its id. Git reads a loose object from objects/xx/yyyy..., zlib-compressed
// after its header.
func (tw *treeWriter) write(content []byte) ([]byte, error) {
	header := "tree " + strconv.Itoa(len(content)) + "\x00"
	h := sha1.New()
	h.Write([]byte(header))
	h.Write(content)
	oid := h.Sum(nil)
	name := hex.EncodeToString(oid)
	path := filepath.Join(tw.objects, name[:2], name[2:])
	if _, err := os.Lstat(path); err == nil {
		return oid, nil
	}
	tw.zbuf.Reset()
	if tw.z == nil {
		tw.z, _ = zlib.NewWriterLevel(&tw.zbuf, zlib.BestSpeed)
	} else {
		tw.z.Reset(&tw.zbuf)
	}
	tw.z.Write([]byte(header))
	tw.z.Write(content)
	if err := tw.z.Close(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "tmp_obj_")
	if err != nil {
		return nil, err
	}
	_, err = f.Write(tw.zbuf.Bytes())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o444)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return nil, err
	}
	return oid, nil
}
