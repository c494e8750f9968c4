// Command genrealout writes real failing test output for the signature
// benchmark (bench/signature.sh): the outputs of the failure corpus
// (signature/testdata/corpus, every BUG/RUN.out of every archive, in the
// order of their paths) concatenated, again and again, until the file
// holds at least SIZE bytes. Nothing is downloaded; the same bytes come
// out on every run.
//
// Usage:
//
//	genrealout [-size BYTES] [-corpus DIR] FILE
package main

import (
	"bufio"
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rogpeppe/go-internal/txtar"
)

func main() {
	size := flag.Int64("size", 256<<20, "bytes to write (at least; whole outputs)")
	corpus := flag.String("corpus", "signature/testdata/corpus", "the corpus directory")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: genrealout [-size BYTES] [-corpus DIR] FILE")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *corpus, *size); err != nil {
		fmt.Fprintln(os.Stderr, "genrealout:", err)
		os.Exit(1)
	}
}

func run(path, corpus string, size int64) error {
	outs, err := outputs(corpus)
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	var n int64
	for n < size {
		for _, o := range outs {
			w.Write(o)
			n += int64(len(o))
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// outputs returns the corpus's outputs in the order of the archives' paths
// and of the files in each.
func outputs(corpus string) ([][]byte, error) {
	paths, err := filepath.Glob(filepath.Join(corpus, "*", "*.txtar.gz"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var outs [][]byte
	for _, p := range paths {
		data, err := gunzip(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		for _, f := range txtar.Parse(data).Files {
			if strings.HasSuffix(f.Name, ".out") && len(f.Data) > 0 {
				outs = append(outs, f.Data)
			}
		}
	}
	if len(outs) == 0 {
		return nil, errors.New("no outputs in " + corpus)
	}
	return outs, nil
}

func gunzip(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}
