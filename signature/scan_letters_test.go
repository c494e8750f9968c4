package signature

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// letters8ByTable is what letters8 computes, a byte at a time.
func letters8ByTable(b []byte) uint8 {
	var f uint8
	for _, c := range b {
		k := class[c]
		if k&(cHex|cAlpha) == 0 {
			return 0
		}
		f |= k
	}
	return f
}

// TestLetters8 checks the eight-at-a-time letter test against the class
// table on every byte in every position, and on random words mostly of
// letters.
func TestLetters8(t *testing.T) {
	check := func(b []byte) {
		t.Helper()
		if got, want := letters8(binary.LittleEndian.Uint64(b)), letters8ByTable(b); got != want {
			t.Fatalf("letters8(%q) = %#x, want %#x", b, got, want)
		}
	}
	for pos := range 8 {
		for c := range 256 {
			for _, fill := range []byte("aZ_gF") {
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
