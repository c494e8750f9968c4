package signature

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// letters8ByTable is what letters8 computes, a byte at a time.
func letters8ByTable(b []byte) (int, uint8) {
	var f uint8
	for n, c := range b {
		k := class[c]
		if k&(cHex|cAlpha) == 0 {
			return n, f
		}
		f |= k
	}
	return len(b), f
}

// TestLetters8 checks the eight-at-a-time letter test against the class
// table on every byte in every position, and on random words mostly of
// letters.
func TestLetters8(t *testing.T) {
	check := func(b []byte) {
		t.Helper()
		n, f := letters8(binary.LittleEndian.Uint64(b))
		if wn, wf := letters8ByTable(b); n != wn || f != wf {
			t.Fatalf("letters8(%q) = %d, %#x, want %d, %#x", b, n, f, wn, wf)
		}
	}
	for pos := range 8 {
		for c := range 256 {
			for _, fill := range []byte("aZ_gF0\xff") {
				b := []byte{fill, fill, fill, fill, fill, fill, fill, fill}
				b[pos] = byte(c)
				check(b)
			}
		}
	}
	const alphabet = "abcdefABCDEFghxyzGHXYZ_09@[`{/ \xc2\x80\xff"
	rng := rand.New(rand.NewPCG(3, 4))
	b := make([]byte, 8)
	for range 200000 {
		for i := range b {
			if rng.IntN(4) == 0 {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			} else {
				b[i] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"[rng.IntN(53)]
			}
		}
		check(b)
	}
}
