package workspace

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"os"
)

// An indexEntry is what of a git index entry goes into a tree.
type indexEntry struct {
	name  []byte
	mode  uint32
	oid   []byte
	stage uint16 // the stage bits of the flags: 0 unless merging
	ext   uint16 // the extended flags (skip-worktree, intent-to-add)
}

// readIndex reads the entries of the git index file at path, in its order.
// hashSize is the length of an object id in bytes: 20 for SHA-1, 32 for
// SHA-256 repositories. Index versions 2, 3 and 4 are read; the file times
// and sizes git keeps beside each entry, and the extensions, are not.
func readIndex(path string, hashSize int) ([]indexEntry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	errBad := errors.New("workspace: unreadable index")
	if len(data) < 12 || string(data[:4]) != "DIRC" {
		return nil, errBad
	}
	version := binary.BigEndian.Uint32(data[4:8])
	if version < 2 || version > 4 {
		return nil, errBad
	}
	count := binary.BigEndian.Uint32(data[8:12])
	if uint64(count) > uint64(len(data)) {
		return nil, errBad
	}
	entries := make([]indexEntry, 0, count)
	var prev []byte // the path before, which version 4 paths are cut from
	off := 12
	for range count {
		const statLen = 40 // ctime, mtime, dev, ino, mode, uid, gid, size
		start := off
		if off+statLen+hashSize+2 > len(data) {
			return nil, errBad
		}
		e := indexEntry{mode: binary.BigEndian.Uint32(data[off+24:])}
		off += statLen
		e.oid = data[off : off+hashSize]
		off += hashSize
		flags := binary.BigEndian.Uint16(data[off:])
		e.stage = flags & 0x3000
		off += 2
		if flags&0x4000 != 0 {
			if version < 3 || off+2 > len(data) {
				return nil, errBad
			}
			e.ext = binary.BigEndian.Uint16(data[off:])
			off += 2
		}
		if version == 4 {
			strip, n := binary.Uvarint(data[off:])
			if n <= 0 || strip > uint64(len(prev)) {
				return nil, errBad
			}
			off += n
			end := bytes.IndexByte(data[off:], 0)
			if end < 0 {
				return nil, errBad
			}
			keep := len(prev) - int(strip)
			e.name = append(prev[:keep:keep], data[off:off+end]...)
			off += end + 1
		} else {
			end := bytes.IndexByte(data[off:], 0)
			if end < 0 {
				return nil, errBad
			}
			e.name = data[off : off+end]
			// An entry is padded with 1 to 8 NULs to a multiple of 8 bytes.
			off = start + (off-start+end+8)&^7
		}
		if off > len(data) {
			return nil, errBad
		}
		prev = e.name
		entries = append(entries, e)
	}
	return entries, nil
}

// entriesKey returns a hash of what the tree of an index is made of: every
// entry's path, mode, object id, stage and extended flags, in order. Two
// indexes with the same key give the same tree, however their stat data
// differ (git rewrites an index after a touch, or to clear a racily clean
// entry, without changing any of this).
func entriesKey(entries []indexEntry) string {
	h := sha256.New()
	var num [8]byte
	for _, e := range entries {
		binary.BigEndian.PutUint32(num[:4], e.mode)
		binary.BigEndian.PutUint16(num[4:6], e.stage)
		binary.BigEndian.PutUint16(num[6:], e.ext)
		h.Write(num[:])
		h.Write(e.oid)
		h.Write(e.name)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}
