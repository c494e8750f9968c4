package workspace

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"os"
)

// entriesKey returns a hash of what the tree of the git index file at path
// is made of: every entry's path, mode, object id, stage and extended
// flags, in order, and none of the file times and sizes git keeps beside
// them. Two indexes with the same key give the same tree, however their
// stat data differ (git rewrites an index after a touch, or to clear a
// racily clean entry, without changing any of this). hashSize is the length
// of an object id in bytes: 20 for SHA-1, 32 for SHA-256 repositories.
// Index versions 2, 3 and 4 are read.
func entriesKey(path string, hashSize int) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	errBad := errors.New("workspace: unreadable index")
	if len(data) < 12 || string(data[:4]) != "DIRC" {
		return "", errBad
	}
	version := binary.BigEndian.Uint32(data[4:8])
	if version < 2 || version > 4 {
		return "", errBad
	}
	count := binary.BigEndian.Uint32(data[8:12])
	h := sha256.New()
	var prev []byte // the path before, which version 4 paths are cut from
	num := make([]byte, 4)
	off := 12
	for range count {
		const statLen = 40 // ctime, mtime, dev, ino, mode, uid, gid, size
		start := off
		if off+statLen+hashSize+2 > len(data) {
			return "", errBad
		}
		mode := data[off+24 : off+28]
		off += statLen
		oid := data[off : off+hashSize]
		off += hashSize
		flags := binary.BigEndian.Uint16(data[off:])
		off += 2
		var ext uint16
		if flags&0x4000 != 0 {
			if version < 3 || off+2 > len(data) {
				return "", errBad
			}
			ext = binary.BigEndian.Uint16(data[off:])
			off += 2
		}
		var name []byte
		if version == 4 {
			strip, n := binary.Uvarint(data[off:])
			if n <= 0 || strip > uint64(len(prev)) {
				return "", errBad
			}
			off += n
			end := bytes.IndexByte(data[off:], 0)
			if end < 0 {
				return "", errBad
			}
			name = append(prev[:len(prev)-int(strip):len(prev)-int(strip)], data[off:off+end]...)
			off += end + 1
		} else {
			end := bytes.IndexByte(data[off:], 0)
			if end < 0 {
				return "", errBad
			}
			name = data[off : off+end]
			// An entry is padded with 1 to 8 NULs to a multiple of 8 bytes.
			off = start + (off-start+end+8)&^7
		}
		prev = name
		h.Write(mode)
		h.Write(oid)
		binary.BigEndian.PutUint16(num[:2], flags&0x3000) // the stage
		binary.BigEndian.PutUint16(num[2:], ext)
		h.Write(num)
		h.Write(name)
		h.Write([]byte{0})
	}
	if off > len(data) {
		return "", errBad
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
