// Command gentestoutput writes realistic test-run output for the signature
// benchmark (bench/signature.sh): go test reports, goroutine dumps, pytest
// and jest runs, logs and progress bars, the same bytes on every run.
//
// Usage:
//
//	gentestoutput [-size BYTES] FILE
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"

	"github.com/autoretry/orchestrator/signature/internal/testoutput"
)

func main() {
	size := flag.Int64("size", 256<<20, "bytes to write (at least; whole lines)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: gentestoutput [-size BYTES] FILE")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *size); err != nil {
		fmt.Fprintln(os.Stderr, "gentestoutput:", err)
		os.Exit(1)
	}
}

func run(path string, size int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	if err := testoutput.Generate(w, size); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
