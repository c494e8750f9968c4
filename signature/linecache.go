package signature

import "hash/maphash"

// Failing test output repeats itself: the frames of goroutine dumps and
// race reports, the lines of a test run again, the same warning for every
// file. In the failure corpus's outputs, two lines in three (more than
// half of the bytes) are a line seen among the few hundred before them in
// the same output. The line rules are a function of the line alone, so a
// line seen lately is not normalized again: a small table keeps the
// latest lines and what the rules made of them, and a line found there
// costs a hash, a comparison and a copy instead of the scan.
//
// The table is direct-mapped: a line's hash picks one slot, which holds
// the last line that hashed there. Lines longer than cacheMaxLine are not
// kept, so that a table, which keeps each line as read, as prepared and as
// normalized, stays under about cacheSlots*cacheMaxLine*3 bytes; there is
// one for each pipeline worker and one for the report rules.
//
// Output that does not repeat itself (generated test output, a log of
// distinct records) would pay for the hashing and copying and gain
// nothing; so after every cacheTrial lines looked up, if fewer than one in
// five was found, the table rests for a while, and the lines go straight
// to the rules: for cacheRest lines, twice as long after each trial that
// fails again, up to cacheRestMax. What the table holds stays true however
// old: the rules depend on nothing but the line.
const (
	cacheSlots   = 512
	cacheMaxLine = 256
	cacheTrial   = 1024
	cacheRest    = 4 * cacheTrial
	cacheRestMax = 64 * cacheTrial
)

// lineCache is the table of one goroutine's lines. It is allocated on
// first use, in one piece of its own (about 40 KiB): its counters change
// with every line, and kept beside other goroutines' data they would make
// processors fight over a cache line.
type lineCache struct{ t *cacheTable }

type cacheTable struct {
	seed        maphash.Seed
	tries, hits int // lookups, and lines found, in this trial
	rest        int // lines to go before the table is used again
	restFor     int // how long the next rest lasts, beyond cacheRest
	slots       [cacheSlots]cacheSlot
}

type cacheSlot struct {
	line []byte // the line as given
	norm []byte // its normalized text
	raw  []byte // the line as the report rules see it, if not line itself
	used bool
	same bool // raw is the line itself
}

// use reports whether the next line is to be looked up.
func (c *lineCache) use() bool {
	if t := c.t; t != nil && t.rest > 0 {
		t.rest--
		return false
	}
	return true
}

// lookup returns the slot of b and whether it holds b; use comes first.
func (c *lineCache) lookup(b []byte) (*cacheSlot, bool) {
	t := c.t
	if t == nil {
		t = &cacheTable{seed: maphash.MakeSeed()}
		c.t = t
	}
	s := t.slotOf(b)
	hit := s.used && string(s.line) == string(b)
	t.tries++
	if hit {
		t.hits++
	}
	if t.tries == cacheTrial {
		if 5*t.hits < t.tries {
			t.rest = cacheRest + t.restFor
			t.restFor = min(2*(cacheRest+t.restFor), cacheRestMax) - cacheRest
		} else {
			t.restFor = 0
		}
		t.tries, t.hits = 0, 0
	}
	return s, hit
}

// slotOf returns the slot b goes in.
func (t *cacheTable) slotOf(b []byte) *cacheSlot {
	return &t.slots[maphash.Bytes(t.seed, b)%cacheSlots]
}

// store keeps in s the line b, its normalized text norm and the line raw
// as the report rules see it.
func (s *cacheSlot) store(b, norm, raw []byte) {
	s.line = append(s.line[:0], b...)
	s.norm = append(s.norm[:0], norm...)
	s.same = len(raw) == len(b) && (len(b) == 0 || &raw[0] == &b[0])
	if s.same {
		s.raw = s.raw[:0]
	} else {
		s.raw = append(s.raw[:0], raw...)
	}
	s.used = true
}
