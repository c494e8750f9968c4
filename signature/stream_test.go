package signature

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/autoretry/orchestrator/signature/internal/testoutput"
)

// writeChunks writes in through w in pieces of random sizes (1 to max
// bytes) drawn from seed.
func writeChunks(t testing.TB, w io.Writer, in []byte, seed uint64, max int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for len(in) > 0 {
		n := min(len(in), 1+rng.IntN(max))
		if _, err := w.Write(in[:n]); err != nil {
			t.Fatal(err)
		}
		in = in[n:]
	}
}

// TestChunkingDoesNotMatter proves that the signature depends on the output
// only, not on the pieces it was written in: the engine hashes output as a
// pipe delivers it.
func TestChunkingDoesNotMatter(t *testing.T) {
	r := compile(t, "")
	inputs := [][]byte{
		[]byte("a\r\nb\rc\r\r\nd\r\re\n\x1b[31mred\x1b[0m\r\n\n\nlast\r"),
		[]byte("progress 1%\rprogress 2%\r\r\rprogress 100%\r\n"),
		[]byte(strings.Repeat("x", maxLine+100) + "\r" + strings.Repeat("y", 10) + "\n" + strings.Repeat("z", 3*maxLine) + "\nend"),
	}
	paths, _ := filepath.Glob("testdata/*/*.txtar")
	for _, p := range paths {
		a, b := readPair(t, p)
		inputs = append(inputs, a, b)
	}
	for i, in := range inputs {
		want := r.SumBytes(in)
		for seed := range uint64(8) {
			for _, max := range []int{1, 3, 64, 4096} {
				d := r.NewDigest()
				writeChunks(t, d, in, seed, max)
				if got := d.Sum(); got != want {
					t.Fatalf("input %d, seed %d, pieces up to %d: Digest = %s, SumBytes = %s", i, seed, max, got, want)
				}
			}
		}
	}
}

func TestLongLines(t *testing.T) {
	r := compile(t, "")
	long := strings.Repeat("ab ", maxLine) // 3 × maxLine bytes
	cut := strings.TrimSpace(long[:maxLine])
	for _, tc := range []struct{ name, in, want string }{
		{"cut at maxLine", long + "\nnext\n", cut + "\nnext\n"},
		{"cut before the last carriage return counts after it", long + "\rshort\n", "short\n"},
		{"cut after the last carriage return", "short\r" + long + "\n", cut + "\n"},
		{"unfinished", "x\n" + long, "x\n" + cut + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := explain(t, r, tc.in); got != tc.want {
				t.Errorf("got %d bytes %q…, want %d bytes %q…", len(got), got[:min(len(got), 20)], len(tc.want), tc.want[:min(len(tc.want), 20)])
			}
			d := r.NewDigest()
			writeChunks(t, d, []byte(tc.in), 1, 1000)
			if got, want := d.Sum(), r.SumBytes([]byte(tc.in)); got != want {
				t.Errorf("chunked Digest = %s, SumBytes = %s", got, want)
			}
		})
	}
}

// TestMemoryBounded writes a 16 MiB line without a newline, then 16 MiB of
// short lines, and checks that the digest kept no more than one line.
func TestMemoryBounded(t *testing.T) {
	r := compile(t, "")
	d := r.NewDigest()
	chunk := bytes.Repeat([]byte("0123456789abcdef"), 4096) // 64 KiB
	for range 256 {
		d.Write(chunk)
	}
	if c := cap(d.st.carry); c > maxLine {
		t.Errorf("unfinished line buffer grew to %d bytes, want at most %d", c, maxLine)
	}
	lines := bytes.Repeat([]byte("--- FAIL: TestX (0.01s)\n"), 4096)
	for range 160 {
		d.Write(lines)
	}
	if c := cap(d.st.out); c > outSize {
		t.Errorf("output buffer grew to %d bytes, want at most %d", c, outSize)
	}
	d.Sum()
}

func TestRaw(t *testing.T) {
	// What coreutils' sha256sum prints for the same bytes.
	for _, tc := range []struct{ in, want string }{
		{"--- FAIL: TestAdd (0.03s)\r\n\x1b[31mFAIL\x1b[0m\n", "b4ae2f23bd0cf9012cae2746c6a105820dce7bcf80aaca97d2ee81885066c09f"},
		{"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
	} {
		got, err := Raw(strings.NewReader(tc.in))
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("Raw(%q) = %s, want %s", tc.in, got, tc.want)
		}
		off, err := Compile(Options{Rules: Off, Extra: []string{`FAIL`}})
		if err != nil {
			t.Fatal(err)
		}
		if got := off.SumBytes([]byte(tc.in)); got != tc.want {
			t.Errorf("off: SumBytes(%q) = %s, want %s", tc.in, got, tc.want)
		}
		if got, _ := off.Sum(strings.NewReader(tc.in)); got != tc.want {
			t.Errorf("off: Sum(%q) = %s, want %s", tc.in, got, tc.want)
		}
		d := off.NewDigest()
		writeChunks(t, d, []byte(tc.in), 7, 5)
		if got := d.Sum(); got != tc.want {
			t.Errorf("off: Digest(%q) = %s, want %s", tc.in, got, tc.want)
		}
		var b bytes.Buffer
		if err := off.Explain(&b, strings.NewReader(tc.in)); err != nil || b.String() != tc.in {
			t.Errorf("off: Explain(%q) = %q, %v; want the input unchanged", tc.in, b.String(), err)
		}
	}
}

func TestDigestAfterClose(t *testing.T) {
	r := compile(t, "")
	d := r.NewDigest()
	io.WriteString(d, "unfinished line")
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Write([]byte("more")); err == nil {
		t.Error("Write after Close succeeded")
	}
	if got, want := d.Sum(), r.SumBytes([]byte("unfinished line\n")); got != want {
		t.Errorf("Sum = %s, want the signature of the unfinished line, %s", got, want)
	}
	if got, again := d.Sum(), d.Sum(); got != again {
		t.Errorf("Sum changed between calls: %s, %s", got, again)
	}
}

type failingWriter struct{ n int }

var errDiskFull = errors.New("disk full")

func (w *failingWriter) Write(p []byte) (int, error) {
	w.n++
	return 0, errDiskFull
}

func TestWriterReportsErrors(t *testing.T) {
	r := compile(t, "")
	fw := &failingWriter{}
	w := r.NewWriter(fw)
	big := bytes.Repeat([]byte("a line of output\n"), 2*flushAt/17)
	_, err := w.Write(big)
	if !errors.Is(err, errDiskFull) {
		t.Errorf("Write error = %v, want %v", err, errDiskFull)
	}
	if err := w.Close(); !errors.Is(err, errDiskFull) {
		t.Errorf("Close error = %v, want %v", err, errDiskFull)
	}
	if fw.n != 1 {
		t.Errorf("the failing writer was called %d times, want once", fw.n)
	}
	if err := r.Explain(&failingWriter{}, strings.NewReader("x\n")); !errors.Is(err, errDiskFull) {
		t.Errorf("Explain error = %v, want %v", err, errDiskFull)
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errDiskFull }

func TestSumReportsReadErrors(t *testing.T) {
	r := compile(t, "")
	if _, err := r.Sum(io.MultiReader(strings.NewReader("x\n"), failingReader{})); !errors.Is(err, errDiskFull) {
		t.Errorf("Sum error = %v, want %v", err, errDiskFull)
	}
	if _, err := Raw(failingReader{}); !errors.Is(err, errDiskFull) {
		t.Errorf("Raw error = %v, want %v", err, errDiskFull)
	}
}

// TestSumOverlapsHashing proves that Sum, which hashes on another goroutine
// while it normalizes, gives the signature of the normalized text: the same
// as SumBytes and as the SHA-256 of what Explain prints, on output many
// pieces long with runs of blank lines across the pieces' edges.
func TestSumOverlapsHashing(t *testing.T) {
	var in bytes.Buffer
	if err := testoutput.Generate(&in, 3<<20); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 200; i++ { // blank runs of every length around flushAt
		in.WriteString(strings.Repeat("\n", i*97))
		in.WriteString("--- FAIL: TestX (0.01s)\n")
	}
	r, err := Compile(Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Sum(bytes.NewReader(in.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if want := r.SumBytes(in.Bytes()); got != want {
		t.Errorf("Sum = %s, SumBytes = %s", got, want)
	}
	var explained bytes.Buffer
	if err := r.Explain(&explained, bytes.NewReader(in.Bytes())); err != nil {
		t.Fatal(err)
	}
	if want, _ := Raw(bytes.NewReader(explained.Bytes())); got != want {
		t.Errorf("Sum = %s, SHA-256 of the normalized text = %s", got, want)
	}
}

// A read error ends Sum with that error, and its hashing goroutine with it.
func TestSumReadError(t *testing.T) {
	r, err := Compile(Options{})
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	for i := 0; i < 100; i++ {
		rd := io.MultiReader(strings.NewReader(strings.Repeat("panic: x\n", 50000)), iotest.ErrReader(boom))
		if _, err := r.Sum(rd); !errors.Is(err, boom) {
			t.Fatalf("Sum error = %v, want %v", err, boom)
		}
	}
}
