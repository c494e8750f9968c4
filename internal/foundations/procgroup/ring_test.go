package procgroup

import (
	"bytes"
	"testing"
)

// chunks splits data into pieces whose sizes cycle through sizes (each 1-256).
func chunks(data, sizes []byte) [][]byte {
	if len(sizes) == 0 {
		sizes = []byte{255}
	}
	var out [][]byte
	for i := 0; len(data) > 0; i++ {
		n := min(int(sizes[i%len(sizes)])+1, len(data))
		out = append(out, data[:n])
		data = data[n:]
	}
	return out
}

func lastN(b []byte, n int) []byte {
	return b[max(0, len(b)-n):]
}

func TestRingKeepsLastBytes(t *testing.T) {
	data := []byte("0123456789abcdefghijklmnopqrstuvwxyz")
	tests := []struct {
		name  string
		size  int
		sizes []byte
	}{
		{"empty ring", 0, []byte{3}},
		{"one byte writes", 5, []byte{0}},
		{"writes ending on the boundary", 6, []byte{2}},
		{"write larger than the ring", 4, []byte{9}},
		{"ring larger than the data", 100, []byte{6, 1}},
		{"exact size", len(data), []byte{255}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRing(tt.size)
			for _, c := range chunks(data, tt.sizes) {
				if n, err := r.Write(c); n != len(c) || err != nil {
					t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(c))
				}
			}
			if got, want := r.Bytes(), lastN(data, tt.size); !bytes.Equal(got, want) {
				t.Errorf("Bytes() = %q, want %q", got, want)
			}
		})
	}
}

func TestRingWriteDoesNotAllocate(t *testing.T) {
	r := newRing(64 << 10)
	chunk := bytes.Repeat([]byte("x"), 20000)
	if got := testing.AllocsPerRun(100, func() { r.Write(chunk) }); got != 0 {
		t.Errorf("allocations per Write = %v, want 0", got)
	}
}

func FuzzRing(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte, size uint8, sizes []byte) {
		r := newRing(int(size))
		for _, c := range chunks(data, sizes) {
			r.Write(c)
		}
		if got, want := r.Bytes(), lastN(data, int(size)); !bytes.Equal(got, want) {
			t.Errorf("Bytes() = %q, want %q", got, want)
		}
	})
}
