package signature

// The failure blocks the rules V2 and V3 keep: each with a hash of its
// text, bounded in number and bytes by a choice that depends on the blocks
// alone, and written sorted at the end, so that the order in which
// parallel tests finished does not count.

import (
	"bytes"
	"container/heap"
	"encoding/binary"
	"slices"
)

// A block is kept with a hash of its text. When there are more blocks
// than the bounds allow, those with the smallest hashes stay: a choice
// that depends on the blocks alone, not on their order, and costs one
// comparison of numbers where comparing texts would cost a scan of their
// long common beginnings ("--- FAIL: Test").
type block struct {
	h uint64
	b []byte
}

// less orders blocks by hash, then text.
func (x block) less(y block) bool {
	if x.h != y.h {
		return x.h < y.h
	}
	return bytes.Compare(x.b, y.b) < 0
}

// blockHeap holds the kept blocks, the last in order on top, so that the
// one to give up when over the bounds is at hand (a container/heap).
type blockHeap []block

func (h blockHeap) Len() int           { return len(h) }
func (h blockHeap) Less(i, j int) bool { return h[j].less(h[i]) }
func (h blockHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *blockHeap) Push(x any)        { *h = append(*h, x.(block)) }
func (h *blockHeap) Pop() any {
	s := *h
	top := s[len(s)-1]
	*h = s[:len(s)-1]
	return top
}

// hash is the hash that orders blocks for the bounds. Under the rules V3 it
// reads at most the first and the last 32 bytes of a block and its length
// (blocks with equal hashes are ordered by their bytes, so the order stays
// fixed): hashing whole blocks cost a twentieth of the time.
func (r *report) hash(b []byte) uint64 {
	if !r.v3 || len(b) <= 64 {
		return hash64(b)
	}
	return hash64(b[:32]) ^ (hash64(b[len(b)-32:])+uint64(len(b)))*0x9e3779b97f4a7c15
}

// hash64 is a fixed hash (the same in every process, so that the kept
// blocks are), eight bytes at a time.
func hash64(b []byte) uint64 {
	h := uint64(len(b)) * 0x9e3779b97f4a7c15
	for len(b) >= 8 {
		h = (h ^ binary.LittleEndian.Uint64(b)) * 0xff51afd7ed558ccd
		h ^= h >> 32
		b = b[8:]
	}
	for _, c := range b {
		h = (h ^ uint64(c)) * 0x100000001b3
	}
	h *= 0xc4ceb9fe1a85ec53
	return h ^ h>>29
}

// keep adds a copy of a finished block to the blocks to sort, within the
// bounds.
func (r *report) keep(b []byte) {
	if len(b) == 0 {
		return
	}
	k := block{r.hash(b), b}
	if r.cut != nil && !k.less(*r.cut) {
		return // at or after a block given up: it would have gone too
	}
	if len(r.blocks) > 0 && (len(r.blocks) >= maxBlocks || r.size+len(b) > maxBlockBytes) &&
		!k.less(r.blocks[0]) {
		r.giveUp(k) // it would be the first to go
		return
	}
	if len(r.blocks) >= maxBlocks {
		// The last in order gives way, and its buffer takes the copy.
		top := r.blocks[0]
		r.giveUp(top)
		r.size += len(b) - len(top.b)
		r.blocks[0] = block{k.h, append(top.b[:0], b...)}
		heap.Fix(&r.blocks, 0)
	} else {
		heap.Push(&r.blocks, block{k.h, append([]byte(nil), b...)})
		r.size += len(b)
	}
	for len(r.blocks) > maxBlocks || r.size > maxBlockBytes {
		top := heap.Pop(&r.blocks).(block)
		r.giveUp(top)
		r.size -= len(top.b)
	}
}

// giveUp notes a block given up for the bounds. Every block at or after
// it in order goes too, whenever it comes: so the blocks kept are the
// first in order that fit, whatever order they came in.
func (r *report) giveUp(k block) {
	if r.cut == nil || k.less(*r.cut) {
		r.cut = &block{k.h, append([]byte(nil), k.b...)}
	}
}

// appendCapped adds a line to a block, up to maxBlock bytes.
func appendCapped(b, line []byte) []byte {
	if room := maxBlock - len(b); room < len(line)+1 {
		if room > 0 {
			b = append(b, line[:room]...)
		}
		return b
	}
	b = append(b, line...)
	return append(b, '\n')
}

// finish ends the last block and returns the kept blocks in sorted order.
func (r *report) finish() [][]byte {
	r.end()
	r.testPiece()
	raced := r.raced
	if len(r.races) > 0 {
		fs := make([]string, 0, len(r.races))
		for f := range r.races {
			fs = append(fs, f)
		}
		slices.Sort(fs)
		b := []byte("WARNING: DATA RACE\n")
		for _, f := range fs {
			b = appendCapped(b, []byte(f))
		}
		r.keep(b)
	}
	r.races = nil
	for _, b := range r.tests {
		r.keep(b) // the order does not matter: keep's choice does not depend on it
	}
	r.tests, r.testBytes = nil, 0
	bs := make([][]byte, 0, len(r.blocks))
	for _, k := range r.blocks {
		// When a test binary panics, which other tests it reports as
		// failed, without a word, is a matter of timing (parallel tests
		// running at the time); the panic and its stack tell the failure.
		if r.panicked && bytes.HasPrefix(k.b, []byte("--- FAIL: ")) && bytes.IndexByte(k.b, '\n') == len(k.b)-1 {
			continue
		}
		if r.panicked && r.parallel(k.b) {
			continue
		}
		if raced && raceTest(k.b) {
			continue
		}
		bs = append(bs, k.b)
	}
	slices.SortFunc(bs, bytes.Compare)
	r.blocks, r.size, r.cut = nil, 0, nil
	r.raced, r.paused = false, nil
	return bs
}
