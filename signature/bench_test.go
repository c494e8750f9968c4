package signature

import (
	"bytes"
	"crypto/sha256"
	"io"
	"sync"
	"testing"
	"time"

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

// BenchmarkSumLineByLine is BenchmarkSum on one goroutine (and the
// hashing's): without the pipeline of the line rules.
func BenchmarkSumLineByLine(b *testing.B) {
	benchmarkSumWorkers(b, compileSet(b, Current, "/home/ci/src/app"), benchOutput(), 0)
}

// BenchmarkSumV1 is BenchmarkSum under the older rules.
func BenchmarkSumV1(b *testing.B) { benchmarkSum(b, compile(b, "")) }

func benchmarkSum(b *testing.B, r *Rules) {
	benchmarkSumWorkers(b, r, benchOutput(), pipelineWorkers())
}

func benchmarkSumWorkers(b *testing.B, r *Rules, in []byte, workers int) {
	b.SetBytes(int64(len(in)))
	var cpu cpuMeter
	for b.Loop() {
		cpu.start()
		if _, err := r.sum(bytes.NewReader(in), workers); err != nil {
			b.Fatal(err)
		}
	}
	cpu.report(b, len(in))
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

func benchmarkNormalize(b *testing.B, r *Rules) { benchmarkNormalizeOn(b, r, benchOutput()) }

func benchmarkNormalizeOn(b *testing.B, r *Rules, in []byte) {
	b.SetBytes(int64(len(in)))
	var cpu cpuMeter
	for b.Loop() {
		cpu.start()
		w := r.NewWriter(io.Discard)
		w.Write(in)
		w.Close()
	}
	cpu.report(b, len(in))
}

// cpuMeter reports the CPU time of a benchmark's loop, on every thread of
// the process, beside its wall time: on a loaded machine the wall time
// counts the waits, and the pipeline's CPU time exceeds its wall time on
// an idle one.
type cpuMeter struct {
	t0      time.Duration
	started bool
}

// start is called at the top of each iteration: the first one notes the
// CPU time used so far, after the benchmark's setup.
func (m *cpuMeter) start() {
	if !m.started {
		m.t0, m.started = processCPU(), true
	}
}

func (m *cpuMeter) report(b *testing.B, size int) {
	d := processCPU() - m.t0
	if !m.started || d <= 0 || b.N == 0 {
		return
	}
	b.ReportMetric(float64(d.Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(size)*float64(b.N)/d.Seconds()/1e6, "cpu-MB/s")
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

// corpusOutput returns the failure corpus's outputs of the projects in
// language lang ("" for all), concatenated and repeated to at least 4 MiB.
func corpusOutput(b testing.TB, lang string) []byte {
	one := corpusOnce(b, lang)
	out := make([]byte, 0, 4<<20+len(one))
	for len(out) < 4<<20 {
		out = append(out, one...)
	}
	return out
}

// corpusOnce returns the failure corpus's outputs of the projects in
// language lang ("" for all), concatenated once.
func corpusOnce(b testing.TB, lang string) []byte {
	var one []byte
	for _, set := range corpusSets {
		for _, p := range readCorpus(b, set) {
			if lang != "" && p.lang != lang {
				continue
			}
			for _, bug := range p.bugs {
				for _, run := range corpusRuns {
					one = append(one, bug.out[run]...)
				}
			}
		}
	}
	if len(one) == 0 {
		b.Fatalf("no corpus output in %q", lang)
	}
	return one
}

// BenchmarkRules normalizes each runner's real failing output (the
// corpus's projects in its language) under each rule set: v1 is the line
// rules alone, v3 adds the report rules, so the difference is what the
// runner's report rules cost. "real" is every output of the corpus, as
// bench/signature.sh reads it; "synthetic" the generated output.
func BenchmarkRules(b *testing.B) {
	inputs := []struct{ name, lang string }{
		{"go", "go"}, {"pytest", "py"}, {"cargo", "rust"}, {"javascript", "js"}, {"java", "java"}, {"real", ""},
	}
	for _, in := range inputs {
		var data []byte
		for _, set := range []string{V1, V3} {
			b.Run(in.name+"/"+set, func(b *testing.B) {
				if data == nil {
					data = corpusOutput(b, in.lang)
				}
				benchmarkNormalizeOn(b, compileSet(b, set, "/home/ci/src/app"), data)
			})
		}
	}
	for _, set := range []string{V1, V3} {
		b.Run("synthetic/"+set, func(b *testing.B) {
			benchmarkNormalizeOn(b, compileSet(b, set, "/home/ci/src/app"), benchOutput()[:4<<20])
		})
	}
}

// BenchmarkSumReal is BenchmarkSum on the corpus's outputs.
func BenchmarkSumReal(b *testing.B) {
	benchmarkSumWorkers(b, compileSet(b, Current, "/home/ci/src/app"), corpusOutput(b, ""), pipelineWorkers())
}

// BenchmarkSumRealLineByLine is BenchmarkSumReal without the pipeline.
func BenchmarkSumRealLineByLine(b *testing.B) {
	benchmarkSumWorkers(b, compileSet(b, Current, "/home/ci/src/app"), corpusOutput(b, ""), 0)
}
