package signature

import (
	"bytes"
	"crypto/sha256"
	"io"
	"sync"
	"testing"

	"github.com/autoretry/orchestrator/signature/internal/testoutput"
)

var benchOutput = sync.OnceValue(func() []byte {
	var b bytes.Buffer
	if err := testoutput.Generate(&b, 16<<20); err != nil {
		panic(err)
	}
	return b.Bytes()
})

// BenchmarkSum is the normalized signature of realistic test output, read
// from a reader as "orchestrator signature FILE" does.
func BenchmarkSum(b *testing.B) { benchmarkSum(b, compileSet(b, Current, "/home/ci/src/app")) }

// BenchmarkSumV1 is BenchmarkSum under the older rules.
func BenchmarkSumV1(b *testing.B) { benchmarkSum(b, compile(b, "")) }

func benchmarkSum(b *testing.B, r *Rules) {
	in := benchOutput()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if _, err := r.Sum(bytes.NewReader(in)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSumBytes(b *testing.B) {
	r := compileSet(b, Current, "/home/ci/src/app")
	in := benchOutput()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		r.SumBytes(in)
	}
}

// BenchmarkNormalize is the scanner alone, without hashing.
func BenchmarkNormalize(b *testing.B) {
	benchmarkNormalize(b, compileSet(b, Current, "/home/ci/src/app"))
}

// BenchmarkNormalizeExtra adds two configured patterns.
func BenchmarkNormalizeExtra(b *testing.B) {
	benchmarkNormalize(b, compile(b, "", `request-id: [A-Za-z0-9]+`, `token=\S+`))
}

func benchmarkNormalize(b *testing.B, r *Rules) {
	in := benchOutput()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		w := r.NewWriter(io.Discard)
		w.Write(in)
		w.Close()
	}
}

func BenchmarkRaw(b *testing.B) {
	in := benchOutput()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if _, err := Raw(bytes.NewReader(in)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSHA256 is the floor: crypto/sha256 on the same bytes.
func BenchmarkSHA256(b *testing.B) {
	in := benchOutput()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		sha256.Sum256(in)
	}
}
