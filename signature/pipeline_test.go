package signature

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/autoretry/orchestrator/signature/internal/testoutput"
)

// chunkReader reads its bytes in pieces of random sizes, up to max.
type chunkReader struct {
	b   []byte
	rng *rand.Rand
	max int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 1+c.rng.IntN(c.max))], c.b)
	c.b = c.b[n:]
	return n, nil
}

// TestPipelineSameAsLineByLine proves that Sum's pipeline, whatever its
// number of workers and however the output is read, gives every output of
// the corpus, and generated output, the signature that reading it line by
// line gives, under every rule set with report rules.
func TestPipelineSameAsLineByLine(t *testing.T) {
	type input struct {
		name, root string
		out        []byte
	}
	var gen bytes.Buffer
	if err := testoutput.Generate(&gen, 2<<20); err != nil {
		t.Fatal(err)
	}
	// Lines longer than a batch, than the line rules look at and than a
	// read, with carriage returns in them and across reads.
	var long bytes.Buffer
	for _, n := range []int{batchSize - 1, batchSize + 1, maxLine + 7, readSize + 3, 3 * batchSize} {
		long.WriteString("--- FAIL: TestLong (0.01s)\n    x_test.go:12: ")
		long.Write(bytes.Repeat([]byte("0x1f /tmp/a\r"), n/12))
		long.WriteString("\n\n=== RUN   TestX\n--- PASS: TestX (0.00s)\n")
	}
	inputs := []input{{"generated", "/home/ci/src/app", gen.Bytes()}, {"long lines", "/home/ci/src/app", long.Bytes()}}
	for _, set := range corpusSets {
		for _, p := range readCorpus(t, set) {
			for _, b := range p.bugs {
				for _, run := range corpusRuns {
					if out, ok := b.out[run]; ok {
						inputs = append(inputs, input{p.name + "/" + b.name + "/" + run, b.root[run], out})
					}
				}
			}
		}
	}
	if len(inputs) < 100 {
		t.Fatalf("only %d inputs: the corpus is missing", len(inputs))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	stride := shortStride()
	for _, set := range []string{V2, V3} {
		for i, in := range inputs {
			if i%stride != 0 && i >= 2 { // the generated and long-line inputs always
				continue
			}
			r := compileSet(t, set, in.root)
			want := r.SumBytes(in.out)
			workers := 1 + i%3
			rd := &chunkReader{b: in.out, rng: rng, max: 1 + rng.IntN(2*readSize)}
			got, err := r.sum(rd, workers)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("%s %s: pipeline of %d workers: %s, line by line: %s", set, in.name, workers, got, want)
			}
		}
	}
	// Extra patterns and go -v's tests the slow way take other paths.
	r, err := Compile(Options{Root: "/home/ci/src/app", Extra: []string{`request-id: [A-Za-z0-9]+`, `b[0-9a-f]{3}`}})
	if err != nil {
		t.Fatal(err)
	}
	slow := compileSet(t, V3, "/home/ci/src/app")
	slow.slowTests = true
	for _, r := range []*Rules{r, slow} {
		for _, in := range inputs[:40] {
			want := r.SumBytes(in.out)
			if got, err := r.sum(bytes.NewReader(in.out), 2); err != nil || got != want {
				t.Errorf("%s %s: pipeline: %s (%v), line by line: %s", r.Name(), in.name, got, err, want)
			}
		}
	}
}
